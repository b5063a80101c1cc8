/**
 * The form under random keys: whatever the human (or a terminal's odd escape sequences) sends, the
 * form never fails, never draws wider than the terminal, and every answer it holds is one the
 * relay's answer check accepts for its question.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveAnswer } from "../../../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import { form, KEY } from "./support.ts";

const request = [
	{
		id: "db",
		header: "Storage",
		question: "Which database?",
		options: [{ label: "Postgres", preview: "CREATE TABLE t (\n\tid int\n);" }, "SQLite"],
		recommended: "SQLite",
	},
	{ id: "targets", question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true },
	{ id: "strict", question: "Which one, no Other?", options: ["a", "b"], allowOther: false },
	{ id: "name", question: "Project name?" },
	{ id: "go", question: "Ship it now?", kind: "confirm" as const },
];

const key = fc.oneof(
	fc.constantFrom(...Object.values(KEY)),
	fc.string({ minLength: 1, maxLength: 3 }),
	fc.constantFrom("漢", "🚀", "\x1b[1;5A", "\x1b[200~pasted\ttext\x1b[201~", "\x03", "\x00"),
);

describe("random keys", () => {
	it("never fail, never draw wider than the terminal, and hold only answers the answer check accepts", () => {
		fc.assert(
			fc.property(fc.array(key, { maxLength: 40 }), fc.integer({ min: 20, max: 140 }), (keys, width) => {
				const f = form(request);
				for (const data of keys) {
					if (f.ended.length > 0) break;
					f.component.handleInput(data);
					for (const line of f.component.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
				}
				expect(f.failures).toEqual([]);
				f.model.answers.forEach((answer, i) => {
					if (!answer) return;
					const value = answer.values
						? { values: answer.values, ...(answer.note ? { note: answer.note } : {}) }
						: { answer: answer.answer, ...(answer.note ? { note: answer.note } : {}) };
					expect(resolveAnswer(f.model.questions[i]!.question, value, "answer")).toEqual({ ok: true, answer });
				});
				if (f.ended.includes("submit")) expect(f.model.unanswered).toEqual([]);
				f.component.dispose();
			}),
			{ numRuns: 100 },
		);
	}, 60_000);
});
