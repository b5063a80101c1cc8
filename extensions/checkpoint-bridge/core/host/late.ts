/**
 * Late questions: a request whose call's budget ran out before every question was answered leaves
 * the one-at-a-time queue but stays open at the host, marked late, until it is answered (from
 * `/checkpoints`, the web page or its link), expires, or is pushed out by newer late ones. A late
 * answer reaches the asker as a message (core/delivery/delivery.ts). Bounded per asker and in all, in number
 * and bytes: an asker's oldest makes way for its newest, never another asker's; the human hears of
 * what leaves unanswered in one notice per window.
 */
import { type LateConfig, readLateConfig } from "../shared/late-config.ts";
import { NOTICE_WINDOW_MS } from "../shared/notice-window.ts";
import { OBSERVER_VERSION, type ObservedRequest } from "../shared/observers.ts";
import { processSlot } from "../shared/process-slot.ts";
import type { LateState, RequestRecord } from "../shared/request-record.ts";

/** A late request: its one record (core/shared/request-record.ts), in the late state. */
export type LateRequest = RequestRecord & { state: LateState };

/** What the book takes: a record, or what it needs of one (its state becomes late). */
type Keepable = Pick<RequestRecord, "request" | "questions" | "entries" | "queuedAt"> & Partial<Pick<RequestRecord, "state" | "wasLate" | "shownAt">>;

/** Why a late request left the book without an answer. */
export type LateExpiry = "expired" | "too-many";

/** A late request as observers see a request. */
export const observedLate = (late: Pick<RequestRecord, "request" | "questions" | "queuedAt">): ObservedRequest => ({
	v: OBSERVER_VERSION,
	requestId: late.request.id,
	asker: late.request.asker,
	questions: late.questions,
	queuedAt: late.queuedAt,
	deadline: late.request.deadline,
});

/**
 * The process's book of late requests, oldest first: each is the request's one record, in the late
 * state, and its one timer while late is its expiry. Shown again, a record leaves the book (the host
 * holds it, no call deadline on it) and comes back as late as it was unless answered.
 */
export class LateBook {
	readonly #config: LateConfig;
	/** Told of every late request that leaves unanswered (the host's notice); the host holding the role sets it. */
	onExpired: ((late: LateRequest, why: LateExpiry) => void) | undefined;
	readonly #late = new Map<string, { late: LateRequest; timer: ReturnType<typeof setTimeout>; bytes: number }>();
	#bytes = 0;

	constructor(config: LateConfig, onExpired?: (late: LateRequest, why: LateExpiry) => void) {
		this.#config = config;
		this.onExpired = onExpired;
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

	get(requestId: string): LateRequest | undefined {
		return this.#late.get(requestId)?.late;
	}

	/**
	 * Keeps a record whose call's budget ran out, now late (one shown again keeps the times it had); to
	 * stay within bounds its asker's oldest leave (told to onExpired), never another asker's: undefined
	 * when it cannot be kept so (the book is full of other askers' late requests).
	 */
	keep(record: Keepable, now = Date.now()): LateRequest | undefined {
		const before = record.wasLate;
		const late = record as LateRequest;
		// Shown again, each question gets the host's time: the asker cut its own to the call's budget, which has run out.
		late.request = { ...record.request, dialogTimeoutMs: this.#config.dialogTimeoutMs };
		late.state = { is: "late", since: before?.since ?? now, expiresAt: before?.expiresAt ?? now + this.#config.expiryMs };
		late.wasLate = undefined;
		const id = late.request.id;
		const bytes = Buffer.byteLength(JSON.stringify(late.questions));
		const timer = setTimeout(() => this.#expire(id, "expired"), Math.max(0, late.state.expiresAt - now));
		// A timer of 24 h must not keep a process alive that has nothing else to do.
		timer.unref?.();
		this.#late.set(id, { late, timer, bytes });
		this.#bytes += bytes;
		const sessionId = late.request.asker.sessionId;
		const ofAsker = () => this.list().filter((l) => l.request.asker.sessionId === sessionId);
		const over = () => this.#late.size > this.#config.maxTotal || (this.#bytes > this.#config.maxBytes && this.#late.size > 1);
		while (ofAsker().length > this.#config.maxPerAsker) this.#expire(ofAsker()[0]!.request.id, "too-many");
		// Room is made from the asker's own: one asker's flood never pushes out another's question.
		while (over() && ofAsker().length > 1) this.#expire(ofAsker()[0]!.request.id, "too-many");
		if (!over()) return late;
		this.take(id);
		return undefined;
	}

	/** Takes a late request out of the book, its timer stopped (answered, shown again, or ended); undefined when it is not there. */
	take(requestId: string): LateRequest | undefined {
		const entry = this.#late.get(requestId);
		if (!entry) return undefined;
		clearTimeout(entry.timer);
		this.#late.delete(requestId);
		this.#bytes -= entry.bytes;
		return entry.late;
	}

	#expire(requestId: string, why: LateExpiry): void {
		const late = this.take(requestId);
		if (!late) return;
		try {
			this.onExpired?.(late, why);
		} catch {
			// A notice is a courtesy.
		}
	}
}

/**
 * The human's notices of late requests that left unanswered: one per window (NOTICE_WINDOW_MS). The first
 * of a window is told at once; the rest of it in one notice when the window closes, counted.
 */
export class ExpiryNotices {
	readonly #tell: (message: string) => void;
	readonly #windowMs: number;
	#until = Number.NEGATIVE_INFINITY;
	#owed: { late: LateRequest; why: LateExpiry }[] = [];
	#timer: ReturnType<typeof setTimeout> | undefined;

	constructor(tell: (message: string) => void, windowMs = NOTICE_WINDOW_MS) {
		this.#tell = tell;
		this.#windowMs = windowMs;
	}

	/** A late request left unanswered, for `why`. */
	expired(late: LateRequest, why: LateExpiry, now = Date.now()): void {
		if (now >= this.#until && this.#owed.length === 0) {
			this.#until = now + this.#windowMs;
			return this.#tell(expiryText([{ late, why }]));
		}
		this.#owed.push({ late, why });
		if (this.#timer) return;
		this.#timer = setTimeout(() => this.#flush(), Math.max(0, this.#until - now));
		// A notice owed must not keep a process alive that has nothing else to do.
		this.#timer.unref?.();
	}

	/** Stops a notice owed (the host goes). */
	close(): void {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		this.#owed = [];
	}

	#flush(): void {
		this.#timer = undefined;
		const owed = this.#owed;
		this.#owed = [];
		if (owed.length === 0) return;
		this.#until = Date.now() + this.#windowMs;
		this.#tell(expiryText(owed));
	}
}

const EXPIRY_WORDS = { expired: "expired", "too-many": "was dropped to make room for newer late questions of the same asker" } as const;

/** One notice for the late requests that left in one window: the first named, the rest counted. */
function expiryText(expired: readonly { late: LateRequest; why: LateExpiry }[]): string {
	const [{ late, why }] = expired as [{ late: LateRequest; why: LateExpiry }];
	const first = `the late question of ${late.request.asker.label} ("${late.questions[0]?.question ?? ""}") ${EXPIRY_WORDS[why]}; it can no longer be answered.`;
	const more = expired.length - 1;
	return `checkpoint-bridge: ${first}${more > 0 ? ` ${more} more late question${more === 1 ? "" : "s"} expired or ${more === 1 ? "was" : "were"} dropped as well.` : ""}`;
}

/** Registry key of the process's book: late requests outlive a host that is replaced (/reload, /new). */
const LATE_KEY = Symbol.for("checkpoint-bridge.late");

/** The process's book of late requests, made by the first host that asks, with the settings read then. */
export function lateBook(target: object = globalThis): LateBook {
	return processSlot(target, LATE_KEY, () => new LateBook(readLateConfig()));
}
