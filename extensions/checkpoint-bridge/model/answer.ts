/**
 * An answer as the relay carries it: what the human gave for one question, and where it came from.
 */
/** What an answer is: a listed option, a typed "Other", free text, or a yes/no. */
export type AnswerKind = "option" | "other" | "text" | "confirm";

/** Sources an outside answer may name (see core/shared/outside-answers.ts); "outside" when it names none. */
export const OUTSIDE_SOURCES = ["outside", "web"] as const;
export type OutsideSource = (typeof OUTSIDE_SOURCES)[number];

/**
 * Where exactly the human gave an answer: the terminal form, an RPC client's dialogs, the web
 * page, a request's own link, the link the notify command sent, a mail reply, or outside (another extension).
 */
const ANSWER_PLACES = ["terminal", "rpc", "page", "link", "notify-link", "mail", "outside"] as const;
export type AnswerPlace = (typeof ANSWER_PLACES)[number];
/** Places an answer from the web page may name (core/shared/outside-answers.ts). */
export const WEB_PLACES = ["page", "link", "notify-link"] as const satisfies readonly AnswerPlace[];
/** Places an outside answer that is not the page's may name: a mail reply (surfaces/mail). */
export const OUTSIDE_PLACES = ["mail"] as const satisfies readonly AnswerPlace[];

/** One answered question, in the order asked. */
export interface Answer {
	/** The question's text as asked. */
	question: string;
	/** The chosen option, the typed text, "yes"/"no" for a confirm; for a multi-select the values joined with ", ". */
	answer: string;
	/** What the answer is; "other" when any value was typed instead of picked. */
	kind: AnswerKind;
	/** The question's `id`, echoed when it had one. */
	id?: string;
	/** Every picked value of a multi-select, in option order, typed ones last. */
	values?: string[];
	/** What the human added to the answer in their own words (at most 2000 characters). */
	note?: string;
	/** Other askers who asked the same question at the same time and got this same answer. */
	sharedWith?: string[];
	/** Present when the human took the question's recommended option by accepting every recommendation at once (the form's Review key, the page's button). */
	recommended?: true;
	/**
	 * Where the answer came from: a dialog here, another asker's dialog, an outside answer, the web
	 * page, or carried in the asker's own request (re-sent after a restart): the host did not see it
	 * given, so it goes back to that asker only (docs/security.md).
	 */
	source?: "dialog" | "shared" | "carried" | OutsideSource;
	/**
	 * Where exactly it was given; for a shared answer, where the answer it shares was given. Only on
	 * the answers the host reports when a request settles (observer events, the audit trail), never
	 * in the asker's result.
	 */
	place?: AnswerPlace;
}
