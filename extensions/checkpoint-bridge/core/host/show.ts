/**
 * How the host shows one request, whatever the surface: both kinds of surface become one `Show`,
 * so the dialog host runs every request the same way. A whole-request surface (the terminal form)
 * gets the request at once, open for the per-dialog limit once per open question; a surface that
 * asks one question at a time (pi's dialogs) is adapted: each open question in turn, each within
 * its own limit, taking an identical question's shared answer when it comes to it. Never beyond
 * the call's deadline; any stop of the request closes what is open.
 */
import type { Answer } from "../../model/answer.ts";
import type { Question } from "../../model/question.ts";
import type { RequestEnd } from "../../model/result.ts";
import type { Surface } from "../answering/surface.ts";
import { asMs, CLOCK_TOLERANCE_MS, msLeft, NO_LIMIT } from "../shared/config.ts";

/** What the host gives the code that shows a request. */
export interface ShowPrompt {
	/** Who asks, as titles show it. */
	asker: string;
	questions: readonly Question[];
	/** The answer the host holds for question `index` now (carried, shared, or given). */
	known(index: number): Answer | undefined;
	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	share(index: number): boolean;
	/**
	 * Aborts when the request stops (budget, abort, hand-over, an outside answer, a refused answer), or
	 * with the reason "dialog-timeout" when what is open reaches the deadline `onShown` gave: what is
	 * open closes at once. The host's one timer of the request does both.
	 */
	signal: AbortSignal;
	/** Epoch ms: the call's deadline; NO_LIMIT (0): the call has no budget. */
	callDeadline: number;
	/** Longest one dialog may stay open, in ms; NO_LIMIT (0): no limit of its own. */
	dialogTimeoutMs: number;
	/** Called each time a dialog opens, to count what the human saw; called unbound (surfaces take it as it is). */
	readonly onDialog: () => void;
	/**
	 * Question `index` is on screen now; `deadline` (epoch ms, NO_LIMIT for none), given when what is
	 * open opens, is when the host closes it: before the call's deadline, by aborting `signal` with "dialog-timeout".
	 */
	onShown(index: number, deadline?: number): void;
	/**
	 * The human answered question `index`; `final` when that answer cannot change any more (a
	 * question asked on its own), so other askers waiting on it may take it now. False when the
	 * host refused it (the request has ended).
	 */
	onAnswer(index: number, answer: Answer, final: boolean): boolean;
}

/**
 * How showing a request ended, as the end it proposes (model/result.ts): `answered`, every question
 * answered and confirmed (the host takes it when every answer passes); `timeout`, what was open had its
 * time cut to the call's deadline and closed then; `dialog-timeout`, its own time ran out (nobody may be
 * there); `dismissed`, the human closed it (or the request ended meanwhile, which the host knows).
 */
export interface ShowOutcome {
	end: Extract<RequestEnd, "answered" | "timeout" | "dialog-timeout" | "dismissed">;
	/** The surface's final answers by question index, replacing what it reported as it went; undefined when it reported every answer as final. */
	answers?: (Answer | undefined)[];
	/** The question that was open when it closed unanswered, for a surface that asks one at a time. */
	question?: number;
}

/** The end of a showing that closed unanswered: the call's timeout when what was open was cut to the call's deadline and that came; else its own timeout, or the human's no. */
function unanswered(prompt: ShowPrompt, cappedByCall: boolean, timedOut: boolean): Exclude<ShowOutcome["end"], "answered"> {
	if (cappedByCall && Date.now() >= prompt.callDeadline - CLOCK_TOLERANCE_MS) return "timeout";
	return timedOut ? "dialog-timeout" : "dismissed";
}

/** Shows one request; rejects when the surface fails. */
export type Show = (prompt: ShowPrompt) => Promise<ShowOutcome>;

/**
 * Opens what is shown within its budget (never more than `limit` or what is left of the call; NO_LIMIT
 * for none): tells the host which question is shown and when what is open closes, and the host closes
 * it then (no timer or signal of its own per dialog). The epoch ms it closes at (NO_LIMIT: never), or
 * undefined, showing nothing, when no time is left.
 */
function opening(prompt: ShowPrompt, index: number, limit: number): number | undefined {
	const budget = Math.min(asMs(limit), msLeft(prompt.callDeadline));
	if (budget <= 0) return undefined;
	// Without any limit what is open stays until the human, the asker or the host ends it.
	const questionDeadline = Number.isFinite(budget) ? Date.now() + budget : NO_LIMIT;
	prompt.onShown(index, questionDeadline);
	return questionDeadline;
}

/** Whether what was open until `questionDeadline` closed because its own time ran out: the host closed it, or the UI at its own timeout (pi gets the same one). */
const ranOut = (prompt: ShowPrompt, questionDeadline: number | undefined): boolean =>
	questionDeadline !== undefined &&
	(prompt.signal.reason === "dialog-timeout" || (questionDeadline !== NO_LIMIT && Date.now() >= questionDeadline - CLOCK_TOLERANCE_MS));

/** A whole-request surface as a Show: the answers it reports count as they come, its outcome's answers are final. */
function wholeRequest(askRequest: NonNullable<Surface["askRequest"]>): Show {
	return async (prompt) => {
		const { questions } = prompt;
		questions.forEach((_, index) => prompt.known(index) ?? prompt.share(index));
		const known = questions.map((_, index) => prompt.known(index));
		const open = known.filter((a) => a === undefined).length;
		if (open === 0) return { end: "answered" };
		const limit = prompt.dialogTimeoutMs === NO_LIMIT ? NO_LIMIT : prompt.dialogTimeoutMs * open;
		const cappedByCall = prompt.callDeadline !== NO_LIMIT && msLeft(prompt.callDeadline) <= asMs(limit);
		if (prompt.signal.aborted) return { end: "dismissed" };
		const questionDeadline = opening(prompt, known.indexOf(undefined), limit);
		const outcome =
			questionDeadline === undefined
				? undefined
				: await askRequest({
						asker: prompt.asker,
						questions,
						known,
						signal: prompt.signal,
						deadline: questionDeadline,
						callDeadline: prompt.callDeadline,
						onDialog: prompt.onDialog,
						// The human moving between questions: what is open keeps its deadline.
						onShown: (index) => prompt.onShown(index),
						onAnswer: (index, answer) => void prompt.onAnswer(index, answer, false),
					});
		const timedOut = ranOut(prompt, questionDeadline);
		if (outcome?.ended === "submitted") return { end: "answered", answers: outcome.answers };
		const end = unanswered(prompt, cappedByCall, timedOut);
		return outcome ? { end, answers: outcome.answers } : { end };
	};
}

/** A surface that asks one question at a time as a Show: each open question in turn, within its own limit; each answer final. */
function oneAtATime(ask: Surface["ask"]): Show {
	return async (prompt) => {
		const { questions } = prompt;
		const total = questions.length;
		for (let index = 0; index < total; index++) {
			const question = questions[index]!;
			if (prompt.signal.aborted) return { end: "dismissed" };
			if (prompt.known(index) || prompt.share(index)) continue;
			// When the call has less time left than a dialog gets, the dialog's own timeout is the call's.
			const cappedByCall = prompt.callDeadline !== NO_LIMIT && msLeft(prompt.callDeadline) <= asMs(prompt.dialogTimeoutMs);
			const questionDeadline = opening(prompt, index, prompt.dialogTimeoutMs);
			const answer =
				questionDeadline === undefined
					? undefined
					: await ask(
							{
								asker: prompt.asker,
								index,
								total,
								signal: prompt.signal,
								deadline: questionDeadline,
								callDeadline: prompt.callDeadline,
								onDialog: prompt.onDialog,
							},
							question,
						);
			// Closed at its own deadline, the request ends as a dialog timeout; any other stop has ended it already.
			const timedOut = ranOut(prompt, questionDeadline);
			if (timedOut && answer === undefined) return { end: unanswered(prompt, cappedByCall, true), question: index };
			if (prompt.signal.aborted) return { end: "dismissed" };
			if (answer === undefined) return { end: unanswered(prompt, cappedByCall, false), question: index };
			if (!prompt.onAnswer(index, answer, true)) return { end: "dismissed" };
		}
		return { end: "answered" };
	};
}

/** The Show of `surface`: its whole-request form when it has one, else its questions one at a time. */
export function showFor(surface: Surface): Show {
	const { askRequest } = surface;
	return askRequest ? wholeRequest(askRequest.bind(surface)) : oneAtATime(surface.ask.bind(surface));
}
