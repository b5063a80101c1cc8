/**
 * A request record as the store writes it, and back: what a host that starts again needs of it (the
 * request as taken in, its answers with their places, when it was queued and shown, and whether it
 * was late). What is on screen is not written: a record that was showing comes back queued.
 */
import type { Answer } from "../../model/answer.ts";
import { endWire, type RequestEnd } from "../../model/result.ts";
import type { AnswerEntry, LateState, RequestRecord } from "../shared/request-record.ts";
import { givenAnswers } from "../shared/request-record.ts";
import type { StoredEnd, StoredRequest } from "./store.ts";

/** Whether the store writes `record` down: a request of another process or machine (it has an origin), whose asker's id is known. */
export const writtenDown = (record: RequestRecord): boolean => record.request.origin !== undefined && typeof record.request.askerId === "string";

interface RecordJson {
	request: RequestRecord["request"];
	entries: (AnswerEntry | null)[];
	queuedAt: number;
	shownAt?: number;
	late?: LateState;
}

/** The record's row. */
export function storedRequest(record: RequestRecord): StoredRequest {
	const late = record.state.is === "late" ? record.state : record.wasLate;
	const json: RecordJson = {
		request: record.request,
		entries: record.entries.map((entry) => entry ?? null),
		queuedAt: record.queuedAt,
		...(record.shownAt !== undefined ? { shownAt: record.shownAt } : {}),
		...(late ? { late: { is: "late", since: late.since, expiresAt: late.expiresAt } } : {}),
	};
	return { hostId: record.request.id, askerId: record.request.askerId!, askerSession: record.request.asker.sessionId, record: JSON.stringify(json) };
}

const isLate = (value: unknown): value is LateState =>
	typeof value === "object" && value !== null && Number.isFinite((value as LateState).since) && Number.isFinite((value as LateState).expiresAt);

/**
 * A written-down record taken back: the request (checked again by the host as any request is), its
 * answers, when it was queued, and its late state if it was late; undefined for a row that does not
 * read as one (it is dropped).
 */
export function restoredRecord(row: StoredRequest): { record: RequestRecord; late?: LateState } | undefined {
	let json: Partial<RecordJson>;
	try {
		json = JSON.parse(row.record) as Partial<RecordJson>;
	} catch {
		return undefined;
	}
	if (typeof json !== "object" || json === null) return undefined;
	const { request } = json;
	if (typeof request !== "object" || request === null || request.id !== row.hostId || !Array.isArray(request.questions) || !Array.isArray(json.entries))
		return undefined;
	if (!Number.isFinite(json.queuedAt)) return undefined;
	// Who asked must read as an asker: what the host refuses is ended under it (and so leaves the store).
	const asker = request.asker as Partial<RequestRecord["request"]["asker"]> | null | undefined;
	if (typeof asker !== "object" || asker === null || typeof asker.sessionId !== "string" || typeof asker.label !== "string") return undefined;
	// It was asked before this host started: shown marked as such, as a re-sent request is.
	const taken = { ...request, resent: true as const, askerId: row.askerId };
	const record: RequestRecord = {
		request: taken,
		questions: taken.questions,
		// An answer counts only where it is one to the question at its place (the host checks each again as it takes the record on).
		entries: taken.questions.map((q, i) => {
			const entry = json.entries?.[i];
			const answer = entry && typeof entry === "object" ? entry.answer : undefined;
			return answer && typeof answer.answer === "string" && answer.question === (q as { question?: unknown }).question ? entry! : undefined;
		}),
		queuedAt: json.queuedAt as number,
		state: { is: "queued" },
		...(Number.isFinite(json.shownAt) ? { shownAt: json.shownAt as number } : {}),
	};
	return isLate(json.late) ? { record, late: { is: "late", since: json.late.since, expiresAt: json.late.expiresAt } } : { record };
}

/** How a written-down record ended: its end, the host's note, and whether its call had returned (it was late). */
export interface StoreOutcomeOf {
	end: RequestEnd;
	note?: string;
	late?: boolean;
}

/** The end row of a written-down record that ended as `end`, kept until `expiresAt`. */
export function storedEnd(record: RequestRecord, outcome: StoreOutcomeOf, expiresAt: number, now = Date.now()): StoredEnd {
	const { status, reason } = endWire(outcome.end);
	const answers: Answer[] = givenAnswers(record);
	const { late } = outcome;
	return {
		askerId: record.request.askerId!,
		hostId: record.request.id,
		askerSession: record.request.asker.sessionId,
		asker: record.request.asker.label,
		questions: record.questions.map((q) => q.question),
		status,
		answers,
		...(outcome.note ? { note: outcome.note } : {}),
		...(reason ? { reason } : {}),
		...(late ? { late: true as const } : {}),
		queuedAt: record.queuedAt,
		endedAt: now,
		expiresAt,
	};
}
