/**
 * The host's arrival notices, coalesced. Within a window, the first request of each asker is
 * noticed at once, for up to NOTICE_ASKERS_AT_ONCE askers; whatever else arrives in the window (an
 * asker's further requests, more askers) is summed up in one notice when the window ends
 * ("checkpoint-bridge: 12 questions from [a], [b], [c] +2 more"), leaving out what settled
 * meanwhile. So a runaway asker sending thousands of requests costs the UI one notice per window,
 * and a few askers arriving together are each noticed as before.
 *
 * pi's TUI shows a notice that follows another with nothing drawn between in the other's place
 * (InteractiveMode.showStatus), so a second asker's notice would wipe out the first's. Each notice
 * therefore restates the at-once notices of its window whose requests are still open:
 * "checkpoint-bridge: [a] asks 1 question; [b] asks 1 question (1 ahead)".
 */

import type { Answer, AnswerPlace } from "../../model/answer.ts";
import { answeredValues, answeredWhere } from "../../model/answer-places.ts";

/** Length of a notice window. @default 2000 */
export const NOTICE_WINDOW_MS = 2_000;
/** Askers whose first request in a window is noticed at once; the rest wait for the summary. @default 5 */
export const NOTICE_ASKERS_AT_ONCE = 5;
/** Askers named in a summary notice; the rest are counted. @default 3 */
export const NOTICE_ASKERS_SHOWN = 3;

const plural = (n: number) => `${n} question${n === 1 ? "" : "s"}`;

export class ArrivalNotices<K> {
	readonly #send: (message: string) => void;
	readonly #windowMs: number;
	/** Arrivals of this window still owed a notice, in arrival order. */
	readonly #owed = new Map<K, { label: string; questions: number }>();
	/** At-once notices of this window whose requests are still open, in arrival order: each notice restates them. */
	readonly #told = new Map<K, string>();
	/** Askers noticed in this window, at once or in the summary that opened it. */
	#noticed = new Set<string>();
	/** Epoch ms at which the current window ends. */
	#windowEnds = Number.NEGATIVE_INFINITY;
	#timer: ReturnType<typeof setTimeout> | undefined;

	/** `send` delivers one notice; `windowMs` is the length of a window. */
	constructor(send: (message: string) => void, windowMs = NOTICE_WINDOW_MS) {
		this.#send = send;
		this.#windowMs = windowMs;
	}

	/** A relayed request arrived: noticed now, or in the summary at the end of the window. */
	arrived(key: K, label: string, questions: number, ahead: number): void {
		const now = Date.now();
		if (this.#timer === undefined && now >= this.#windowEnds) this.#openWindow(now, []);
		if (!this.#noticed.has(label) && this.#noticed.size < NOTICE_ASKERS_AT_ONCE) {
			this.#noticed.add(label);
			this.#told.set(key, `[${label}] asks ${plural(questions)}${ahead > 0 ? ` (${ahead} ahead)` : ""}`);
			this.#send(`checkpoint-bridge: ${[...this.#told.values()].join("; ")}`);
			return;
		}
		this.#owed.set(key, { label, questions });
		if (this.#timer) return;
		this.#timer = setTimeout(() => this.#flush(), Math.max(0, this.#windowEnds - now));
		// A notice owed must not keep a process alive that has nothing else to do.
		this.#timer.unref?.();
	}

	/** A request settled: a notice still owed for it is dropped, and with nothing left owed, so is the timer. */
	gone(key: K): void {
		this.#told.delete(key);
		if (!this.#owed.delete(key) || this.#owed.size > 0 || this.#timer === undefined) return;
		clearTimeout(this.#timer);
		this.#timer = undefined;
	}

	#openWindow(now: number, noticed: string[]): void {
		this.#told.clear();
		this.#windowEnds = now + this.#windowMs;
		this.#noticed = new Set(noticed);
	}

	#flush(): void {
		this.#timer = undefined;
		if (this.#owed.size === 0) return;
		const arrivals = [...this.#owed.values()];
		this.#owed.clear();
		const labels = [...new Set(arrivals.map((a) => a.label))];
		const told = [...this.#told.values()];
		// The askers summed up count as noticed in the next window: a runaway stays in the summaries.
		this.#openWindow(Date.now(), labels);
		const more = labels.length - NOTICE_ASKERS_SHOWN;
		const total = arrivals.reduce((sum, a) => sum + a.questions, 0);
		const summary = `${plural(total)} from ${labels
			.slice(0, NOTICE_ASKERS_SHOWN)
			.map((l) => `[${l}]`)
			.join(", ")}${more > 0 ? ` +${more} more` : ""}`;
		this.#send(`checkpoint-bridge: ${[...told, summary].join("; ")}`);
	}
}

/** The host's own dialogs: an answer given there is seen there, and needs no notice. */
const HERE: ReadonlySet<AnswerPlace> = new Set(["terminal", "rpc"]);

/** `09:12`, in the host's local time. */
const clock = (at: number) => {
	const d = new Date(at);
	return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
};

/**
 * What the terminal says when a request was answered away from it (the page, a link, one-tap, mail,
 * another extension), where and when, with what was given there:
 * `checkpoint-bridge: [planner] answered on the page at 09:12: SQLite`. Undefined when every answer
 * was given in the host's own dialogs, shared, carried, or when none was given.
 */
export function answeredElsewhere(label: string, answers: readonly Answer[], at: number): string | undefined {
	const away = answers.filter((a) => {
		if (a.source === "shared" || a.source === "carried") return false;
		const place = a.place ?? (a.source === "web" ? "page" : a.source === "outside" ? "outside" : undefined);
		return place !== undefined && !HERE.has(place);
	});
	if (away.length === 0) return undefined;
	return `checkpoint-bridge: [${label}] answered ${answeredWhere(away)} at ${clock(at)}: ${answeredValues(away)!.join("; ")}`;
}
