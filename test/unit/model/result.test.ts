/**
 * The envelope (model/result.ts): each end's wire status and reason, the note and its advice, and
 * the answers marked as their question's recommended option, each matched to its own question.
 */
import { describe, expect, it } from "vitest";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { END_REASONS, endWire, makeEnvelope, markRecommendations, NEEDS_INPUT_ADVICE } from "../../../extensions/checkpoint-bridge/model/result.ts";

const choice = (question: string, recommended?: string, id?: string): Question => ({
	...(id === undefined ? {} : { id }),
	question,
	kind: "choice",
	options: [{ label: "Postgres" }, { label: "SQLite" }],
	...(recommended === undefined ? {} : { recommended }),
});
const option = (question: string, answer: string, extra: Partial<Answer> = {}): Answer => ({ question, answer, kind: "option", ...extra });

describe("each end as the wire says it", () => {
	it("a dismiss, a cancel from outside and a question's own timeout end timeout-or-cancelled with their reason; an answer, with none", () => {
		expect(END_REASONS).toEqual(["dismissed", "dialog-timeout"]);
		expect(endWire("dismissed")).toStrictEqual({ status: "timeout-or-cancelled", reason: "dismissed" });
		expect(endWire("cancelled-outside")).toStrictEqual({ status: "timeout-or-cancelled", reason: "dismissed" });
		expect(endWire("dialog-timeout")).toStrictEqual({ status: "timeout-or-cancelled", reason: "dialog-timeout" });
		expect(endWire("answered")).toStrictEqual({ status: "ok" });
		expect(endWire("host-gone")).toStrictEqual({ status: "no-host" });
	});
});

describe("the note", () => {
	it("an answered or queued call's note is the reason as given, or none at all; every other status adds the needs_input advice", () => {
		expect(makeEnvelope("ok", [], "fine")).toStrictEqual({ status: "ok", answers: [], note: "fine" });
		expect(makeEnvelope("queued", [], "asked")).toStrictEqual({ status: "queued", answers: [], note: "asked" });
		expect(makeEnvelope("ok", [])).toStrictEqual({ status: "ok", answers: [] });
		expect(makeEnvelope("no-host", [], "nobody")).toStrictEqual({ status: "no-host", answers: [], note: `nobody ${NEEDS_INPUT_ADVICE}` });
		expect(makeEnvelope("timeout", [])).toStrictEqual({ status: "timeout", answers: [], note: NEEDS_INPUT_ADVICE });
	});
});

describe("answers marked as the recommended option", () => {
	const asked = [choice("Which database?", "SQLite", "db"), choice("Which cache?", "Postgres")];

	it("an answer that is its own question's recommended option is marked, matched by id, or by text for a question without one", () => {
		const envelope = makeEnvelope("ok", [option("Which database?", "SQLite", { id: "db" }), option("Which cache?", "Postgres")]);
		expect(markRecommendations(envelope, asked).answers.map((a) => a.recommended)).toEqual([true, true]);
		// Of two questions without an id, the one of its text.
		const idless = [choice("Which cache?", "Postgres"), choice("Which queue?", "SQLite")];
		expect(markRecommendations(makeEnvelope("ok", [option("Which queue?", "SQLite")]), idless).answers[0]?.recommended).toBe(true);
	});

	it("no mark for an answer that is not the recommended option, nor matched to a question by text alone where the question has an id", () => {
		const answers = [
			// The right text, but the question it answers has an id and this answer none.
			option("Which database?", "SQLite"),
			// Another question's id.
			option("Which database?", "SQLite", { id: "cache" }),
			// Not the recommended option.
			option("Which cache?", "SQLite"),
			// The recommended label, but typed or picked with another.
			{ question: "Which cache?", answer: "Postgres", kind: "other" as const },
			option("Which cache?", "Postgres", { values: ["Postgres", "SQLite"] }),
		];
		const marked = markRecommendations(makeEnvelope("ok", answers), asked);
		expect(marked.answers.map((a) => a.recommended)).toEqual([undefined, undefined, undefined, undefined, undefined]);
		// One value, the recommended one: marked.
		expect(markRecommendations(makeEnvelope("ok", [option("Which cache?", "Postgres", { values: ["Postgres"] })]), asked).answers[0]?.recommended).toBe(true);
	});

	it("an envelope with nothing to mark comes back as it is, the same object; one with something marks only that", () => {
		const none = makeEnvelope("ok", [option("Which database?", "Postgres", { id: "db" })]);
		expect(markRecommendations(none, asked)).toBe(none);
		const unrecommended = makeEnvelope("ok", [option("Which database?", "SQLite", { id: "db" })]);
		expect(markRecommendations(unrecommended, [choice("Which database?", undefined, "db")])).toBe(unrecommended);
		const marked = makeEnvelope("ok", [option("Which database?", "SQLite", { id: "db", recommended: true })]);
		expect(markRecommendations(marked, asked)).toBe(marked);
		const mixed = makeEnvelope("ok", [option("Which database?", "Postgres", { id: "db" }), option("Which cache?", "Postgres")]);
		const result = markRecommendations(mixed, asked);
		expect(result).not.toBe(mixed);
		expect(result.answers[0]).toStrictEqual(option("Which database?", "Postgres", { id: "db" }));
		expect(result.answers[1]).toStrictEqual(option("Which cache?", "Postgres", { recommended: true }));
	});
});
