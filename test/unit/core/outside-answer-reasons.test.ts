/**
 * What an outside answer is told when it is refused (core/shared/outside-answers.ts): each reason in
 * the words a sender reads, for a place that is not one, an empty multi-select and a recommended
 * flag that is not a boolean.
 */
import { describe, expect, it } from "vitest";
import { parseOutsideAnswer, resolveOutsideAnswer } from "../../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";

const targets: Question = { id: "targets", question: "Which targets?", kind: "choice", options: [{ label: "linux" }, { label: "mac" }], multiSelect: true };
const db: Question = { id: "db", question: "Which database?", kind: "choice", options: [{ label: "Postgres" }, { label: "SQLite" }], recommended: "SQLite" };

describe("an outside answer refused, in the words its sender reads", () => {
	it("a place that is not one names the places of each source", () => {
		expect(parseOutsideAnswer({ requestId: "r1", answers: [], place: "fax" })).toEqual({
			ok: false,
			reply: {
				ok: false,
				code: "invalid_payload",
				reason: 'place must be one of "page", "link", "notify-link" with source "web", "mail" with source "outside", or left out',
			},
		});
	});

	it("a multi-select answered with no value at all says it needs one", () => {
		expect(resolveOutsideAnswer([targets], [[]])).toEqual({
			ok: false,
			reply: { ok: false, code: "invalid_answer", reason: "answers[0]: must be a non-empty array of option labels" },
		});
	});

	it("a recommended flag that is not a boolean says what it may be", () => {
		// As a sender's JSON may carry it, whatever the type says.
		const value = JSON.parse('{ "answer": "SQLite", "recommended": "yes" }');
		expect(resolveOutsideAnswer([db], [value])).toEqual({
			ok: false,
			reply: { ok: false, code: "invalid_answer", reason: "answers[0]: recommended must be true, false or left out" },
		});
	});
});
