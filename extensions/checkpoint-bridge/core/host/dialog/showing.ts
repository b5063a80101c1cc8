/**
 * Showing a request. How the host shows one, whatever the surface: both kinds of surface become one
 * `Show`, so the dialog host runs every request the same way. A whole-request surface (the terminal
 * form) gets the request at once, open for the per-dialog limit once per open question; a surface
 * that asks one question at a time (pi's dialogs) is adapted: each open question in turn, each
 * within its own limit, taking an identical question's shared answer when it comes to it. Never
 * beyond the call's deadline; any stop of the request closes what is open. Then the loop that runs
 * one request's showing, records each answer as it comes, and decides how the showing ended.
 */
import type { Answer, AnswerPlace } from "../../../model/answer.ts";
import { answerProblem, copyAnswer } from "../../../model/answer-check.ts";
import type { Question } from "../../../model/question.ts";
import type { RequestEnd } from "../../../model/result.ts";
import type { Surface } from "../../answering/surface.ts";
import { asMs, CLOCK_TOLERANCE_MS, msLeft, NO_LIMIT } from "../../shared/config.ts";
import { callDeadline, givenAnswers } from "../../shared/request-record.ts";
import type { RequestBook } from "../book.ts";
import type { DialogRequest } from "./intake.ts";
import type { RequestKeeper } from "./keeper.ts";

/** What the host gives the code that shows a request. */
interface ShowPrompt {
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

/** The prompt of a request being shown: its methods on the prototype, reading the open request. */
class OpenPrompt implements ShowPrompt {
	readonly asker: string;
	readonly questions: readonly Question[];
	readonly callDeadline: number;
	readonly dialogTimeoutMs: number;
	readonly onDialog: () => void;
	readonly open: DialogRequest;
	readonly loop: ShowLoop;
	readonly signal: AbortSignal;

	constructor(entry: DialogRequest, loop: ShowLoop, signal: AbortSignal, onDialog: () => void) {
		this.open = entry;
		this.loop = loop;
		this.signal = signal;
		const { request, questions } = entry.record;
		this.asker = request.asker.label;
		this.questions = questions;
		this.callDeadline = callDeadline(entry.record);
		this.dialogTimeoutMs = request.dialogTimeoutMs;
		this.onDialog = onDialog;
	}

	known(index: number): Answer | undefined {
		return this.open.record.entries[index]?.answer;
	}

	share(index: number): boolean {
		return this.loop.keeper.share(this.open.record, index);
	}

	onShown(index: number, deadline?: number): void {
		this.loop.shown(this.open, index, deadline);
	}

	onAnswer(index: number, answer: Answer, final: boolean): boolean {
		return this.loop.answered(this.open, index, answer, final);
	}
}

const errorText = (error: unknown) => {
	if (error instanceof Error) return error.message;
	try {
		return String(error);
	} catch {
		// A thrown value with a broken toString must not keep the request from ending.
		return "a value that cannot be shown as text";
	}
};

/**
 * Shows requests one at a time, one way for every surface, and ends each as its showing ended, by the
 * requests' keeper (keeper.ts): the dialog host hands a request on and hears nothing back.
 */
export class ShowLoop {
	readonly keeper: RequestKeeper;
	/** Every request is shown through this, whichever kind the surface is. */
	readonly #show: Show;
	/** Where the surface's answers are given. */
	readonly #place: AnswerPlace | undefined;
	readonly #bell: (() => void) | undefined;
	/** Where the record's every step is taken (book.ts): this loop writes no state of its own. */
	readonly #book: RequestBook;
	/** The request whose task runs, for the status line: the one being shown. */
	showing: DialogRequest | undefined;
	/** The round of the relayed request shown last (ADR-0024): a newcomer's first request is due in the next one. */
	round = 0;

	constructor(surface: Surface, keeper: RequestKeeper, bell: (() => void) | undefined, book: RequestBook) {
		this.keeper = keeper;
		this.#book = book;
		this.#show = showFor(surface);
		this.#place = surface.place;
		this.#bell = bell;
	}

	/** Shows the request, one way for every surface, and ends it as its showing ended. */
	async run(entry: DialogRequest): Promise<void> {
		const { record } = entry;
		const showing = this.#book.show(record);
		// Ended (or gone late) as its task started: nothing is left to show.
		if (!showing) return;
		this.showing = entry;
		if (entry.round > this.round) this.round = entry.round;
		// One controller per request: the queue class took its signal from p-queue as the task started, so aborting it now closes what is open and nothing else.
		const open = entry.dequeue ?? new AbortController();
		entry.dequeue = undefined;
		entry.open = open;
		let outcome: ShowOutcome;
		try {
			outcome = await this.#show(new OpenPrompt(entry, this, open.signal, this.keeper.countDialog));
		} catch (error) {
			return this.keeper.end(entry.record, "failed", `The host dialog failed: ${errorText(error)}`);
		} finally {
			this.#book.closeQuestion(record, true);
			// What was shown has closed: nothing is left to abort when the request ends, and the slot is free.
			entry.open = undefined;
			this.showing = undefined;
		}
		// Ended meanwhile (or gone late), it is not this showing's to end.
		if (record.state === showing) this.#ended(entry, outcome);
	}

	/** Question `index` of a showing request is on screen: progress, the shown event, and the bell the first time a relayed request shows. */
	shown(entry: DialogRequest, index: number, deadline?: number): void {
		const { record } = entry;
		if (!record.questions[index]) return;
		const firstShown = this.#book.showQuestion(record, index, deadline);
		if (firstShown === undefined) return;
		if (deadline !== undefined) {
			// What is open closes by its question deadline when that comes before the request's.
			const call = callDeadline(record);
			this.#book.arm(record, deadline !== NO_LIMIT && (call === NO_LIMIT || deadline < call) ? deadline : call);
		}
		this.keeper.progress(record, "shown", index);
		// The status line names the request on screen apart from those waiting their turn.
		this.keeper.notifier.changed();
		this.keeper.notifier.shown(record, index);
		if (firstShown && this.keeper.isRelayed(record)) this.#bell?.();
	}

	/** The human answered question `index` (again, on a form): it counts from now on; a final one may complete the requests that joined it. */
	answered(entry: DialogRequest, index: number, answer: Answer, final: boolean): boolean {
		const { record } = entry;
		if (record.state.is !== "showing" || !record.questions[index]) return false;
		if (final) this.#book.closeQuestion(record);
		if (!this.#takeChecked(entry, index, answer)) return false;
		// A copy: the surface keeps no reference into what is sealed and sent.
		this.#book.answer(record, index, { answer: copyAnswer(answer, "dialog"), place: this.#place });
		this.keeper.progress(record, "answered", index);
		// Other askers waiting on this very question may be complete now.
		if (final) this.keeper.completeDependents(record);
		return true;
	}

	/**
	 * Ends the request as `refused` when a surface's answer to question `index` fails the answer
	 * check: a surface is passed in, so what it hands back passes the same check as any other answer.
	 * Whether it was taken: false when refused (the request has ended).
	 */
	#takeChecked(entry: DialogRequest, index: number, answer: Answer): boolean {
		const problem = answerProblem(entry.record.questions[index]!, answer);
		if (problem === undefined) return true;
		this.keeper.end(entry.record, "refused", `The host dialog's answer to question ${index + 1} ${problem}.`);
		return false;
	}

	/** How a shown request ended, decided in one place: answered, the call's timeout, or dismissed; an answer the surface hands back last is checked like the others. */
	#ended(entry: DialogRequest, outcome: ShowOutcome): void {
		const { record } = entry;
		const { questions, entries } = record;
		if (outcome.answers) {
			const final = outcome.answers;
			// The form's answers are final (the human may have changed or withdrawn one); shared answers stand.
			for (const [i] of questions.entries()) {
				if (entries[i]?.answer.source === "shared") continue;
				const answer = final[i];
				// Shared answers were skipped above: whatever else the form hands back is checked, whatever source it names.
				if (answer && !this.#takeChecked(entry, i, answer)) return;
				// Only the host marks an answer as shared (with whom): one the form marks so was given in the form.
				// An answer the host did not have yet was given in the form; one it had keeps the place it was given in.
				this.#book.answer(
					record,
					i,
					answer
						? {
								answer: copyAnswer(answer, answer.source === undefined || answer.source === "shared" ? "dialog" : answer.source),
								place: entries[i] === undefined ? this.#place : entries[i].place,
							}
						: undefined,
				);
			}
		}
		if (outcome.end === "answered" && entries.every((entry) => entry !== undefined)) return this.keeper.end(record, "answered");
		// The Show proposes the end (showFor, above); submitted without every answer, the human left it unanswered.
		if (outcome.end === "timeout") return this.keeper.end(record, "timeout");
		const n = givenAnswers(record).length;
		const total = questions.length;
		const what = outcome.question !== undefined ? `question ${outcome.question + 1} of ${total}` : `the form of ${total} question${total === 1 ? "" : "s"}`;
		// Why it ended, and the note's words with it: the human said no, or nobody was there. (A host that goes or is
		// replaced ends the request first: it is handed over, or ends host-gone.)
		if (outcome.end === "dialog-timeout")
			this.keeper.end(entry.record, "dialog-timeout", `Nobody answered ${what} within its own time limit (the user may not be there); ${n} answered.`);
		else this.keeper.end(entry.record, "dismissed", `The user dismissed ${what}; ${n} answered.`);
	}
}
