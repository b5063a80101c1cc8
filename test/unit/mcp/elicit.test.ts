/**
 * The questions as one flat MCP elicitation form and back: each question kind's property, what the
 * human reads under it, and every way a form's content can miss or misfit the questions.
 */
import { describe, expect, it } from "vitest";
import { answersFromForm, elicitationForm } from "../../../extensions/checkpoint-bridge/mcp/elicit.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";

/** Questions as the tool checks them. */
function checked(questions: unknown[]): Question[] {
	const result = validateAskParams({ questions });
	if (!result.ok) throw new Error(result.problems.join("; "));
	return result.questions;
}

describe("the form", () => {
	it("is flat and asks every question, required: an enum for a choice (Other one of its values, its text beside it), an array of enums for a multi-select, a string for text, a boolean for a confirm", () => {
		const form = elicitationForm(
			checked([
				{ question: "Pick one", options: ["a", "b"] },
				{ question: "Pick some", options: ["x", "y"], multiSelect: true, allowOther: false },
				{ question: "Say it", placeholder: "e.g. 1.4" },
				{ question: "Sure?", kind: "confirm" },
			]),
			"codex",
		);
		expect(form.message).toBe("codex has 4 questions for you (no pi session is there to show it).");
		expect(form.requestedSchema).toEqual({
			type: "object",
			properties: {
				q1: { type: "string", title: "Pick one", enum: ["a", "b", "Other"] },
				q1_other: { type: "string", title: "q1: your own answer, when you pick Other" },
				q2: { type: "array", title: "Pick some", items: { type: "string", enum: ["x", "y"] }, minItems: 1 },
				q3: { type: "string", title: "Say it", description: "e.g. 1.4" },
				q4: { type: "boolean", title: "Sure?" },
			},
			required: ["q1", "q2", "q3", "q4"],
		});
		// Nothing nested: every property is a primitive or an array of an enum.
		for (const property of Object.values(form.requestedSchema.properties)) expect(["string", "boolean", "array"]).toContain(property.type);
	});

	it('an option called "Other" keeps its name: the Other value is told apart', () => {
		const form = elicitationForm(checked([{ question: "Pick one", options: ["Other", "b"], multiSelect: true }]), "codex");
		expect(form.requestedSchema.properties.q1).toMatchObject({ items: { enum: ["Other", "b", "Other (type below)"] }, minItems: 1 });
	});

	it("one question: 'a question'", () => {
		expect(elicitationForm(checked([{ question: "Go?", kind: "confirm" }]), "cursor").message).toBe(
			"cursor has a question for you (no pi session is there to show it).",
		);
	});
});

describe("the answers", () => {
	const questions = checked([
		{ id: "one", question: "Pick one", options: ["a", "b"] },
		{ question: "Pick some", options: ["x", "y"], multiSelect: true },
		{ question: "Say it" },
		{ question: "Sure?", kind: "confirm" },
	]);

	it("come back in question order, each the kind its question takes", () => {
		const read = answersFromForm(questions, { q1: "b", q2: ["y", "x"], q2_other: "z", q3: "hello", q4: false });
		expect(read).toEqual({
			ok: true,
			answers: [
				{ question: "Pick one", id: "one", answer: "b", kind: "option", source: "dialog" },
				{ question: "Pick some", answer: "x, y, z", kind: "other", values: ["x", "y", "z"], source: "dialog" },
				{ question: "Say it", answer: "hello", kind: "text", source: "dialog" },
				{ question: "Sure?", answer: "no", kind: "confirm", source: "dialog" },
			],
			missing: [],
		});
	});

	it("an Other typed as one of the options is that option", () => {
		expect(answersFromForm(questions.slice(0, 1), { q1_other: " a " })).toMatchObject({ ok: true, answers: [{ answer: "a", kind: "option" }] });
	});

	it('"Other" picked with its text is that text; picked without text, the question is missing', () => {
		expect(answersFromForm(questions.slice(0, 1), { q1: "Other", q1_other: "c" })).toMatchObject({ ok: true, answers: [{ answer: "c", kind: "other" }] });
		expect(answersFromForm(questions.slice(0, 1), { q1: "Other" })).toMatchObject({ ok: true, answers: [], missing: ['q1 ("Pick one")'] });
		expect(answersFromForm(questions.slice(0, 2), { q1: "a", q2: ["x", "Other"] })).toMatchObject({ ok: true, missing: ['q2 ("Pick some")'] });
	});

	it.each([
		[{ q2: ["x"], q3: "t", q4: true }, 'q1 ("Pick one")', 3],
		[{ q1: "a", q2: [], q3: "t", q4: true }, "q2", 3],
		[{ q1: "a", q2: ["x"], q3: 5, q4: true }, "q3", 3],
		[{ q1: "a", q2: ["x"], q3: "  ", q4: true }, "q3", 3],
		[{ q1: "a", q2: ["x"], q3: "t", q4: "yes" }, "q4", 3],
	])("%j leaves %s without an answer, and keeps the %i given", (content, missing, given) => {
		const read = answersFromForm(questions, content);
		expect(read.ok).toBe(true);
		if (read.ok) {
			expect(read.missing.join()).toContain(missing);
			expect(read.answers).toHaveLength(given);
		}
	});

	it.each([
		[null, "the form came back without content"],
		[["b"], "the form came back without content"],
		[{ q1: "c", q2: ["x"], q3: "t", q4: true }, 'the form\'s answer to q1 picks "c", which was not offered'],
		[{ q1: "a", q2: ["x", "w"], q3: "t", q4: true }, 'the form\'s answer to q2 picks "w", which was not offered'],
		[{ q1: "a", q2: ["x", 3], q3: "t", q4: true }, "the form's answer to q2 picks 3, which was not offered"],
	])("%j is refused: %s", (content, problem) => {
		const read = answersFromForm(questions, content);
		expect(read.ok).toBe(false);
		if (!read.ok) expect(read.problem).toContain(problem);
	});
});
