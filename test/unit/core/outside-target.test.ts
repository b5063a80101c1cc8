/**
 * An answer from outside the terminal as the dialog host applies it (core/host/dialog/outside.ts),
 * called directly on a book of one record: a parked record is no one's to answer, a cancel's note,
 * and the place each answer is recorded with.
 */
import { describe, expect, it } from "vitest";
import { takeIn } from "../../../extensions/checkpoint-bridge/core/host/dialog/intake.ts";
import { answerFromOutside } from "../../../extensions/checkpoint-bridge/core/host/dialog/outside.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { AnswerEntry, RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";

function record(state: RequestRecord["state"] = { is: "queued" }): RequestRecord {
	const now = Date.now();
	const raw = {
		v: PROTOCOL_VERSION,
		id: "r1",
		asker: { label: "planner", sessionId: "s1" },
		questions: [
			{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"] },
			{ id: "name", question: "Project name?" },
		],
		deadline: now + 60_000,
		dialogTimeoutMs: 0,
		createdAt: now,
	} as RelayRequest;
	const intake = takeIn(raw, undefined, () => 0);
	if (!intake.ok) throw new Error(intake.note);
	return { ...intake.record, state };
}

/** A book of `one` record, and what the host was asked to do with it. */
function bookOf(one: RequestRecord) {
	const ends: { end: string; note: string | undefined }[] = [];
	const book = {
		get: (id: string) => (id === one.request.id ? one : undefined),
		answer: (at: RequestRecord, i: number, entry: AnswerEntry) => {
			at.entries[i] = entry;
		},
	};
	const target = { end: (_: RequestRecord, end: string, note?: string) => void ends.push({ end, note }) };
	return { book: book as unknown as Parameters<typeof answerFromOutside>[0], target, ends };
}

describe("an answer from outside, as the dialog host applies it", () => {
	it("a parked request (its host replaced, the next not yet there) is not found, and stays unanswered", () => {
		const parked = record({ is: "parked" } as RequestRecord["state"]);
		const { book, target, ends } = bookOf(parked);
		expect(answerFromOutside(book, target, { requestId: "r1", answers: ["SQLite", "atlas"] })).toEqual({
			ok: false,
			code: "not_found",
			reason: 'no open request "r1" (unknown, or already settled)',
		});
		expect([ends, parked.entries]).toEqual([[], [undefined, undefined]]);
	});

	it("a cancel that names no place ends the request cancelled from outside, with the note that says so", () => {
		const { book, target, ends } = bookOf(record());
		expect(answerFromOutside(book, target, { requestId: "r1", cancel: true })).toEqual({ ok: true });
		expect(ends).toEqual([{ end: "cancelled-outside", note: "The question was cancelled from outside the terminal." }]);
	});

	it("answers that name no place: recorded without one from the page, at 'outside' from anywhere else", () => {
		const fromPage = record();
		const page = bookOf(fromPage);
		expect(answerFromOutside(page.book, page.target, { requestId: "r1", answers: ["SQLite", "atlas"], source: "web" })).toEqual({ ok: true });
		expect(fromPage.entries.map((e) => (e === undefined ? e : Object.keys(e)))).toEqual([["answer"], ["answer"]]);
		expect(page.ends).toEqual([{ end: "answered-outside", note: undefined }]);
		const fromElsewhere = record();
		const other = bookOf(fromElsewhere);
		answerFromOutside(other.book, other.target, { requestId: "r1", answers: ["SQLite", "atlas"] });
		expect(fromElsewhere.entries.map((e) => e?.place)).toEqual(["outside", "outside"]);
	});
});
