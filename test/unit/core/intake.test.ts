/**
 * Taking a request in (core/host/dialog/intake.ts), called directly: the asker's own request id, the
 * mark of a request sent again after a restart, and the answers a request brings (a re-sent
 * request's, a hand-over's record): only those that pass the one answer check, each for its own question.
 */
import { describe, expect, it } from "vitest";
import { type Prior, takeIn } from "../../../extensions/checkpoint-bridge/core/host/dialog/intake.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { MAX_REQUEST_ID_LENGTH } from "../../../extensions/checkpoint-bridge/model/limits.ts";

const questions = [
	{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"] },
	{ id: "go", question: "Ship it?", kind: "confirm" as const },
];

function request(extra: Partial<RelayRequest> = {}): RelayRequest {
	const now = Date.now();
	return {
		v: PROTOCOL_VERSION,
		id: "r1",
		asker: { label: "planner", sessionId: "s1" },
		questions,
		deadline: now + 60_000,
		dialogTimeoutMs: 0,
		createdAt: now,
		...extra,
	} as RelayRequest;
}

const nothingOpen = () => 0;

/** The request taken in, or the test fails naming why it was refused. */
function taken(raw: RelayRequest, prior?: Prior) {
	const intake = takeIn(raw, prior, nothingOpen);
	if (!intake.ok) throw new Error(`refused: ${intake.note}`);
	return intake.record;
}

const MARK = "asked before the restart";

describe("taking a request in", () => {
	it("the asker's own request id: kept when it is a string of the length a request id may have, else the request is refused naming it", () => {
		expect(taken(request({ askerId: "a".repeat(MAX_REQUEST_ID_LENGTH) })).request.askerId).toBe("a".repeat(MAX_REQUEST_ID_LENGTH));
		const refusal = `The asker's request id must be a string of at most ${MAX_REQUEST_ID_LENGTH} characters.`;
		for (const askerId of ["a".repeat(MAX_REQUEST_ID_LENGTH + 1), 42, null]) {
			const intake = takeIn(request({ askerId } as unknown as Partial<RelayRequest>), undefined, nothingOpen);
			expect(intake).toEqual({ ok: false, end: "refused", answers: [], note: refusal });
		}
		expect(taken(request()).request).not.toHaveProperty("askerId");
	});

	it("a request sent again after a restart is marked once, however often it is handed over; a label with another ' · ' part keeps it", () => {
		expect(taken(request({ resent: true })).request.asker.label).toBe(`planner · ${MARK}`);
		expect(taken(request({ resent: true, asker: { label: `planner · ${MARK}`, sessionId: "s1" } })).request.asker.label).toBe(`planner · ${MARK}`);
		// A written-down label comes back cut: the cut mark is the mark.
		expect(taken(request({ resent: true, asker: { label: "planner · asked bef…", sessionId: "s1" } })).request.asker.label).toBe(`planner · ${MARK}`);
		expect(taken(request({ resent: true, asker: { label: "planner · reviewer", sessionId: "s1" } })).request.asker.label).toBe(`planner · reviewer · ${MARK}`);
		expect(taken(request({ resent: true, asker: { label: "planner · …", sessionId: "s1" } })).request.asker.label).toBe(`planner · … · ${MARK}`);
		// Only the part after the last " · ", and only a cut at its end.
		expect(taken(request({ resent: true, asker: { label: "xxasked", sessionId: "s1" } })).request.asker.label).toBe(`xxasked · ${MARK}`);
		expect(taken(request({ resent: true, asker: { label: "planner · ask…ed", sessionId: "s1" } })).request.asker.label).toBe(`planner · ask…ed · ${MARK}`);
		expect(taken(request()).request.asker.label).toBe("planner");
	});

	it("a re-sent request's answers count only where they pass the one answer check for their own question; the rest is asked", () => {
		const record = taken(
			request({
				resent: true,
				answers: [
					// For the second question only: the first has none.
					{ id: "go", question: "Ship it?", kind: "confirm", answer: "yes", source: "dialog" },
				],
			}),
		);
		expect(record.entries[0]).toBeUndefined();
		expect(record.entries[1]).toStrictEqual({ answer: { id: "go", question: "Ship it?", kind: "confirm", answer: "yes", source: "carried" } });
		const refused = taken(
			request({
				answers: [
					// Not an option, not yes or no, a question never asked, another question's id.
					{ id: "db", question: "Which database?", kind: "option", answer: "MySQL", source: "dialog" },
					{ id: "go", question: "Ship it?", kind: "confirm", answer: "maybe", source: "dialog" },
					{ id: "db", question: "Which cache?", kind: "option", answer: "Postgres", source: "dialog" },
					{ id: "go", question: "Which database?", kind: "option", answer: "SQLite", source: "dialog" },
				],
			} as Partial<RelayRequest>),
		);
		expect(refused.entries).toEqual([undefined, undefined]);
		// Two questions of the same text: an answer is its own question's, by id too.
		const twice = [
			{ id: "go", question: "Ship it?", kind: "confirm" as const },
			{ id: "go-again", question: "Ship it?", kind: "confirm" as const },
		];
		const again = taken(request({ questions: twice, answers: [{ id: "go-again", question: "Ship it?", kind: "confirm", answer: "no", source: "dialog" }] }));
		expect(again.entries.map((e) => e?.answer.answer)).toEqual([undefined, "no"]);
	});

	it("a hand-over's record brings the answers of its own questions, each with the place it names, and nothing for another question", () => {
		const prior: Prior = {
			queuedAt: 5,
			entries: [
				{ answer: { id: "db", question: "Which database?", kind: "option", answer: "SQLite", source: "outside" }, place: "mail" },
				{ answer: { id: "go", question: "Shipped?", kind: "confirm", answer: "yes", source: "dialog" } },
			],
		};
		const record = taken(request(), prior);
		expect(record.entries[0]).toStrictEqual({
			answer: { id: "db", question: "Which database?", kind: "option", answer: "SQLite", source: "outside" },
			place: "mail",
		});
		expect(record.entries[1]).toBeUndefined();
		expect(record.queuedAt).toBe(5);
		const noPlace = taken(request(), {
			queuedAt: 5,
			entries: [null, { answer: { id: "go", question: "Ship it?", kind: "confirm", answer: "no", source: "dialog" } }],
		});
		expect(noPlace.entries[0]).toBeUndefined();
		expect(noPlace.entries[1]).toStrictEqual({ answer: { id: "go", question: "Ship it?", kind: "confirm", answer: "no", source: "dialog" } });
	});
});
