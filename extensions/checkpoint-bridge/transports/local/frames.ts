/**
 * Frames on the local endpoint: newline-delimited JSON, one frame a line, in the endpoint's frame
 * version (core/bridge/frames.ts). A connection opens with a handshake (hello, welcome, auth) in which the
 * host proves it holds the endpoint's secret before the asker sends anything of value, then the
 * asker proves it too; the frames after it are those both transports carry (core/bridge/frames.ts), so the
 * socket carries the same contract as the in-process bus.
 */

import {
	type AskerFrame,
	checkFrame,
	type ErrorFrame,
	type FrameRefusal,
	isSharedFrame,
	type LateFrame,
	MAX_FRAME_BYTES,
	type ReplyFrame,
	unknownFrameType,
} from "../../core/bridge/frames.ts";
import type { Checked } from "../../model/check.ts";

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

export type ClientFrame = HelloFrame | AuthFrame | AskerFrame;
type ServerFrame = WelcomeFrame | ReplyFrame | LateFrame | ErrorFrame;
export type Frame = ClientFrame | ServerFrame;

/** A checked frame, or the code and message of the error frame that refuses it. */
export type FrameCheck = Checked<{ frame: Frame }, FrameRefusal>;

/** One line of JSON for the socket. */
export function encodeFrame(frame: Frame): string {
	return `${JSON.stringify(frame)}\n`;
}

const isSecret = (v: unknown): v is string => typeof v === "string" && v.length <= MAX_SECRET_LENGTH && v.length >= MIN_SECRET_LENGTH && /^[\w-]+$/.test(v);

/** What is wrong with a handshake frame's fields; undefined when they check out. */
function handshakeProblem(frame: Record<string, unknown>): string | undefined {
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
		default:
			return isSharedFrame(frame) ? undefined : unknownFrameType(frame);
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
	return checkFrame<Frame>(raw, "endpoint", handshakeProblem);
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
	#buffered: Buffer[] = [];
	#bufferedBytes = 0;
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
			if (this.#bufferedBytes + piece.length > this.maxBytes) {
				this.#overflowed = true;
				this.#buffered = [];
				this.#bufferedBytes = 0;
				return yield "too-large";
			}
			if (newline === -1) {
				if (piece.length > 0) {
					this.#buffered.push(piece);
					this.#bufferedBytes += piece.length;
				}
				return;
			}
			const line = this.#buffered.length === 0 ? piece : Buffer.concat([...this.#buffered, piece]);
			this.#buffered = [];
			this.#bufferedBytes = 0;
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
