/** The request's mail as it reads: its subject cut at a word, never inside the pid; its body the question, its options in shown order, then how to reply. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import { validateAskParams } from "../../../../extensions/checkpoint-bridge/model/validate.ts";
import { cutAtWord, requestBody, subjectOf } from "../../../../extensions/checkpoint-bridge/surfaces/mail/compose.ts";

const questions = (input: QuestionInput[]) => {
	const checked = validateAskParams({ questions: input });
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	return checked.questions;
};

describe("the request's mail", () => {
	it("names the asker in the subject whole, pid included, and cuts a longer one at a word, never inside a parenthesis", () => {
		const one = questions([{ question: "Which database?", options: ["Postgres", "SQLite"] }]);
		expect(subjectOf({ requestId: "r", asker: "subagent-checkpoint-planner in proj (pid 7334)", questions: one })).toBe(
			"[checkpoint-bridge] subagent-checkpoint-planner in proj (pid 7334) asks: Which database?",
		);
		expect(cutAtWord("subagent-checkpoint-planner in my-project (pid 7334)", 46)).toBe("subagent-checkpoint-planner in my-project…");
		expect(cutAtWord("a-single-word-far-longer-than-the-room", 10)).toBe("a-single-…");
		fc.assert(
			fc.property(
				fc.array(fc.stringMatching(/^[a-z-]{1,12}$/), { maxLength: 8 }),
				fc.integer({ min: 1, max: 99_999 }),
				fc.integer({ min: 8, max: 80 }),
				(words, pid, max) => {
					const cut = cutAtWord(`${words.join(" ")} (pid ${pid})`, max);
					expect(cut.length).toBeLessThanOrEqual(max);
					// A parenthesis is either whole or gone.
					expect(cut.includes("(")).toBe(cut.includes(`(pid ${pid})`));
				},
			),
		);
	});

	it("reads as the question, its options in the order every surface shows, then how to reply; the one-tap links after, as the other way", () => {
		const request = {
			requestId: "r",
			asker: "planner",
			questions: questions([{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }]),
		};
		expect(requestBody(request, undefined)).toBe(
			[
				"planner asks:",
				"",
				"Which database?",
				"   1) SQLite (recommended)",
				"   2) Postgres",
				"   or write your own answer",
				"",
				"To answer, reply to this mail with an option's number or its text, yes or no, or your own words.",
				"Only the text above the quoted mail counts; your signature is ignored.",
			].join("\n"),
		);
		const withLinks = requestBody(request, { buttons: [{ label: "SQLite", answer: "https://box/a/x" }], link: "https://box/r/y/" } as never);
		expect(withLinks).toMatch(
			/ignored\.\n\nOr answer in one tap \(each link opens a page with one button to press\):\n {3}SQLite: https:\/\/box\/a\/x\n\nOr open the request: https:\/\/box\/r\/y\/$/,
		);
	});
});
