import { describe, expect, it } from "vitest";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";

/** Loaded under another module id: a copy of its own, as a child loads the extension. */
const VALIDATE = "../../../extensions/checkpoint-bridge/model/validate.ts";

function passed(raw: unknown, dialogs = false): Question[] {
	const checked = validateAskParams(raw, { dialogs });
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	return checked.questions;
}

describe("a request is validated once, where it enters the process", () => {
	it("questions that passed are taken again as they are, the very array, frozen down to each option", () => {
		const questions = passed({ questions: [{ question: "Go?", options: ["yes", { label: "no", description: "stop" }] }] });
		expect(Object.isFrozen(questions) && Object.isFrozen(questions[0]) && Object.isFrozen(questions[0]!.options)).toBe(true);
		expect(questions[0]!.options!.every((option) => Object.isFrozen(option))).toBe(true);
		expect(() => {
			(questions[0] as { question: string }).question = "Changed?";
		}).toThrow(TypeError);
		expect(passed({ questions })).toBe(questions);
		expect(passed({ questions }, true)).toBe(questions);
		// Taken by a check that allows relayed dialogs, they still pass the tool's own.
		expect(passed({ questions })).toBe(questions);
	});

	it("a copy of passed questions is checked again: what it changed is refused, and the copy is not the original", () => {
		const questions = passed({ questions: [{ question: "Go?", options: ["yes", "no"] }] });
		const copy = structuredClone(questions) as Question[];
		expect(passed({ questions: copy })).not.toBe(copy);
		const bad = structuredClone(questions) as Question[];
		bad[0]!.recommended = "maybe";
		expect(validateAskParams({ questions: bad })).toEqual({ ok: false, problems: ['questions[0].recommended: "maybe" is not one of the options'] });
	});

	it("questions that passed as a relayed dialog are not taken by the tool's check, which refuses the dialog", () => {
		const questions = passed({ questions: [{ question: "Allow rm?", kind: "confirm", dialog: "confirm" }] }, true);
		expect(passed({ questions }, true)).toBe(questions);
		expect(validateAskParams({ questions })).toEqual({ ok: false, problems: ["questions[0].dialog: only the relay of other extensions' dialogs sets it"] });
	});

	it("a copy of passed relayed dialogs, as another process's host gets them, passes that host's full check as it is", () => {
		const questions = passed({ questions: [{ question: "Deploy to?", options: ["staging", "production"], dialog: "select" }] }, true);
		expect(questions[0]).toMatchObject({ multiSelect: false, allowOther: false });
		const copy = JSON.parse(JSON.stringify(questions)) as Question[];
		expect(passed({ questions: copy }, true)).toEqual(questions);
	});

	it("the rest of the parameters is still checked when the questions passed before", () => {
		const questions = passed({ questions: [{ question: "Go?" }] });
		expect(validateAskParams({ questions, timeoutMs: "soon", wait: 1, extra: true })).toEqual({
			ok: false,
			problems: [
				'parameters: "extra" is not a parameter (known: questions, timeoutMs, wait)',
				"timeoutMs: must be a finite number of milliseconds",
				"wait: must be true or false",
			],
		});
	});

	it("another copy of the extension in the process (a child's) knows them too", async () => {
		const questions = passed({ questions: [{ question: "Go?", options: ["yes", "no"] }] });
		const copy = (await import(`${VALIDATE}?copy`)) as typeof import("../../../extensions/checkpoint-bridge/model/validate.ts");
		expect(copy.validateAskParams).not.toBe(validateAskParams);
		const again = copy.validateAskParams({ questions }, { dialogs: true });
		expect(again.ok && again.questions).toBe(questions);
	});
});
