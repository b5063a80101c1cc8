/**
 * Why a call ended `timeout-or-cancelled`: every such envelope carries `reason`, and the note's
 * words follow it, so a model can tell "the human said no" (`dismissed`) from "nobody was there"
 * (`dialog-timeout`). With fake timers, through the real relay and pi's dialogs (a fake UI).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCall } from "../../../extensions/checkpoint-bridge/core/asking/call.ts";
import { PROTOCOL_VERSION } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { END_REASONS } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { flush, relay, track } from "../support/relay.ts";

const Q = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("reason on every timeout-or-cancelled envelope", () => {
	it("Esc (the dialog closed by the human): dismissed, and the note says the user dismissed it", async () => {
		const { ask, fake } = relay();
		const state = track(ask(Q, { budgetMs: 60_000, dialogTimeoutMs: 10_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(4_000);
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(state.envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed" });
		expect(state.envelope!.note).toMatch(/^The user dismissed question 1 of 1; 0 answered\./);
	});

	it("a question's own time running out (the host's timer, or pi closing the dialog at its own timeout): dialog-timeout, and the note says nobody answered", async () => {
		for (const closedBy of ["host", "pi"] as const) {
			const { ask, fake } = relay();
			const state = track(ask(Q, { budgetMs: 60_000, dialogTimeoutMs: 10_000 }));
			await flush(vi);
			// pi gets the same timeout and may close its dialog a millisecond before the host's timer fires.
			await vi.advanceTimersByTimeAsync(closedBy === "pi" ? 9_999 : 10_000);
			if (closedBy === "pi") fake.current()!.answer(undefined);
			await flush(vi);
			expect(state.envelope, closedBy).toMatchObject({ status: "timeout-or-cancelled", reason: "dialog-timeout" });
			expect(state.envelope!.note).toMatch(/^Nobody answered question 1 of 1 within its own time limit \(the user may not be there\); 0 answered\./);
		}
	});

	it("a cancel from outside the terminal (the web page, another extension): dismissed", async () => {
		const { ask, handle } = relay();
		const state = track(ask(Q, { budgetMs: 60_000, dialogTimeoutMs: 10_000 }));
		await flush(vi);
		const requestId = handle.snapshot()!.open[0]!.requestId;
		handle.bus.emit("answer", { requestId, cancel: true }, () => {});
		await flush(vi);
		expect(state.envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed" });
	});

	it("a host that names no reason it knows (an older one) counts as the human's; no other status carries one", async () => {
		for (const reason of [undefined, "eaten-by-a-grue"]) {
			const envelope = await runCall({ asker: { label: "a", sessionId: "a" }, questions: Q, budgetMs: 1_000, dialogTimeoutMs: 1_000 }, (call) =>
				queueMicrotask(() =>
					call.reply({ v: PROTOCOL_VERSION, id: call.id, kind: "result", status: "timeout-or-cancelled", answers: [], ...(reason ? { reason } : {}) } as never),
				),
			);
			expect(envelope.reason).toBe("dismissed");
		}
		const { ask } = relay();
		const timedOut = track(ask(Q, { budgetMs: 5_000, dialogTimeoutMs: 10_000 }));
		await vi.advanceTimersByTimeAsync(5_000);
		expect(timedOut.envelope?.status).toBe("timeout");
		expect(timedOut.envelope).not.toHaveProperty("reason");
		expect(END_REASONS).toEqual(["dismissed", "dialog-timeout"]);
	});
});
