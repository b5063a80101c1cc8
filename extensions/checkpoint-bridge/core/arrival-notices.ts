/**
 * The host's arrival notices, coalesced: the first relayed request gets its notice at once; what
 * arrives within the next window is summed up in one notice when the window ends
 * ("checkpoint-bridge: 12 questions from [a], [b], [c] +2 more"). So a runaway asker sending
 * thousands of requests costs the UI one notice per window, not one per request.
 */

/** Shortest time between two arrival notices. @default 2000 */
export const NOTICE_WINDOW_MS = 2_000;
/** Askers named in a summary notice; the rest are counted. @default 3 */
export const NOTICE_ASKERS_SHOWN = 3;

const plural = (n: number) => `${n} question${n === 1 ? "" : "s"}`;

export class ArrivalNotices<K> {
	readonly #send: (message: string) => void;
	readonly #windowMs: number;
	/** Arrivals since the last notice that are still waiting, in arrival order. */
	readonly #pending = new Map<K, { label: string; questions: number }>();
	/** No notice is sent at once before this epoch ms. */
	#quietUntil = Number.NEGATIVE_INFINITY;
	#timer: ReturnType<typeof setTimeout> | undefined;

	/** `send` delivers one notice; `windowMs` is the shortest time between two. */
	constructor(send: (message: string) => void, windowMs = NOTICE_WINDOW_MS) {
		this.#send = send;
		this.#windowMs = windowMs;
	}

	/** A relayed request arrived: noticed now, or in the summary at the end of the window. */
	arrived(key: K, label: string, questions: number, ahead: number): void {
		const now = Date.now();
		if (this.#timer === undefined && now >= this.#quietUntil) {
			this.#quietUntil = now + this.#windowMs;
			this.#send(`checkpoint-bridge: [${label}] asks ${plural(questions)}${ahead > 0 ? ` (${ahead} ahead)` : ""}`);
			return;
		}
		this.#pending.set(key, { label, questions });
		this.#timer ??= setTimeout(() => this.#flush(), Math.max(0, this.#quietUntil - now));
	}

	/** A request settled: a notice still owed for it is dropped, and with nothing left owed, so is the timer. */
	gone(key: K): void {
		if (!this.#pending.delete(key) || this.#pending.size > 0 || this.#timer === undefined) return;
		clearTimeout(this.#timer);
		this.#timer = undefined;
	}

	#flush(): void {
		this.#timer = undefined;
		if (this.#pending.size === 0) return;
		const arrivals = [...this.#pending.values()];
		this.#pending.clear();
		this.#quietUntil = Date.now() + this.#windowMs;
		const labels = [...new Set(arrivals.map((a) => a.label))];
		const more = labels.length - NOTICE_ASKERS_SHOWN;
		const total = arrivals.reduce((sum, a) => sum + a.questions, 0);
		this.#send(`checkpoint-bridge: ${plural(total)} from ${labels.slice(0, NOTICE_ASKERS_SHOWN).map((l) => `[${l}]`).join(", ")}${more > 0 ? ` +${more} more` : ""}`);
	}
}
