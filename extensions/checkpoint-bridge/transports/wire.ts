/**
 * Frames on the local endpoint: newline-delimited JSON, one frame a line, each carrying the wire
 * version. A connection opens with a handshake (hello, welcome, auth) in which the host proves it
 * holds the endpoint's secret before the asker sends anything of value, then the asker proves it
 * too. Request, cancel, progress, result and notice frames are the bus messages of protocol.ts plus a
 * `type`, so the socket carries the same contract as the in-process bus.
 */

import type { AskerIdentity } from "../core/identity.ts";
import type { RelayCancel, RelayLate, RelayProgress, RelayRequest, RelayResult } from "../core/protocol.ts";
import type { Answer } from "../model/answer.ts";
import type { Checked } from "../model/check.ts";
import { MAX_REQUEST_ID_LENGTH, MAX_SENT_LABEL_LENGTH, MAX_SESSION_ID_LENGTH } from "../model/limits.ts";
import { STATUSES } from "../model/result.ts";
import { shownValue } from "../model/sanitise.ts";

/**
 * The wire's own version, apart from the bus's PROTOCOL_VERSION: the endpoint translates between
 * the two, so copies of the extension in one process keep talking over the bus whatever the wire
 * speaks. Bumped on any incompatible change to a frame, including a change to a bus message a
 * frame carries. v1 had no handshake (the token travelled in the hello); v2 has the one above.
 */
export const WIRE_VERSION = 2;

/** Longest frame accepted once the handshake is done, newline excluded; a longer one closes its connection. */
export const MAX_FRAME_BYTES = 1024 * 1024;
/** Longest frame accepted before the handshake is done: a handshake frame is under 200 bytes. */
export const HANDSHAKE_MAX_FRAME_BYTES = 4 * 1024;

/** Nonces and proofs are 32 bytes in base64url (43 characters); anything shorter than 16 bytes is refused. */
const MIN_SECRET_LENGTH = 22;
const MAX_SECRET_LENGTH = 128;

/** Client → server, first frame of every connection. Carries nothing secret. */
interface HelloFrame {
	type: "hello";
	v: number;
	/** Fresh random bytes (base64url) the server must answer with a proof. */
	nonce: string;
	/** The client's process id as it says it; shown to the human, not checked. */
	pid: number;
}

/** Server → client, the answer to hello: proof that the server holds the token, and a nonce of its own. */
interface WelcomeFrame {
	type: "welcome";
	v: number;
	/** HMAC-SHA256 under the token of the server's tag and both nonces (base64url); see proof.ts. */
	proof: string;
	nonce: string;
}

/** Client → server, once the server has proven itself: the client's proof. Requests may follow at once. */
interface AuthFrame {
	type: "auth";
	v: number;
	/** HMAC-SHA256 under the token of the client's tag and both nonces (base64url). */
	proof: string;
}

export type RequestFrame = { type: "request" } & RelayRequest & {
		/**
		 * The asker takes `late` frames: when its call ends `timeout` and the question stays open at the
		 * host, marked late, the host sends the question's end on this connection while it is open. An
		 * older asker sends none, and a later answer goes to the host's session, as before. @default absent
		 */
		lateFrames?: true;
	};

/** Longest notice message a frame carries, in characters; the asker cuts a longer one before sending (a refused frame would close its connection). @default 2000 */
export const MAX_NOTICE_LENGTH = 2_000;
/** The levels of a notice, as pi's `notify` takes them. */
const NOTICE_LEVELS = ["info", "warning", "error"] as const;

/**
 * Client → server, once proven: a notice of another extension in the client's session without UI
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
export type ResultFrame = { type: "result" } & RelayResult;
/** Server → client: the end of a request that went late after its result (RelayLate), under the client's id. */
export type LateFrame = { type: "late" } & RelayLate;

/** Why a connection was refused; the server closes the connection after sending it. */
export type ErrorCode =
	/** The client's proof does not match: it does not hold the endpoint's token. */
	| "bad-token"
	/** The frame's `v` is not WIRE_VERSION. */
	| "bad-version"
	/** Not JSON, not an object, or a frame whose fields do not check out. */
	| "malformed"
	/** A frame longer than MAX_FRAME_BYTES. */
	| "too-large"
	/** A valid frame at the wrong place: no hello first, a second hello, a server frame from a client, a reused id. */
	| "unexpected"
	/** The handshake was not done within the grace period. */
	| "hello-timeout"
	/** Too many connections were awaiting the handshake; this one was the oldest and made room. */
	| "busy";

/** Every error code, for checking one read from the wire. */
export const ERROR_CODES: readonly ErrorCode[] = ["bad-token", "bad-version", "malformed", "too-large", "unexpected", "hello-timeout", "busy"];

/** Server → client: why the connection is closing. Understood at any version, so `v` may differ. */
export interface ErrorFrame {
	type: "error";
	v: number;
	code: ErrorCode;
	message: string;
}

export type ClientFrame = HelloFrame | AuthFrame | RequestFrame | CancelFrame | NoticeFrame;
type ServerFrame = WelcomeFrame | ProgressFrame | ResultFrame | LateFrame | ErrorFrame;
export type Frame = ClientFrame | ServerFrame;

/** A checked frame, or the code and message of the error frame that refuses it. */
export type FrameCheck = Checked<{ frame: Frame }, { code: "malformed" | "bad-version"; message: string }>;

/** One line of JSON for the socket. */
export function encodeFrame(frame: Frame): string {
	return `${JSON.stringify(frame)}\n`;
}

/** An error frame in this side's version. */
export function errorFrame(code: ErrorCode, message: string): ErrorFrame {
	return { type: "error", v: WIRE_VERSION, code, message };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown, max = Number.POSITIVE_INFINITY): v is string => typeof v === "string" && v.length <= max;
const isSecret = (v: unknown): v is string => isText(v, MAX_SECRET_LENGTH) && v.length >= MIN_SECRET_LENGTH && /^[\w-]+$/.test(v);
const isId = (v: unknown): v is string => isText(v, MAX_REQUEST_ID_LENGTH) && v !== "";
/** Who asks, bounded before anything reads it: a megabyte label cost the host ~50 ms of CPU per frame. */
const isAsker = (v: unknown): v is AskerIdentity => isRecord(v) && isText(v.label, MAX_SENT_LABEL_LENGTH) && isText(v.sessionId, MAX_SESSION_ID_LENGTH);
/** What a bad asker is told, for `frame` (request or notice). */
const askerProblem = (frame: string) =>
	`${frame}.asker must be {label, sessionId} strings of at most ${MAX_SENT_LABEL_LENGTH} and ${MAX_SESSION_ID_LENGTH} characters`;
const isFiniteNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isIndex = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
/** Whether `v` is a list of answers with string `question` and `answer` (the rest is the host's to check). */
export const isAnswers = (v: unknown): v is Answer[] =>
	Array.isArray(v) && v.every((a) => isRecord(a) && typeof a.question === "string" && typeof a.answer === "string");

/** What is wrong with the fields of a request's end, a result or a late one (they are checked alike), named after the frame. */
function endProblem(frame: Record<string, unknown>, name: "result" | "late"): string | undefined {
	if (!isId(frame.id)) return `${name}.id must be a non-empty string`;
	if (frame.kind !== name) return `${name}.kind must be "${name}"`;
	if (!STATUSES.includes(frame.status as never)) return `${name}.status is unknown`;
	if (!isAnswers(frame.answers)) return `${name}.answers must be [{question, answer}] strings`;
	if (frame.note !== undefined && typeof frame.note !== "string") return `${name}.note must be a string`;
	return undefined;
}

/** What is wrong with a frame's fields, by type; undefined when they check out. Question contents are the host's to check. */
function frameProblem(frame: Record<string, unknown>): string | undefined {
	switch (frame.type) {
		case "hello":
			if (!isSecret(frame.nonce)) return `hello.nonce must be ${MIN_SECRET_LENGTH}-${MAX_SECRET_LENGTH} base64url characters`;
			if (!Number.isSafeInteger(frame.pid) || (frame.pid as number) <= 0) return "hello.pid must be a positive integer";
			return undefined;
		case "welcome":
			if (!isSecret(frame.proof) || !isSecret(frame.nonce))
				return `welcome.proof and welcome.nonce must be ${MIN_SECRET_LENGTH}-${MAX_SECRET_LENGTH} base64url characters`;
			return undefined;
		case "auth":
			if (!isSecret(frame.proof)) return `auth.proof must be ${MIN_SECRET_LENGTH}-${MAX_SECRET_LENGTH} base64url characters`;
			return undefined;
		case "request": {
			if (!isId(frame.id)) return `request.id must be a non-empty string of at most ${MAX_REQUEST_ID_LENGTH} characters`;
			if (!isAsker(frame.asker)) return askerProblem("request");
			if (!Array.isArray(frame.questions)) return "request.questions must be an array";
			for (const field of ["deadline", "dialogTimeoutMs", "createdAt"] as const)
				if (!isFiniteNumber(frame[field])) return `request.${field} must be a finite number`;
			if (frame.later !== undefined && frame.later !== true) return "request.later must be true when present";
			if (frame.lateFrames !== undefined && frame.lateFrames !== true) return "request.lateFrames must be true when present";
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
		case "error":
			if (typeof frame.code !== "string" || typeof frame.message !== "string") return "error needs a code and a message";
			if (!Number.isSafeInteger(frame.v)) return "error.v must be an integer";
			return undefined;
		default:
			return `unknown frame type ${JSON.stringify(frame.type)}`;
	}
}

/** Refuses bytes that are not UTF-8 instead of replacing them, so no frame is read as other than it was sent. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parses and checks one line. The version is checked before the fields, since another version may have other fields. */
export function decodeFrame(line: string | Uint8Array): FrameCheck {
	let text: string;
	try {
		text = typeof line === "string" ? line : utf8.decode(line);
	} catch {
		return { ok: false, code: "malformed", message: "The frame is not valid UTF-8." };
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		return { ok: false, code: "malformed", message: "The frame is not JSON." };
	}
	return checkFrame(raw);
}

/** Checks an already parsed frame, as decodeFrame does (for transports that parse their own messages). */
export function checkFrame(raw: unknown): FrameCheck {
	if (!isRecord(raw)) return { ok: false, code: "malformed", message: "The frame is not a JSON object." };
	// An error frame must be readable whatever its version: it is how a version mismatch is reported.
	if (raw.type !== "error" && raw.v !== WIRE_VERSION)
		return { ok: false, code: "bad-version", message: `The frame speaks checkpoint-bridge wire v${shownValue(raw.v)}; this side speaks v${WIRE_VERSION}.` };
	const problem = frameProblem(raw);
	if (problem) return { ok: false, code: "malformed", message: `Malformed frame: ${problem}.` };
	return { ok: true, frame: raw as unknown as Frame };
}

/**
 * Splits a byte stream into lines of at most `maxBytes`, without ever buffering more than that:
 * a line that grows past the limit is reported at once, before its newline arrives. The limit may
 * be changed between lines (the endpoint raises it once the handshake is done), so lines are
 * handed out one at a time.
 */
export class LineReader {
	/** Longest line accepted from now on, newline excluded. */
	maxBytes: number;
	#pending: Buffer[] = [];
	#pendingBytes = 0;
	#overflowed = false;

	constructor(maxBytes = MAX_FRAME_BYTES) {
		this.maxBytes = maxBytes;
	}

	/**
	 * The complete lines in `chunk` as bytes (blank ones skipped), or "too-large" once a line exceeds
	 * the limit, and nothing after that. Stopping early (a refused frame) drops the rest of the chunk.
	 */
	*push(chunk: Buffer): Generator<Buffer | "too-large", void, undefined> {
		if (this.#overflowed) return yield "too-large";
		let start = 0;
		for (;;) {
			const newline = chunk.indexOf(0x0a, start);
			const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
			if (this.#pendingBytes + piece.length > this.maxBytes) {
				this.#overflowed = true;
				this.#pending = [];
				this.#pendingBytes = 0;
				return yield "too-large";
			}
			if (newline === -1) {
				if (piece.length > 0) {
					this.#pending.push(piece);
					this.#pendingBytes += piece.length;
				}
				return;
			}
			const line = this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]);
			this.#pending = [];
			this.#pendingBytes = 0;
			start = newline + 1;
			if (!isBlank(line)) yield line;
		}
	}
}

/** A line of spaces, tabs and carriage returns only. */
function isBlank(line: Buffer): boolean {
	for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
	return true;
}
