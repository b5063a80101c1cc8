/**
 * The cancel notices' window (core/shared/notice-window.ts) on its own, with fake timers: the words of
 * the first notice, the summary when the window ends and the window it opens, and what closing drops.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CANCEL_WINDOW_MS, CancelNotices } from "../../../extensions/checkpoint-bridge/core/shared/notice-window.ts";

beforeEach(() => void vi.useFakeTimers({ now: 0 }));
afterEach(() => void vi.useRealTimers());

function notices() {
	const sent: string[] = [];
	return { sent, cancels: new CancelNotices((message) => void sent.push(message)) };
}

describe("the first cancel of a window", () => {
	it("names the asker and quotes the question, counting the rest of the request's questions", () => {
		const { sent, cancels } = notices();
		for (const questions of [["Ship it?"], ["Ship it?", "Name?"], ["Ship it?", "Name?", "Port?"], []]) {
			cancels.cancelled("planner", questions);
			vi.advanceTimersByTime(CANCEL_WINDOW_MS);
		}
		expect(sent).toEqual([
			'checkpoint-bridge: [planner] cancelled its question "Ship it?"; it is no longer asked.',
			'checkpoint-bridge: [planner] cancelled its question "Ship it?" and 1 question more; it is no longer asked.',
			'checkpoint-bridge: [planner] cancelled its question "Ship it?" and 2 questions more; it is no longer asked.',
			'checkpoint-bridge: [planner] cancelled its question ""; it is no longer asked.',
		]);
	});

	it("quotes 80 characters whole, and cuts a longer question to 79 and an ellipsis", () => {
		const { sent, cancels } = notices();
		cancels.cancelled("a", ["x".repeat(80)]);
		vi.advanceTimersByTime(CANCEL_WINDOW_MS);
		cancels.cancelled("a", ["y".repeat(81)]);
		expect(sent[0]).toContain(`"${"x".repeat(80)}"`);
		expect(sent[1]).toContain(`"${"y".repeat(79)}…"`);
	});
});

describe("the rest of a window", () => {
	it("is summed up once when the window ends, not before, in the singular for one question", () => {
		const { sent, cancels } = notices();
		cancels.cancelled("a", ["One?"]);
		vi.advanceTimersByTime(1_500);
		cancels.cancelled("b", ["Two?"]);
		vi.advanceTimersByTime(CANCEL_WINDOW_MS - 1_500 - 1);
		expect(sent).toHaveLength(1);
		vi.advanceTimersByTime(1);
		expect(sent[1]).toBe("checkpoint-bridge: 1 more question cancelled by [b].");
	});

	it("the summary opens the next window, which sums up only its own cancels; three askers are named, the rest counted", () => {
		const { sent, cancels } = notices();
		cancels.cancelled("a", ["One?"]);
		cancels.cancelled("b", ["Two?", "Three?"]);
		vi.advanceTimersByTime(CANCEL_WINDOW_MS);
		cancels.cancelled("c", ["Four?"]);
		cancels.cancelled("d", ["Five?"]);
		cancels.cancelled("e", ["Six?"]);
		expect(sent).toHaveLength(2);
		vi.advanceTimersByTime(CANCEL_WINDOW_MS);
		cancels.cancelled("f", ["Seven?"]);
		cancels.cancelled("g", ["Eight?"]);
		cancels.cancelled("h", ["Nine?"]);
		cancels.cancelled("i", ["Ten?"]);
		cancels.cancelled("j", ["Eleven?"]);
		vi.advanceTimersByTime(CANCEL_WINDOW_MS);
		expect(sent.slice(1)).toEqual([
			"checkpoint-bridge: 2 more questions cancelled by [b].",
			"checkpoint-bridge: 3 more questions cancelled by [c], [d], [e].",
			"checkpoint-bridge: 5 more questions cancelled by [f], [g], [h] +2 more.",
		]);
	});

	it("closing drops what is owed: nothing is sent for it, then or in a later window", () => {
		const { sent, cancels } = notices();
		cancels.cancelled("a", ["One?"]);
		cancels.cancelled("b", ["Two?"]);
		cancels.close();
		vi.advanceTimersByTime(10 * CANCEL_WINDOW_MS);
		cancels.cancelled("c", ["Three?"]);
		cancels.cancelled("d", ["Four?"]);
		vi.advanceTimersByTime(CANCEL_WINDOW_MS);
		expect(sent).toEqual([
			'checkpoint-bridge: [a] cancelled its question "One?"; it is no longer asked.',
			'checkpoint-bridge: [c] cancelled its question "Three?"; it is no longer asked.',
			"checkpoint-bridge: 1 more question cancelled by [d].",
		]);
	});
});
