/**
 * The keeper of a dialog host's requests (the book's word, book.ts): the one end of a request, in
 * whatever state and for every reason, and what its timer, its asker's cancel and identical
 * questions decide. The dialog host takes requests in and hands them on; the showing loop and
 * outside answers end them here, so no part calls back into the host that handed it the request.
 */
import type { Answer } from "../../../model/answer.ts";
import { msLeft } from "../../shared/config.ts";
import { LATE_NOTE } from "../../shared/late-config.ts";
import type { RelayCancel, RelayReply } from "../../shared/protocol.ts";
import { callDeadline, hasEnded, type RequestEnd, type RequestRecord } from "../../shared/request-record.ts";
import type { Keeper, LateExpiry, LateRequest, RequestBook } from "../book.ts";
import { completeFromShared, shareAnswer } from "../same-questions.ts";
import { type HostStats, type Notifier, observed, progressFrame, resultFrame, settledOutcome } from "./events.ts";
import type { OpenRequests } from "./intake.ts";
import type { LateSide } from "./late-side.ts";

/** The note of a late request that left the book unanswered. */
const EXPIRY_NOTES: Record<LateExpiry, string> = {
	expired: "It was late and expired unanswered.",
	"too-many": "It was late and left to make room for newer late questions of its asker.",
};

/** The parts a keeper works with, each shared with the dialog host that made it. */
export interface KeeperParts {
	book: RequestBook;
	requests: OpenRequests;
	late: LateSide;
	notifier: Notifier;
	/** The host session's id: its own requests are not relayed. */
	sessionId: string;
	/** Sends a reply to the one asker it is addressed to, on its reply channel when the host has it built already. */
	reply: (reply: RelayReply, channel?: `reply:${string}`) => void;
	/** A late request left unanswered, ended `expired` (the human's notice). */
	lateLeft: ((late: LateRequest, why: LateExpiry) => void) | undefined;
}

export class RequestKeeper implements Keeper {
	readonly stats: HostStats = { questionsAsked: 0, dialogsShown: 0, sharedAnswers: 0 };
	readonly notifier: Notifier;
	readonly #book: RequestBook;
	readonly #requests: OpenRequests;
	readonly #late: LateSide;
	readonly #sessionId: string;
	readonly #reply: KeeperParts["reply"];
	readonly #lateLeft: KeeperParts["lateLeft"];
	/** How long a request handed over waits for the next host, and the note it ends with when none takes it. */
	#handOver = { graceMs: 0, note: "" };
	/** Counts a dialog the human saw; called unbound (surfaces take it as it is). */
	readonly countDialog = () => void this.stats.dialogsShown++;

	constructor(parts: KeeperParts) {
		this.#book = parts.book;
		this.#requests = parts.requests;
		this.#late = parts.late;
		this.notifier = parts.notifier;
		this.#sessionId = parts.sessionId;
		this.#reply = parts.reply;
		this.#lateLeft = parts.lateLeft;
	}

	/** Whether the request is another session's (it gets an arrival notice, the bell, a turn in the round robin). */
	isRelayed(record: RequestRecord): boolean {
		return record.request.asker.sessionId !== this.#sessionId;
	}

	/** Requests handed over from now on wait `graceMs` for the next host and end with `note` when none takes them. */
	handingOver(graceMs: number, note: string): void {
		this.#handOver = { graceMs, note };
	}

	/**
	 * The record's timer is due (the book's call). Open: what is on screen closes at its question
	 * deadline, or the request's own deadline has come. Parked: its call's deadline came, or the
	 * hand-over's grace ended with no next host taking it.
	 */
	deadlineCame(record: RequestRecord, at: number): void {
		if (record.state.is === "parked") {
			const { note } = this.#handOver;
			return msLeft(callDeadline(record)) <= 0 ? this.end(record, "timeout") : this.end(record, "host-gone", note);
		}
		// The loop arms it for anything but the request's deadline only for a question deadline that comes first.
		if (at !== callDeadline(record)) return void this.#requests.byId.get(record.request.id)?.open?.abort("dialog-timeout");
		this.end(record, "timeout");
	}

	/** A late request left the book unanswered (it expired, or its asker's newer ones made it leave): it settles, `expired`, and the human hears of it. */
	lateLeft(late: LateRequest, why: LateExpiry): void {
		this.end(late, "expired", EXPIRY_NOTES[why]);
		this.#lateLeft?.(late, why);
	}

	/**
	 * The asker gave up (its budget or its abort): dismiss the dialog or drop the queued request; one
	 * this host parked for the next ends here, as it was given up.
	 */
	cancel(message: RelayCancel): void {
		const record = typeof message?.id === "string" ? this.#book.get(message.id) : undefined;
		if (!record || !this.#book.keeps(record, this)) return;
		const { is } = record.state;
		if (is === "queued" || is === "showing" || is === "parked") this.end(record, message.reason === "timeout" ? "timeout" : "cancelled");
	}

	/**
	 * Ends a request, in whatever state (queued, showing, late, parked) and for every reason
	 * (RequestEnd), exactly once: closes what is open or drops it from the queue, leaves every index
	 * and the book, and tells the asker, observers and the audit trail how it ended. A call out of
	 * budget sends its request late; one shown again from late that ends unanswered goes back to late;
	 * one handed over is parked in the book for the next host. `note`: the host's words, when the
	 * reason's own are not enough.
	 */
	end(record: RequestRecord, end: RequestEnd, note?: string): void {
		if (hasEnded(record)) return;
		const open = this.#requests.byId.get(record.request.id);
		const mine = open?.record === record ? open : undefined;
		const wasQueued = record.state.is === "queued";
		mine?.open?.abort(end);
		if (mine) this.#requests.remove(mine);
		const wasLate = record.state.is === "late" ? record.state : record.wasLate;
		if (wasLate && !this.#late.settles(end)) {
			const lateAgain = this.#late.keep(record, this);
			if (wasQueued) mine?.dequeue?.abort(end);
			if (lateAgain) return this.#late.wentLate(lateAgain, true);
			// No room left for it (other askers' late questions filled the book meanwhile): it ends as one that expired.
			return this.end(record, "expired", "It was late, and no room was left to keep it open.");
		}
		// Kept before observers hear of it: they find it late in the snapshot (the page keeps its card and link).
		const late = end === "timeout" && !wasLate && this.#late.goesLate(record) ? this.#late.keep(record, this) : undefined;
		if (end === "timeout") note = `The call's budget ran out before every question was answered.${late ? ` ${LATE_NOTE}` : ""}`;
		// Handed over, it is parked, not ended: it lives on with the next host, or ends here when none takes it.
		if (end === "handed-over") this.#book.park(record, this.#handOver.graceMs);
		else if (!late) this.#book.end(record, { end, ...(note ? { note } : {}), late: wasLate !== undefined });
		// Waiting its turn, it leaves the dialog queue (once out of every index and state, so that nothing started now sees it open).
		if (wasQueued) mine?.dequeue?.abort(end);
		if (end === "handed-over") return this.notifier.changed();
		if (wasLate) return this.#late.settled(record, end, note);
		const same = this.#requests.same;
		const answers: Answer[] = [];
		const { entries } = record;
		for (let i = 0; i < entries.length; i++) {
			const entry = entries[i];
			if (entry) answers.push(same.withSharers(record, i, entry.answer));
		}
		// Gone late, it has not settled: it settles once, when it is answered, cancelled or expires (ADR-0025).
		if (late) this.#late.wentLate(late, false);
		else if (this.notifier.wants("settled")) this.notifier.settled(observed(record), settledOutcome(record, answers, end, note));
		this.notifier.changed();
		// Nobody listens any more for a cancelled request.
		if (end !== "cancelled") this.#reply(resultFrame(record.request.id, end, answers, note), mine?.channel);
		// Askers that joined this request's questions may now have everything they need.
		this.completeDependents(record);
	}

	/** Askers that joined this request's questions may now have everything they need. */
	completeDependents(record: RequestRecord): void {
		for (const other of this.#requests.same.dependents(record)) this.completeFromShared(other);
	}

	/** Ends a queued request whose every question has an answer already (its own or shared); true when it has ended. */
	completeFromShared(record: RequestRecord): boolean {
		if (record.state.is !== "queued") return hasEnded(record);
		const shared = completeFromShared(this.#requests.same, this.#book, record);
		if (shared === undefined) return false;
		this.stats.sharedAnswers += shared;
		this.end(record, "answered");
		return true;
	}

	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	share(record: RequestRecord, index: number): boolean {
		if (!shareAnswer(this.#requests.same, this.#book, record, index)) return false;
		this.stats.sharedAnswers++;
		this.progress(record, "answered", index);
		return true;
	}

	/** Tells the asker how far its request is: queued (at `position`), question `question` shown or answered. */
	progress(record: RequestRecord, stage: "queued" | "shown" | "answered", question?: number, position?: number): void {
		if (stage === "answered") this.#book.noted(record);
		const open = this.#requests.byId.get(record.request.id);
		this.#reply(progressFrame(record, stage, question, position), open?.record === record ? open.channel : undefined);
	}
}
