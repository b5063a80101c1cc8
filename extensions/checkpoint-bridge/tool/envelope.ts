/**
 * The result contract of `ask_user_via_host`: one envelope per call, as JSON text and as `details`.
 */

/** How a call ended. Every status except `ok` tells the caller to return `needs_input`. */
export type Status =
	/** The user answered every question. */
	| "ok"
	/** The user dismissed a dialog, or a dialog's own timeout passed. */
	| "timeout-or-cancelled"
	/** The call's budget expired. */
	| "timeout"
	/** The tool call was aborted. */
	| "cancelled"
	/** No session with a UI holds the host role. */
	| "no-host"
	/** The host-side dialog failed, the parameters were invalid, the asker had too many requests open, or a reply did not fit the questions. */
	| "error";

export const STATUSES: readonly Status[] = ["ok", "timeout-or-cancelled", "timeout", "cancelled", "no-host", "error"];

/** What an answer is: a listed option, a typed "Other", free text, or a yes/no. */
export type AnswerKind = "option" | "other" | "text" | "confirm";

/** Sources an outside answer may name (see core/inbound.ts); "outside" when it names none. */
export const OUTSIDE_SOURCES = ["outside", "web"] as const;
export type OutsideSource = (typeof OUTSIDE_SOURCES)[number];

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
	/** Where the answer came from: a dialog here, another asker's dialog, an outside answer, or the web answer page. */
	source?: "dialog" | "shared" | OutsideSource;
}

/** What the tool returns. */
export interface Envelope {
	status: Status;
	/** Answers given so far, in question order; complete only when `status` is `ok`. */
	answers: Answer[];
	/** Why the call ended as it did, with what to do next; present on every non-ok status. */
	note?: string;
	/** The request's id, when a request was made. */
	requestId?: string;
	/** Who asked, as shown to the human. */
	asker?: string;
	/** Milliseconds from the call to its end. */
	waitedMs?: number;
}

/** Appended to every non-ok note: the model must not invent the human's decision. */
export const NEEDS_INPUT_ADVICE =
	"Do not guess the answer: return a structured needs_input result that lists the open questions, unless the answers so far are enough to proceed.";

/** Builds an envelope; a non-ok status always carries the needs_input advice in its note. */
export function makeEnvelope(
	status: Status,
	answers: Answer[],
	reason?: string,
	extra: Pick<Envelope, "requestId" | "asker" | "waitedMs"> = {},
): Envelope {
	const note = status === "ok" ? reason : [reason, NEEDS_INPUT_ADVICE].filter(Boolean).join(" ");
	return { status, answers, ...(note ? { note } : {}), ...extra };
}

/** The tool result pi expects: the envelope as JSON text for the model, and as details for renderers. */
export function toToolResult(envelope: Envelope): { content: [{ type: "text"; text: string }]; details: Envelope } {
	return { content: [{ type: "text", text: JSON.stringify(envelope) }], details: envelope };
}
