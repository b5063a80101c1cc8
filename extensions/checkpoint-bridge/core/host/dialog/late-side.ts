/**
 * The dialog host's side of late requests: whether a request whose budget ran out goes late (it stays
 * in the book, core/host/book.ts, in the late state), and how a late request's end is told (observers
 * once, its end home by the route). The record is the one the host took in: it goes late, is shown
 * again and ends as itself.
 */
import type { Answer } from "../../../model/answer.ts";
import type { RequestEnd } from "../../../model/result.ts";
import { givenAnswers, placedAnswers, type RequestRecord } from "../../shared/request-record.ts";
import type { Keeper, LateRequest, RequestBook } from "../book.ts";
import { observedLate } from "../late.ts";
import type { Notifier } from "./events.ts";

/** How a late request ended, as its end goes home (the route home makes the wire's status of `end`). */
export type LateOutcome = { end: RequestEnd; answers: Answer[]; note?: string };

/** The ends that settle a request whose call has returned; any other end of one shown again puts it back to late. */
const LATE_ENDS: ReadonlySet<RequestEnd> = new Set<RequestEnd>(["answered", "answered-outside", "cancelled-outside", "expired", "host-gone"]);

export class LateSide {
	readonly #notifier: Notifier;
	readonly book: RequestBook;
	readonly #ended: ((late: RequestRecord, outcome: LateOutcome) => void) | undefined;

	constructor(notifier: Notifier, book: RequestBook, ended: ((late: RequestRecord, outcome: LateOutcome) => void) | undefined) {
		this.#notifier = notifier;
		this.book = book;
		this.#ended = ended;
	}

	/** Whether a request whose budget ran out stays open, marked late: not when answered, nor for other extensions' dialogs. */
	goesLate(record: RequestRecord): boolean {
		return this.book.lateOn && record.questions.some((_, i) => record.entries[i] === undefined) && !record.questions.some((q) => q.dialog);
	}

	/** Whether `end` settles a request whose call has returned (else it goes back to late). */
	settles(end: RequestEnd): boolean {
		return LATE_ENDS.has(end);
	}

	/** The record goes late in the book, kept by `keeper`; undefined when there is no room for it. */
	keep(record: RequestRecord, keeper: Keeper): LateRequest | undefined {
		return this.book.toLate(record, keeper);
	}

	/** Observers hear that a request went late (or back to late), and the status line shows it. */
	wentLate(late: LateRequest, again: boolean): void {
		this.#notifier.late(late, late, again);
		this.#notifier.changed();
	}

	/**
	 * A request whose call had returned settled (answered, cancelled from outside, expired, or the host
	 * gone): observers and the audit trail learn it, once; an answer or a cancel goes home, an expiry or
	 * the host's end does not (the asker was told of its timeout).
	 */
	settled(record: RequestRecord, end: RequestEnd, note?: string): void {
		const outcome = { end, answers: givenAnswers(record), ...(note ? { note } : {}) };
		// Observers and the audit trail learn where each answer was given (the page's trace says "in this tab"); the asker's message does not carry it.
		if (this.#notifier.wants("settled")) this.#notifier.settled(observedLate(record), { ...outcome, answers: placedAnswers(record) });
		this.#notifier.changed();
		if (end === "expired" || end === "host-gone") return;
		try {
			this.#ended?.(record, outcome);
		} catch {
			// The delivery's failure is the delivery's; the host goes on.
		}
	}
}
