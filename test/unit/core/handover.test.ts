import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Envelope } from "../../../extensions/checkpoint-bridge/tool/envelope.ts";
import { claimHostRole, HANDOVER_GRACE_MS } from "../../../extensions/checkpoint-bridge/core/host-role.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay } from "../support/relay.ts";

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

		await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS / 2);
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

	it("settles with no-host when no host claims within the grace period", async () => {
		const { role, ask } = relay();
		const call = track(ask([{ question: "Anyone?" }]));
		await flush(vi);
		role.release("reload", "The host session ended (reload).");
		await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS - 1);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(call.envelope).toMatchObject({ status: "no-host", note: expect.stringContaining(`No new host took over within ${HANDOVER_GRACE_MS} ms`) });
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
		expect(call.envelope?.status).toBe("timeout");
		const { ui } = fakeUI();
		claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "replacement" });
		await flush(vi);
		expect(handle.snapshot()?.open).toEqual([]);
	});
});
