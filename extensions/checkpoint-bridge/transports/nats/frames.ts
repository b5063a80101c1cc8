/**
 * Frames on NATS: one JSON frame per message, in NATS's frame version (core/bridge/frames.ts). The bus
 * messages and the error frame are those both transports carry (core/bridge/frames.ts, checked by the same
 * check); NATS adds what a broker does not give
 * for free: the budget as milliseconds left (clocks differ), where the asker runs, the answers it
 * already has when it re-sends, and heartbeats both ways (`ping` from the asker, `pong` from the host).
 * Since v3 a request carries the asker's public key and the hash of its cancel secret, a cancel the
 * secret, and the host's frames for a request its key and a MAC (seal.ts).
 */

import {
	type AckFrame,
	type CancelFrame,
	checkFrame,
	type ErrorFrame,
	type FrameRefusal,
	isId,
	isRecord,
	isSharedFrame,
	type LateFrame,
	MAX_FRAME_BYTES,
	type NoticeFrame,
	type ProgressFrame,
	type RequestFrame,
	type ResultFrame,
	unknownFrameType,
} from "../../core/bridge/frames.ts";
import { type Answer, type AnswerKind, OUTSIDE_SOURCES } from "../../model/answer.ts";
import type { Checked } from "../../model/check.ts";
import { MAX_REQUEST_ID_LENGTH } from "../../model/limits.ts";
import { isSealText } from "./seal.ts";

/** Longest machine name accepted; longer ones are refused, not cut. */
export const MAX_MACHINE_LENGTH = 64;

/** Asker → host, on `<prefix>.request` with the asker's inbox as reply subject. */
export type NatsRequestFrame = RequestFrame & {
	/** What is left of the call's budget when sent, in ms; the host sets its own deadline from it. */
	budgetMs: number;
	/** The asker's process id, shown to the human. */
	pid: number;
	/** The asker's machine (host name), shown to the human. */
	machine: string;
	/** The asker's X25519 public key for this call (base64url): host frames for it are MACed under a key derived from it. */
	key: string;
	/** SHA-256 (base64url) of the call's cancel secret: only a cancel carrying the secret takes the request off the host. */
	cancelHash: string;
};

/** Asker → host, on `<prefix>.notice`: the local socket's notice, with where the asker runs (shown to the human). */
type NatsNoticeFrame = NoticeFrame & {
	/** The asker's process id. */
	pid: number;
	/** The asker's machine (host name). */
	machine: string;
};

/** Asker → host, on `<prefix>.cancel`: the request's secret proves the cancel is its asker's. */
export type NatsCancelFrame = CancelFrame & {
	/** The cancel secret whose hash the request carried. */
	secret: string;
};

/** What a host adds to its frames for a request it can address: its public key and the frame's MAC (seal.ts). */
export interface Sealed {
	/** The serving host's X25519 public key (base64url). */
	hostKey?: string;
	/** HMAC-SHA256 of the frame without `mac`, under the key of the host's and the asker's keys. */
	mac?: string;
}

/** Asker → host, on `<prefix>.ping` with the asker's inbox as reply subject: "I still wait for `id`". */
interface PingFrame {
	type: "ping";
	v: number;
	id: string;
}

/** Host → asker inbox: the answer to a ping (or the host letting go of a request, `held: false`). */
type PongFrame = {
	type: "pong";
	v: number;
	id: string;
	/** Whether the host holds the request. False: it never had it, dropped it, or is closing. */
	held: boolean;
	/** The serving host's instance id. */
	host: string;
	/** Why the host let go, when it says. */
	note?: string;
} & Sealed;

/** Host → anyone asking on `<prefix>.host`: the room is served. */
interface HostFrame {
	type: "host";
	v: number;
	host: string;
}

/** Every frame that travels on NATS. */
export type NatsFrame =
	| NatsRequestFrame
	| NatsCancelFrame
	| NatsNoticeFrame
	| (ProgressFrame & Sealed)
	| (ResultFrame & Sealed)
	/** Host → asker inbox, as a NATS request whose reply is the asker's ack (ask now, answer later). */
	| (LateFrame & Sealed)
	/** Asker → host, the reply to a result or late frame marked `ack`, sealed by the asker under the key of the host's and its own keys. */
	| (AckFrame & Sealed)
	| ErrorFrame
	| PingFrame
	| PongFrame
	| HostFrame;

/** A checked message: its frame, or why it is refused (the code an error frame carries). */
export type NatsFrameCheck = Checked<{ frame: NatsFrame }, FrameRefusal>;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
/** What a bad id is told, for `field` (`ping.id`, say). */
const idProblem = (field: string) => `${field} must be a non-empty string of at most ${MAX_REQUEST_ID_LENGTH} characters`;

/** One frame as message bytes. */
export function encodeNatsFrame(frame: NatsFrame): Uint8Array {
	return encoder.encode(JSON.stringify(frame));
}

const KINDS: readonly AnswerKind[] = ["option", "other", "text", "confirm"];
const SOURCES: readonly unknown[] = ["dialog", "shared", ...OUTSIDE_SOURCES];

/** Carried answers rebuilt from their known fields only, so nothing else rides along into the host. */
function cleanAnswers(answers: Answer[]): Answer[] {
	return answers.map((a) => ({
		question: a.question,
		answer: a.answer,
		kind: KINDS.includes(a.kind) ? a.kind : "text",
		...(typeof a.id === "string" ? { id: a.id } : {}),
		...(Array.isArray(a.values) && a.values.every((x) => typeof x === "string") ? { values: [...a.values] } : {}),
		...(a.recommended === true ? { recommended: true as const } : {}),
		// Where the answer came from survives a re-send, so the asker's envelope reads as if nothing happened.
		...(SOURCES.includes(a.source) ? { source: a.source } : {}),
	}));
}

/** What is wrong with a host's seal on a frame, when it carries one. */
function sealProblem(frame: Record<string, unknown>): string | undefined {
	if (frame.hostKey === undefined && frame.mac === undefined) return undefined;
	if (!isSealText(frame.hostKey) || !isSealText(frame.mac)) return `${String(frame.type)}.hostKey and .mac must both be 43 base64url characters`;
	return undefined;
}

/** What is wrong with the NATS-only parts of a frame, or with a frame only NATS carries; undefined when they check out. */
function natsProblem(frame: Record<string, unknown>): string | undefined {
	switch (frame.type) {
		case "request":
			if (!isSealText(frame.key)) return "request.key must be an X25519 public key (43 base64url characters)";
			if (!isSealText(frame.cancelHash)) return "request.cancelHash must be a SHA-256 hash (43 base64url characters)";
			if (typeof frame.budgetMs !== "number" || !Number.isFinite(frame.budgetMs)) return "request.budgetMs must be a finite number";
			if (!Number.isSafeInteger(frame.pid) || (frame.pid as number) <= 0) return "request.pid must be a positive integer";
			if (typeof frame.machine !== "string" || frame.machine.trim() === "" || frame.machine.length > MAX_MACHINE_LENGTH)
				return `request.machine must be a non-empty string of at most ${MAX_MACHINE_LENGTH} characters`;
			return undefined;
		case "notice":
			if (!Number.isSafeInteger(frame.pid) || (frame.pid as number) <= 0) return "notice.pid must be a positive integer";
			if (typeof frame.machine !== "string" || frame.machine.trim() === "" || frame.machine.length > MAX_MACHINE_LENGTH)
				return `notice.machine must be a non-empty string of at most ${MAX_MACHINE_LENGTH} characters`;
			return undefined;
		case "ping":
			return isId(frame.id) ? undefined : idProblem("ping.id");
		case "pong":
			if (!isId(frame.id)) return idProblem("pong.id");
			if (typeof frame.held !== "boolean") return "pong.held must be a boolean";
			if (!isId(frame.host)) return idProblem("pong.host");
			if (frame.note !== undefined && typeof frame.note !== "string") return "pong.note must be a string";
			return sealProblem(frame);
		case "cancel":
			return isSealText(frame.secret) ? undefined : "cancel.secret must be 43 base64url characters";
		case "progress":
		case "result":
		case "late":
		case "ack":
			return sealProblem(frame);
		case "host":
			return isId(frame.host) ? undefined : idProblem("host.host");
		default:
			return isSharedFrame(frame) ? undefined : unknownFrameType(frame);
	}
}

/**
 * Checks one message: its size, UTF-8, JSON, version (before the fields: another version may have
 * other fields), then the shared fields (core/bridge/frames.ts) and the NATS ones. Hello frames are the
 * socket's and are refused here: on NATS the server authenticates.
 */
export function decodeNatsFrame(data: Uint8Array, maxBytes = MAX_FRAME_BYTES): NatsFrameCheck {
	if (data.byteLength > maxBytes) return { ok: false, code: "too-large", message: `A frame is longer than ${maxBytes} bytes.` };
	let raw: unknown;
	try {
		raw = JSON.parse(decoder.decode(data));
	} catch {
		return { ok: false, code: "malformed", message: "The frame is not UTF-8 JSON." };
	}
	const type = isRecord(raw) ? raw.type : undefined;
	if (type === "hello" || type === "welcome" || type === "auth")
		return { ok: false, code: "unexpected", message: "Handshake frames belong to the local socket; NATS authenticates through the server." };
	const checked = checkFrame<NatsFrame>(raw, "nats", natsProblem);
	if (!checked.ok) return checked;
	const { frame } = checked;
	if (frame.type === "request" && frame.answers !== undefined) frame.answers = cleanAnswers(frame.answers);
	return { ok: true, frame };
}
