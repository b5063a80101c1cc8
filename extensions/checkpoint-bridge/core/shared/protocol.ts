/**
 * Messages on the process-global bus. Every copy of the extension in the process speaks through
 * these, so every message carries the protocol version it was written in.
 */
import type { Answer } from "../../model/answer.ts";
import type { QuestionInput } from "../../model/question.ts";
import type { EndReason, Status } from "../../model/result.ts";
import type { AskerIdentity } from "./identity.ts";
import type { LateEvent, QueuedEvent, ReopenedEvent, SettledEvent, ShownEvent } from "./observers.ts";
import type { OutsideAnswerReply } from "./outside-answers.ts";

/** Bumped on any incompatible change to a message below. */
export const PROTOCOL_VERSION = 1;

/** Asker → host: show these questions. */
export interface RelayRequest {
	v: number;
	/** Unguessable, unique per call: the only address a reply is sent to. */
	id: string;
	asker: AskerIdentity;
	questions: QuestionInput[];
	/** Epoch ms at which the call's budget runs out; queue time counts against it. 0: the call has no budget. */
	deadline: number;
	/** Longest one dialog may stay open. 0: no limit of its own. */
	dialogTimeoutMs: number;
	/** Epoch ms at which the call started. */
	createdAt: number;
	/**
	 * Where the request came from, set by the transport that delivered it, never taken from the
	 * asker's own text: absent for askers in the host's process, `local:<connection id>` for the local
	 * endpoint, `nats:<inbox>` for the NATS room. The part before the colon names the transport: the
	 * cap of open requests counts an asker session over all of that transport's connections. Answers are shared only between askers of the same origin unless both questions say
	 * `share: "any"` (see same-questions.ts).
	 */
	origin?: string;
	/**
	 * The asker's own id for the request, set by the transport that delivered it (never the host's
	 * id, which stays the host's): the request's name in the store across a restart of the host, and
	 * what a later run's wait names (core/store/). @default absent: an asker in the host's process
	 */
	askerId?: string;
	/**
	 * Answers already given, when an asker re-sends its request to a host that replaced a vanished
	 * one (NATS, ADR-0009; the local endpoint): those questions are not asked again. @default none
	 */
	answers?: Answer[];
	/**
	 * The asker sends this request again after its host went away (a restart): the host shows it
	 * marked as asked before the restart. @default false
	 */
	resent?: boolean;
	/**
	 * The asker asked with `wait: false` and keeps no call waiting on the human: when its connection
	 * goes (the asking process exited), the host keeps the request and its end goes to the host's
	 * own session instead (core/delivery/delivery.ts). @default absent: the request goes with its connection
	 */
	later?: true;
}

/** Asker → host: the call ended on the asker's side; drop it from the queue or dismiss its dialog. */
export interface RelayCancel {
	v: number;
	id: string;
	reason: "timeout" | "cancelled";
}

/** Host → one asker: where its request stands. */
export interface RelayProgress {
	v: number;
	id: string;
	kind: "progress";
	stage: "queued" | "shown" | "answered";
	/** Answers given so far, kept by the asker so a later timeout still returns them. */
	answers: Answer[];
	/** 0-based index of the question concerned, for `shown` and `answered`. */
	question?: number;
	/** For `queued`: 1 when nothing is ahead of this request in the host's queue. */
	position?: number;
}

/** Host → one asker: the request's final outcome. */
export interface RelayResult {
	v: number;
	id: string;
	kind: "result";
	status: Status;
	answers: Answer[];
	note?: string;
	/** Why a `timeout-or-cancelled` result ended; an older host sends none. */
	reason?: EndReason;
}

export type RelayReply = RelayProgress | RelayResult;

/**
 * Host → one asker of another process, after its request's result: the call ended `timeout`, its
 * questions stayed open at the host, marked late (core/host/late.ts), and have now ended (answered, or
 * dismissed). The transport that carried the request takes it back to the asking process while
 * that process is still connected and said it takes them (`lateFrames`); that process delivers it
 * to the asking session (core/delivery/delivery.ts). Sent on `lateChannel(id)` with a `taken` callback
 * while the transport is registered to take it back (the route home's takers, core/delivery/route-home.ts):
 * false, or no registration, and the host's session gets it instead, naming the asker.
 */
export interface RelayLate {
	v: number;
	id: string;
	kind: "late";
	status: Status;
	answers: Answer[];
	note?: string;
	reason?: EndReason;
}

/** Asker → host: a notice of another extension in a session without UI (its `ctx.ui.notify`), shown to the human prefixed with who sends it. */
export interface RelayNotice {
	v: number;
	asker: AskerIdentity;
	message: string;
	type: "info" | "warning" | "error";
	/**
	 * Set by the transport that delivered it (which limits its notices itself), as a request's origin
	 * is; absent for a notice from this process, which the host limits. @default absent
	 */
	origin?: string;
}

/** Bus event names and their payloads (eventemitter3 typing). Replies go to a channel per request id. */
/** A notice for the host's human from another session of the process (shown once per key). */
export interface HostNotice {
	/** What makes two notices the same one. */
	key: string;
	message: string;
}

export interface BusEvents {
	request: [RelayRequest];
	cancel: [RelayCancel];
	[reply: `reply:${string}`]: [RelayReply];
	/** A late request's end for an asker of another process; its transport calls `taken` once, true when it sent it on. */
	[late: `late:${string}`]: [late: RelayLate, taken: (sent: boolean) => void];
	/** An answer from outside the terminal; the host calls `respond` exactly once. See outside-answers.ts. */
	answer: [payload: unknown, respond?: (reply: OutsideAnswerReply) => void];
	"relay:notice": [RelayNotice];
	"observe:queued": [QueuedEvent];
	"observe:shown": [ShownEvent];
	"observe:settled": [SettledEvent];
	"observe:late": [LateEvent];
	"observe:reopened": [ReopenedEvent];
	/** A session without a UI has something to tell the human (see tool-missing.ts). */
	notice: [HostNotice];
}

/** The one channel a request's replies travel on: nobody else's listener sees them. */
export const replyChannel = (id: string): `reply:${string}` => `reply:${id}`;

/** The one channel a late request's end travels on to the transport that carried it (RelayLate). */
export const lateChannel = (id: string): `late:${string}` => `late:${id}`;
