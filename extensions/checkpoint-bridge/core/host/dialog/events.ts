/**
 * What the dialog host tells of its requests: the lifecycle hooks of observers, the audit trail and
 * the status line, each guarded (a hook that throws stalls or settles nothing) and each built only
 * while something takes it; and what it shows of what it holds: the observers' snapshot and the
 * status line's view.
 */
import type { Answer } from "../../../model/answer.ts";
import { endWire, type RequestEnd } from "../../../model/result.ts";
import { OBSERVER_VERSION, type ObservedRequest, type Snapshot } from "../../shared/observers.ts";
import { PROTOCOL_VERSION, type RelayProgress, type RelayResult } from "../../shared/protocol.ts";
import { callDeadline, givenAnswers, type RequestRecord } from "../../shared/request-record.ts";
import type { LateRequest, RequestBook } from "../book.ts";
import { observedLate } from "../late.ts";
import type { DialogRequest } from "./intake.ts";

/**
 * How a request ended, inside the host: its end (model/result.ts), the answers, each with the place it
 * was given, and the host's note. The wire's status and reason are made from `end` at the edges
 * (`endWire`): the observer event, the audit trail, the reply and late frames.
 */
export interface SettledOutcome {
	end: RequestEnd;
	answers: Answer[];
	note?: string;
}

/** The lifecycle notifications a host gives. */
type EventName = "queued" | "shown" | "settled" | "late" | "reopened";

/** Lifecycle notifications for observers, the audit trail and the status line. */
export interface HostEvents {
	queued?(request: ObservedRequest, position: number): void;
	shown?(request: ObservedRequest, question: number): void;
	settled?(request: ObservedRequest, outcome: SettledOutcome, settledAt: number): void;
	/** The set of waiting requests changed. */
	changed?(): void;
	/**
	 * Whether anything takes the lifecycle notification `name` right now: when false, the host
	 * neither builds nor sends it. A hook that throws counts as true. @default true for every hook given
	 */
	wanted?(name: EventName): boolean;
	/** A request went late (its budget ran out, it stays open) or, shown again and closed unanswered, back to late: it has not settled. */
	late?(request: ObservedRequest, late: LateRequest, again: boolean): void;
	/** A late request is shown again: it is queued and shown as any other, and settles once, later. */
	reopened?(request: ObservedRequest, late: LateRequest): void;
}

/** Hooks run inside the relay's own flow: one that throws must not stall or settle anything. */
function guarded(events: HostEvents): HostEvents {
	const wrapped: HostEvents = {};
	const { wanted, ...hooks } = events;
	// Fixed arity, no rest arguments: these run several times per request.
	for (const [name, hook] of Object.entries(hooks) as [keyof HostEvents, (a?: unknown, b?: unknown, c?: unknown) => void][])
		(wrapped as Record<string, unknown>)[name] = (a?: unknown, b?: unknown, c?: unknown) => {
			try {
				hook(a, b, c);
			} catch {
				// An observer's or the audit trail's failure is theirs; the human's answer still goes through.
			}
		};
	if (wanted)
		wrapped.wanted = (name) => {
			try {
				return wanted(name);
			} catch {
				return true;
			}
		};
	return wrapped;
}

/** A request as observers see it. */
export function observed(record: RequestRecord): ObservedRequest {
	const { request } = record;
	const seen: ObservedRequest = {
		v: OBSERVER_VERSION,
		requestId: request.id,
		asker: request.asker,
		questions: record.questions,
		queuedAt: record.queuedAt,
		deadline: callDeadline(record),
	};
	if (record.shownAt !== undefined) seen.shownAt = record.shownAt;
	return seen;
}

/** The host's hooks, guarded, each called only while something takes it. */
export class Notifier {
	readonly #events: HostEvents;

	constructor(events: HostEvents = {}) {
		this.#events = guarded(events);
	}

	/** Whether the lifecycle notification `name` has a hook, and anything takes it now. */
	wants(name: EventName): boolean {
		return this.#events[name] !== undefined && (this.#events.wanted?.(name) ?? true);
	}

	changed(): void {
		this.#events.changed?.();
	}

	queued(record: RequestRecord, position: number): void {
		if (this.wants("queued")) this.#events.queued!(observed(record), position);
	}

	shown(record: RequestRecord, question: number): void {
		if (this.wants("shown")) this.#events.shown!(observed(record), question);
	}

	/** The request settled: `request` as observers see it (built only when called, see `wants`). */
	settled(request: ObservedRequest, outcome: SettledOutcome): void {
		this.#events.settled?.(request, outcome, Date.now());
	}

	/** A request went late (or back to late): it has not settled. */
	late(record: RequestRecord, late: LateRequest, again: boolean): void {
		if (this.wants("late")) this.#events.late!(observed(record), late, again);
	}

	reopened(late: LateRequest): void {
		if (this.wants("reopened")) this.#events.reopened!(observedLate(late), late);
	}
}

/**
 * How a request the host had open ended, as observers and the audit trail learn it: each answer (as the
 * asker got it, `answers`) with the place it was given, which the asker's result does not carry.
 */
export function settledOutcome(record: RequestRecord, answers: readonly Answer[], end: RequestEnd, note: string | undefined): SettledOutcome {
	const { entries } = record;
	const placed: Answer[] = [];
	for (let i = 0, k = 0; i < entries.length; i++) {
		const place = entries[i]?.place;
		if (entries[i] === undefined) continue;
		const answer = answers[k++]!;
		placed.push(place === undefined ? answer : { ...answer, place });
	}
	return note ? { end, answers: placed, note } : { end, answers: placed };
}

/** The answers of a request without one yet: shared, frozen, like every array a reply carries once sealed. */
const NO_ANSWERS: readonly Answer[] = Object.freeze([]);

/** The progress frame the asker of `record` gets at each stage (queued at a position, a question shown or answered). */
export function progressFrame(record: RequestRecord, stage: RelayProgress["stage"], question?: number, position?: number): RelayProgress {
	const given = givenAnswers(record);
	const answers = given.length === 0 ? (NO_ANSWERS as Answer[]) : given;
	const progress: RelayProgress = { v: PROTOCOL_VERSION, id: record.request.id, kind: "progress", stage, answers };
	if (question !== undefined) progress.question = question;
	if (position !== undefined) progress.position = position;
	return progress;
}

/** The result frame of a request's end, as its waiting call gets it: an edge, where the end becomes the wire's status and reason (`endWire`). */
export function resultFrame(id: string, end: RequestEnd, answers: Answer[], note?: string): RelayResult {
	const { status, reason } = endWire(end);
	const result: RelayResult = { v: PROTOCOL_VERSION, id, kind: "result", status, answers };
	if (note) result.note = note;
	if (reason) result.reason = reason;
	return result;
}

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
