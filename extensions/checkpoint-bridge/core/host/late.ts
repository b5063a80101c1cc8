/**
 * Late questions as observers and the human see them: a request whose call's budget ran out before
 * every question was answered stays open in the book (book.ts), marked late, until it is answered
 * (from `/checkpoints`, the web page or its link), expires, or is pushed out by newer late ones of its
 * asker. A late answer reaches the asker as a message (core/delivery/delivery.ts); the human hears of
 * what leaves unanswered in one notice per window.
 */
import { NOTICE_WINDOW_MS } from "../shared/notice-window.ts";
import { OBSERVER_VERSION, type ObservedRequest } from "../shared/observers.ts";
import type { RequestRecord } from "../shared/request-record.ts";
import type { LateExpiry, LateRequest } from "./book.ts";

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
