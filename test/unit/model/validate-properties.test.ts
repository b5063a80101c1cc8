/**
 * Property tests of the validator: every valid call accepted as asked, every breach of the contract
 * refused with its place named, and arbitrary input never a throw. The regression at the end pins down
 * a breach these properties found (fixed since).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";
import { anyParams, invalidParams, validParams } from "../support/params-model.ts";
import { propertyRun } from "../support/property-policy.ts";

describe("parameters", () => {
	it("validateAskParams accepts every valid call as asked, keeping its questions in order", () => {
		fc.assert(
			fc.property(validParams, (params) => {
				const result = validateAskParams(params);
				expect(result.ok, JSON.stringify(result)).toBe(true);
				if (!result.ok) return;
				expect(result.questions.map((q) => q.question)).toEqual(params.questions.map((q) => q.question));
				expect(result.timeoutMs).toBe(params.timeoutMs);
			}),
			propertyRun(500),
		);
	});

	it("validateAskParams refuses every breach of the contract and names where it is", () => {
		fc.assert(
			fc.property(invalidParams, ({ params, at }) => {
				const result = validateAskParams(params);
				expect(result.ok).toBe(false);
				if (result.ok) return;
				expect(result.problems.length).toBeGreaterThan(0);
				expect(
					result.problems.some((p) => p.startsWith(at)),
					`${JSON.stringify(result.problems)} should name ${at}`,
				).toBe(true);
			}),
			propertyRun(1_000),
		);
	});

	it("validateAskParams never throws on arbitrary input, and what it accepts keeps the questions asked", () => {
		fc.assert(
			fc.property(anyParams, (raw) => {
				const result = validateAskParams(raw);
				if (result.ok) {
					const asked = (raw as { questions: { question: string }[] }).questions;
					expect(result.questions.map((q) => q.question)).toEqual(asked.map((q) => q.question));
					for (const q of result.questions) expect(q.question.trim()).not.toBe("");
				} else {
					expect(result.problems.length).toBeGreaterThan(0);
					for (const problem of result.problems) expect(problem).toMatch(/^(parameters|questions|timeoutMs)\b.*: \S/);
				}
			}),
			// Kept counterexample: an array with holes ("validateAskParams refuses arrays with holes ...").
			propertyRun<[unknown]>(2_000, [[{ questions: Object.assign(new Array<unknown>(2), { 1: { question: "Name?" } }) }]]),
		);
	});
});

// ---------------------------------------------------------------------------------------------
// Regressions: breaches the properties above found, each pinned down on its own.

describe("regressions found by the properties", () => {
	it("validateAskParams refuses arrays with holes, which JSON never produces but code callers can", () => {
		// Once forEach skipped holes: `[ , ]` passed as zero questions, and a hole among options passed.
		// eslint-disable-next-line no-sparse-arrays
		expect(validateAskParams({ questions: [,] }).ok).toBe(false);
		// eslint-disable-next-line no-sparse-arrays
		expect(validateAskParams({ questions: [{ question: "Pick", options: [, "b", "c"] }] }).ok).toBe(false);
	});
});
