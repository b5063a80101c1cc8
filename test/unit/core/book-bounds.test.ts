/**
 * Late records in the book (core/host/book.ts, ADR-0031), read on the book itself with keepers that write
 * down what they are told: what going late does to the record, the three bounds (per asker, in all, in
 * bytes) each at its edge, which record makes room, shown again and back to late, who hears of an expiry,
 * and a keeper that fails or moves the record while being told. Fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Keeper, type LateRequest, RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { type LateConfig, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import type { RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";

const NOW = 1_000_000;
beforeEach(() => void vi.useFakeTimers({ now: NOW }));
afterEach(() => void vi.useRealTimers());

const late = (over: Partial<LateConfig> = {}): LateConfig => ({ ...readLateConfig({}), expiryMs: 60_000, dialogTimeoutMs: 120_000, ...over });

/** A record as the host takes it in, asked by `sessionId`, its one question `text`. */
function record(id: string, sessionId = "asker", text = `${id}?`): RequestRecord {
	const questions = [{ question: text, kind: "text" as const }];
	return {
		request: { v: 1, id, asker: { label: sessionId, sessionId }, questions, deadline: NOW + 3_000, dialogTimeoutMs: 3_000, createdAt: 0 },
		questions,
		entries: [],
		queuedAt: 0,
		state: { is: "queued" },
	};
}

/** Bytes the late bound counts for a record's questions. */
const bytesOf = (r: RequestRecord) => Buffer.byteLength(JSON.stringify(r.questions));

/** A keeper that writes down what the book tells it, into `heard` (shared by several keepers when given). */
function keeper(name = "keeper", heard: string[] = []) {
	const keeper: Keeper = {
		deadlineCame: (r, at) => void heard.push(`${name} deadline ${r.request.id} at ${at}`),
		lateLeft: (r, why) => void heard.push(`${name} left ${r.request.id} ${why}`),
		cancel: (m) => void heard.push(`${name} cancel ${m.id}`),
	};
	return { keeper, heard };
}

/** Takes `r` into `book` and sends it late there at once. */
function toLate(book: RequestBook, r: RequestRecord, k: Keeper): LateRequest | undefined {
	book.add(r, k);
	return book.toLate(r, k);
}

const ids = (book: RequestBook) => book.late().map((l) => l.request.id);

describe("going late", () => {
	it("the record itself goes late: since now, expiring after the expiry, with the host's dialog time, kept by the new keeper", () => {
		const book = new RequestBook(late());
		const first = keeper("first");
		const second = keeper("second");
		const r = record("r1");
		book.add(r, first.keeper);
		const went = book.toLate(r, second.keeper);
		expect(went).toBe(r);
		expect(r.state).toEqual({ is: "late", since: NOW, expiresAt: NOW + 60_000 });
		expect(r.request).toMatchObject({ id: "r1", deadline: NOW + 3_000, dialogTimeoutMs: 120_000 });
		expect(r.wasLate).toBeUndefined();
		expect(book.keeps(r, second.keeper)).toBe(true);
		expect(book.late()).toEqual([r]);
		expect(book.lateCount).toBe(1);
		vi.advanceTimersByTime(59_999);
		expect(second.heard).toEqual([]);
		vi.advanceTimersByTime(1);
		expect(second.heard).toEqual(["second left r1 expired"]);
		expect(first.heard).toEqual([]);
		// It expired: it left the book, whatever its keeper did.
		expect(book.get("r1")).toBeUndefined();
		expect(book.lateCount).toBe(0);
	});

	it("nothing goes late in a book without late settings, with them off, or when the record is not the one in the book", () => {
		const { keeper: k } = keeper();
		for (const book of [new RequestBook(), new RequestBook(late({ on: false }))]) {
			const r = record("r1");
			expect(toLate(book, r, k)).toBeUndefined();
			expect(r.state).toEqual({ is: "queued" });
			expect(book.lateOn).toBe(false);
		}
		const book = new RequestBook(late());
		expect(book.lateOn).toBe(true);
		book.add(record("r1"), k);
		const stranger = record("r1");
		expect(book.toLate(stranger, k)).toBeUndefined();
		expect(stranger.state).toEqual({ is: "queued" });
		expect(book.late()).toEqual([]);
		// Settings given later hold from then on.
		const later = new RequestBook();
		later.lateConfig = late();
		expect(later.lateOn).toBe(true);
		expect(toLate(later, record("r2"), k)?.state.is).toBe("late");
	});

	it("late again after being shown: as late as it was, its expiry unchanged, even when the expiry setting changed meanwhile", () => {
		const book = new RequestBook(late());
		const { keeper: k, heard } = keeper();
		const r = record("r1");
		toLate(book, r, k);
		vi.advanceTimersByTime(20_000);
		expect(book.reopen("r1", k)).toBe(r);
		expect(r.state).toEqual({ is: "queued" });
		expect(r.wasLate).toEqual({ is: "late", since: NOW, expiresAt: NOW + 60_000 });
		expect(book.late()).toEqual([]);
		expect(book.lateCount).toBe(0);
		// Shown again, no expiry runs.
		vi.advanceTimersByTime(50_000);
		expect(heard).toEqual([]);
		book.lateConfig = late({ expiryMs: 1_000_000 });
		expect(book.toLate(r, k)).toBe(r);
		expect(r.state).toEqual({ is: "late", since: NOW, expiresAt: NOW + 60_000 });
		expect(r.wasLate).toBeUndefined();
		// Its expiry has passed: it leaves at once.
		vi.advanceTimersByTime(0);
		expect(heard).toEqual(["keeper left r1 expired"]);
		expect(book.get("r1")).toBeUndefined();
	});

	it("reopened, it is kept by the host that shows it; only a late record reopens", () => {
		const book = new RequestBook(late());
		const old = keeper("old");
		const shows = keeper("shows");
		const r = record("r1");
		book.add(record("held"), old.keeper);
		toLate(book, r, old.keeper);
		expect(book.reopen("held", shows.keeper)).toBeUndefined();
		expect(book.reopen("nobody", shows.keeper)).toBeUndefined();
		expect(book.reopen("r1", shows.keeper)).toBe(r);
		expect(book.keeps(r, shows.keeper)).toBe(true);
		expect(book.reopen("r1", shows.keeper)).toBeUndefined();
	});

	it("a late record going late again is not counted twice: it takes no room from itself, in number or in bytes", () => {
		const r = record("r1");
		const book = new RequestBook(late({ maxPerAsker: 1, maxTotal: 1, maxBytes: bytesOf(r) }));
		const { keeper: k, heard } = keeper();
		toLate(book, r, k);
		expect(book.toLate(r, k)).toBe(r);
		expect(book.toLate(r, k)).toBe(r);
		expect(heard).toEqual([]);
		expect(ids(book)).toEqual(["r1"]);
		expect(book.lateCount).toBe(1);
		// And the bytes were not counted twice: one of another asker of the same size fits once r1 has left.
		book.remove(r);
		expect(toLate(book, record("r2", "other"), k)?.state.is).toBe("late");
	});

	it("the late ones' keeper changes for all of them at once (the host that holds the role hears their expiry)", () => {
		const book = new RequestBook(late());
		const heard: string[] = [];
		const old = keeper("old", heard);
		const next = keeper("next", heard);
		toLate(book, record("a"), old.keeper);
		vi.advanceTimersByTime(1_000);
		toLate(book, record("b", "other"), old.keeper);
		book.add(record("held"), old.keeper);
		book.keepLate(next.keeper);
		expect(book.keeps(book.get("held")!, old.keeper)).toBe(true);
		vi.advanceTimersByTime(60_000);
		expect(heard).toEqual(["next left a expired", "next left b expired"]);
	});
});

describe("the late bounds", () => {
	it("per asker: at the bound, the asker's oldest late one leaves (too-many) for its newest; another asker's stays", () => {
		const book = new RequestBook(late({ maxPerAsker: 2 }));
		const { keeper: k, heard } = keeper();
		toLate(book, record("a1", "a"), k);
		toLate(book, record("b1", "b"), k);
		toLate(book, record("a2", "a"), k);
		expect(heard).toEqual([]);
		expect(ids(book)).toEqual(["a1", "b1", "a2"]);
		toLate(book, record("a3", "a"), k);
		expect(heard).toEqual(["keeper left a1 too-many"]);
		expect(ids(book)).toEqual(["b1", "a2", "a3"]);
		expect(book.get("a1")).toBeUndefined();
	});

	it("per asker with a bound of one: each new late one replaces the last", () => {
		const book = new RequestBook(late({ maxPerAsker: 1 }));
		const { keeper: k, heard } = keeper();
		toLate(book, record("a1", "a"), k);
		toLate(book, record("a2", "a"), k);
		toLate(book, record("a3", "a"), k);
		expect(heard).toEqual(["keeper left a1 too-many", "keeper left a2 too-many"]);
		expect(ids(book)).toEqual(["a3"]);
	});

	it("in all: up to the bound every asker's is kept; past it, room is made from the asker's own, and one with none of its own is not kept", () => {
		const book = new RequestBook(late({ maxTotal: 3 }));
		const { keeper: k, heard } = keeper();
		for (const [id, asker] of [
			["a1", "a"],
			["b1", "b"],
			["a2", "a"],
		] as const)
			expect(toLate(book, record(id, asker), k)).toBeDefined();
		expect(ids(book)).toEqual(["a1", "b1", "a2"]);
		const c = record("c1", "c");
		book.add(c, k);
		expect(book.toLate(c, k)).toBeUndefined();
		// Not kept, the record is as it was.
		expect(c.state).toEqual({ is: "queued" });
		expect(c.request.dialogTimeoutMs).toBe(3_000);
		expect(heard).toEqual([]);
		expect(toLate(book, record("b2", "b"), k)?.request.id).toBe("b2");
		expect(heard).toEqual(["keeper left b1 too-many"]);
		expect(ids(book)).toEqual(["a1", "a2", "b2"]);
	});

	it("in bytes: up to the bound exactly it is kept; one byte over, room is made from the asker's own, or it is not kept", () => {
		const [a1, b1, a2] = [record("a1", "a"), record("b1", "b"), record("a2", "a")];
		const size = bytesOf(a1);
		const book = new RequestBook(late({ maxBytes: 2 * size }));
		const { keeper: k, heard } = keeper();
		toLate(book, a1, k);
		toLate(book, b1, k);
		expect(ids(book)).toEqual(["a1", "b1"]);
		toLate(book, a2, k);
		expect(heard).toEqual(["keeper left a1 too-many"]);
		expect(ids(book)).toEqual(["b1", "a2"]);
		const c1 = record("c1", "c");
		book.add(c1, k);
		expect(book.toLate(c1, k)).toBeUndefined();
		expect(ids(book)).toEqual(["b1", "a2"]);
	});

	it("in bytes: a record bigger than the bound alone is kept while nothing else is late, and its bytes leave with it", () => {
		const big = record("big", "a", "q".repeat(500));
		const book = new RequestBook(late({ maxBytes: 100 }));
		const { keeper: k, heard } = keeper();
		expect(toLate(book, big, k)).toBe(big);
		const small = record("small", "b", "s");
		book.add(small, k);
		expect(book.toLate(small, k)).toBeUndefined();
		book.reopen("big", k);
		expect(book.toLate(small, k)).toBe(small);
		expect(heard).toEqual([]);
	});

	it("a late record removed frees its room, in number and in bytes", () => {
		const a1 = record("a1", "a");
		const book = new RequestBook(late({ maxTotal: 1, maxBytes: bytesOf(a1) }));
		const { keeper: k } = keeper();
		toLate(book, a1, k);
		book.remove(a1);
		expect(book.late()).toEqual([]);
		expect(toLate(book, record("b1", "b"), k)?.state.is).toBe("late");
	});

	it("a late record removed or shown again gives back its bytes while others stay late: another asker's fits in them", () => {
		const [a1, b1] = [record("a1", "a"), record("b1", "b")];
		const book = new RequestBook(late({ maxBytes: 2 * bytesOf(a1) }));
		const { keeper: k } = keeper();
		toLate(book, a1, k);
		toLate(book, b1, k);
		book.remove(a1);
		const c1 = record("c1", "c");
		expect(toLate(book, c1, k)).toBe(c1);
		book.reopen("c1", k);
		expect(toLate(book, record("d1", "d"), k)?.state.is).toBe("late");
		expect(ids(book)).toEqual(["b1", "d1"]);
	});

	it("the asker's own making room are told to their own keepers, oldest first", () => {
		const book = new RequestBook(late({ maxPerAsker: 3, maxTotal: 3 }));
		const heard: string[] = [];
		toLate(book, record("a1", "a"), keeper("k1", heard).keeper);
		toLate(book, record("a2", "a"), keeper("k2", heard).keeper);
		toLate(book, record("b1", "b"), keeper("k3", heard).keeper);
		toLate(book, record("a3", "a"), keeper("k4", heard).keeper);
		expect(heard).toEqual(["k1 left a1 too-many"]);
		expect(ids(book)).toEqual(["a2", "b1", "a3"]);
	});
});

describe("a late record leaving", () => {
	it("leaves the book even when its keeper fails while told", () => {
		const book = new RequestBook(late());
		const failing: Keeper = {
			deadlineCame: () => {},
			lateLeft: () => {
				throw new Error("the keeper failed");
			},
			cancel: () => {},
		};
		const r = record("r1");
		toLate(book, r, failing);
		expect(() => vi.advanceTimersByTime(60_000)).toThrow("the keeper failed");
		expect(book.get("r1")).toBeUndefined();
		expect(book.lateCount).toBe(0);
	});

	it("is not removed after its keeper moved it on while told (shown again), nor is a new record of its id", () => {
		const book = new RequestBook(late());
		const heard: string[] = [];
		const reopens: Keeper = { ...keeper("k", heard).keeper, lateLeft: (l) => void book.reopen(l.request.id, reopens) };
		const r = record("r1");
		toLate(book, r, reopens);
		vi.advanceTimersByTime(60_000);
		expect(book.get("r1")).toBe(r);
		expect(r.state).toEqual({ is: "queued" });

		const replaced = record("r2");
		const replaces: Keeper = {
			...keeper("k", heard).keeper,
			lateLeft: (l) => {
				book.remove(l);
				book.add(replaced, replaces);
				book.toLate(replaced, replaces);
			},
		};
		toLate(book, record("r2"), replaces);
		vi.advanceTimersByTime(60_000);
		expect(book.get("r2")).toBe(replaced);
		expect(replaced.state.is).toBe("late");
	});

	it("is not removed when its keeper, while told, took the same record in again and sent it late anew", () => {
		const book = new RequestBook(late());
		const r = record("r1");
		const again: Keeper = {
			...keeper().keeper,
			lateLeft: (l) => {
				book.remove(l);
				book.add(l, again);
				book.toLate(l, again);
			},
		};
		toLate(book, r, again);
		vi.advanceTimersByTime(60_000);
		expect(book.get("r1")).toBe(r);
		expect(book.late()).toEqual([r]);
	});

	it("an expiry is told as expired, never as a deadline; a held record's deadline never as a late one leaving", () => {
		const book = new RequestBook(late());
		const { keeper: k, heard } = keeper();
		toLate(book, record("late"), k);
		const held = record("held");
		book.add(held, k);
		book.arm(held, NOW + 60_000);
		vi.advanceTimersByTime(60_000);
		expect(heard).toEqual(["keeper left late expired", `keeper deadline held at ${NOW + 60_000}`]);
		expect(book.get("held")).toBe(held);
	});
});
