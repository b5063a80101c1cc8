/** The tool schema's descriptions state the limits the validator checks, taken from where those are defined. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Value } from "typebox/value";
import { describe, expect, it } from "vitest";
import { DEFAULT_CALL_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { LIMITS } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";
import { prepareArguments, rawArguments } from "../../../extensions/checkpoint-bridge/tool/arguments.ts";
import { AskParamsSchema } from "../../../extensions/checkpoint-bridge/tool/schema.ts";
import { packagesLoadedWith } from "../support/static-graph.ts";

const SOURCE = readFileSync(join(import.meta.dirname, "../../../extensions/checkpoint-bridge/tool/schema.ts"), "utf8");

/** Every description in the schema, by where it sits. */
function descriptions(schema: unknown, at = "", found: Record<string, string> = {}): Record<string, string> {
	if (typeof schema !== "object" || schema === null) return found;
	const node = schema as Record<string, unknown>;
	if (typeof node.description === "string") found[at] = node.description;
	for (const [key, value] of Object.entries(node)) if (key !== "description") descriptions(value, at ? `${at}.${key}` : key, found);
	return found;
}

describe("the tool schema's descriptions", () => {
	const said = Object.values(descriptions(AskParamsSchema));
	const saying = (start: string) => said.find((d) => d.startsWith(start));

	it("state the validator's limits and the budget's bounds as they are defined", () => {
		expect(saying("Text the human sees")).toContain(`(max ${LIMITS.preview} chars)`);
		expect(saying("A short label")).toContain(`(max ${LIMITS.header} chars)`);
		expect(saying(`${LIMITS.options.min} to ${LIMITS.options.max} choices.`)).toBeDefined();
		expect(saying(`${LIMITS.questions.min} to ${LIMITS.questions.max} questions`)).toBeDefined();
		expect(saying("How long to wait")).toBe(
			`How long to wait for the human in total, in ms (${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}; 0: no limit, wait until answered or dismissed). Default ${DEFAULT_CALL_TIMEOUT_MS}.`,
		);
	});

	it("type none of those numbers themselves: each is built from LIMITS and the budget's bounds", () => {
		const typed = [LIMITS.preview, LIMITS.header, LIMITS.options.max, LIMITS.questions.max, MIN_TIMEOUT_MS, MAX_TIMEOUT_MS, DEFAULT_CALL_TIMEOUT_MS].filter(
			(n) => new RegExp(`(?<![\\w.])${n}(?![\\w])`).test(SOURCE.replace(/_/g, "")),
		);
		expect(typed).toEqual([]);
	});
});

describe("the tool schema's bounds", () => {
	type Bounded = { minItems?: number; maxItems?: number };
	const questions = AskParamsSchema.properties.questions as unknown as Bounded;
	/** The options' array schema (Type.Optional keeps it as is). */
	const optionsArray = AskParamsSchema.properties.questions.items.properties.options as unknown as Bounded;

	it("state how many questions and options a call may have as minItems and maxItems, from LIMITS", () => {
		expect({ minItems: questions.minItems, maxItems: questions.maxItems }).toEqual({ minItems: LIMITS.questions.min, maxItems: LIMITS.questions.max });
		expect({ minItems: optionsArray.minItems, maxItems: optionsArray.maxItems }).toEqual({ minItems: LIMITS.options.min, maxItems: LIMITS.options.max });
	});

	it("a call the schema refuses still reaches the tool's own validator, which names every problem; one it takes passes as it is", () => {
		const tooMany = { questions: Array.from({ length: LIMITS.questions.max + 1 }, (_, i) => ({ question: `q${i}` })) };
		const oneOption = { questions: [{ question: "Which?", options: ["only"] }], background: true };
		for (const call of [tooMany, oneOption, { questions: [] }, {}, { questions: "x" }]) {
			expect(Value.Check(AskParamsSchema, call)).toBe(false);
			const prepared = prepareArguments(call);
			expect(Value.Check(AskParamsSchema, prepared)).toBe(true);
			expect(rawArguments(prepared)).toBe(call);
		}
		const checked = validateAskParams(rawArguments(prepareArguments(oneOption)));
		expect(checked.ok ? [] : checked.problems).toEqual([
			'parameters: "background" is not a parameter (known: questions, timeoutMs, wait)',
			"questions[0].options: has 1, needs 2 to 12 (omit it for a free-text question)",
		]);
		const fine = { questions: [{ question: "Which?", options: ["a", "b"] }] };
		expect(prepareArguments(fine)).toBe(fine);
	});
});

describe("the schema's share of a start", () => {
	it("the MCP server loads the schema without typebox's checker (typebox/value, some 300 modules more at each bin start); the pi tool loads it", () => {
		const root = join(import.meta.dirname, "../../../extensions/checkpoint-bridge");
		expect(packagesLoadedWith(root, "mcp.ts")).toContain("typebox");
		expect(packagesLoadedWith(root, "mcp.ts").filter((name) => name.startsWith("typebox/"))).toEqual([]);
		expect(packagesLoadedWith(root, "tool/ask.ts")).toContain("typebox/value");
	});
});
