/**
 * The frames both transports carry, the local endpoint's socket and a NATS room: the bus messages of
 * protocol.ts plus a `type` (request, cancel, notice, progress, result, late), the ack and the error frame, each
 * carrying its transport's frame version. One check of their fields for both; what only one
 * transport sends (the socket's handshake, NATS's heartbeats, keys and seals) is checked by that
 * transport (transports/local/frames.ts, transports/nats/frames.ts) through `own`.
 */

import type { Answer } from "../../model/answer.ts";
import type { Checked } from "../../model/check.ts";
import { MAX_REQUEST_ID_LENGTH, MAX_SENT_LABEL_LENGTH, MAX_SESSION_ID_LENGTH } from "../../model/limits.ts";
import { STATUSES } from "../../model/result.ts";
import { shownValue } from "../../model/sanitise.ts";
import type { AskerIdentity } from "../shared/identity.ts";
import type { RelayCancel, RelayLate, RelayProgress, RelayRequest, RelayResult } from "../shared/protocol.ts";

/**
 * Each transport's frame version, apart from the bus's PROTOCOL_VERSION: a transport translates
 * between the two, so copies of the extension in one process keep talking over the bus whatever a
 * transport speaks. Bumped on any incompatible change to one of its frames, including a change to a
 * bus message a frame carries. The endpoint's v1 had no handshake (the token travelled in the hello),
 * v2 has the one of transports/local/frames.ts. NATS's v2 carried the endpoint's frames as they are;
 * v3 adds the keys, the cancel secret and the MACs (transports/nats/seal.ts).
 */
export const FRAME_VERSION: Readonly<Record<Transport, number>> = { endpoint: 2, nats: 3 };

/** The two ways from another process to the bus (docs/glossary.md). */
export type Transport = "endpoint" | "nats";

/** How a frame version is named when one is refused: the socket's frames were "the wire" before NATS was. */
const VERSION_NAME: Record<Transport, string> = { endpoint: "wire", nats: "NATS protocol" };

/** Longest frame accepted (once the endpoint's handshake is done), newline excluded; a longer one is refused. */
export const MAX_FRAME_BYTES = 1024 * 1024;

export type RequestFrame = { type: "request" } & RelayRequest & {
		/**
		 * The asker takes `late` frames: when its call ends `timeout` and the question stays open at the
		 * host, marked late, the host sends the question's end to the asker while it listens. An older
		 * asker sends none, and a later answer goes to the host's session, as before. @default absent
		 */
		lateFrames?: true;
		/**
		 * The asker acks every frame that carries an end it records in its session (a `wait: false`
		 * request's result, a late frame) with an ack frame, once recorded: the host marks such a frame
		 * `ack` and, without an ack that says recorded, gives the end to its own session. An older
		 * asker sends none, and the host sends it such frames as before, unmarked. @default absent
		 */
		acks?: true;
	};

/** Longest notice message a frame carries, in characters; the asker cuts a longer one before sending (a refused frame would close its connection). @default 2000 */
export const MAX_NOTICE_LENGTH = 2_000;
/** The levels of a notice, as pi's `notify` takes them. */
const NOTICE_LEVELS = ["info", "warning", "error"] as const;

/**
 * Asker → host, once proven: a notice of another extension in the asker's session without UI
 * (its `ctx.ui.notify`, interop/dialog-relay.ts), shown to the human prefixed with who sends it.
 * The bus's RelayNotice, with its `type` as `level` (the frame's `type` names the frame).
 */
export interface NoticeFrame {
	type: "notice";
	v: number;
	asker: AskerIdentity;
	message: string;
	level: (typeof NOTICE_LEVELS)[number];
}
export type CancelFrame = { type: "cancel" } & RelayCancel;
export type ProgressFrame = { type: "progress" } & RelayProgress;
/** Set by the host on a frame carrying an end the asker is to record and ack (RequestFrame.acks). */
interface AwaitsAck {
	/** The host awaits an ack frame for it, and gives the end to its own session without one saying recorded. @default absent */
	ack?: true;
}
export type ResultFrame = { type: "result" } & RelayResult & AwaitsAck;
/** Host → asker: the end of a request that went late after its result (RelayLate), under the asker's id. */
export type LateFrame = { type: "late" } & RelayLate & AwaitsAck;
/**
 * Asker → host: the end a result or late frame marked `ack` carried, for request `id`, is recorded in
 * the asking session (`recorded: true`), or is not and never will be here (`false`: the host's
 * session takes it). Sent once the record is made, so an asker that ends before it sends nothing,
 * and its end goes the next way.
 */
export interface AckFrame {
	type: "ack";
	v: number;
	id: string;
	recorded: boolean;
}
/** How long a host waits for the ack of a frame marked `ack` before its own session takes the end. @default 10000 */
export const ACK_WAIT_MS = 10_000;
/** What an asker sends the host. */
export type AskerFrame = RequestFrame | CancelFrame | NoticeFrame | AckFrame;
/** What goes back to an asker for its request: where it stands, and how it ended. */
export type ReplyFrame = ProgressFrame | ResultFrame;

/** Why a frame was refused; the endpoint closes the connection after sending it. */
export type ErrorCode =
	/** The client's proof does not match: it does not hold the endpoint's token. */
	| "bad-token"
	/** The frame's `v` is not its transport's FRAME_VERSION. */
	| "bad-version"
	/** Not JSON, not an object, or a frame whose fields do not check out. */
	| "malformed"
	/** A frame longer than MAX_FRAME_BYTES. */
	| "too-large"
	/** A valid frame at the wrong place: no hello first, a second hello, a host's frame from an asker, a reused id, a frame on the wrong subject. */
	| "unexpected"
	/** The handshake was not done within the grace period. */
	| "hello-timeout"
	/** Too many connections were awaiting the handshake; this one was the oldest and made room. */
	| "busy";

/** Every error code, for checking one read from the wire. */
export const ERROR_CODES: readonly ErrorCode[] = ["bad-token", "bad-version", "malformed", "too-large", "unexpected", "hello-timeout", "busy"];

/** Host → asker: why its frame is refused. Understood at any version, so `v` may differ. */
export interface ErrorFrame {
	type: "error";
	v: number;
	code: ErrorCode;
	message: string;
}

/** What a refused frame's error frame says. */
export type FrameRefusal = { code: ErrorCode; message: string };

/** An error frame in `transport`'s version. */
export function errorFrame(transport: Transport, code: ErrorCode, message: string): ErrorFrame {
	return { type: "error", v: FRAME_VERSION[transport], code, message };
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown, max = Number.POSITIVE_INFINITY): v is string => typeof v === "string" && v.length <= max;
export const isId = (v: unknown): v is string => isText(v, MAX_REQUEST_ID_LENGTH) && v !== "";
/** Who asks, bounded before anything reads it: a megabyte label cost the host ~50 ms of CPU per frame. */
const isAsker = (v: unknown): v is AskerIdentity => isRecord(v) && isText(v.label, MAX_SENT_LABEL_LENGTH) && isText(v.sessionId, MAX_SESSION_ID_LENGTH);
/** What a bad asker is told, for `frame` (request or notice). */
const askerProblem = (frame: string) =>
	`${frame}.asker must be {label, sessionId} strings of at most ${MAX_SENT_LABEL_LENGTH} and ${MAX_SESSION_ID_LENGTH} characters`;
const isFiniteNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isIndex = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
/** Whether `v` is a list of answers with string `question` and `answer` (the rest is the host's to check). */
const isAnswers = (v: unknown): v is Answer[] =>
	Array.isArray(v) && v.every((a) => isRecord(a) && typeof a.question === "string" && typeof a.answer === "string");

/** What is wrong with the fields of a request's end, a result or a late one (they are checked alike), named after the frame. */
function endProblem(frame: Record<string, unknown>, name: "result" | "late"): string | undefined {
	if (!isId(frame.id)) return `${name}.id must be a non-empty string`;
	if (frame.kind !== name) return `${name}.kind must be "${name}"`;
	if (!STATUSES.includes(frame.status as never)) return `${name}.status is unknown`;
	if (!isAnswers(frame.answers)) return `${name}.answers must be [{question, answer}] strings`;
	if (frame.note !== undefined && typeof frame.note !== "string") return `${name}.note must be a string`;
	if (frame.ack !== undefined && frame.ack !== true) return `${name}.ack must be true when present`;
	return undefined;
}

/** What a frame of a type neither the shared check nor its transport knows is told. */
export const unknownFrameType = (frame: Record<string, unknown>) => `unknown frame type ${JSON.stringify(frame.type)}`;

/** What is wrong with the fields of a frame both transports carry; undefined when they check out, or when it is none of them. Question contents are the host's to check. */
function sharedProblem(frame: Record<string, unknown>): string | undefined {
	switch (frame.type) {
		case "request": {
			if (!isId(frame.id)) return `request.id must be a non-empty string of at most ${MAX_REQUEST_ID_LENGTH} characters`;
			if (!isAsker(frame.asker)) return askerProblem("request");
			if (!Array.isArray(frame.questions)) return "request.questions must be an array";
			for (const field of ["deadline", "dialogTimeoutMs", "createdAt"] as const)
				if (!isFiniteNumber(frame[field])) return `request.${field} must be a finite number`;
			if (frame.later !== undefined && frame.later !== true) return "request.later must be true when present";
			if (frame.lateFrames !== undefined && frame.lateFrames !== true) return "request.lateFrames must be true when present";
			if (frame.acks !== undefined && frame.acks !== true) return "request.acks must be true when present";
			if (frame.answers !== undefined && !isAnswers(frame.answers)) return "request.answers must be [{question, answer}] strings";
			if (frame.resent !== undefined && typeof frame.resent !== "boolean") return "request.resent must be a boolean";
			return undefined;
		}
		case "cancel":
			if (!isId(frame.id)) return "cancel.id must be a non-empty string";
			if (frame.reason !== "timeout" && frame.reason !== "cancelled") return 'cancel.reason must be "timeout" or "cancelled"';
			return undefined;
		case "notice": {
			if (!isAsker(frame.asker)) return askerProblem("notice");
			// Counted in code points, as the asker's cut (capLength) counts them.
			if (typeof frame.message !== "string" || frame.message.length > 2 * MAX_NOTICE_LENGTH || [...frame.message].length > MAX_NOTICE_LENGTH)
				return `notice.message must be a string of at most ${MAX_NOTICE_LENGTH} characters`;
			if (!NOTICE_LEVELS.includes(frame.level as never)) return `notice.level must be one of ${NOTICE_LEVELS.join(", ")}`;
			return undefined;
		}
		case "progress":
			if (!isId(frame.id)) return "progress.id must be a non-empty string";
			if (frame.kind !== "progress") return 'progress.kind must be "progress"';
			// Stages are informational: a newer host may report more of them.
			if (typeof frame.stage !== "string" || frame.stage === "") return "progress.stage must be a string";
			if (!isAnswers(frame.answers)) return "progress.answers must be [{question, answer}] strings";
			if (frame.question !== undefined && !isIndex(frame.question)) return "progress.question must be an index";
			if (frame.position !== undefined && !isIndex(frame.position)) return "progress.position must be an index";
			return undefined;
		case "result":
			return endProblem(frame, "result");
		case "late":
			if (frame.reason !== undefined && typeof frame.reason !== "string") return "late.reason must be a string";
			return endProblem(frame, "late");
		case "ack":
			if (!isId(frame.id)) return "ack.id must be a non-empty string";
			if (typeof frame.recorded !== "boolean") return "ack.recorded must be a boolean";
			return undefined;
		case "error":
			if (typeof frame.code !== "string" || typeof frame.message !== "string") return "error needs a code and a message";
			if (!Number.isSafeInteger(frame.v)) return "error.v must be an integer";
			return undefined;
		default:
			return undefined;
	}
}

const SHARED_TYPES: readonly unknown[] = ["request", "cancel", "notice", "ack", "progress", "result", "late", "error"];
/** Whether `frame` is one both transports carry. */
export const isSharedFrame = (frame: Record<string, unknown>) => SHARED_TYPES.includes(frame.type);
/** The `own` check of a transport that adds nothing to the shared frames and carries none of its own. */
const unknownOnly = (frame: Record<string, unknown>) => (isSharedFrame(frame) ? undefined : unknownFrameType(frame));

/**
 * Checks an already parsed frame of `transport`: an object, in the transport's version (checked
 * before the fields, since another version may have other fields), the shared frames' fields, then
 * `own`: what the transport adds to a shared frame, or the fields of a frame only it carries
 * (`own` says unknownFrameType for a type it does not know either).
 */
export function checkFrame<F>(
	raw: unknown,
	transport: Transport,
	own: (frame: Record<string, unknown>) => string | undefined = unknownOnly,
): Checked<{ frame: F }, FrameRefusal> {
	if (!isRecord(raw)) return { ok: false, code: "malformed", message: "The frame is not a JSON object." };
	const version = FRAME_VERSION[transport];
	// An error frame must be readable whatever its version: it is how a version mismatch is reported.
	if (raw.type !== "error" && raw.v !== version)
		return {
			ok: false,
			code: "bad-version",
			message: `The frame speaks checkpoint-bridge ${VERSION_NAME[transport]} v${shownValue(raw.v)}; this side speaks v${version}.`,
		};
	const problem = sharedProblem(raw) ?? own(raw);
	if (problem) return { ok: false, code: "malformed", message: `Malformed frame: ${problem}.` };
	return { ok: true, frame: raw as F };
}
