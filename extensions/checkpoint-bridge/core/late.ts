/**
 * Late questions: a request whose call's budget ran out before every question was answered leaves
 * the one-at-a-time queue but stays open at the host, marked late, until it is answered (from
 * `/checkpoints`, the web page or its link), expires, or is pushed out by newer late ones. A late
 * answer reaches the asker as a message (core/delivery.ts). Bounded per asker and in all, in number
 * and bytes; the oldest goes first, with a notice.
 */
import { readConfig } from "./config.ts";
import type { RequestRecord } from "./request-record.ts";

/** What a timed-out call's note adds when its questions stay open, marked late. */
export const LATE_NOTE =
	"The question stays open on the host, marked late: the human can still answer it, and a later answer is delivered as a message (custom type checkpoint-bridge:answer). Do not ask it again.";

/** Environment variable that turns late answers off with `0`. */
const ENV_LATE = "CHECKPOINT_BRIDGE_LATE_ANSWERS";
/** Environment variable with how long a late question stays open, in ms. */
const ENV_LATE_EXPIRY = "CHECKPOINT_BRIDGE_LATE_EXPIRY_MS";
/** How long a late question stays open. @default 86_400_000 (24 h) */
export const DEFAULT_LATE_EXPIRY_MS = 86_400_000;
/** The longest a timer can wait (2^31 - 1 ms, about 24.8 days): Node fires a longer one at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** Late requests one asker may have open. @default 8 */
const MAX_LATE_PER_ASKER = 8;
/** Late requests the host keeps in all. @default 64 */
const MAX_LATE = 64;
/** Bytes of questions (as JSON) the late requests may hold in all. @default 1 MiB */
const MAX_LATE_BYTES = 1_048_576;

/** How late questions are kept, read from the environment. */
export interface LateConfig {
	/** Whether a timed-out request stays open, marked late. @default true */
	on: boolean;
	/** How long it stays open. @default DEFAULT_LATE_EXPIRY_MS */
	expiryMs: number;
	/** @default MAX_LATE_PER_ASKER */
	maxPerAsker: number;
	/** @default MAX_LATE */
	maxTotal: number;
	/** @default MAX_LATE_BYTES */
	maxBytes: number;
	/**
	 * Each question's time when a late request is shown again: the host's (CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS), since the
	 * asker cut its own to the call's budget, which has run out. NO_LIMIT for none. @default DEFAULT_DIALOG_TIMEOUT_MS
	 */
	dialogTimeoutMs: number;
}

/** Whether late answers are on (CHECKPOINT_BRIDGE_LATE_ANSWERS is not "0"): every call asks, so it reads that one setting only. */
export const lateAnswersOn = (env: Readonly<Record<string, string | undefined>> = process.env): boolean => env[ENV_LATE]?.trim() !== "0";

/** Reads the late-answer settings; an unreadable expiry falls back to the default, a longer one than a timer can wait is held to that. */
export function readLateConfig(env: Readonly<Record<string, string | undefined>> = process.env): LateConfig {
	const raw = Number(env[ENV_LATE_EXPIRY]);
	return {
		on: lateAnswersOn(env),
		expiryMs: env[ENV_LATE_EXPIRY] !== undefined && Number.isFinite(raw) && raw > 0 ? Math.min(raw, MAX_TIMER_MS) : DEFAULT_LATE_EXPIRY_MS,
		maxPerAsker: MAX_LATE_PER_ASKER,
		maxTotal: MAX_LATE,
		maxBytes: MAX_LATE_BYTES,
		dialogTimeoutMs: readConfig(env).dialogTimeoutMs,
	};
}

/** One late request, as the host keeps it: its record (answers by question index, those given before the budget ran out), and when it went late. */
export interface LateRequest extends Pick<RequestRecord, "request" | "questions" | "entries" | "queuedAt"> {
	/** Epoch ms at which it became late. */
	lateSince: number;
	/** Epoch ms at which it expires. */
	expiresAt: number;
	/** Its size in the byte bound. */
	bytes: number;
}

/** Why a late request left the book without an answer. */
export type LateDrop = "expired" | "too-many";

/** The host's book of late requests, oldest first. */
export class LateBook {
	readonly #config: LateConfig;
	/** Told of every late request that leaves unanswered (the host's notice); the host holding the role sets it. */
	onDropped: ((late: LateRequest, why: LateDrop) => void) | undefined;
	readonly #late = new Map<string, { late: LateRequest; timer: ReturnType<typeof setTimeout> }>();
	/** When each request taken out went late and expires: one shown again and closed unanswered comes back as late as it was. */
	readonly #taken = new Map<string, { lateSince: number; expiresAt: number }>();
	#bytes = 0;

	constructor(config: LateConfig, onDropped?: (late: LateRequest, why: LateDrop) => void) {
		this.#config = config;
		this.onDropped = onDropped;
	}

	/** Whether timed-out requests stay open. */
	get on(): boolean {
		return this.#config.on;
	}

	/** Late requests, oldest first. */
	list(): LateRequest[] {
		return [...this.#late.values()].map((entry) => entry.late);
	}

	get size(): number {
		return this.#late.size;
	}

	/** Bytes the book holds (questions as JSON). */
	get bytes(): number {
		return this.#bytes;
	}

	get(requestId: string): LateRequest | undefined {
		return this.#late.get(requestId)?.late;
	}

	/** Keeps a request that timed out; the oldest (of its asker, then in all) leave, with a notice, to stay within bounds. */
	keep(late: Omit<LateRequest, "lateSince" | "expiresAt" | "bytes">, now = Date.now()): LateRequest {
		const request = { ...late.request, dialogTimeoutMs: this.#config.dialogTimeoutMs };
		const before = this.#taken.get(request.id);
		this.#taken.delete(request.id);
		const kept: LateRequest = {
			...late,
			request,
			lateSince: before?.lateSince ?? now,
			expiresAt: before?.expiresAt ?? now + this.#config.expiryMs,
			bytes: Buffer.byteLength(JSON.stringify(late.questions)),
		};
		const timer = setTimeout(() => this.#drop(kept.request.id, "expired"), Math.max(0, kept.expiresAt - now));
		// A timer of 24 h must not keep a process alive that has nothing else to do.
		timer.unref?.();
		this.#late.set(kept.request.id, { late: kept, timer });
		this.#bytes += kept.bytes;
		const sessionId = kept.request.asker.sessionId;
		const ofAsker = () => this.list().filter((l) => l.request.asker.sessionId === sessionId);
		while (ofAsker().length > this.#config.maxPerAsker) this.#drop(ofAsker()[0]!.request.id, "too-many");
		while (this.#late.size > this.#config.maxTotal || (this.#bytes > this.#config.maxBytes && this.#late.size > 1))
			this.#drop(this.#late.keys().next().value!, "too-many");
		return kept;
	}

	/** Takes a late request out of the book (answered, or shown again); undefined when it is not there. */
	take(requestId: string): LateRequest | undefined {
		const entry = this.#late.get(requestId);
		if (!entry) return undefined;
		clearTimeout(entry.timer);
		this.#late.delete(requestId);
		this.#bytes -= entry.late.bytes;
		this.#taken.set(requestId, { lateSince: entry.late.lateSince, expiresAt: entry.late.expiresAt });
		// Bounded like the book: the oldest taken (a Map iterates in insertion order) is forgotten first.
		if (this.#taken.size > this.#config.maxTotal) this.#taken.delete(this.#taken.keys().next().value!);
		return entry.late;
	}

	/** Forgets every late request (the host goes for good). */
	clear(): void {
		for (const id of [...this.#late.keys()]) this.take(id);
	}

	#drop(requestId: string, why: LateDrop): void {
		const late = this.take(requestId);
		if (!late) return;
		try {
			this.onDropped?.(late, why);
		} catch {
			// A notice is a courtesy.
		}
	}
}

/** Registry key of the process's book: late requests outlive a host that is replaced (/reload, /new). */
const LATE_KEY = Symbol.for("checkpoint-bridge.late");

/** The process's book of late requests, made by the first host that asks, with the settings read then. */
export function lateBook(target: object = globalThis): LateBook {
	const slot = target as Record<symbol, LateBook | undefined>;
	const existing = slot[LATE_KEY];
	if (existing) return existing;
	const book = new LateBook(readLateConfig());
	Object.defineProperty(target, LATE_KEY, { value: book, writable: false, configurable: false, enumerable: false });
	return book;
}
