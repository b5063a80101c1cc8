import { describe, expect, it } from "vitest";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import { answerOf, answerProblem, copyAnswer, multiAnswer, questionKey } from "../../../extensions/checkpoint-bridge/model/answer-check.ts";
import { LIMITS } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";

const text: Question = { id: "t", question: "Name?", kind: "text" };
const confirm: Question = { question: "Deploy?", kind: "confirm" };
const choice: Question = { question: "Colour?", kind: "choice", options: [{ label: "red" }, { label: "blue" }], multiSelect: false, allowOther: false };
const choiceOther: Question = { ...choice, allowOther: true, recommended: "blue" };
const multi: Question = { question: "Tags?", kind: "choice", options: [{ label: "a" }, { label: "b" }, { label: "c" }], multiSelect: true, allowOther: false };
const multiOther: Question = { ...multi, allowOther: true, recommended: "b" };

const ans = (question: Question, fields: Partial<Answer>): Answer => ({
	question: question.question,
	answer: "",
	kind: "text",
	...(question.id ? { id: question.id } : {}),
	...fields,
});

describe("answerProblem: the one answer check", () => {
	it("accepts an answer that fits, for every kind of question", () => {
		expect(answerProblem(text, ans(text, { answer: "Ada" }))).toBeUndefined();
		expect(answerProblem(text, ans(text, { answer: "" }))).toBeUndefined();
		expect(answerProblem(confirm, ans(confirm, { kind: "confirm", answer: "yes" }))).toBeUndefined();
		expect(answerProblem(confirm, ans(confirm, { kind: "confirm", answer: "no" }))).toBeUndefined();
		expect(answerProblem(choice, ans(choice, { kind: "option", answer: "red" }))).toBeUndefined();
		expect(answerProblem(choiceOther, ans(choiceOther, { kind: "other", answer: "green" }))).toBeUndefined();
		expect(answerProblem(multi, ans(multi, { kind: "option", answer: "a, c", values: ["a", "c"] }))).toBeUndefined();
		expect(answerProblem(multiOther, ans(multiOther, { kind: "other", answer: "a, pink", values: ["a", "pink"] }))).toBeUndefined();
		expect(answerProblem(text, ans(text, { answer: "x", note: "n".repeat(LIMITS.note) }))).toBeUndefined();
	});

	it("names what is wrong with a record that does not fit", () => {
		const cases: [Question, unknown, string][] = [
			[text, null, "is not an answer record"],
			[text, "Ada", "is not an answer record"],
			[text, ans(text, { question: "Age?" }), 'answers "Age?", which was not asked'],
			[text, { ...ans(text, {}), id: "u" }, 'carries id "u", the question has "t"'],
			[confirm, ans(confirm, { kind: "confirm", answer: "yes", id: "x" }), 'carries id "x", the question has undefined'],
			[text, ans(text, { answer: 3 as never }), "has no answer text"],
			[text, ans(text, { note: 5 as never }), `note must be text of at most ${LIMITS.note} characters`],
			[text, ans(text, { note: "n".repeat(LIMITS.note + 1) }), `note must be text of at most ${LIMITS.note} characters`],
			[choice, ans(choice, { kind: "option", answer: "red", values: ["red"] }), "has several values, but the question takes one"],
			[text, ans(text, { answer: "x", values: ["x"] }), "has several values, but the question takes one"],
			[text, ans(text, { kind: "option" }), 'is of kind "option", the question takes text'],
			[confirm, ans(confirm, { kind: "text", answer: "yes" }), 'is of kind "text", the question takes yes or no'],
			[confirm, ans(confirm, { kind: "confirm", answer: "maybe" }), "must be yes or no"],
			[choice, ans(choice, { kind: "text", answer: "red" }), 'is of kind "text", the question takes a choice'],
			[choice, ans(choice, { kind: "other", answer: "green" }), '"green" was not offered'],
			[choiceOther, ans(choiceOther, { kind: "other", answer: "  " }), '"  " was not offered'],
			[choiceOther, ans(choiceOther, { kind: "other", answer: "red" }), 'is of kind "other", but every value is an option'],
			[choiceOther, ans(choiceOther, { kind: "option", answer: "green" }), 'is of kind "option", but a value was typed'],
			[multi, ans(multi, { kind: "option", answer: "" }), "must be a non-empty array of option labels"],
			[multi, ans(multi, { kind: "option", answer: "", values: [] }), "must be a non-empty array of option labels"],
			[multi, ans(multi, { kind: "option", answer: "a", values: ["a", 1 as never] }), "must be a non-empty array of option labels"],
			[multi, ans(multi, { kind: "option", answer: "a", values: "a" as never }), "must be a non-empty array of option labels"],
			[multi, ans(multi, { kind: "option", answer: "a, a", values: ["a", "a"] }), "repeats a value"],
			[multi, ans(multi, { kind: "other", answer: "a, z", values: ["a", "z"] }), '"z" was not offered'],
			[multiOther, ans(multiOther, { kind: "other", answer: "a,  ", values: ["a", " "] }), '" " was not offered'],
			[multi, ans(multi, { kind: "option", answer: "a,c", values: ["a", "c"] }), "its text is not its values joined"],
			[multiOther, ans(multiOther, { kind: "option", answer: "a, z", values: ["a", "z"] }), 'is of kind "option", but a value was typed'],
			[multiOther, ans(multiOther, { kind: "other", answer: "a, b", values: ["a", "b"] }), 'is of kind "other", but every value is an option'],
			[choiceOther, ans(choiceOther, { kind: "option", answer: "blue", recommended: false as never }), "recommended must be true or left out"],
			[
				choiceOther,
				ans(choiceOther, { kind: "option", answer: "red", recommended: true }),
				"is marked recommended, but is not the question's recommended option",
			],
			[
				choiceOther,
				ans(choiceOther, { kind: "other", answer: "blue", recommended: true }),
				"is marked recommended, but is not the question's recommended option",
			],
			[choice, ans(choice, { kind: "option", answer: "red", recommended: true }), "is marked recommended, but is not the question's recommended option"],
			[
				multiOther,
				ans(multiOther, { kind: "option", answer: "b, c", values: ["b", "c"], recommended: true }),
				"is marked recommended, but is not the question's recommended option",
			],
		];
		for (const [question, answer, problem] of cases) expect(answerProblem(question, answer as Answer), JSON.stringify(answer)).toBe(problem);
	});

	it("takes a recommendation marked as such only when it is exactly the recommended option", () => {
		expect(answerProblem(choiceOther, ans(choiceOther, { kind: "option", answer: "blue", recommended: true }))).toBeUndefined();
		expect(answerProblem(multiOther, ans(multiOther, { kind: "option", answer: "b", values: ["b"], recommended: true }))).toBeUndefined();
		// Two picked labels whose joined text is the recommended label: still not the recommendation alone.
		const commas: Question = {
			question: "Pair?",
			kind: "choice",
			options: [{ label: "x, y" }, { label: "x" }, { label: "y" }],
			multiSelect: true,
			recommended: "x, y",
		};
		expect(answerProblem(commas, ans(commas, { kind: "option", answer: "x, y", values: ["x, y"], recommended: true }))).toBeUndefined();
		expect(answerProblem(commas, ans(commas, { kind: "option", answer: "x, y", values: ["x", "y"], recommended: true }))).toBe(
			"is marked recommended, but is not the question's recommended option",
		);
	});

	it("takes several values only for a choice that is a multi-select, whatever else the question claims", () => {
		const odd = { ...text, multiSelect: true } as Question;
		expect(answerProblem(odd, ans(odd, { answer: "a, b", values: ["a", "b"] }))).toBe("has several values, but the question takes one");
	});

	it("takes typed values of a multi-select in any place, with options listed", () => {
		expect(answerProblem(multiOther, ans(multiOther, { kind: "other", answer: "x, y", values: ["x", "y"] }))).toBeUndefined();
		expect(answerProblem(multiOther, ans(multiOther, { kind: "option", answer: "c, a", values: ["c", "a"] }))).toBeUndefined();
	});
});

describe("answer records", () => {
	it("answerOf echoes the question's id only when it has one, and values only when given", () => {
		expect(answerOf(text, "text", "Ada")).toEqual({ question: "Name?", answer: "Ada", kind: "text", id: "t" });
		expect(answerOf(confirm, "confirm", "no")).toStrictEqual({ question: "Deploy?", answer: "no", kind: "confirm" });
		expect(answerOf(multi, "option", "a", ["a"])).toStrictEqual({ question: "Tags?", answer: "a", kind: "option", values: ["a"] });
	});

	it("multiAnswer lists picked values in option order, typed ones last, and is of kind other only with typed ones", () => {
		expect(multiAnswer(multi, new Set(["c", "a"]), [])).toStrictEqual({ question: "Tags?", answer: "a, c", kind: "option", values: ["a", "c"] });
		expect(multiAnswer(multiOther, new Set(["b"]), ["z"])).toStrictEqual({ question: "Tags?", answer: "b, z", kind: "other", values: ["b", "z"] });
	});

	it("copyAnswer shares no array with the original and adds a source only when there is one", () => {
		const original: Answer = { question: "Tags?", answer: "a", kind: "option", values: ["a"], sharedWith: ["p"] };
		const copy = copyAnswer(original);
		expect(copy).toStrictEqual(original);
		expect(copy).not.toHaveProperty("source");
		expect(copy.values).not.toBe(original.values);
		expect(copy.sharedWith).not.toBe(original.sharedWith);
		expect(copyAnswer(original, "shared").source).toBe("shared");
		expect(copyAnswer({ ...original, source: "web" }).source).toBe("web");
	});

	it("questionKey tells questions apart by kind, text, options and multi-select, an unset multi-select being a single choice", () => {
		const { multiSelect: _unset, ...single } = choice;
		expect(questionKey(single)).toBe(questionKey(choice));
		expect(questionKey(single)).not.toBe(questionKey({ ...choice, multiSelect: true }));
		expect(questionKey(choice)).not.toBe(questionKey({ ...choice, options: [{ label: "red" }] }));
		expect(questionKey(choice)).not.toBe(questionKey({ ...choice, question: "Color?" }));
		expect(questionKey(text)).not.toBe(questionKey({ ...text, kind: "confirm" }));
		expect(questionKey({ ...choice, allowOther: true, details: "d" })).toBe(questionKey(choice));
	});
});
