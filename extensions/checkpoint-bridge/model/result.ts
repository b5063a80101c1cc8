/**
 * The result contract of `ask_user_via_host`: how a call ended and the one envelope it returns.
 */
import type { Answer } from "./answer.ts";

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
export function makeEnvelope(status: Status, answers: Answer[], reason?: string, extra: Pick<Envelope, "requestId" | "asker" | "waitedMs"> = {}): Envelope {
	const note = status === "ok" ? reason : [reason, NEEDS_INPUT_ADVICE].filter(Boolean).join(" ");
	return { status, answers, ...(note ? { note } : {}), ...extra };
}
