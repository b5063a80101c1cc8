/**
 * The dialog host's open requests: each one's record, which the book keeps, and what lives only
 * while this host queues or shows it, and every index of them, kept in step in one place.
 */
import { type RelayRequest, replyChannel } from "../../shared/protocol.ts";
import type { RequestRecord } from "../../shared/request-record.ts";
import { ArrivalNotices } from "../arrival-notices.ts";
import { SameQuestions } from "../same-questions.ts";

/** An open request as the dialog host keeps it: its record, and what lives only while this host queues or shows it. */
export interface DialogRequest {
	/** Its record, in the book (core/host/book.ts), which keeps its one timer. */
	readonly record: RequestRecord;
	/** While it shows: whatever is open closes by this (any end of the request aborts it). The controller `dequeue` was: p-queue no longer knows it. */
	open?: AbortController;
	/** Its task's signal while it waits its turn: a request that ends then leaves the dialog queue by it (p-queue's `signal`); `open` once its task starts. */
	dequeue?: AbortController;
	/** Its turn among its asker's requests (round robin, ADR-0024); 0 for the host's own, which go first. */
	round: number;
	/** Whose open requests it counts among (`askerKey`), worked out once. */
	readonly asker: string;
	/** Its reply channel, built once: one string the bus keys on for every reply, not a new one per reply. */
	readonly channel: `reply:${string}`;
}

/** A request just taken in, or shown again from late: no timer yet, its reply channel built once. */
export const dialogRequest = (record: RequestRecord, asker: string, requestId: string): DialogRequest => ({
	record,
	round: 0,
	asker,
	channel: replyChannel(requestId),
});

/**
 * Whose open requests count together against the cap: one asker session over every connection of
 * one transport (an origin's part before its colon, protocol.ts). A pooled client opens another
 * connection, a new origin, every 128 calls: counted per origin, 10,000 calls put 1,264 in the queue.
 */
export const askerKey = (request: RelayRequest) => `${request.origin?.split(":", 1)[0] ?? ""}\n${request.asker.sessionId}`;

/** One asker session's open requests: how many, and the round its latest one was given. */
interface AskerTurns {
	open: number;
	round: number;
}

/** Every index the host keeps of its open requests, kept in step in one place: a request goes into all of them and out of all of them. */
export class OpenRequests {
	/** By request id, oldest first. */
	readonly byId = new Map<string, DialogRequest>();
	/** Identical questions of different sessions, shown once. */
	readonly same = new SameQuestions<RequestRecord>();
	/** Open requests per asker session and transport, for the cap and the round robin. */
	readonly #byAsker = new Map<string, AskerTurns>();
	readonly arrivals: ArrivalNotices<RequestRecord>;

	constructor(notify: (message: string) => void) {
		this.arrivals = new ArrivalNotices(notify);
	}

	openOf(asker: string): number {
		return this.#byAsker.get(asker)?.open ?? 0;
	}

	/**
	 * The round of an open request's turn: one after its asker's latest, and never before the round
	 * being shown (`served`). So an asker's next request goes ahead of every other asker's later
	 * ones, and one that has waited is not overtaken by a newcomer's whole backlog (ADR-0024).
	 */
	nextRound(asker: string, served: number): number {
		const turns = this.#byAsker.get(asker)!;
		turns.round = Math.max(turns.round, served) + 1;
		return turns.round;
	}

	add(entry: DialogRequest): void {
		this.same.add(entry.record);
		this.byId.set(entry.record.request.id, entry);
		const turns = this.#byAsker.get(entry.asker);
		if (turns) turns.open++;
		else this.#byAsker.set(entry.asker, { open: 1, round: 0 });
	}

	/** Every open request, the one on screen (`showing`) first, so the next host shows it again before anything else; then in the order taken. */
	showingFirst(showing: DialogRequest | undefined): DialogRequest[] {
		const all = showing && this.byId.get(showing.record.request.id) === showing ? [showing] : [];
		for (const other of this.byId.values()) if (other !== showing) all.push(other);
		return all;
	}

	/** Deletes every trace of a request this host no longer has open. */
	remove(entry: DialogRequest): void {
		const { record } = entry;
		this.byId.delete(record.request.id);
		this.same.remove(record);
		this.arrivals.gone(record);
		const turns = this.#byAsker.get(entry.asker)!;
		// An asker with nothing open starts again at the round being shown.
		if (--turns.open === 0) this.#byAsker.delete(entry.asker);
	}
}
