import { describe, expect, it } from "vitest";
import { validateAskParams } from "../../extensions/checkpoint-bridge/validate.ts";

describe("parameter validation", () => {
	it("accepts a batch of choice and free-text questions", () => {
		expect(validateAskParams({ questions: [{ question: "A?", options: ["x", "y"] }, { question: "B?", placeholder: "p" }], timeoutMs: 5_000 })).toEqual({
			ok: true,
			questions: [{ question: "A?", options: ["x", "y"] }, { question: "B?", placeholder: "p" }],
			timeoutMs: 5_000,
		});
	});

	it("requires at least one question", () => {
		expect(validateAskParams({ questions: [] })).toEqual({ ok: false, problems: ["questions: at least one question is required"] });
		expect(validateAskParams({})).toEqual({ ok: false, problems: ["questions: must be an array"] });
		expect(validateAskParams(null)).toMatchObject({ ok: false });
	});

	it("names every problem at once: empty text, empty and duplicate options, bad types", () => {
		const result = validateAskParams({
			questions: [{ question: "  " }, { question: "Pick", options: ["a", "", "a"] }, { question: "X", options: [] }, "nope", { question: 3, placeholder: 4 }],
			timeoutMs: "soon",
		});
		expect(result).toEqual({
			ok: false,
			problems: [
				"questions[0].question: is empty",
				"questions[1].options[1]: is empty",
				'questions[1].options[2]: duplicates "a"',
				"questions[2].options: is empty (omit it for a free-text question)",
				'questions[3]: must be an object with a "question" text',
				"questions[4].question: must be a string",
				"questions[4].placeholder: must be a string",
				"timeoutMs: must be a finite number of milliseconds",
			],
		});
	});
});
