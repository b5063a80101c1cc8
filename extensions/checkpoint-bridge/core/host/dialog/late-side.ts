/**
 * The dialog host's side of late requests (core/host/late.ts): a request whose budget ran out goes
 * late, one shown again goes back to late unless answered, and a late request settles once
 * (answered, cancelled from outside, expired, or the host gone), its end going home.
 */
import type { Answer } from "../../../model/answer.ts";
import type { EndReason, RequestEnd, Status } from "../../../model/result.ts";
import type { RelayRequest } from "../../shared/protocol.ts";
import { givenAnswers, placedAnswers, type RequestRecord } from "../../shared/request-record.ts";
import { type LateBook, type LateDrop, type LateRequest, observedLate } from "../late.ts";
import type { Notifier } from "./events.ts";
import type { Carried } from "./intake.ts";

/** How a late request ended, as its end goes home. */
export type LateOutcome = { status: Status; answers: Answer[]; note?: string; reason?: EndReason };

/** What the late side needs of the dialog host. */
export interface LateHost {
	readonly notifier: Notifier;
	serve(raw: RelayRequest, carried?: Carried): void;
	/** The wire's status and reason of an end. */
	wireOf(end: RequestEnd): { status: Status; reason?: EndReason };
}

/** What the late book keeps of a record. */
const lateOf = ({ request, questions, entries, queuedAt }: RequestRecord) => ({ request, questions, entries, queuedAt });

export class LateSide {
	readonly #host: LateHost;
	readonly book: LateBook | undefined;
	readonly #ended: ((late: LateRequest, outcome: LateOutcome) => void) | undefined;

	constructor(host: LateHost, book: LateBook | undefined, ended: ((late: LateRequest, outcome: LateOutcome) => void) | undefined) {
		this.#host = host;
		this.book = book;
		this.#ended = ended;
	}

	/** Late requests (their budget ran out, still open), oldest first. */
	list(): LateRequest[] {
		return this.book?.list() ?? [];
	}

	/** Whether a request whose budget ran out stays open, marked late: not when answered, nor for other extensions' dialogs. */
	goesLate(record: RequestRecord): boolean {
		return this.book?.on === true && record.questions.some((_, i) => record.entries[i] === undefined) && !record.questions.some((q) => q.dialog);
	}

	/** Keeps a request whose budget ran out in the book; undefined when there is no room for it. */
	keep(record: RequestRecord): LateRequest | undefined {
		return this.book?.keep(lateOf(record));
	}

	/** Shows a late request again, through the queue like any other (no budget of its own); false when it is not late. */
	reopen(requestId: string): boolean {
		const late = this.book?.take(requestId);
		if (!late) return false;
		this.#host.notifier.reopened(late);
		this.#host.serve({ ...late.request, deadline: 0 }, { entries: late.entries, queuedAt: late.queuedAt, reopened: true });
		return true;
	}

	/** Observers hear that a request went late (or back to late), and the status line shows it. */
	wentLate(record: RequestRecord, late: LateRequest, again: boolean): void {
		this.#host.notifier.late(record, late, again);
		this.#host.notifier.changed();
	}

	/** A late request shown again ended: answered or cancelled from outside, it settles; otherwise it is late again. */
	reopenedEnded(record: RequestRecord, end: RequestEnd, note?: string): void {
		const times = this.book?.lateTimes(record.request.id) ?? { lateSince: record.queuedAt, expiresAt: Date.now() };
		const late = { ...lateOf(record), ...times, bytes: 0 };
		if (end === "answered" || end === "answered-outside" || end === "cancelled-outside") return this.end(late, end, note);
		const kept = this.keep(record);
		// No room left for it (other askers' late questions filled the book meanwhile): it ends as one that expired.
		if (!kept) return this.end(late, "expired", "It was late, and no room was left to keep it open.");
		this.wentLate(record, kept, true);
	}

	/**
	 * A late request settles (answered, cancelled from outside, or expired): observers and the audit trail learn it,
	 * once; an answer or a cancel goes home, an expiry or the host's end does not (the asker was told of its timeout).
	 */
	end(late: LateRequest, end: "answered" | "answered-outside" | "cancelled-outside" | "expired" | "host-gone", note?: string): void {
		const { status, reason } = this.#host.wireOf(end);
		const outcome = { status, answers: givenAnswers(late), ...(note ? { note } : {}), ...(reason ? { reason } : {}) };
		// Observers and the audit trail learn where each answer was given (the page's trace says "in this tab"); the asker's message does not carry it.
		if (this.#host.notifier.wants("settled")) this.#host.notifier.settled(observedLate(late), { ...outcome, answers: placedAnswers(late), end });
		this.#host.notifier.changed();
		if (end === "expired" || end === "host-gone") return;
		try {
			this.#ended?.(late, outcome);
		} catch {
			// The delivery's failure is the delivery's; the host goes on.
		}
	}

	/** Takes a late request out of the book and ends it. */
	takeAndEnd(late: LateRequest, end: "answered-outside" | "cancelled-outside", note?: string): void {
		this.book!.take(late.request.id);
		this.end(late, end, note);
	}

	/** The host goes for good (quit): every late request settles `host-gone`, once, and leaves the book. */
	endAll(note: string): void {
		for (const late of this.list()) {
			this.book!.take(late.request.id);
			this.end(late, "host-gone", note);
		}
	}

	/** A late request left the book unanswered (it expired, or its asker's newer ones made it leave): it settles, `expired`. */
	dropped(late: LateRequest, why: LateDrop): void {
		this.end(
			late,
			"expired",
			why === "expired" ? "It was late and expired unanswered." : "It was late and left to make room for newer late questions of its asker.",
		);
	}
}
