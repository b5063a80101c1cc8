/**
 * The host side: one queue of dialogs for the whole process (p-queue, concurrency 1). Every
 * request, the host's own included, goes through it, so the human never sees two dialogs at once.
 * The order is fair (ADR-0024): the host session's own questions first, then round robin by asker
 * session. Identical questions asked at the same time by different sessions are shown once and the
 * answer goes to each. Each request is one request record from taken to gone (core/shared/request-record.ts,
 * ADR-0022, ADR-0030) in the process's book (book.ts, ADR-0031): queued, showing, late, parked, ended;
 * one timer that follows its state, and one end, the keeper's, whatever the state and the reason. Its
 * parts live in core/host/dialog/: taking a request in, the order, showing, the keeper, outside
 * answers, the late side, events and views.
 */
import type { HostUI, Surface } from "../answering/surface.ts";
import type { Snapshot } from "../shared/observers.ts";
import type { OutsideAnswerReply } from "../shared/outside-answers.ts";
import type { RelayCancel, RelayReply, RelayRequest } from "../shared/protocol.ts";
import type { RequestRecord } from "../shared/request-record.ts";
import { type LateExpiry, type LateRequest, RequestBook } from "./book.ts";
import { type HostEvents, type HostStats, Notifier, type QueueView, queueView, resultFrame, type SettledOutcome, snapshotView } from "./dialog/events.ts";
import { askerKey, type DialogRequest, dialogRequest, OpenRequests, type Prior, takeIn } from "./dialog/intake.ts";
import { RequestKeeper } from "./dialog/keeper.ts";
import { type LateOutcome, LateSide } from "./dialog/late-side.ts";
import { DialogQueue } from "./dialog/order.ts";
import { answerFromOutside } from "./dialog/outside.ts";
import { ShowLoop } from "./dialog/showing.ts";

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

/** Arrival receipts to the human, as notices: a courtesy, so a UI whose notify fails does not fail the request. */
const receipts = (ui: HostUI) => (message: string) => {
	try {
		ui.notify(message, "info");
	} catch {
		// The dialogs themselves will show whether the UI works.
	}
};

/**
 * Takes requests in and hands each on once: to the book, the dialog queue and the showing loop.
 * Every end is the keeper's (dialog/keeper.ts), which the book, the loop and outside answers end
 * requests by; nothing calls back into the host.
 */
export class DialogHost {
	readonly #reply: (reply: RelayReply, channel?: `reply:${string}`) => void;
	readonly #notifier: Notifier;
	readonly #requests: OpenRequests;
	readonly #book: RequestBook;
	/** Ends this host's requests; the book's keeper of each. */
	readonly keeper: RequestKeeper;
	readonly #loop: ShowLoop;
	readonly #queue: DialogQueue;

	constructor(options: DialogHostOptions) {
		this.#reply = options.reply;
		const notifier = new Notifier(options.events);
		this.#notifier = notifier;
		this.#requests = new OpenRequests(receipts(options.ui));
		const book = options.book ?? new RequestBook();
		this.#book = book;
		const late = new LateSide(notifier, book, options.lateEnded);
		const { sessionId, reply, lateLeft } = options;
		this.keeper = new RequestKeeper({ book, requests: this.#requests, late, notifier, sessionId, reply, lateLeft });
		this.#loop = new ShowLoop(options.surface, this.keeper, options.bell, book);
		this.#queue = new DialogQueue(() => notifier.changed());
	}

	/** Late requests (their budget ran out, still open), oldest first. */
	lateRequests(): LateRequest[] {
		return this.#book.late();
	}

	/** Shows a late request again, through the queue like any other (no budget of its own); false when it is not late. */
	reopenLate(requestId: string): boolean {
		const late = this.#book.get(requestId);
		if (late?.state.is !== "late") return false;
		this.#notifier.reopened(late as LateRequest);
		// The same record, queued again: its call has returned, so no call deadline holds it; it remembers how late it was.
		const record = this.#book.reopen(requestId, this.keeper)!;
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
		return { ...this.keeper.stats };
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
		this.#book.add(taken.record, this.keeper);
		this.#takeOn(taken.record, taken.asker, taken.remaining, prior !== undefined);
	}

	/**
	 * Takes on a request a replaced host parked in the book: re-checked as any request is, it goes on
	 * as the record it was, queued here; one this host would not take ends here as it would have been refused.
	 */
	adopt(record: RequestRecord): void {
		if (!this.#book.adopt(record, this.keeper)) return;
		const taken = takeIn(record.request, record, (asker) => this.#requests.openOf(asker));
		if (!taken.ok) return this.keeper.end(record, taken.end, taken.note);
		record.request = taken.record.request;
		record.questions = taken.record.questions;
		this.#takeOn(record, taken.asker, taken.remaining, true);
	}

	/** A record in the book, queued: open here, its timer at its deadline, then the dialog queue (unless out of time). */
	#takeOn(record: RequestRecord, asker: string, remaining: number, takenBefore: boolean): void {
		const entry = dialogRequest(record, asker, record.request.id);
		if (remaining > 0) this.#book.arm(record, record.request.deadline);
		this.#requests.add(entry);
		// Handed over, its budget ran out on the way: it ends as any request out of time does (late, observed), not bare.
		if (remaining <= 0) return this.keeper.end(record, "timeout");
		if (!takenBefore) this.keeper.stats.questionsAsked += record.questions.length;
		this.#queueUp(entry, takenBefore);
	}

	/** Holds a request taken in (or shown again from late): its progress and events, then the dialog queue unless shared answers complete it. */
	#queueUp(entry: DialogRequest, takenBefore: boolean): void {
		const { record } = entry;
		const { request, questions } = record;
		const position = this.#requests.byId.size;
		this.keeper.progress(record, "queued", undefined, position);
		this.#notifier.queued(record, position);
		this.#notifier.changed();
		if (this.keeper.isRelayed(record) && !takenBefore) this.#requests.arrivals.arrived(record, request.asker.label, questions.length, position - 1);
		// Everything may already be answerable from identical questions of other askers.
		if (this.keeper.completeFromShared(record)) return;
		this.#enqueue(entry);
	}

	/**
	 * Puts the request in the dialog queue: the host's own first of all, the others round robin by
	 * asker session (ADR-0024), in the order taken within a round.
	 */
	#enqueue(entry: DialogRequest): void {
		const dequeue = new AbortController();
		entry.dequeue = dequeue;
		const own = !this.keeper.isRelayed(entry.record);
		if (!own) entry.round = this.#requests.nextRound(entry.asker, this.#loop.round);
		// The loop's own method, bound: the queue hands the request straight to the loop when its turn comes.
		this.#queue.add(entry.record.request.id, this.#loop.run.bind(this.#loop, entry), own ? undefined : entry.round, dequeue.signal);
	}

	/** The asker gave up (its budget or its abort): its request ends, by the keeper. */
	cancel(message: RelayCancel): void {
		this.keeper.cancel(message);
	}

	/** An answer from outside the terminal (dialog/outside.ts): applied whole or not at all; the first answer wins. */
	answerFromOutside(raw: unknown): OutsideAnswerReply {
		return answerFromOutside(this.#book, this.keeper, raw);
	}

	/** The host goes for good (quit): every late request settles `host-gone`, once, and leaves the book. */
	endLateRequests(note: string): void {
		for (const late of this.#book.late()) this.keeper.end(late, "host-gone", note);
	}

	/** The host session is going away for good: every open request ends now with `no-host`. */
	shutdown(note: string): void {
		for (const open of [...this.#requests.byId.values()]) this.keeper.end(open.record, "host-gone", note);
	}

	/**
	 * The host session is being replaced: closes every dialog and parks the requests in the book for
	 * the next host, oldest first, for `graceMs`; those no next host takes on by then end here,
	 * `host-gone`, with `note`.
	 */
	handOver(graceMs: number, note: string): void {
		this.keeper.handingOver(graceMs, note);
		// A late request shown again goes back to late (the book outlives this host), not to the next host's queue.
		for (const open of this.#requests.showingFirst(this.#loop.showing)) this.keeper.end(open.record, "handed-over");
	}
}
