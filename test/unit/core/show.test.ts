/**
 * How one request is shown, driven directly: both kinds of surface as one Show, each within its
 * budget, what an outcome says and what is left behind. Fake timers; the prompt records what the
 * host is told.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RequestPrompt, Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { showFor } from "../../../extensions/checkpoint-bridge/core/host/dialog/showing.ts";
import { NO_LIMIT } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import { answerOf } from "../../../extensions/checkpoint-bridge/model/answer-check.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const QUESTIONS: Question[] = [
	{ question: "Name?", kind: "text" },
	{ question: "City?", kind: "text" },
];

/** A prompt for QUESTIONS that records what the Show tells the host. */
function prompt(over: { known?: (Answer | undefined)[]; callDeadline?: number; dialogTimeoutMs?: number; accept?: boolean } = {}) {
	const stop = new AbortController();
	const known = over.known ?? [];
	const told = { shown: [] as [number, number | undefined][], answers: [] as [number, string, boolean][], dialogs: 0 };
	return {
		stop,
		told,
		prompt: {
			asker: "[planner]",
			questions: QUESTIONS,
			known: (index: number) => known[index],
			share: () => false,
			signal: stop.signal,
			callDeadline: over.callDeadline ?? Date.now() + 60_000,
			dialogTimeoutMs: over.dialogTimeoutMs ?? 10_000,
			onDialog: () => void told.dialogs++,
			onShown: (index: number, deadline?: number) => void told.shown.push([index, deadline]),
			onAnswer: (index: number, answer: Answer, final: boolean) => {
				told.answers.push([index, answer.answer, final]);
				return over.accept ?? true;
			},
		},
	};
}

/** A one-at-a-time surface that answers each question after `afterMs` with its text in capitals, or closes by itself (undefined). */
function asking(afterMs: number, answer: (q: Question) => string | undefined = (q) => q.question.toUpperCase()): Surface & { asked: number } {
	const surface = {
		asked: 0,
		ask: (p: { signal: AbortSignal }, question: Question) =>
			new Promise<Answer | undefined>((resolve) => {
				surface.asked++;
				// A surface gets the request's own signal: it stops listening once it has answered.
				const onAbort = () => (clearTimeout(timer), resolve(undefined));
				const timer = setTimeout(() => {
					p.signal.removeEventListener("abort", onAbort);
					const text = answer(question);
					resolve(text === undefined ? undefined : answerOf(question, "text", text));
				}, afterMs);
				p.signal.addEventListener("abort", onAbort, { once: true });
			}),
	};
	return surface;
}

/** A whole-request surface that answers what is open, reporting each answer as it goes, after `afterMs`; dismissed when aborted. */
function form(afterMs: number): Surface & { prompts: RequestPrompt[] } {
	const surface = {
		prompts: [] as RequestPrompt[],
		ask: () => Promise.reject(new Error("a form is asked whole")),
		askRequest: (p: RequestPrompt) =>
			new Promise<{ ended: "submitted" | "dismissed"; answers: (Answer | undefined)[] }>((resolve) => {
				surface.prompts.push(p);
				p.onDialog?.();
				const onAbort = () => (clearTimeout(timer), resolve({ ended: "dismissed", answers: [...p.known] }));
				const timer = setTimeout(() => {
					p.signal.removeEventListener("abort", onAbort);
					const answers = p.questions.map((q, i) => p.known[i] ?? answerOf(q, "text", "typed"));
					answers.forEach((a, i) => p.known[i] === undefined && a && p.onAnswer?.(i, a));
					resolve({ ended: "submitted", answers });
				}, afterMs);
				p.signal.addEventListener("abort", onAbort, { once: true });
			}),
	};
	return surface;
}

describe("one question at a time", () => {
	it("asks each open question within its own limit, each answer final, and leaves no listener on the request's signal", async () => {
		const surface = asking(100);
		const { prompt: p, told } = prompt({ known: [answerOf(QUESTIONS[0]!, "text", "atlas")] });
		const outcome = showFor(surface)(p);
		await vi.advanceTimersByTimeAsync(100);
		expect(await outcome).toStrictEqual({ end: "answered" });
		expect(surface.asked).toBe(1);
		expect(told.answers).toEqual([[1, "CITY?", true]]);
		expect(told.shown).toEqual([[1, Date.now() - 100 + 10_000]]);
		expect(getEventListeners(p.signal, "abort")).toHaveLength(0);
	});

	it("counts a dialog that closed by itself within 2 ms of its end as timed out, 3 ms before as the human's", async () => {
		for (const [closesAfter, timedOut] of [
			[9_998, true],
			[9_997, false],
		] as const) {
			const { prompt: p } = prompt({ dialogTimeoutMs: 10_000 });
			const outcome = showFor(asking(closesAfter, () => undefined))(p);
			await vi.advanceTimersByTimeAsync(closesAfter);
			expect(await outcome, `closed after ${closesAfter} ms`).toStrictEqual({ end: timedOut ? "dialog-timeout" : "dismissed", question: 0 });
		}
	});

	it("ends dismissed without a question when the request stops while it asks, or before it asks", async () => {
		const surface = asking(1_000);
		const first = prompt();
		const outcome = showFor(surface)(first.prompt);
		await vi.advanceTimersByTimeAsync(10);
		first.stop.abort();
		expect(await outcome).toStrictEqual({ end: "dismissed" });
		const second = prompt({ callDeadline: Date.now() + 5_000 });
		second.stop.abort();
		expect(await showFor(surface)(second.prompt)).toStrictEqual({ end: "dismissed" });
		expect(surface.asked).toBe(1);
		expect(getEventListeners(first.prompt.signal, "abort")).toHaveLength(0);
	});

	it("ends dismissed when the host refuses an answer, and shows nothing once the call's time is spent", async () => {
		const refused = prompt({ accept: false });
		const outcome = showFor(asking(5))(refused.prompt);
		await vi.advanceTimersByTimeAsync(5);
		expect(await outcome).toStrictEqual({ end: "dismissed" });
		const spent = prompt({ callDeadline: Date.now() - 1 });
		expect(await showFor(asking(5))(spent.prompt)).toStrictEqual({ end: "timeout", question: 0 });
		expect(spent.told.shown).toEqual([]);
	});
});

describe("a whole-request surface", () => {
	it("shows nothing when every question is already answered", async () => {
		const surface = form(10);
		const { prompt: p, told } = prompt({ known: QUESTIONS.map((q) => answerOf(q, "text", "known")) });
		expect(await showFor(surface)(p)).toStrictEqual({ end: "answered" });
		expect(surface.prompts).toEqual([]);
		expect(told.shown).toEqual([]);
	});

	it("gives the form one limit per open question; its answers count as they come but are not final", async () => {
		const surface = form(50);
		const { prompt: p, told } = prompt({ known: [answerOf(QUESTIONS[0]!, "text", "atlas")], dialogTimeoutMs: 10_000 });
		const outcome = showFor(surface)(p);
		await vi.advanceTimersByTimeAsync(50);
		const result = await outcome;
		expect(result).toMatchObject({ end: "answered" });
		expect(result.answers?.map((a) => a?.answer)).toEqual(["atlas", "typed"]);
		expect(told.answers).toEqual([[1, "typed", false]]);
		expect(told.shown).toEqual([[1, Date.now() - 50 + 10_000]]);
		expect(surface.prompts[0]?.deadline).toBe(Date.now() - 50 + 10_000);
		expect(getEventListeners(p.signal, "abort")).toHaveLength(0);
	});

	it("is never capped by a call without a budget, and has no deadline when neither has a limit", async () => {
		const surface = form(50);
		const { prompt: p, told } = prompt({ callDeadline: NO_LIMIT, dialogTimeoutMs: NO_LIMIT });
		const outcome = showFor(surface)(p);
		await vi.advanceTimersByTimeAsync(50);
		expect(await outcome).toMatchObject({ end: "answered" });
		expect(told.shown).toEqual([[0, NO_LIMIT]]);
	});

	it("shows nothing when the request has already stopped, or the call's time is spent", async () => {
		const surface = form(10);
		const stopped = prompt();
		stopped.stop.abort();
		expect(await showFor(surface)(stopped.prompt)).toStrictEqual({ end: "dismissed" });
		const spent = prompt({ callDeadline: Date.now() - 1 });
		expect(await showFor(surface)(spent.prompt)).toStrictEqual({ end: "timeout" });
		expect(surface.prompts).toEqual([]);
		expect(stopped.told.shown).toEqual([]);
	});
});
