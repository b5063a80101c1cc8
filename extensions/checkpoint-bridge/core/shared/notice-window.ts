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

/** Length of a window of cancel notices. @default 2000 */
export const CANCEL_WINDOW_MS = 2_000;
/** Characters of the question a cancel notice quotes. @default 80 */
const CANCEL_QUOTE_LENGTH = 80;
/** Askers named in a summary of cancels; the rest are counted. @default 3 */
const CANCEL_ASKERS_SHOWN = 3;

const questionsText = (n: number) => `${n} question${n === 1 ? "" : "s"}`;

/**
 * Notices of questions their asker cancelled while they were shown or waiting their turn: without
 * one, a form would vanish, or a question never come, without a word. The first cancel of a window
 * is noticed at once, naming the asker and the question; the rest of the window is summed up in one
 * notice when it ends ("checkpoint-bridge: 40 more questions cancelled by [a], [b] +2 more"), so an
 * asker that cancels a thousand requests costs the human two notices.
 */
export class CancelNotices {
	readonly #send: (message: string) => void;
	readonly #windowMs: number;
	#windowEnds = Number.NEGATIVE_INFINITY;
	/** Cancels of this window owed the summary: questions per asker label, in order. */
	readonly #owed = new Map<string, number>();
	#timer: ReturnType<typeof setTimeout> | undefined;

	/** `send` delivers one notice; `windowMs` is the length of a window. */
	constructor(send: (message: string) => void, windowMs = CANCEL_WINDOW_MS) {
		this.#send = send;
		this.#windowMs = windowMs;
	}

	/** The asker `label` cancelled a request of these questions (as shown: neutralised, one line each). */
	cancelled(label: string, questions: readonly string[]): void {
		const now = Date.now();
		if (this.#timer === undefined && now >= this.#windowEnds) {
			this.#windowEnds = now + this.#windowMs;
			const first = questions[0] ?? "";
			const quoted = first.length > CANCEL_QUOTE_LENGTH ? `${first.slice(0, CANCEL_QUOTE_LENGTH - 1)}…` : first;
			const more = questions.length > 1 ? ` and ${questionsText(questions.length - 1)} more` : "";
			this.#send(`checkpoint-bridge: [${label}] cancelled its question "${quoted}"${more}; it is no longer asked.`);
			return;
		}
		this.#owed.set(label, (this.#owed.get(label) ?? 0) + questions.length);
		if (this.#timer) return;
		this.#timer = setTimeout(() => this.#flush(), Math.max(0, this.#windowEnds - now));
		// A notice owed must not keep a process alive that has nothing else to do.
		this.#timer.unref?.();
	}

	/** Closes the window: the summary owed, if any, is not sent; the host is going away. */
	close(): void {
		clearTimeout(this.#timer);
		this.#timer = undefined;
		this.#owed.clear();
	}

	#flush(): void {
		this.#timer = undefined;
		const labels = [...this.#owed.keys()];
		const total = [...this.#owed.values()].reduce((sum, n) => sum + n, 0);
		this.#owed.clear();
		// The summary opens the next window: a storm that goes on is one summary per window.
		this.#windowEnds = Date.now() + this.#windowMs;
		const more = labels.length - CANCEL_ASKERS_SHOWN;
		const named = labels
			.slice(0, CANCEL_ASKERS_SHOWN)
			.map((l) => `[${l}]`)
			.join(", ");
		this.#send(`checkpoint-bridge: ${total} more ${total === 1 ? "question" : "questions"} cancelled by ${named}${more > 0 ? ` +${more} more` : ""}.`);
	}
}
