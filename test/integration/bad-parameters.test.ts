/**
 * Bad parameters on the real pi runtime: the call gets the envelope (status error, every problem
 * named) and nothing is shown, also when the questions are missing altogether, which pi's own
 * schema check would otherwise refuse with a message of its own.
 */
import { describe, expect, it } from "vitest";
import { type AskArgs, checkedEnvelope, worldPerTest } from "./harness/sdk-sessions.ts";

const world = worldPerTest();

describe("bad parameters through the real pi tool pipeline", () => {
	const cases: [string, unknown, string[]][] = [
		["no questions at all", {}, ["questions: must be an array"]],
		["an empty batch", { questions: [] }, ["questions: at least one question is required"]],
		[
			"an empty question and repeated or empty options",
			{ questions: [{ question: " " }, { question: "Pick", options: ["a", "a", ""] }] },
			["questions[0].question: is empty", 'questions[1].options[1]: duplicates "a"', "questions[1].options[2]: is empty"],
		],
		// More than the schema's maxItems (pi would refuse it with its own text) and a parameter the tool has not.
		[
			"eleven questions and a background flag",
			{ questions: Array.from({ length: 11 }, (_, i) => ({ question: `Question ${i + 1}?` })), background: true },
			["questions: has 11, at most 10 in one call", '"background" is not a parameter'],
		],
		["one option, under the schema's minItems", { questions: [{ question: "Pick", options: ["only"] }] }, ["questions[0].options: has 1, needs 2 to 12"]],
	];

	for (const [what, args, problems] of cases)
		it(`${what}: error naming each problem, nothing shown`, async () => {
			const { ui } = await world.createHost({ name: "main" });
			const child = await world.createChild({ name: "sloppy", ask: args as AskArgs });
			child.start();
			await child.done(10_000);
			const envelope = checkedEnvelope(child);
			expect(envelope.status).toBe("error");
			// Each problem named once: the note says nothing twice.
			for (const problem of problems) expect(envelope.note?.split(problem)).toHaveLength(2);
			expect(envelope.note).toContain("needs_input");
			expect(child.toolRuns[0]?.isError).toBeFalsy();
			expect(ui.dialogs).toHaveLength(0);
		});
});
