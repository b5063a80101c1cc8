/**
 * The book (core/host/book.ts, ADR-0031): one holder for every request of the process from taken to
 * gone. Each test reads the book itself and what askers and observers get: the record is the same
 * object in every state, a hand-over between two copies of the extension goes on with that object,
 * and a parked request whose asker gives up ends at once, as it was given up, whoever holds the role.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { requestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { OBSERVER_EVENTS, type SettledEvent } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { createHandle, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, track } from "../support/relay.ts";

const Q = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** Every settled event of `handle`'s bus: request id and end. */
function settled(handle: SharedHandle): [string, string | undefined][] {
	const heard: [string, string | undefined][] = [];
	handle.bus.on(OBSERVER_EVENTS.settled, (event: SettledEvent) => heard.push([event.requestId, event.outcome.end]));
	return heard;
}

/** A host on `handle` (a fresh one by default), its book made with late answers when `late`, and an asker. */
function host(late = false, handle = createHandle(), sessionId = "host-session") {
	const book = requestBook(handle, late ? { ...readLateConfig({}), expiryMs: 600_000 } : undefined);
	const fake = fakeUI();
	const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId });
	if (!role) throw new Error("the role must be free");
	const ask = (label: string, options: { budgetMs?: number; signal?: AbortSignal } = {}) =>
		track(askViaHost({ handle, asker: { label, sessionId: `${label}-session` }, questions: Q, budgetMs: 60_000, dialogTimeoutMs: 60_000, ...options }));
	return { handle, book, fake, role, ask };
}

describe("the book", () => {
	it("holds one record from taken to gone: queued, showing, late, shown again, back to late, answered late, the same object throughout, then nothing", async () => {
		const { ask, fake, handle, role, book } = host(true);
		const call = ask("child", { budgetMs: 3_000 });
		await flush(vi);
		const id = handle.snapshot()!.open[0]!.requestId;
		const record = book.get(id)!;
		const states: string[] = [];
		const look = () => {
			expect(book.get(id), "the same record object in every state").toBe(record);
			states.push(record.state.is);
		};
		look();
		await vi.advanceTimersByTimeAsync(3_000);
		expect(call.envelope?.status).toBe("timeout");
		look();
		role.host.reopenLate(id);
		await flush(vi);
		look();
		fake.current()!.answer(undefined);
		await flush(vi);
		look();
		role.host.reopenLate(id);
		await flush(vi);
		fake.current()!.answer("SQLite");
		await flush(vi);
		expect(states).toEqual(["showing", "late", "showing", "late"]);
		expect(record.state).toEqual({ is: "answered", end: "answered" });
		expect(book.get(id)).toBeUndefined();
		expect(book.lateCount).toBe(0);
	});

	it("a hand-over between two copies of the extension: the next copy's host takes on the very record the first one parked, and its answer reaches the asker", async () => {
		const { ask, handle, role } = host();
		const heard = settled(handle);
		const call = ask("child");
		await flush(vi);
		const id = handle.snapshot()!.open[0]!.requestId;
		const record = requestBook(handle).get(id)!;
		role.release("new", "The host session ended (new).");
		expect(record.state.is).toBe("parked");
		// Another copy of the modules, as a second extension path or a pi-subagents child loads them.
		vi.resetModules();
		const copy = await import("../../../extensions/checkpoint-bridge/core/host/host-role.ts");
		const copyBook = await import("../../../extensions/checkpoint-bridge/core/host/book.ts");
		expect(copy.claimHostRole).not.toBe(claimHostRole);
		const next = fakeUI();
		const nextRole = copy.claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "next-host" })!;
		await flush(vi);
		expect(copyBook.requestBook(handle).get(id), "the record the first copy parked, not a copy of it").toBe(record);
		expect(record.state.is).toBe("showing");
		next.current()!.answer("SQLite");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }] });
		// The grace of the first host's hand-over passes: nothing more ends.
		await vi.advanceTimersByTimeAsync(5_000);
		expect(heard).toEqual([[id, "answered"]]);
		nextRole.release("quit", "The host session ended.");
	});

	it("an asker that gives up while its request is parked ends it at once, as it gave up, before and after a next host claimed", async () => {
		const { ask, handle, role } = host();
		const heard = settled(handle);
		const controller = new AbortController();
		ask("aborts", { signal: controller.signal });
		const runsOut = ask("runs-out", { budgetMs: 500 });
		await flush(vi);
		const [aborts, runs] = handle.snapshot()!.open.map((o) => o.requestId) as [string, string];
		role.release("new", "The host session ended (new).");
		controller.abort();
		await flush(vi);
		// Parked, no host: it ended at once, cancelled, not at the grace's end as host-gone.
		expect(heard).toEqual([[aborts, "cancelled"]]);
		expect(requestBook(handle).get(aborts)).toBeUndefined();
		const next = host(false, handle, "next-host");
		await flush(vi);
		// Taken on by the next host, handed over again, and its budget runs out while parked there.
		next.role.release("new", "The host session ended (new).");
		await vi.advanceTimersByTimeAsync(500);
		expect(runsOut.envelope?.status).toBe("timeout");
		expect(heard).toEqual([
			[aborts, "cancelled"],
			[runs, "timeout"],
		]);
		await vi.advanceTimersByTimeAsync(5_000);
		expect(heard).toHaveLength(2);
		expect(requestBook(handle).parked()).toEqual([]);
		expect(handle.bus.listenerCount("cancel")).toBe(0);
	});

	it("parked with no next host: each request ends host-gone at the grace's end, once, by the host that parked it, and its asker hears no-host", async () => {
		const { ask, handle, role } = host();
		const heard = settled(handle);
		const calls = [ask("one"), ask("two")];
		await flush(vi);
		const ids = handle.snapshot()!.open.map((o) => o.requestId);
		role.release("new", "The host session ended (new).");
		await vi.advanceTimersByTimeAsync(999);
		expect(heard).toEqual([]);
		await vi.advanceTimersByTimeAsync(1);
		expect(heard).toEqual(ids.map((id) => [id, "host-gone"]));
		for (const call of calls) expect(call.envelope).toMatchObject({ status: "no-host", note: expect.stringContaining("No new host took over within 1000 ms") });
		expect(requestBook(handle).get(ids[0]!)).toBeUndefined();
	});
});
