/**
 * The host side: one queue of dialogs for the whole process (p-queue, concurrency 1). Every
 * request, the host's own included, goes through it, so the human never sees two dialogs at once.
 * The order is fair (ADR-0024): the host session's own questions first, then round robin by asker
 * session. Identical questions asked at the same time by different sessions are shown once and the
 * answer goes to each. Each request is one request record from taken to gone (core/shared/request-record.ts,
 * ADR-0022, ADR-0030) in the process's book (book.ts, ADR-0031): queued, showing, late, parked, ended;
 * one timer that follows its state, and one end, `end`, whatever the state and the reason. Its parts
 * live in core/host/dialog/: taking a request in, the order, showing, outside answers, the late side,
 * events and views.
 */
import type { Answer } from "../../model/answer.ts";
import type { HostUI, Surface } from "../answering/surface.ts";
import { msLeft } from "../shared/config.ts";
import { LATE_NOTE } from "../shared/late-config.ts";
import type { Snapshot } from "../shared/observers.ts";
import type { OutsideAnswerReply } from "../shared/outside-answers.ts";
import type { RelayCancel, RelayReply, RelayRequest } from "../shared/protocol.ts";
import { callDeadline, hasEnded, type RequestEnd, type RequestRecord } from "../shared/request-record.ts";
import { type Keeper, type LateExpiry, type LateRequest, RequestBook } from "./book.ts";
import {
	type HostEvents,
	type HostStats,
	Notifier,
	observed,
	progressFrame,
	type QueueView,
	queueView,
	resultFrame,
	type SettledOutcome,
	settledOutcome,
	snapshotView,
} from "./dialog/events.ts";
import { askerKey, type DialogRequest, dialogRequest, OpenRequests, type Prior, takeIn } from "./dialog/intake.ts";
import { type LateOutcome, LateSide } from "./dialog/late-side.ts";
import { DialogQueue } from "./dialog/order.ts";
import { answerFromOutside } from "./dialog/outside.ts";
import { type ShowingHost, ShowLoop } from "./dialog/showing.ts";
import { completeFromShared, shareAnswer } from "./same-questions.ts";

export type { HostEvents, HostStats, SettledOutcome };

export interface DialogHostOptions {
	/** Notices and the footer status. */
	ui: HostUI;
	/** Where each question is shown. */
	surface: Surface;
	/** The host session's id: its own requests get no arrival receipt and no bell. */
	sessionId: string;
	/** Sends a reply to the one asker it is addressed to, on its reply channel when the host has it built already. */
	reply: (reply: RelayReply, channel?: `reply:${string}`) => void;
	/** Lifecycle notifications. @default none */
	events?: HostEvents;
	/** Rings for the human's attention when a relayed question is first shown. @default none */
	bell?: () => void;
	/** The book every request lives in from taken to gone (book.ts): the process's, shared with the hosts before and after. @default a book of its own, without late answers */
	book?: RequestBook;
	/** A late request ended (answered, or cancelled from outside): its end goes home, by the route home (core/delivery/delivery.ts). @default none */
	lateEnded?: (late: RequestRecord, outcome: LateOutcome) => void;
	/** A late request left unanswered, ended `expired` (the human's notice). @default none */
	lateLeft?: (late: LateRequest, why: LateExpiry) => void;
}

/** The note of a late request that left the book unanswered. */
const EXPIRY_NOTES: Record<LateExpiry, string> = {
	expired: "It was late and expired unanswered.",
	"too-many": "It was late and left to make room for newer late questions of its asker.",
};

export class DialogHost implements ShowingHost, Keeper {
	readonly #ui: HostUI;
	readonly #sessionId: string;
	readonly #reply: (reply: RelayReply, channel?: `reply:${string}`) => void;
	readonly notifier: Notifier;
	readonly #requests: OpenRequests;
	readonly #stats: HostStats = { questionsAsked: 0, dialogsShown: 0, sharedAnswers: 0 };
	readonly #book: RequestBook;
	readonly #late: LateSide;
	readonly #lateLeft: ((late: LateRequest, why: LateExpiry) => void) | undefined;
	readonly #loop: ShowLoop;
	readonly #queue: DialogQueue;
	readonly countDialog = () => void this.#stats.dialogsShown++;
	/** How long a request handed over waits for the next host, and the note it ends with when none takes it. */
	#handOver = { graceMs: 0, note: "" };

	constructor(options: DialogHostOptions) {
		this.#ui = options.ui;
		this.#sessionId = options.sessionId;
		this.#reply = options.reply;
		this.notifier = new Notifier(options.events);
		this.#requests = new OpenRequests((message) => this.#notify(message));
		this.#book = options.book ?? new RequestBook();
		this.#late = new LateSide(this.notifier, this.#book, options.lateEnded);
		this.#lateLeft = options.lateLeft;
		this.#loop = new ShowLoop(options.surface, this, options.bell, this.#book);
		this.#queue = new DialogQueue(() => this.notifier.changed());
	}

	/** Late requests (their budget ran out, still open), oldest first. */
	lateRequests(): LateRequest[] {
		return this.#book.late();
	}

	/** Shows a late request again, through the queue like any other (no budget of its own); false when it is not late. */
	reopenLate(requestId: string): boolean {
		const late = this.#book.get(requestId);
		if (late?.state.is !== "late") return false;
		this.notifier.reopened(late as LateRequest);
		// The same record, queued again: its call has returned, so no call deadline holds it; it remembers how late it was.
		const record = this.#book.reopen(requestId, this)!;
		const entry = dialogRequest(record, askerKey(record.request), requestId);
		this.#requests.add(entry);
		this.#queueUp(entry, true);
		return true;
	}

	/** Whether new dialogs are paused (`/checkpoints pause`); what is on screen stays. */
	get paused(): boolean {
		return this.#queue.paused;
	}

	/**
	 * Holds new dialogs while the human works: what is on screen stays, the rest waits its turn.
	 * Budgets keep running; the page, request links and outside answers still answer what waits.
	 */
	pause(): void {
		this.#queue.pause();
	}

	/** Shows what waits again, in its turn. */
	resume(): void {
		this.#queue.resume();
	}

	/** How many dialogs were shown for how many questions. */
	get stats(): Readonly<HostStats> {
		return { ...this.#stats };
	}

	/** The status line's view of what is open (dialog/events.ts): the request on screen and the first `limit` waiting. */
	queued(limit: number): QueueView {
		return queueView(this.#requests.byId, this.#loop.showing, limit);
	}

	/** What is open, oldest first. */
	snapshot(): Snapshot {
		return snapshotView(this.#requests.byId, this.#book);
	}

	/** Takes a request off the bus and queues its dialogs. Malformed requests get an `error` result when they can be addressed. */
	serve(raw: RelayRequest, prior?: Prior): void {
		if (typeof raw !== "object" || raw === null || typeof raw.id !== "string" || raw.id === "" || this.#book.get(raw.id)) return;
		const taken = takeIn(raw, prior, (asker) => this.#requests.openOf(asker));
		if (!taken.ok) return this.#reply(resultFrame(raw.id, taken.end, taken.answers, taken.note));
		this.#book.add(taken.record, this);
		this.#takeOn(taken.record, taken.asker, taken.remaining, prior !== undefined);
	}

	/**
	 * Takes on a request a replaced host parked in the book: re-checked as any request is, it goes on
	 * as the record it was, queued here; one this host would not take ends here as it would have been refused.
	 */
	adopt(record: RequestRecord): void {
		if (!this.#book.adopt(record, this)) return;
		const taken = takeIn(record.request, record, (asker) => this.#requests.openOf(asker));
		if (!taken.ok) return this.end(record, taken.end, taken.note);
		record.request = taken.record.request;
		record.questions = taken.record.questions;
		this.#takeOn(record, taken.asker, taken.remaining, true);
	}

	/** A record in the book, queued: open here, its timer at its deadline, then the dialog queue (unless out of time). */
	#takeOn(record: RequestRecord, asker: string, remaining: number, takenBefore: boolean): void {
		const entry = dialogRequest(record, asker, record.request.id);
		if (remaining > 0) this.arm(entry, record.request.deadline);
		this.#requests.add(entry);
		// Handed over, its budget ran out on the way: it ends as any request out of time does (late, observed), not bare.
		if (remaining <= 0) return this.end(record, "timeout");
		if (!takenBefore) this.#stats.questionsAsked += record.questions.length;
		this.#queueUp(entry, takenBefore);
	}

	/** Holds a request taken in (or shown again from late): its progress and events, then the dialog queue unless shared answers complete it. */
	#queueUp(entry: DialogRequest, takenBefore: boolean): void {
		const { record } = entry;
		const { request, questions } = record;
		const position = this.#requests.byId.size;
		this.progress(record, "queued", undefined, position);
		this.notifier.queued(record, position);
		this.notifier.changed();
		if (this.isRelayed(record) && !takenBefore) this.#requests.arrivals.arrived(record, request.asker.label, questions.length, position - 1);
		// Everything may already be answerable from identical questions of other askers.
		if (this.#completeFromShared(record)) return;
		this.#enqueue(entry);
	}

	/**
	 * Puts the request in the dialog queue: the host's own first of all, the others round robin by
	 * asker session (ADR-0024), in the order taken within a round.
	 */
	#enqueue(entry: DialogRequest): void {
		const dequeue = new AbortController();
		entry.dequeue = dequeue;
		const own = !this.isRelayed(entry.record);
		if (!own) entry.round = this.#requests.nextRound(entry.asker, this.#loop.round);
		this.#queue.add(entry.record.request.id, () => this.#loop.run(entry), own ? undefined : entry.round, dequeue.signal);
	}

	/** Sets the request's one timer, in the book, due at `at` (epoch ms; NO_LIMIT: none). */
	arm(entry: DialogRequest, at: number): void {
		this.#book.arm(entry.record, at);
	}

	/**
	 * The record's timer is due (the book\x27s call). Open: what is on screen closes at its question
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

	/** An answer from outside the terminal (dialog/outside.ts): applied whole or not at all; the first answer wins. */
	answerFromOutside(raw: unknown): OutsideAnswerReply {
		return answerFromOutside(this.#book, this, raw);
	}

	/** The host goes for good (quit): every late request settles `host-gone`, once, and leaves the book. */
	endLateRequests(note: string): void {
		for (const late of this.#book.late()) this.end(late, "host-gone", note);
	}

	/** The host session is going away for good: every open request ends now with `no-host`. */
	shutdown(note: string): void {
		for (const open of [...this.#requests.byId.values()]) this.end(open.record, "host-gone", note);
	}

	/**
	 * The host session is being replaced: closes every dialog and parks the requests in the book for
	 * the next host, oldest first, for `graceMs`; those no next host takes on by then end here,
	 * `host-gone`, with `note`.
	 */
	handOver(graceMs: number, note: string): void {
		this.#handOver = { graceMs, note };
		// A late request shown again goes back to late (the book outlives this host), not to the next host's queue.
		for (const open of this.#requests.showingFirst(this.#loop.showing)) this.end(open.record, "handed-over");
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
		for (const other of this.#requests.same.dependents(record)) this.#completeFromShared(other);
	}

	/** Ends a queued request whose every question has an answer already (its own or shared); true when it has ended. */
	#completeFromShared(record: RequestRecord): boolean {
		if (record.state.is !== "queued") return hasEnded(record);
		const shared = completeFromShared(this.#requests.same, this.#book, record);
		if (shared === undefined) return false;
		this.#stats.sharedAnswers += shared;
		this.end(record, "answered");
		return true;
	}

	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	share(record: RequestRecord, index: number): boolean {
		if (!shareAnswer(this.#requests.same, this.#book, record, index)) return false;
		this.#stats.sharedAnswers++;
		this.progress(record, "answered", index);
		return true;
	}

	progress(record: RequestRecord, stage: "queued" | "shown" | "answered", question?: number, position?: number): void {
		if (stage === "answered") this.#book.noted(record);
		const open = this.#requests.byId.get(record.request.id);
		this.#reply(progressFrame(record, stage, question, position), open?.record === record ? open.channel : undefined);
	}

	/** A receipt is a courtesy: a UI whose notify fails must not fail the request. */
	#notify(message: string): void {
		try {
			this.#ui.notify(message, "info");
		} catch {
			// The dialogs themselves will show whether the UI works.
		}
	}

	isRelayed(record: RequestRecord): boolean {
		return record.request.asker.sessionId !== this.#sessionId;
	}
}
