/**
 * The host's footer keeps time: while questions wait, the status line is looked at again on a timer
 * (core/host/status-line.ts), so `(0 min)` becomes `(1 min)`, `(2 min)` without any change of its
 * own; the same text is not drawn twice, no timer runs once nothing waits, and none after the role
 * is released.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { STATUS_KEY, STATUS_TICK_MS } from "../../../extensions/checkpoint-bridge/core/host/status-line.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers({ now: new Date(2026, 11, 6, 9, 0, 0) }));
afterEach(() => vi.useRealTimers());

const MIN = 60_000;

/** A host whose UI records every footer status drawn. */
function hostWithFooter() {
	const handle = createHandle();
	const fake = fakeUI();
	const drawn: (string | undefined)[] = [];
	const ui = { ...fake.ui, setStatus: (key: string, text: string | undefined) => void (key === STATUS_KEY && drawn.push(text)) };
	const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: HOST_SESSION })!;
	const ask = (label: string, question: string) =>
		askViaHost({ handle, asker: { label, sessionId: `${label}-session` }, questions: [{ question }], budgetMs: 0, dialogTimeoutMs: 0 });
	return { fake, drawn, role, ask };
}

describe("the status line's minutes", () => {
	it("move while a question waits: (0 min), then (1 min) and (2 min) with no change of their own, each drawn once", async () => {
		const { fake, drawn, ask } = hostWithFooter();
		void ask("planner", "Which name?");
		void ask("reviewer", "Merge it?");
		await flush(vi);
		expect(drawn.at(-1)).toBe("checkpoint-bridge: shown: planner (0 min) · 1 queued: reviewer (0 min)");
		await vi.advanceTimersByTimeAsync(MIN);
		expect(drawn.at(-1)).toBe("checkpoint-bridge: shown: planner (1 min) · 1 queued: reviewer (1 min)");
		await vi.advanceTimersByTimeAsync(MIN);
		expect(drawn.at(-1)).toBe("checkpoint-bridge: shown: planner (2 min) · 1 queued: reviewer (2 min)");
		expect(new Set(drawn).size, "the same text is never drawn twice in a row").toBe(drawn.length);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(drawn.at(-1)).toBe("checkpoint-bridge: shown: reviewer (2 min)");
		fake.current()!.answer("Yes");
		await flush(vi);
		expect(drawn.at(-1)).toBeUndefined();
		// Nothing waits: no timer of the footer's runs, and nothing more is drawn.
		const count = drawn.length;
		expect(vi.getTimerCount()).toBe(0);
		await vi.advanceTimersByTimeAsync(10 * MIN);
		expect(drawn).toHaveLength(count);
	});

	it("say paused, then nothing, as the human pauses and resumes with nothing waiting; no timer runs", async () => {
		const { drawn, role } = hostWithFooter();
		role.host.pause();
		expect(drawn.at(-1)).toBe("checkpoint-bridge: paused · 0 waiting");
		await flush(vi);
		role.host.resume();
		await flush(vi);
		expect(drawn).toEqual(["checkpoint-bridge: paused · 0 waiting", undefined]);
		expect(vi.getTimerCount()).toBe(0);
	});

	it("stop once the role is released: nothing is drawn after the release, and no timer is left", async () => {
		const { drawn, role, ask } = hostWithFooter();
		void ask("planner", "Which name?");
		await flush(vi);
		expect(drawn.at(-1)).toBe("checkpoint-bridge: shown: planner (0 min)");
		role.host.pause();
		role.release("quit", "The host quit.");
		await flush(vi);
		const count = drawn.length;
		await vi.advanceTimersByTimeAsync(5 * STATUS_TICK_MS + MIN);
		expect(drawn).toHaveLength(count);
		expect(vi.getTimerCount()).toBe(0);
	});
});
