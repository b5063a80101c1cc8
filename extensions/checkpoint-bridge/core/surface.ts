/**
 * The seam between the relay and the places where the human answers. The host's queue decides
 * what is asked, when, and for how long; a surface only shows one question and hands back what
 * the human gave. Surfaces live in `surfaces/` and are passed in, so the core imports none.
 */
import type { Answer } from "../tool/envelope.ts";
import type { Question } from "../tool/validate.ts";

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
	/** Epoch ms by which the question must be answered. */
	deadline: number;
	/** Called each time a dialog opens, to count what the human saw. */
	onDialog?: () => void;
}

/** Where the human answers. */
export interface Surface {
	/** Shows one question; resolves with its answer, or undefined when dismissed or out of time. Rejects when the UI fails. */
	ask(prompt: QuestionPrompt, question: Question): Promise<Answer | undefined>;
}
