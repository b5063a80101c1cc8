import { describe, expect, it } from "vitest";
import { answerProblem, questionKey } from "../../../extensions/checkpoint-bridge/model/answer-check.ts";
import { LIMITS } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { validateAskParams, validateWaitParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";

const problemsOf = (raw: unknown) => {
	const result = validateAskParams(raw);
	if (result.ok) throw new Error("expected a refusal");
	return result.problems;
};

describe("parameter validation", () => {
	it("accepts the v1 form and normalises it", () => {
		expect(
			validateAskParams({
				questions: [
					{ question: "A?", options: ["x", "y"] },
					{ question: "B?", placeholder: "p" },
				],
				timeoutMs: 5_000,
			}),
		).toEqual({
			ok: true,
			questions: [
				{ question: "A?", kind: "choice", options: [{ label: "x" }, { label: "y" }], multiSelect: false, allowOther: true },
				{ question: "B?", kind: "text", placeholder: "p" },
			],
			timeoutMs: 5_000,
		});
	});

	it("accepts the v2 form: ids, headers, details, described options, multi-select, recommended, confirm", () => {
		const result = validateAskParams({
			questions: [
				{
					id: "db",
					header: "Storage",
					question: "Which database?",
					details: "Both are supported.",
					options: [{ label: "Postgres", description: "relational" }, "SQLite"],
					recommended: "SQLite",
					allowOther: false,
				},
				{ id: "targets", question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true },
				{ id: "go", question: "Ship it?", kind: "confirm" },
			],
		});
		expect(result).toEqual({
			ok: true,
			questions: [
				{
					id: "db",
					header: "Storage",
					question: "Which database?",
					details: "Both are supported.",
					kind: "choice",
					options: [{ label: "Postgres", description: "relational" }, { label: "SQLite" }],
					recommended: "SQLite",
					multiSelect: false,
					allowOther: false,
				},
				{
					id: "targets",
					question: "Which targets?",
					kind: "choice",
					options: [{ label: "linux" }, { label: "mac" }, { label: "windows" }],
					multiSelect: true,
					allowOther: true,
				},
				{ id: "go", question: "Ship it?", kind: "confirm" },
			],
		});
	});

	it("requires 1 to 10 questions", () => {
		expect(problemsOf({ questions: [] })).toEqual(["questions: at least one question is required"]);
		expect(problemsOf({ questions: Array.from({ length: 11 }, (_, i) => ({ question: `Q${i}?` })) })).toEqual(["questions: has 11, at most 10 in one call"]);
		expect(problemsOf({})).toEqual(["questions: must be an array"]);
		expect(problemsOf(null)).toEqual(['parameters: must be an object with a "questions" array']);
	});

	it("requires 2 to 12 options, none empty or repeated", () => {
		expect(problemsOf({ questions: [{ question: "A", options: ["only"] }] })).toEqual([
			"questions[0].options: has 1, needs 2 to 12 (omit it for a free-text question)",
		]);
		expect(problemsOf({ questions: [{ question: "A", options: Array.from({ length: 13 }, (_, i) => `o${i}`) }] })).toEqual([
			"questions[0].options: has 13, needs 2 to 12 (omit it for a free-text question)",
		]);
		expect(problemsOf({ questions: [{ question: "A", options: ["a", "", "a", { label: 3 }, 4] }] })).toEqual([
			"questions[0].options[1]: is empty",
			'questions[0].options[2]: duplicates "a"',
			"questions[0].options[3].label: must be a string",
			"questions[0].options[4]: must be a string or a {label, description} object",
		]);
	});

	it("bounds every text", () => {
		const long = (n: number) => "x".repeat(n + 1);
		expect(
			problemsOf({
				questions: [
					{
						question: long(LIMITS.question),
						header: long(LIMITS.header),
						details: long(LIMITS.details),
						placeholder: long(LIMITS.placeholder),
						id: long(LIMITS.id),
					},
					{ question: "B", options: [long(LIMITS.label), { label: "ok", description: long(LIMITS.description) }] },
				],
			}),
		).toEqual([
			`questions[0].question: is ${LIMITS.question + 1} characters, at most ${LIMITS.question}`,
			`questions[0].id: is ${LIMITS.id + 1} characters, at most ${LIMITS.id}`,
			`questions[0].header: is ${LIMITS.header + 1} characters, at most ${LIMITS.header}`,
			`questions[0].details: is ${LIMITS.details + 1} characters, at most ${LIMITS.details}`,
			`questions[0].placeholder: is ${LIMITS.placeholder + 1} characters, at most ${LIMITS.placeholder}`,
			`questions[1].options[0]: label is ${LIMITS.label + 1} characters, at most ${LIMITS.label}`,
			`questions[1].options[1].description: is ${LIMITS.description + 1} characters, at most ${LIMITS.description}`,
		]);
	});

	it("checks that the v2 fields fit together", () => {
		expect(
			problemsOf({
				questions: [
					{ question: "A", options: ["x", "y"], recommended: "z" },
					{ question: "B", kind: "confirm", options: ["yes", "no"] },
					{ question: "C", multiSelect: true, allowOther: false, recommended: "x" },
					{ question: "D", kind: "maybe" },
					{ id: "same", question: "E" },
					{ id: "same", question: "F", multiSelect: "yes", options: ["p", "q"] },
				],
			}),
		).toEqual([
			'questions[0].recommended: "z" is not one of the options',
			"questions[1].options: a confirm question has its own yes/no options",
			"questions[2].multiSelect: only applies to a question with options",
			"questions[2].allowOther: only applies to a question with options",
			"questions[2].recommended: only applies to a question with options",
			'questions[3].kind: must be "confirm" (or "choice" / "text", which the options imply) or left out',
			"questions[5].multiSelect: must be true or false",
		]);
		expect(
			problemsOf({
				questions: [
					{ id: "same", question: "E" },
					{ id: "same", question: "F" },
				],
			}),
		).toEqual(['questions: id "same" is used more than once']);
	});

	it("names every problem at once: empty text, bad types, a bad timeout", () => {
		expect(problemsOf({ questions: [{ question: "  " }, "nope", { question: 3, placeholder: 4 }], timeoutMs: "soon" })).toEqual([
			"questions[0].question: is empty",
			'questions[1]: must be an object with a "question" text',
			"questions[2].question: must be a string",
			"questions[2].placeholder: must be a string",
			"timeoutMs: must be a finite number of milliseconds",
		]);
	});
});

describe("previews", () => {
	it(`keeps an option's preview of up to ${LIMITS.preview} characters`, () => {
		const preview = "p".repeat(LIMITS.preview);
		const result = validateAskParams({ questions: [{ question: "A?", options: [{ label: "x", preview }, "y"] }] });
		expect(result.ok && result.questions[0]?.options).toEqual([{ label: "x", preview }, { label: "y" }]);
	});

	it("keeps a preview's line breaks and removes what a terminal would interpret", () => {
		const result = validateAskParams({
			questions: [{ question: "A?", options: [{ label: "x", preview: "line 1\r\n\x1b[31mline 2\x1b[0m\n\tindented" }, "y"] }],
		});
		expect(result.ok && result.questions[0]?.options?.[0]?.preview).toBe("line 1\nline 2\n indented");
	});

	it("names a preview that is too long or not text", () => {
		expect(
			problemsOf({
				questions: [
					{
						question: "A?",
						options: [
							{ label: "x", preview: "p".repeat(LIMITS.preview + 1) },
							{ label: "y", preview: 3 },
						],
					},
				],
			}),
		).toEqual([
			`questions[0].options[0].preview: is ${LIMITS.preview + 1} characters, at most ${LIMITS.preview}`,
			"questions[0].options[1].preview: must be a string",
		]);
	});
});

describe("each refusal named, each limit exact", () => {
	const labels = (n: number) => Array.from({ length: n }, (_, i) => `option ${i + 1}`);

	it("keeps line breaks in details and previews only; a header or description gets spaces", () => {
		const result = validateAskParams({
			questions: [{ question: "A?", header: "one\ntwo", details: "one\ntwo", options: [{ label: "x", description: "one\ntwo", preview: "one\ntwo" }, "y"] }],
		});
		expect(result).toMatchObject({
			ok: true,
			questions: [{ header: "one two", details: "one\ntwo", options: [{ label: "x", description: "one two", preview: "one\ntwo" }, { label: "y" }] }],
		});
	});

	it(`takes exactly ${LIMITS.options.max} options and a label of exactly ${LIMITS.label} characters`, () => {
		expect(validateAskParams({ questions: [{ question: "A?", options: labels(LIMITS.options.max) }] }).ok).toBe(true);
		expect(problemsOf({ questions: [{ question: "A?", options: labels(LIMITS.options.max + 1) }] })).toEqual([
			`questions[0].options: has ${LIMITS.options.max + 1}, needs ${LIMITS.options.min} to ${LIMITS.options.max} (omit it for a free-text question)`,
		]);
		const longest = "x".repeat(LIMITS.label);
		expect(validateAskParams({ questions: [{ question: "A?", options: [longest, "y"] }] })).toMatchObject({
			ok: true,
			questions: [{ options: [{ label: longest }, { label: "y" }] }],
		});
		expect(problemsOf({ questions: [{ question: "A?", options: [`${longest}x`, "y"] }] })).toEqual([
			`questions[0].options[0]: label is ${LIMITS.label + 1} characters, at most ${LIMITS.label}`,
		]);
	});

	it("refuses an id of spaces, a share other than any or origin, a choice without options, a text question with options", () => {
		expect(problemsOf({ questions: [{ question: "A?", id: "   " }] })).toEqual(["questions[0].id: is empty"]);
		expect(problemsOf({ questions: [{ question: "A?", share: "everyone" }] })).toEqual(['questions[0].share: must be "any" or "origin" (the default)']);
		expect(validateAskParams({ questions: [{ question: "A?", share: "origin" }] })).toMatchObject({ ok: true, questions: [{ question: "A?" }] });
		expect(problemsOf({ questions: [{ question: "A?", kind: "choice" }] })).toEqual(["questions[0].options: a choice needs options"]);
		expect(problemsOf({ questions: [{ question: "A?", kind: "text", options: ["x", "y"] }] })).toEqual([
			"questions[0].options: a text question has no options",
		]);
	});

	it("leaves out every optional field it was not given: no key at all, not one holding undefined", () => {
		expect(validateAskParams({ questions: [{ question: "A?" }, { question: "B?", options: [{ label: "x" }, "y"] }] })).toStrictEqual({
			ok: true,
			questions: [
				{ question: "A?", kind: "text" },
				{ question: "B?", kind: "choice", options: [{ label: "x" }, { label: "y" }], multiSelect: false, allowOther: true },
			],
		});
	});

	it("names an id used three times once", () => {
		expect(
			problemsOf({
				questions: [
					{ question: "A?", id: "same" },
					{ question: "B?", id: "same" },
					{ question: "C?", id: "same" },
				],
			}),
		).toEqual(['questions: id "same" is used more than once']);
	});

	it("refuses a timeout that is not a finite number, and only then", () => {
		for (const timeoutMs of ["5000", Number.NaN, Number.POSITIVE_INFINITY])
			expect(problemsOf({ questions: [{ question: "A?" }], timeoutMs })).toEqual(["timeoutMs: must be a finite number of milliseconds"]);
		expect(validateAskParams({ questions: [{ question: "A?" }], timeoutMs: 1_000 })).toMatchObject({ ok: true, timeoutMs: 1_000 });
	});

	it("takes wait as true or false, and refuses anything else", () => {
		expect(validateAskParams({ questions: [{ question: "A?" }], wait: false })).toMatchObject({ ok: true, wait: false });
		expect(validateAskParams({ questions: [{ question: "A?" }] })).not.toHaveProperty("wait");
		expect(problemsOf({ questions: [{ question: "A?" }], wait: "no" })).toEqual(["wait: must be true or false"]);
	});

	it("refuses an unknown parameter by name instead of ignoring it", () => {
		expect(problemsOf({ questions: [{ question: "A?" }], background: true, timeout: 5 })).toEqual([
			'parameters: "background" is not a parameter (known: questions, timeoutMs, wait)',
			'parameters: "timeout" is not a parameter (known: questions, timeoutMs, wait)',
		]);
	});

	it("names an unknown parameter once, cut short, and at most eight of them: a megabyte of name is not echoed", () => {
		const long = `background${"x".repeat(1_000_000)}`;
		const problems = problemsOf({ questions: [{ question: "A?" }], [long]: true });
		expect(problems).toEqual([`parameters: "${"backgroundx".padEnd(39, "x")}…" is not a parameter (known: questions, timeoutMs, wait)`]);
		const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`extra${i}`, i]));
		const named = problemsOf({ questions: [{ question: "A?" }], ...many });
		expect(named).toHaveLength(9);
		expect(named.at(-1)).toBe("parameters: 12 more are not parameters either");
		// Exactly eight are all named, with no count of more after them.
		const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`extra${i}`, i]));
		expect(problemsOf({ questions: [{ question: "A?" }], ...eight })).toHaveLength(8);
	});
});

describe("relayed dialogs (the relay's own questions, validated with dialogs: true)", () => {
	const relayedProblems = (question: Record<string, unknown>) => {
		const result = validateAskParams({ questions: [question] }, { dialogs: true });
		if (result.ok) throw new Error("expected a refusal");
		return result.problems;
	};

	it("names a dialog it does not know, and each of the five it does", () => {
		for (const dialog of ["bogus", 3, "toString"])
			expect(relayedProblems({ question: "A?", dialog })).toEqual(["questions[0].dialog: must be one of select, confirm, input, editor, custom"]);
	});

	it("a child's screen is a confirm with its token as id, never the same question as another child's, answered only where it is drawn", () => {
		const checked = validateAskParams(
			{ questions: [{ question: "question.ts shows its own screen in the terminal", kind: "confirm", dialog: "custom", id: "tok1" }] },
			{ dialogs: true },
		);
		if (!checked.ok) throw new Error(checked.problems.join("; "));
		const [screen] = checked.questions;
		expect(screen).toEqual({ question: "question.ts shows its own screen in the terminal", kind: "confirm", dialog: "custom", id: "tok1" });
		expect(relayedProblems({ question: "A?", dialog: "custom", options: ["a"] })).toEqual(["questions[0].dialog: a relayed custom is a confirm question"]);
		// Two children's screens with the same text are two questions.
		expect(questionKey(screen!)).not.toBe(questionKey({ ...screen!, id: "tok2" }));
		expect(questionKey({ question: "Go?", kind: "confirm", id: "a" })).toBe(questionKey({ question: "Go?", kind: "confirm", id: "b" }));
		// Given in the terminal ("dialog"): taken; from the page or another extension: refused.
		const yes = { question: screen!.question, id: "tok1", answer: "yes", kind: "confirm" as const };
		expect(answerProblem(screen!, { ...yes, source: "dialog" })).toBeUndefined();
		for (const source of [undefined, "web", "outside"] as const)
			expect(answerProblem(screen!, { ...yes, ...(source ? { source } : {}) })).toBe(
				"answers a child's own screen, which is answered in the host's terminal only",
			);
	});

	it("starts only a relayed editor or input with text", () => {
		expect(relayedProblems({ question: "A?", dialog: "select", options: ["x"], initial: "x" })).toEqual([
			"questions[0].initial: only a relayed editor or input starts with text",
		]);
		expect(validateAskParams({ questions: [{ question: "A?", dialog: "input", initial: "x" }] }, { dialogs: true })).toMatchObject({ ok: true });
	});

	it("refuses a dialog whose question is of another kind", () => {
		expect(relayedProblems({ question: "A?", dialog: "confirm", options: ["x"] })).toContain("questions[0].dialog: a relayed confirm is a confirm question");
		expect(relayedProblems({ question: "A?", dialog: "input", options: ["x"] })).toContain("questions[0].dialog: a relayed input is a text question");
	});

	it("takes a relayed select's options only as plain labels: no description, no preview, on any option", () => {
		const plain = "questions[0].options: a relayed select's options are plain labels";
		for (const options of [
			["x", { label: "y", description: "d" }],
			[{ label: "x", preview: "p" }],
			[{ label: "x" }, { label: "y", description: "d", preview: "p" }],
		])
			expect(relayedProblems({ question: "A?", dialog: "select", options })).toEqual([plain]);
		expect(validateAskParams({ questions: [{ question: "A?", dialog: "select", options: ["x", { label: "y" }] }] }, { dialogs: true })).toMatchObject({
			ok: true,
		});
	});
});

describe("the question count", () => {
	it(`takes exactly ${LIMITS.questions.max} questions, and names the count beyond`, () => {
		const questions = (n: number) => Array.from({ length: n }, (_, i) => ({ question: `Q${i}?` }));
		expect(validateAskParams({ questions: questions(LIMITS.questions.max) })).toMatchObject({ ok: true });
		expect(problemsOf({ questions: questions(LIMITS.questions.max + 1) })).toEqual([
			`questions: has ${LIMITS.questions.max + 1}, at most ${LIMITS.questions.max} in one call`,
		]);
	});
});

describe("a wait's parameters (pi's wait_for_host_answers and the MCP server's)", () => {
	it("takes the ids and the budget, each when given; none at all is a wait for every open request", () => {
		expect(validateWaitParams(undefined)).toStrictEqual({ ok: true });
		expect(validateWaitParams({})).toStrictEqual({ ok: true });
		expect(validateWaitParams({ requestIds: ["a", "b"], timeoutMs: 2_000 })).toStrictEqual({ ok: true, requestIds: ["a", "b"], timeoutMs: 2_000 });
		expect(validateWaitParams({ timeoutMs: 0 })).toStrictEqual({ ok: true, timeoutMs: 0 });
	});

	it("names every problem as the ask tool does: a non-object, unknown names (eight, the rest counted), ids that are not strings, a budget that is not a number", () => {
		for (const raw of [null, "ids", 5, ["a"]]) expect(validateWaitParams(raw)).toEqual({ ok: false, problems: ["parameters: must be an object"] });
		expect(validateWaitParams({ requestIds: ["a", 1], timeoutMs: Number.NaN })).toEqual({
			ok: false,
			problems: ["requestIds: must be an array of request ids (strings)", "timeoutMs: must be a finite number of milliseconds"],
		});
		expect(validateWaitParams({ requestIds: "a" })).toMatchObject({ ok: false, problems: ["requestIds: must be an array of request ids (strings)"] });
		const unknown = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`p${i}`, i]));
		const refused = validateWaitParams({ ...unknown, requestIds: [] });
		expect(refused).toEqual({
			ok: false,
			problems: [
				...Array.from({ length: 8 }, (_, i) => `parameters: "p${i}" is not a parameter (known: requestIds, timeoutMs)`),
				"parameters: 3 more are not parameters either",
			],
		});
	});
});
