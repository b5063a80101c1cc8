/**
 * The book's one timer per record (core/host/book.ts, ADR-0031), read on the book itself with a keeper
 * that writes down what it is told: when each timer comes due and with which time, which timers keep
 * the process alive, parking and adoption, the cancels heard while parked, a late record's expiry, and
 * the process's one book per shared handle. Fake timers.
 */
import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Keeper, RequestBook, requestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { type LateConfig, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import type { RelayCancel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { flush, relay, track } from "../support/relay.ts";

beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

const late = (over: Partial<LateConfig> = {}): LateConfig => ({ ...readLateConfig({}), expiryMs: 60_000, ...over });

/** A record as the host takes it in: one question, asked by `sessionId`, with the call's `deadline` (0: none). */
function record(id: string, deadline = 0, sessionId = "asker"): RequestRecord {
	const questions = [{ question: `${id}?`, kind: "text" as const }];
	return {
		request: { v: 1, id, asker: { label: sessionId, sessionId }, questions, deadline, dialogTimeoutMs: 5_000, createdAt: 0 },
		questions,
		entries: [],
		queuedAt: 0,
		state: { is: "queued" },
	};
}

/** A keeper that writes down what the book tells it. */
function keeper(name = "keeper") {
	const heard: string[] = [];
	const keeper: Keeper = {
		deadlineCame: (r, at) => void heard.push(`${name} deadline ${r.request.id} ${r.state.is} at ${at}`),
		lateLeft: (r, why) => void heard.push(`${name} left ${r.request.id} ${why}`),
		cancel: (m) => void heard.push(`${name} cancel ${m.id} ${m.reason}`),
	};
	return { keeper, heard };
}

/** Whether each timer set from now on keeps the process alive, in the order set. */
function timerRefs(): () => boolean[] {
	const spy = vi.spyOn(globalThis, "setTimeout");
	return () => spy.mock.results.map((r) => (r.value as { hasRef(): boolean }).hasRef());
}

describe("the book's timers", () => {
	it("a held record's timer comes due at its time, not before, telling its keeper the record and that time", () => {
		const book = new RequestBook();
		const { keeper: k, heard } = keeper();
		const r = record("r1");
		expect(book.add(r, k)).toBe(true);
		book.arm(r, Date.now() + 5_000);
		vi.advanceTimersByTime(4_999);
		expect(heard).toEqual([]);
		vi.advanceTimersByTime(1);
		expect(heard).toEqual(["keeper deadline r1 queued at 1005000"]);
		// Once due, it is due no more, and the same time armed again sets it again.
		vi.advanceTimersByTime(10_000);
		expect(heard).toHaveLength(1);
		book.arm(r, 1_020_000);
		vi.advanceTimersByTime(5_000);
		expect(heard).toEqual(["keeper deadline r1 queued at 1005000", "keeper deadline r1 queued at 1020000"]);
	});

	it("armed again, only the last time counts; NO_LIMIT stops it; a time already past comes due at once", () => {
		const book = new RequestBook();
		const { keeper: k, heard } = keeper();
		const r = record("r1");
		book.add(r, k);
		book.arm(r, Date.now() + 1_000);
		book.arm(r, Date.now() + 3_000);
		vi.advanceTimersByTime(2_000);
		expect(heard).toEqual([]);
		book.arm(r, 0);
		vi.advanceTimersByTime(60_000);
		expect(heard).toEqual([]);
		book.arm(r, Date.now() - 500);
		vi.advanceTimersByTime(0);
		expect(heard).toEqual([`keeper deadline r1 queued at ${Date.now() - 500}`]);
	});

	it("a held record's timer keeps the process alive; a late or parked record's does not", () => {
		const refs = timerRefs();
		const book = new RequestBook(late());
		const { keeper: k } = keeper();
		const [held, goesLate, parked] = [record("held", Date.now() + 9_000), record("late"), record("parked", Date.now() + 9_000)];
		for (const r of [held, goesLate, parked]) book.add(r, k);
		book.arm(held, held.request.deadline);
		book.toLate(goesLate, k);
		book.park(parked, 1_000);
		expect(refs()).toEqual([true, false, false]);
	});

	it("the timer of a record not in the book, or of another record of its id, is never set", () => {
		const book = new RequestBook(late());
		const { keeper: k, heard } = keeper();
		const inBook = record("r1");
		book.add(inBook, k);
		const other = record("r1");
		const stranger = record("r2", Date.now() + 1_000);
		book.arm(other, Date.now() + 1_000);
		book.arm(stranger, Date.now() + 1_000);
		book.park(other, 1_000);
		expect(book.toLate(other, k)).toBeUndefined();
		expect(book.adopt(other, k)).toBe(false);
		book.remove(other);
		vi.advanceTimersByTime(10_000);
		expect(heard).toEqual([]);
		expect(other.state).toEqual({ is: "queued" });
		expect(book.get("r1")).toBe(inBook);
		expect(book.parked()).toEqual([]);
		expect(book.late()).toEqual([]);
	});

	it("a record taken twice by id keeps the first: the second is refused, and only the first is kept by its keeper", () => {
		const book = new RequestBook();
		const first = keeper("first");
		const second = keeper("second");
		const r = record("r1");
		expect(book.add(r, first.keeper)).toBe(true);
		const again = record("r1");
		expect(book.add(again, second.keeper)).toBe(false);
		expect(book.get("r1")).toBe(r);
		expect(book.get("r2")).toBeUndefined();
		expect(book.keeps(r, first.keeper)).toBe(true);
		expect(book.keeps(r, second.keeper)).toBe(false);
		expect(book.keeps(again, first.keeper)).toBe(false);
		book.remove(r);
		expect(book.keeps(r, first.keeper)).toBe(false);
		expect(book.get("r1")).toBeUndefined();
	});

	it("removed, a record's timer is stopped and its id is free again", () => {
		const book = new RequestBook();
		const { keeper: k, heard } = keeper();
		const r = record("r1");
		book.add(r, k);
		book.arm(r, Date.now() + 1_000);
		book.remove(r);
		vi.advanceTimersByTime(5_000);
		expect(heard).toEqual([]);
		expect(book.add(record("r1"), k)).toBe(true);
	});
});

describe("parked records", () => {
	it("parked: its timer comes due at the grace's end, or at its call's deadline when that comes first, told to its keeper as parked", () => {
		const book = new RequestBook();
		const { keeper: k, heard } = keeper();
		const [graceFirst, deadlineFirst] = [record("grace", Date.now() + 5_000), record("deadline", Date.now() + 400)];
		book.add(graceFirst, k);
		book.add(deadlineFirst, k);
		book.park(graceFirst, 1_000);
		book.park(deadlineFirst, 1_000);
		expect(graceFirst.state).toEqual({ is: "parked" });
		vi.advanceTimersByTime(399);
		expect(heard).toEqual([]);
		vi.advanceTimersByTime(1);
		expect(heard).toEqual(["keeper deadline deadline parked at 1000400"]);
		vi.advanceTimersByTime(599);
		expect(heard).toHaveLength(1);
		vi.advanceTimersByTime(1);
		expect(heard).toEqual(["keeper deadline deadline parked at 1000400", "keeper deadline grace parked at 1001000"]);
	});

	it("parked without a call deadline (a call with no budget): its timer comes due at the grace's end all the same", () => {
		const book = new RequestBook();
		const { keeper: k, heard } = keeper();
		const r = record("no-budget", 0);
		book.add(r, k);
		book.park(r, 1_000);
		vi.advanceTimersByTime(1_000);
		expect(heard).toEqual(["keeper deadline no-budget parked at 1001000"]);
	});

	it("a call with no budget handed over with no next host: its asker hears no-host at the grace's end, not never", async () => {
		const { ask, handle, role } = relay();
		const ends: string[] = [];
		handle.bus.on(OBSERVER_EVENTS.settled, (event) => void ends.push(event.outcome.end ?? ""));
		const call = track(ask([{ question: "Which database?" }], { budgetMs: 0 }));
		await flush(vi);
		role.release("new", "The host session ended (new).");
		await vi.advanceTimersByTimeAsync(999);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(ends).toEqual(["host-gone"]);
		expect(call.envelope).toMatchObject({ status: "no-host" });
		expect(requestBook(handle).parked()).toEqual([]);
	});

	it("parked ones are listed in the order parked; adopted, one is queued again under its new keeper, its timer stopped", () => {
		const book = new RequestBook();
		const old = keeper("old");
		const next = keeper("next");
		const [a, b, c] = [record("a"), record("b"), record("c")];
		for (const r of [c, a, b]) book.add(r, old.keeper);
		for (const r of [b, a, c]) book.park(r, 1_000);
		expect(book.parked()).toEqual([b, a, c]);
		expect(book.adopt(a, next.keeper)).toBe(true);
		expect(a.state).toEqual({ is: "queued" });
		expect(book.parked()).toEqual([b, c]);
		expect(book.keeps(a, next.keeper)).toBe(true);
		expect(book.keeps(b, old.keeper)).toBe(true);
		// Taken on already, or never parked: nothing to adopt.
		expect(book.adopt(a, next.keeper)).toBe(false);
		vi.advanceTimersByTime(1_000);
		expect(old.heard).toEqual(["old deadline b parked at 1001000", "old deadline c parked at 1001000"]);
		expect(next.heard).toEqual([]);
	});

	it("an asker's cancel is heard only while something is parked, and told to the keeper of that parked record only", () => {
		const bus = new EventEmitter();
		const book = new RequestBook(undefined, bus);
		const old = keeper("old");
		const [parked, held] = [record("parked"), record("held")];
		book.add(parked, old.keeper);
		book.add(held, old.keeper);
		expect(bus.listenerCount("cancel")).toBe(0);
		book.park(parked, 1_000);
		expect(bus.listenerCount("cancel")).toBe(1);
		const cancel = (id: unknown, reason = "cancelled") => bus.emit("cancel", { v: 1, id, reason } as RelayCancel);
		cancel("held");
		cancel("nobody");
		cancel(42);
		bus.emit("cancel", undefined);
		expect(old.heard).toEqual([]);
		cancel("parked", "timeout");
		expect(old.heard).toEqual(["old cancel parked timeout"]);
		// Parked a second one: still one listener.
		book.park(held, 1_000);
		expect(bus.listenerCount("cancel")).toBe(1);
		book.adopt(held, keeper("next").keeper);
		expect(bus.listenerCount("cancel")).toBe(1);
		cancel("held");
		expect(old.heard).toEqual(["old cancel parked timeout"]);
		book.remove(parked);
		expect(bus.listenerCount("cancel")).toBe(0);
		cancel("parked");
		expect(old.heard).toHaveLength(1);
	});

	it("a parked record that goes late is no longer parked: the cancels are no more heard for it", () => {
		const bus = new EventEmitter();
		const book = new RequestBook(late(), bus);
		const { keeper: k, heard } = keeper();
		const r = record("r1");
		book.add(r, k);
		book.park(r, 1_000);
		book.toLate(r, k);
		expect(book.parked()).toEqual([]);
		expect(bus.listenerCount("cancel")).toBe(0);
		bus.emit("cancel", { v: 1, id: "r1", reason: "cancelled" });
		expect(heard).toEqual([]);
	});

	it("a book with no cancel source parks and adopts all the same", () => {
		const book = new RequestBook();
		const { keeper: k } = keeper();
		const r = record("r1");
		book.add(r, k);
		book.park(r, 1_000);
		expect(book.parked()).toEqual([r]);
		expect(book.adopt(r, k)).toBe(true);
		expect(book.parked()).toEqual([]);
	});
});

describe("the process's books", () => {
	it("one book per shared handle, whoever asks; late settings given later replace the book's, none given keeps them", () => {
		const handle = createHandle();
		const book = requestBook(handle);
		expect(book.lateOn).toBe(false);
		expect(requestBook(handle, late())).toBe(book);
		expect(book.lateOn).toBe(true);
		expect(requestBook(handle)).toBe(book);
		expect(book.lateOn).toBe(true);
		requestBook(handle, late({ on: false }));
		expect(book.lateOn).toBe(false);
		expect(requestBook(createHandle())).not.toBe(book);
	});

	it("the books are in the process's registry under checkpoint-bridge.book, where every copy of the extension finds them", () => {
		const handle = createHandle();
		const book = requestBook(handle);
		const books = (globalThis as Record<symbol, WeakMap<object, RequestBook> | undefined>)[Symbol.for("checkpoint-bridge.book")];
		expect(books?.get(handle)).toBe(book);
	});

	it("made with late settings, a handle's book has them from the start, and hears the handle's bus while parked", () => {
		const handle = createHandle();
		const book = requestBook(handle, late());
		expect(book.lateOn).toBe(true);
		const { keeper: k, heard } = keeper();
		const r = record("r1");
		book.add(r, k);
		book.park(r, 1_000);
		handle.bus.emit("cancel", { v: 1, id: "r1", reason: "cancelled" });
		expect(heard).toEqual(["keeper cancel r1 cancelled"]);
		book.remove(r);
	});
});
