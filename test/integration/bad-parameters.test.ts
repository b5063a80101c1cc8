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
	];

	for (const [what, args, problems] of cases)
		it(`${what}: error naming each problem, nothing shown`, async () => {
			const { ui } = await world.createHost({ name: "main" });
			const child = await world.createChild({ name: "sloppy", ask: args as AskArgs });
			child.start();
			await child.done(10_000);
			const envelope = checkedEnvelope(child);
			expect(envelope.status).toBe("error");
			for (const problem of problems) expect(envelope.note).toContain(problem);
			expect(envelope.note).toContain("needs_input");
			expect(child.toolRuns[0]?.isError).toBeFalsy();
			expect(ui.dialogs).toHaveLength(0);
		});
});
