/**
 * How many notices of other extensions reach the human: a notice is a courtesy, and in the TUI each
 * one replaces the last, so a flood would wipe out the arrival and tool-missing notices that matter.
 * One window for each source as a whole: the host's own process, the local endpoint, the NATS room.
 */

/** Most notices one source brings the human per NOTICE_WINDOW_MS; further ones in the window are dropped. @default 20 */
export const MAX_NOTICES_PER_WINDOW = 20;
/** The window MAX_NOTICES_PER_WINDOW counts in, in ms. @default 10000 */
export const NOTICE_WINDOW_MS = 10_000;

/** A fixed window of at most `max` notices per `windowMs`. */
export class NoticeWindow {
	readonly #max: number;
	readonly #windowMs: number;
	#start = Number.NEGATIVE_INFINITY;
	#taken = 0;

	constructor(max = MAX_NOTICES_PER_WINDOW, windowMs = NOTICE_WINDOW_MS) {
		this.#max = max;
		this.#windowMs = windowMs;
	}

	/** Counts one notice; whether it may reach the human. */
	take(now = Date.now()): boolean {
		if (now - this.#start >= this.#windowMs) {
			this.#start = now;
			this.#taken = 0;
		}
		return ++this.#taken <= this.#max;
	}
}
