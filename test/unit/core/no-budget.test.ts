/**
 * No time limit: `timeoutMs: 0` / CHECKPOINT_BRIDGE_TIMEOUT_MS=0 is a call without a budget, and
 * CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS=0 a dialog without a limit of its own. Such a call waits until
 * it is answered, dismissed or aborted, with fake timers far past the one-hour ceiling; every other
 * bound (the per-asker cap, a host that goes away, a dialog's own limit) still holds.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { callBudget, MAX_TIMEOUT_MS, NO_LIMIT, readConfig } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { MAX_OPEN_PER_ASKER } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { flush, relay, track } from "../support/relay.ts";

const Q = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];
const HOURS = 3_600_000;

describe("0 is no limit", () => {
	it("CHECKPOINT_BRIDGE_TIMEOUT_MS=0 and CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS=0 read as no limit, without a warning; timeoutMs: 0 is a call without a budget", () => {
		const config = readConfig({ CHECKPOINT_BRIDGE_TIMEOUT_MS: "0", CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "0" });
		expect(config).toEqual({ callTimeoutMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT, warnings: [] });
		expect(callBudget(undefined, config)).toBe(NO_LIMIT);
		expect(callBudget(0, readConfig({}))).toBe(NO_LIMIT);
		// Anything else below the floor is still clamped up to it, not read as no limit.
		expect(callBudget(0.4, readConfig({}))).toBe(1_000);
		expect(callBudget(-5, readConfig({}))).toBe(1_000);
	});
});

describe("a call without a budget", () => {
	beforeEach(() => void vi.useFakeTimers());
	afterEach(() => void vi.useRealTimers());

	it("waits far past the one-hour ceiling with its dialog open and no timeout on it, then takes the answer", async () => {
		const { ask, fake, handle } = relay();
		const state = track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT }));
		await flush(vi);
		const dialog = fake.current()!;
		// pi gets no timeout, so it shows no countdown and never closes the dialog by itself.
		expect(dialog.timeout).toBeUndefined();
		expect(handle.snapshot()!.open[0]!.deadline).toBe(NO_LIMIT);
		await vi.advanceTimersByTimeAsync(5 * HOURS);
		expect(state.envelope).toBeUndefined();
		expect(dialog.closedBy).toBeUndefined();
		dialog.answer("SQLite");
		await flush(vi);
		expect(state.envelope).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }] });
	});

	it("with the dialog's own limit: the dialog still closes at that limit, as the human's (timeout-or-cancelled), not the call's", async () => {
		const { ask, fake } = relay();
		const state = track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: 180_000 }));
		await flush(vi);
		expect(fake.current()!.timeout).toBe(180_000);
		await vi.advanceTimersByTimeAsync(179_999);
		expect(state.envelope).toBeUndefined();
		// pi closes its dialog at its timeout; the fake UI does it by hand.
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(state.envelope?.status).toBe("timeout-or-cancelled");
	});

	it("a budget with a dialog without a limit of its own: the budget still ends it", async () => {
		const { ask, fake } = relay();
		const state = track(ask(Q, { budgetMs: 60_000, dialogTimeoutMs: NO_LIMIT }));
		await flush(vi);
		expect(fake.current()!.timeout).toBe(60_000);
		await vi.advanceTimersByTimeAsync(60_000);
		expect(state.envelope?.status).toBe("timeout");
		expect(fake.dialogs[0]!.closedBy).toBe("signal");
	});

	it("ends when the tool call is aborted, and when the human dismisses it", async () => {
		const { ask, fake } = relay();
		const abort = new AbortController();
		const aborted = track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT, signal: abort.signal }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(2 * HOURS);
		abort.abort();
		await flush(vi);
		expect(aborted.envelope?.status).toBe("cancelled");
		expect(fake.dialogs[0]!.closedBy).toBe("signal");
		const dismissed = track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT }));
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(dismissed.envelope?.status).toBe("timeout-or-cancelled");
	});

	it(`the per-asker cap still holds: ${MAX_OPEN_PER_ASKER} open without a budget, the next refused`, async () => {
		const { ask } = relay();
		const open = Array.from({ length: MAX_OPEN_PER_ASKER }, () => track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT, label: "flood" })));
		const refused = track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT, label: "flood" }));
		await flush(vi);
		expect(refused.envelope?.status).toBe("error");
		expect(refused.envelope?.note).toContain(String(MAX_OPEN_PER_ASKER));
		await vi.advanceTimersByTimeAsync(2 * MAX_TIMEOUT_MS);
		expect(open.every((s) => s.envelope === undefined)).toBe(true);
	});

	it("a host that goes away still ends it: no-host, with the host's note", async () => {
		const { ask, role } = relay();
		const state = track(ask(Q, { budgetMs: NO_LIMIT, dialogTimeoutMs: NO_LIMIT }));
		await vi.advanceTimersByTimeAsync(3 * HOURS);
		role.release("quit", "The host session ended.");
		await flush(vi);
		expect(state.envelope).toMatchObject({ status: "no-host" });
		expect(state.envelope?.note).toContain("The host session ended.");
	});
});
