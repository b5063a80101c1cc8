/** What the dialog host shows of what it holds: the observers' snapshot and the status line's view. */
import { OBSERVER_VERSION, type Snapshot } from "../../shared/observers.ts";
import type { RequestRecord } from "../../shared/request-record.ts";
import type { RequestBook } from "../book.ts";
import { observedLate } from "../late.ts";
import { observed } from "./events.ts";
import type { DialogRequest } from "./open-requests.ts";

/** Figures for "ask the human once": how many dialogs the human saw for how many questions. */
export interface HostStats {
	/** Questions in every request taken. */
	questionsAsked: number;
	/** Dialogs opened (a re-asked or multi-step question counts each time). */
	dialogsShown: number;
	/** Questions answered from another asker's identical question, without a dialog. */
	sharedAnswers: number;
}

/** Who asked a request, and when it was queued, as the status line names it. */
interface AskedBy {
	label: string;
	at: number;
}

/** What the status line shows of what is open. */
export interface QueueView {
	shown?: AskedBy;
	queued: AskedBy[];
	queuedCount: number;
}

const askedBy = (record: RequestRecord): AskedBy => ({ label: record.request.asker.label, at: record.queuedAt });

/**
 * The status line's view of what is open, without building a snapshot (it is redrawn at every
 * change: a snapshot each time made a round of N requests cost N² in memory): the request on
 * screen, if one is, and the first `limit` of those waiting their turn, oldest first, each with
 * who asked and when it was queued; `queuedCount` counts every one waiting.
 */
export function queueView(open: ReadonlyMap<string, DialogRequest>, showing: DialogRequest | undefined, limit: number): QueueView {
	const running = showing?.record;
	const shown = running?.state.is === "showing" && running.state.question !== undefined ? running : undefined;
	const queued: AskedBy[] = [];
	for (const { record } of open.values()) {
		if (queued.length >= limit) break;
		if (record !== shown) queued.push(askedBy(record));
	}
	// The records, not the queue's size: a request just taken is counted before its task is added.
	const queuedCount = open.size - (shown ? 1 : 0);
	return { ...(shown ? { shown: askedBy(shown) } : {}), queued, queuedCount };
}

/** What is open, oldest first, and what is late. */
export function snapshotView(open: ReadonlyMap<string, DialogRequest>, book: RequestBook): Snapshot {
	return {
		v: OBSERVER_VERSION,
		takenAt: Date.now(),
		open: [...open.values()].map(({ record }) => {
			const { state } = record;
			const showing = state.is === "showing" ? state.question : undefined;
			const questionDeadline = state.is === "showing" ? state.questionDeadline : undefined;
			return {
				...observed(record),
				state: showing === undefined ? "queued" : "shown",
				...(showing !== undefined ? { question: showing, ...(questionDeadline !== undefined ? { questionDeadline } : {}) } : {}),
			};
		}),
		...(book.lateCount > 0
			? {
					late: book.late().map((l) => ({ ...observedLate(l), lateSince: l.state.since, expiresAt: l.state.expiresAt })),
				}
			: {}),
	};
}
