/**
 * Showing a request: the prompt a request being shown hands its surface (core/host/show.ts), and the
 * loop that runs one request's showing, records each answer as it comes, and decides how the
 * showing ended.
 */
import type { Answer, AnswerPlace } from "../../../model/answer.ts";
import { answerProblem, copyAnswer } from "../../../model/answer-check.ts";
import type { Question } from "../../../model/question.ts";
import type { RequestEnd } from "../../../model/result.ts";
import type { Surface } from "../../answering/surface.ts";
import { NO_LIMIT } from "../../shared/config.ts";
import { callDeadline, givenAnswers, type RequestRecord } from "../../shared/request-record.ts";
import type { RequestBook } from "../book.ts";
import { type Show, type ShowOutcome, type ShowPrompt, showFor } from "../show.ts";
import type { Notifier } from "./events.ts";
import type { DialogRequest } from "./open-requests.ts";

/** What the loop needs of the dialog host. */
export interface ShowingHost {
	readonly notifier: Notifier;
	/** The host's one end of a request. */
	end(record: RequestRecord, end: RequestEnd, note?: string): void;
	/** Sets the request's one timer due at `at`. */
	arm(entry: DialogRequest, at: number): void;
	progress(record: RequestRecord, stage: "shown" | "answered", question: number): void;
	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	share(record: RequestRecord, index: number): boolean;
	/** Askers that joined this request's question may have everything they need now. */
	completeDependents(record: RequestRecord): void;
	/** Whether the request is another session's (it gets the bell). */
	isRelayed(record: RequestRecord): boolean;
	/** Counts a dialog the human saw. */
	readonly countDialog: () => void;
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
		return this.loop.host.share(this.open.record, index);
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

/** Shows requests one at a time, one way for every surface, and ends each as its showing ended. */
export class ShowLoop {
	readonly host: ShowingHost;
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

	constructor(surface: Surface, host: ShowingHost, bell: (() => void) | undefined, book: RequestBook) {
		this.host = host;
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
			outcome = await this.#show(new OpenPrompt(entry, this, open.signal, this.host.countDialog));
		} catch (error) {
			return this.host.end(entry.record, "failed", `The host dialog failed: ${errorText(error)}`);
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
			this.host.arm(entry, deadline !== NO_LIMIT && (call === NO_LIMIT || deadline < call) ? deadline : call);
		}
		this.host.progress(record, "shown", index);
		// The status line names the request on screen apart from those waiting their turn.
		this.host.notifier.changed();
		this.host.notifier.shown(record, index);
		if (firstShown && this.host.isRelayed(record)) this.#bell?.();
	}

	/** The human answered question `index` (again, on a form): it counts from now on; a final one may complete the requests that joined it. */
	answered(entry: DialogRequest, index: number, answer: Answer, final: boolean): boolean {
		const { record } = entry;
		if (record.state.is !== "showing" || !record.questions[index]) return false;
		if (final) this.#book.closeQuestion(record);
		if (!this.#takeChecked(entry, index, answer)) return false;
		// A copy: the surface keeps no reference into what is sealed and sent.
		this.#book.answer(record, index, { answer: copyAnswer(answer, "dialog"), place: this.#place });
		this.host.progress(record, "answered", index);
		// Other askers waiting on this very question may be complete now.
		if (final) this.host.completeDependents(record);
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
		this.host.end(entry.record, "refused", `The host dialog's answer to question ${index + 1} ${problem}.`);
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
		if (outcome.end === "answered" && entries.every((entry) => entry !== undefined)) return this.host.end(record, "answered");
		// The showing proposes the end (show.ts); submitted without every answer, the human left it unanswered.
		if (outcome.end === "timeout") return this.host.end(record, "timeout");
		const n = givenAnswers(record).length;
		const total = questions.length;
		const what = outcome.question !== undefined ? `question ${outcome.question + 1} of ${total}` : `the form of ${total} question${total === 1 ? "" : "s"}`;
		// Why it ended, and the note's words with it: the human said no, or nobody was there. (A host that goes or is
		// replaced ends the request first: it is handed over, or ends host-gone.)
		if (outcome.end === "dialog-timeout")
			this.host.end(entry.record, "dialog-timeout", `Nobody answered ${what} within its own time limit (the user may not be there); ${n} answered.`);
		else this.host.end(entry.record, "dismissed", `The user dismissed ${what}; ${n} answered.`);
	}
}
