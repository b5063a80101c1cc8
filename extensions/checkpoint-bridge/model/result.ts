/**
 * The result contract of `ask_user_via_host`: how a call ended and the one envelope it returns.
 */
import type { Answer } from "./answer.ts";
import type { Question } from "./question.ts";

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
	| "error"
	/** A receipt, not an answer: the call asked with `wait: false`; the request's end arrives later as a message (core/delivery/delivery.ts). */
	| "queued";

/** The statuses a request ends with: a host's result carries one of these, never `queued`. */
export const STATUSES: readonly Status[] = ["ok", "timeout-or-cancelled", "timeout", "cancelled", "no-host", "error"];

/**
 * Why a call ended `timeout-or-cancelled`: `dismissed`, the human closed it (Esc, cancel, a web
 * or outside cancel); `dialog-timeout`, a question's own time ran out (nobody may be there).
 */
export type EndReason = "dismissed" | "dialog-timeout";

export const END_REASONS: readonly EndReason[] = ["dismissed", "dialog-timeout"];

/**
 * How a request ended, for every way it can: the one typed reason each surface reads (the page
 * included), never a note's wording. `answered` and `answered-outside` end it answered; the others
 * end it without every answer.
 */
export type RequestEnd =
	/** Every question answered: in a dialog, the form, or from identical questions of other askers. */
	| "answered"
	/** Answered through the bus's `answer` event (the web page, its link, another extension). */
	| "answered-outside"
	/** The human closed what was open without answering. */
	| "dismissed"
	/** An outside answer's `{ cancel: true }`: dismissed from outside the terminal. */
	| "cancelled-outside"
	/** What was open closed at its own dialog timeout. */
	| "dialog-timeout"
	/** The call's budget ran out (it may stay open, marked late). */
	| "timeout"
	/** The asker gave up (its abort, or its own timer before the host's). */
	| "cancelled"
	/** The surface handed back an answer that fails the answer check. */
	| "refused"
	/** The surface failed. */
	| "failed"
	/** The host session went away for good. */
	| "host-gone"
	/** The host session was replaced: the request lives on with the next host. */
	| "handed-over"
	/** Late, it left unanswered: it expired, or its asker's newer late questions took its place (status `timeout`). */
	| "expired";

/** The wire's status, and the reason a `timeout-or-cancelled` one carries, of each way a request ends (handed-over: none, it lives on). */
const STATUS_OF: Record<Exclude<RequestEnd, "handed-over">, Status> = {
	answered: "ok",
	"answered-outside": "ok",
	dismissed: "timeout-or-cancelled",
	"cancelled-outside": "timeout-or-cancelled",
	"dialog-timeout": "timeout-or-cancelled",
	timeout: "timeout",
	cancelled: "cancelled",
	refused: "error",
	failed: "error",
	"host-gone": "no-host",
	expired: "timeout",
};
const REASON_OF: Partial<Record<RequestEnd, EndReason>> = { dismissed: "dismissed", "cancelled-outside": "dismissed", "dialog-timeout": "dialog-timeout" };

/** Each end's wire status and reason, made once: read for every request that ends. */
const WIRE_OF = new Map<RequestEnd, Readonly<{ status: Status; reason?: EndReason }>>(
	(Object.entries(STATUS_OF) as [Exclude<RequestEnd, "handed-over">, Status][]).map(([end, status]) => {
		const reason = REASON_OF[end];
		return [end, Object.freeze(reason ? { status, reason } : { status })];
	}),
);

/** The wire's status and reason of an end: what the edges (the reply and late frames, the observer event, the audit trail) say of it. */
export function endWire(end: RequestEnd): Readonly<{ status: Status; reason?: EndReason }> {
	return WIRE_OF.get(end)!;
}

/** What the tool returns. */
export interface Envelope {
	status: Status;
	/** Answers given so far, in question order; complete only when `status` is `ok`. */
	answers: Answer[];
	/** Why the call ended as it did, with what to do next; present on every non-ok status. */
	note?: string;
	/** Present on every `timeout-or-cancelled` envelope: why it ended (see EndReason). */
	reason?: EndReason;
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

/** Builds an envelope; a status that ended without the answers always carries the needs_input advice in its note. */
export function makeEnvelope(
	status: Status,
	answers: Answer[],
	reason?: string,
	extra: Pick<Envelope, "requestId" | "asker" | "waitedMs" | "reason"> = {},
): Envelope {
	const note = status === "ok" || status === "queued" ? reason : reason ? `${reason} ${NEEDS_INPUT_ADVICE}` : NEEDS_INPUT_ADVICE;
	const envelope: Envelope = { status, answers };
	if (note) envelope.note = note;
	return Object.assign(envelope, extra);
}

/** The question `answer` answers: by its id when it has one, else by its text. */
const askedFor = (answer: Answer, asked: readonly Question[]) =>
	asked.find((q) => (answer.id !== undefined ? q.id === answer.id : q.id === undefined && q.question === answer.question));

/** Whether `answer` is its question's recommended option and nothing else (model/answer-check.ts holds a marked answer to the same). */
function isRecommendation(answer: Answer, asked: readonly Question[]): boolean {
	if (answer.kind !== "option" || (answer.values !== undefined && answer.values.length !== 1)) return false;
	const question = askedFor(answer, asked);
	return question?.recommended !== undefined && answer.answer === question.recommended;
}

/**
 * `envelope` with every answer that is its question's recommended option marked `recommended: true`,
 * however the human took it (picked by hand, or with every recommendation at once): what every asker
 * is given back, the pi tool and an MCP client alike.
 */
export function markRecommendations(envelope: Envelope, asked: readonly Question[]): Envelope {
	if (!asked.some((q) => q.recommended !== undefined) || !envelope.answers.some((a) => a.recommended === undefined && isRecommendation(a, asked)))
		return envelope;
	return { ...envelope, answers: envelope.answers.map((a) => (a.recommended === undefined && isRecommendation(a, asked) ? { ...a, recommended: true } : a)) };
}
