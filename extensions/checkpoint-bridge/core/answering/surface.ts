/**
 * The seam between the relay and the places where the human answers. The host's queue decides
 * what is asked, when, and for how long; a surface only shows what it is given and hands back what
 * the human gave. Surfaces live in `surfaces/` and are passed in, so the core imports none.
 *
 * Two shapes: `ask` shows one question (pi's select/input dialogs), `askRequest` shows a whole
 * request at once (the terminal form). A surface that has `askRequest` gets every request through
 * it, as one task of the host's queue, so it is still one thing on screen at a time.
 */
import type { Answer, AnswerPlace } from "../../model/answer.ts";
import type { Question } from "../../model/question.ts";

/** What the host needs of its UI besides the dialogs themselves. */
export interface HostUI {
	/** A one-line notice (arrival receipts, warnings). */
	notify(message: string, type?: "info" | "warning" | "error"): void;
	/** Footer status; optional because not every UI has one. */
	setStatus?(key: string, text: string | undefined): void;
}

/** One question put to the human. */
export interface QuestionPrompt {
	/** Who asks, as titles show it. */
	asker: string;
	/** 0-based position of the question in its request. */
	index: number;
	/** Questions in the request. */
	total: number;
	/** Aborts when the question's time is up or its call ended: the surface closes what it shows. */
	signal: AbortSignal;
	/** Epoch ms by which the question must be answered; 0 (NO_LIMIT): no time limit. */
	deadline: number;
	/** Epoch ms at which the call's budget runs out (a surface shows it beside `deadline` when it differs); 0 (NO_LIMIT): none. @default deadline */
	callDeadline?: number;
	/** Called each time a dialog opens, to count what the human saw. */
	onDialog?: () => void;
}

/** A whole request put to the human at once. */
export interface RequestPrompt {
	/** Who asks, as titles show it. */
	asker: string;
	/** Every question of the request, in order. */
	questions: readonly Question[];
	/** Answers known before the request is shown (shared, or carried over from a replaced host), by question index: shown, not asked. */
	known: readonly (Answer | undefined)[];
	/** Aborts when the request's time is up or its call ended (budget, abort, hand-over, an outside answer): the surface closes at once. */
	signal: AbortSignal;
	/** Epoch ms by which the request must be answered; 0 (NO_LIMIT): no time limit. */
	deadline: number;
	/** Epoch ms at which the call's budget runs out (a surface shows it beside `deadline` when it differs); 0 (NO_LIMIT): none. @default deadline */
	callDeadline?: number;
	/** Called once when the request is put on screen, to count what the human saw. */
	onDialog?: () => void;
	/** The human moved to question `index`. */
	onShown?: (index: number) => void;
	/** The human answered question `index` (again, when they change it): the answer counts from now on, also if the call ends before submit. */
	onAnswer?: (index: number, answer: Answer) => void;
}

/** How a request shown whole ended. */
export interface RequestOutcome {
	/** `submitted`: the human confirmed every answer; `dismissed`: they closed it (or its time ran out) with what `answers` holds. */
	ended: "submitted" | "dismissed";
	/** Answers by question index, the known ones included; undefined where none was given. */
	answers: (Answer | undefined)[];
}

/** Where the human answers. */
export interface Surface {
	/** Where the human gives the answers it hands back (the terminal form, an RPC client's dialogs). @default none: traces say "in the terminal" */
	readonly place?: AnswerPlace;
	/** Shows one question; resolves with its answer, or undefined when dismissed or out of time. Rejects when the UI fails. */
	ask(prompt: QuestionPrompt, question: Question): Promise<Answer | undefined>;
	/** Shows a whole request; when present the host uses it instead of `ask`. Resolves when the human submits or dismisses, or at once when `signal` aborts; rejects when the UI fails. */
	askRequest?(prompt: RequestPrompt): Promise<RequestOutcome>;
}
