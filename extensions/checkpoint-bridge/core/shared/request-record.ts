/**
 * The request record: everything the host knows of one request as one plain value (ADR-0022). Who
 * asked and its questions (the request as taken in), its answers each with the place it was given,
 * one deadline (the request's; what is on screen closes at a question deadline derived from it), and
 * its state. It lives in the host's book (core/host/book.ts) from taken to gone: a request handed to
 * the next host, late, or shown again is this value, never a copy of it.
 */
import type { Answer, AnswerPlace } from "../../model/answer.ts";
import type { Question } from "../../model/question.ts";
import type { RequestEnd } from "../../model/result.ts";
import { NO_LIMIT } from "./config.ts";
import type { RelayRequest } from "./protocol.ts";

export type { RequestEnd };

/** The request as the host keeps it: asker and questions neutralised, questions normalised. */
export type CheckedRequest = RelayRequest & { questions: Question[] };

/** One answer and where it was given (unknown for an answer carried from a host that did not say). */
export interface AnswerEntry {
	answer: Answer;
	place?: AnswerPlace;
}

/** Where a request is in its life: one value, so no two flags can disagree. */
export type RecordState =
	| { is: "queued" }
	/** `question` is on screen, while one is, until `questionDeadline` (its question deadline; NO_LIMIT for none). */
	| { is: "showing"; question?: number; questionDeadline?: number }
	/** Handed over: its host is being replaced, and it waits in the book for the next host to take it on. */
	| { is: "parked" }
	/** Its call's budget ran out and it stays open, answerable, in the book: late since `since`, until `expiresAt` (epoch ms). */
	| LateState
	| { is: "answered"; end: Extract<RequestEnd, "answered" | "answered-outside"> }
	| { is: "ended"; end: Exclude<RequestEnd, "answered" | "answered-outside"> };

/** The late state: when it went late and when it expires. */
export interface LateState {
	is: "late";
	since: number;
	expiresAt: number;
}

export interface RequestRecord {
	/** Who asked, its questions, its deadline (0: none) and dialog timeout, as taken in. */
	request: CheckedRequest;
	/** `request.questions`, the same array: what the index of identical questions reads. */
	questions: Question[];
	/** Answers by question index, each with its place. */
	entries: (AnswerEntry | undefined)[];
	queuedAt: number;
	/** Epoch ms at which its first question was shown, if it has been. */
	shownAt?: number;
	state: RecordState;
	/**
	 * Its late state while it is shown again from late (queued or showing once more): its call has
	 * returned, so no call deadline holds it, and unanswered it goes back to late as late as it was.
	 */
	wasLate?: LateState;
}

/** The call's deadline while the call waits; none (NO_LIMIT) once the call has returned and the request went late. */
export const callDeadline = (record: Pick<RequestRecord, "request" | "wasLate">): number => (record.wasLate ? NO_LIMIT : record.request.deadline);

/** Whether the request has ended (answered or not). */
export const hasEnded = (record: RequestRecord): boolean => record.state.is === "answered" || record.state.is === "ended";

/** The state a request is in once it ended as `end`. */
export const endedState = (end: RequestEnd): RecordState => (end === "answered" || end === "answered-outside" ? { is: "answered", end } : { is: "ended", end });

/** The answers given so far, in question order (of a record, or of one written down). */
export const givenAnswers = (record: { entries: readonly (AnswerEntry | null | undefined)[] }): Answer[] => {
	const given: Answer[] = [];
	for (const entry of record.entries) if (entry) given.push(entry.answer);
	return given;
};

/** Each given answer with its place, in question order: what observers and the audit trail see. */
export const placedAnswers = (record: Pick<RequestRecord, "entries">): Answer[] =>
	record.entries.flatMap((entry) => (entry === undefined ? [] : [entry.place === undefined ? entry.answer : { ...entry.answer, place: entry.place }]));
