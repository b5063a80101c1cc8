/**
 * Frames on the local endpoint: newline-delimited JSON, one frame a line, each carrying the
 * protocol version. Request, cancel, progress and result frames are the bus messages of
 * protocol.ts plus a `type`, so the socket carries the same contract as the in-process bus.
 */
import { STATUSES, type Answer } from "../tool/envelope.ts";
import { PROTOCOL_VERSION, type RelayCancel, type RelayProgress, type RelayRequest, type RelayResult } from "../core/protocol.ts";

/** The frames carry bus messages, so they share the bus protocol's version. */
export const WIRE_VERSION = PROTOCOL_VERSION;

/** Longest frame accepted, newline excluded; a longer one closes its connection. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** Longest request id accepted from a client; ids are nanoids (21 characters). */
const MAX_ID_LENGTH = 128;
/** Longest token accepted in a hello; tokens are 43 characters. */
const MAX_TOKEN_LENGTH = 1024;

/** Client → server, first frame of every connection. */
export interface HelloFrame {
	type: "hello";
	v: number;
	/** The secret from the token file beside the socket. */
	token: string;
	/** The client's process id as it says it; shown to the human, not checked. */
	pid: number;
}

export type RequestFrame = { type: "request" } & RelayRequest;
export type CancelFrame = { type: "cancel" } & RelayCancel;
export type ProgressFrame = { type: "progress" } & RelayProgress;
export type ResultFrame = { type: "result" } & RelayResult;

/** Why a connection was refused; the server closes the connection after sending it. */
export type ErrorCode =
	/** The hello's token is not the endpoint's. */
	| "bad-token"
	/** The frame's `v` is not WIRE_VERSION. */
	| "bad-version"
	/** Not JSON, not an object, or a frame whose fields do not check out. */
	| "malformed"
	/** A frame longer than MAX_FRAME_BYTES. */
	| "too-large"
	/** A valid frame at the wrong place: no hello first, a second hello, a server frame from a client, a reused id. */
	| "unexpected"
	/** No hello within the grace period. */
	| "hello-timeout";

export const ERROR_CODES: readonly ErrorCode[] = ["bad-token", "bad-version", "malformed", "too-large", "unexpected", "hello-timeout"];

/** Server → client: why the connection is closing. Understood at any version, so `v` may differ. */
export interface ErrorFrame {
	type: "error";
	v: number;
	code: ErrorCode;
	message: string;
}

export type ClientFrame = HelloFrame | RequestFrame | CancelFrame;
export type ServerFrame = ProgressFrame | ResultFrame | ErrorFrame;
export type Frame = ClientFrame | ServerFrame;

export type FrameCheck = { ok: true; frame: Frame } | { ok: false; code: "malformed" | "bad-version"; message: string };

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
const isId = (v: unknown): v is string => isText(v, MAX_ID_LENGTH) && v !== "";
const isFiniteNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isIndex = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isAnswers = (v: unknown): v is Answer[] =>
	Array.isArray(v) && v.every((a) => isRecord(a) && typeof a.question === "string" && typeof a.answer === "string");

/** What is wrong with a frame's fields, by type; undefined when they check out. Question contents are the host's to check. */
function problemOf(frame: Record<string, unknown>): string | undefined {
	switch (frame.type) {
		case "hello":
			if (!isText(frame.token, MAX_TOKEN_LENGTH) || frame.token === "") return "hello.token must be a non-empty string";
			if (!Number.isSafeInteger(frame.pid) || (frame.pid as number) <= 0) return "hello.pid must be a positive integer";
			return undefined;
		case "request": {
			if (!isId(frame.id)) return `request.id must be a non-empty string of at most ${MAX_ID_LENGTH} characters`;
			const asker = frame.asker;
			if (!isRecord(asker) || typeof asker.label !== "string" || typeof asker.sessionId !== "string")
				return "request.asker must be {label, sessionId} strings";
			if (!Array.isArray(frame.questions)) return "request.questions must be an array";
			for (const field of ["deadline", "dialogTimeoutMs", "createdAt"] as const)
				if (!isFiniteNumber(frame[field])) return `request.${field} must be a finite number`;
			return undefined;
		}
		case "cancel":
			if (!isId(frame.id)) return "cancel.id must be a non-empty string";
			if (frame.reason !== "timeout" && frame.reason !== "cancelled") return 'cancel.reason must be "timeout" or "cancelled"';
			return undefined;
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
			if (!isId(frame.id)) return "result.id must be a non-empty string";
			if (frame.kind !== "result") return 'result.kind must be "result"';
			if (!STATUSES.includes(frame.status as never)) return "result.status is unknown";
			if (!isAnswers(frame.answers)) return "result.answers must be [{question, answer}] strings";
			if (frame.note !== undefined && typeof frame.note !== "string") return "result.note must be a string";
			return undefined;
		case "error":
			if (typeof frame.code !== "string" || typeof frame.message !== "string") return "error needs a code and a message";
			return undefined;
		default:
			return `unknown frame type ${JSON.stringify(frame.type)}`;
	}
}

/** Parses and checks one line. The version is checked before the fields, since another version may have other fields. */
export function decodeFrame(line: string): FrameCheck {
	let raw: unknown;
	try {
		raw = JSON.parse(line);
	} catch {
		return { ok: false, code: "malformed", message: "The frame is not JSON." };
	}
	if (!isRecord(raw)) return { ok: false, code: "malformed", message: "The frame is not a JSON object." };
	// An error frame must be readable whatever its version: it is how a version mismatch is reported.
	if (raw.type !== "error" && raw.v !== WIRE_VERSION)
		return { ok: false, code: "bad-version", message: `The frame speaks checkpoint-bridge protocol v${String(raw.v)}; this side speaks v${WIRE_VERSION}.` };
	const problem = problemOf(raw);
	if (problem) return { ok: false, code: "malformed", message: `Malformed frame: ${problem}.` };
	return { ok: true, frame: raw as unknown as Frame };
}

/**
 * Splits a byte stream into lines of at most `maxBytes`, without ever buffering more than that:
 * a line that grows past the limit is reported at once, before its newline arrives.
 */
export class LineReader {
	readonly #maxBytes: number;
	#pending: Buffer[] = [];
	#pendingBytes = 0;
	#overflowed = false;

	constructor(maxBytes = MAX_FRAME_BYTES) {
		this.#maxBytes = maxBytes;
	}

	/** The complete lines in `chunk` (blank ones skipped), or "too-large" once a line exceeds the limit; nothing after that. */
	push(chunk: Buffer): string[] | "too-large" {
		if (this.#overflowed) return "too-large";
		const lines: string[] = [];
		let start = 0;
		for (;;) {
			const newline = chunk.indexOf(0x0a, start);
			const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
			if (this.#pendingBytes + piece.length > this.#maxBytes) {
				this.#overflowed = true;
				this.#pending = [];
				return "too-large";
			}
			if (newline === -1) {
				if (piece.length > 0) {
					this.#pending.push(piece);
					this.#pendingBytes += piece.length;
				}
				return lines;
			}
			const line = Buffer.concat([...this.#pending, piece]).toString("utf8");
			this.#pending = [];
			this.#pendingBytes = 0;
			if (line.trim() !== "") lines.push(line);
			start = newline + 1;
		}
	}
}
