import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay } from "../support/relay.ts";

/** The promise of docs/guarantees.md, written here rather than read from the code: a longer grace in the code fails these tests. */
const GRACE_MS = 1_000;

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function track(call: Promise<Envelope>) {
	const state: { envelope?: Envelope } = {};
	void call.then((e) => (state.envelope = e));
	return state;
}

describe("host replacement (/new, /resume, /fork, /reload)", () => {
	it("moves open and queued requests to the next host, shows the open dialog again there, and drops nothing", async () => {
		const { handle, fake, role, ask } = relay();
		const open = track(ask([{ question: "Open one?" }, { question: "Then this?" }], { label: "open" }));
		const queued = track(ask([{ question: "Queued one?" }], { label: "queued" }));
		await flush(vi);
		fake.current()!.answer("kept");
		await flush(vi);
		role.release("new", "The host session ended (new).");
		await flush(vi);
		expect(fake.open).toHaveLength(0);
		expect(open.envelope).toBeUndefined();

		await vi.advanceTimersByTimeAsync(GRACE_MS / 2);
		const next = fakeUI();
		claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "replacement" });
		await flush(vi);
		expect(next.dialogs.map((d) => d.title)).toEqual(["[open] (2/2) Then this?"]);
		next.current()!.answer("after");
		await flush(vi);
		next.current()!.answer("queued answer");
		await flush(vi);
		expect(next.dialogs.map((d) => d.title)).toEqual(["[open] (2/2) Then this?", "[queued] Queued one?"]);
		expect(open.envelope).toMatchObject({ status: "ok", answers: [{ answer: "kept" }, { answer: "after" }] });
		expect(queued.envelope).toMatchObject({ status: "ok", answers: [{ answer: "queued answer" }] });
		// The replaced host showed each question once; the open one was shown again by the new host only.
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[open] (1/2) Open one?", "[open] (2/2) Then this?"]);
	});

	it("a request handed over within the process goes on as the record it was: it settles with when it was first shown, not rebuilt at the next host", async () => {
		const { handle, fake, role, ask } = relay();
		const settled: { shownAt?: number; outcome: { end?: string } }[] = [];
		handle.bus.on("observe:settled", (event: { shownAt?: number; outcome: { end?: string } }) => void settled.push(event));
		const call = track(ask([{ question: "Still there?" }], { label: "asker" }));
		await flush(vi);
		expect(fake.open).toHaveLength(1);
		const firstShown = Date.now();
		await vi.advanceTimersByTimeAsync(5_000);
		role.release("new", "The host session ended (new).");
		await vi.advanceTimersByTimeAsync(GRACE_MS / 2);
		const next = fakeUI();
		claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "replacement" });
		await flush(vi);
		next.current()!.answer("yes");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		expect(settled).toEqual([expect.objectContaining({ shownAt: firstShown, outcome: expect.objectContaining({ end: "answered" }) })]);
	});

	it("an asker that gives up while its request is parked and no host comes: it settles once, cancelled, when the grace ends", async () => {
		const { handle, role, ask } = relay();
		const ends: string[] = [];
		handle.bus.on("observe:settled", (event: { outcome: { end?: string } }) => void ends.push(`${event.outcome.end}`));
		const controller = new AbortController();
		const call = track(ask([{ question: "Never mind?" }], { label: "quitter", signal: controller.signal }));
		const stays = track(ask([{ question: "Still asking?" }], { label: "stayer" }));
		await flush(vi);
		role.release("new", "The host session ended (new).");
		await flush(vi);
		controller.abort();
		await flush(vi);
		expect(call.envelope?.status).toBe("cancelled");
		await vi.advanceTimersByTimeAsync(GRACE_MS);
		expect(stays.envelope?.status).toBe("no-host");
		expect(ends.sort()).toEqual(["cancelled", "host-gone"]);
	});

	it("settles with no-host when no host claims within the grace period", async () => {
		const { role, ask } = relay();
		const call = track(ask([{ question: "Anyone?" }]));
		await flush(vi);
		role.release("reload", "The host session ended (reload).");
		await vi.advanceTimersByTimeAsync(GRACE_MS - 1);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(call.envelope).toMatchObject({ status: "no-host", note: expect.stringContaining(`No new host took over within ${GRACE_MS} ms`) });
	});

	it("on /resume, a host that claims just before the second is up still gets the request", async () => {
		const { handle, role, ask } = relay();
		const call = track(ask([{ question: "Still there?" }]));
		await flush(vi);
		role.release("resume", "The host session ended (resume).");
		await vi.advanceTimersByTimeAsync(GRACE_MS - 1);
		const next = fakeUI();
		claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "resumed" });
		await flush(vi);
		expect(next.dialogs.map((d) => d.title)).toEqual(["[child] Still there?"]);
		// The grace timer is gone with the hand-over: the call waits for the answer, not for the grace.
		await vi.advanceTimersByTimeAsync(GRACE_MS * 10);
		expect(call.envelope).toBeUndefined();
		next.current()!.answer("yes");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
	});

	it("a host that gives up waiting for the next host returns the answers given before the hand-over", async () => {
		const { fake, role, ask } = relay();
		const call = track(ask([{ question: "First?" }, { question: "Second?" }]));
		await flush(vi);
		fake.current()!.answer("kept");
		await flush(vi);
		role.release("fork", "The host session ended (fork).");
		await vi.advanceTimersByTimeAsync(GRACE_MS);
		expect(call.envelope).toMatchObject({ status: "no-host", answers: [{ question: "First?", answer: "kept" }] });
	});

	it("a released host takes no more requests, cancels or outside answers, and clears its status line", async () => {
		const statuses: (string | undefined)[] = [];
		const { handle, fake, role, ask } = relay();
		fake.ui.setStatus = (_key: string, text: string | undefined) => void statuses.push(text);
		const call = track(ask([{ question: "Carried?" }]));
		await flush(vi);
		expect(statuses.at(-1)).toMatch(/shown: child \(0 min\)/);
		role.release("new", "The host session ended (new).");
		expect(statuses.at(-1)).toBeUndefined();
		const next = fakeUI();
		claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "replacement" });
		await flush(vi);
		const requestId = handle.snapshot()!.open[0]!.requestId;
		const replies: unknown[] = [];
		handle.bus.emit("answer", { v: 1, requestId, answers: [{ question: "Carried?", answer: "from outside" }] }, (reply) => replies.push(reply));
		await flush(vi);
		// Answered once, by the new host: the released one no longer listens.
		expect(replies).toEqual([{ ok: true }]);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "from outside", source: "outside" }] });
		expect(fake.dialogs).toHaveLength(1);
		expect(handle.bus.listenerCount("request")).toBe(1);
		expect(handle.bus.listenerCount("cancel")).toBe(1);
		expect(handle.bus.listenerCount("answer")).toBe(1);
	});

	it("settles at once with no-host on quit", async () => {
		const { role, ask } = relay();
		const call = track(ask([{ question: "Anyone?" }]));
		await flush(vi);
		role.release("quit", "The host session ended (quit).");
		await flush(vi);
		expect(call.envelope?.status).toBe("no-host");
	});

	it("does not hand over a call whose asker gave up while it was parked", async () => {
		const { handle, role, ask } = relay();
		const abort = new AbortController();
		const call = track(ask([{ question: "Never mind?" }], { signal: abort.signal }));
		await flush(vi);
		role.release("new", "ended");
		abort.abort();
		await flush(vi);
		const next = fakeUI();
		claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "replacement" });
		await flush(vi);
		expect(call.envelope?.status).toBe("cancelled");
		expect(next.dialogs).toHaveLength(0);
	});

	it("lets a parked call run out of budget as a timeout", async () => {
		const { handle, role, ask } = relay();
		const call = track(ask([{ question: "Quick?" }], { budgetMs: 1_500 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		role.release("fork", "ended");
		await vi.advanceTimersByTimeAsync(500);
		// The asker was told a host held it: it waits for a verdict (ADR-0019), which the replacement gives.
		const { ui } = fakeUI();
		claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "replacement" });
		await flush(vi);
		expect(call.envelope?.status).toBe("timeout");
		expect(handle.snapshot()?.open).toEqual([]);
	});
});
