/** The result contract (model/result.ts, tool/ask-call.ts): the note's advice, the fields, and the tool result pi gets. */
import { describe, expect, it, vi } from "vitest";
import { makeEnvelope, NEEDS_INPUT_ADVICE, STATUSES } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { toToolResult } from "../../../extensions/checkpoint-bridge/tool/ask-call.ts";

const answer = { question: "Name?", answer: "atlas", kind: "text" as const };

describe("the envelope", () => {
	it("lists the six statuses of the README's result contract", () => {
		expect(STATUSES).toEqual(["ok", "timeout-or-cancelled", "timeout", "cancelled", "no-host", "error"]);
	});

	it("gives every non-ok status the needs_input advice after its reason, and ok only its own reason", () => {
		for (const status of STATUSES.filter((s) => s !== "ok")) {
			expect(makeEnvelope(status, [], "Why.")).toEqual({ status, answers: [], note: `Why. ${NEEDS_INPUT_ADVICE}` });
			expect(makeEnvelope(status, [])).toEqual({ status, answers: [], note: NEEDS_INPUT_ADVICE });
		}
		expect(NEEDS_INPUT_ADVICE).toMatch(/^Do not guess the answer: return a structured needs_input result/);
		expect(makeEnvelope("ok", [answer])).toEqual({ status: "ok", answers: [answer] });
		expect(makeEnvelope("ok", [answer], "Shared.")).toEqual({ status: "ok", answers: [answer], note: "Shared." });
	});

	it("gives the same advice in a fresh copy of the module (each copy of the extension loads its own)", async () => {
		vi.resetModules();
		const copy = await import("../../../extensions/checkpoint-bridge/model/result.ts");
		expect(copy.NEEDS_INPUT_ADVICE).toBe(NEEDS_INPUT_ADVICE);
		expect(copy.NEEDS_INPUT_ADVICE).toMatch(/^Do not guess the answer: return a structured needs_input result/);
		expect(copy.makeEnvelope("timeout", [])).toEqual({ status: "timeout", answers: [], note: NEEDS_INPUT_ADVICE });
	});

	it("carries the request id, the asker and the time waited", () => {
		expect(makeEnvelope("ok", [answer], undefined, { requestId: "r1", asker: "planner", waitedMs: 12 })).toEqual({
			status: "ok",
			answers: [answer],
			requestId: "r1",
			asker: "planner",
			waitedMs: 12,
		});
	});

	it("is the tool result's text, as JSON, and its details", () => {
		const envelope = makeEnvelope("timeout", [answer], "Late.");
		expect(toToolResult(envelope)).toEqual({ content: [{ type: "text", text: JSON.stringify(envelope) }], details: envelope });
	});
});

describe("recommended in the tool result", () => {
	const asked = [
		{ question: "Which database?", kind: "choice" as const, id: "db", options: [{ label: "Postgres" }, { label: "SQLite" }], recommended: "SQLite" },
		{ question: "Which areas?", kind: "choice" as const, options: [{ label: "api" }, { label: "docs" }], multiSelect: true, recommended: "docs" },
		{ question: "Codename?", kind: "choice" as const, options: [{ label: "aurora" }, { label: "borealis" }] },
	];

	it("marks an answer that is exactly its question's recommended option, picked by hand or accepted, and no other", () => {
		const envelope = makeEnvelope("ok", [
			{ question: "Which database?", id: "db", answer: "SQLite", kind: "option", source: "dialog" },
			{ question: "Which areas?", answer: "api, docs", kind: "option", values: ["api", "docs"], source: "dialog" },
			{ question: "Codename?", answer: "aurora", kind: "option", source: "dialog" },
		]);
		const { details, content } = toToolResult(envelope, asked);
		expect(details.answers.map((a) => a.recommended)).toEqual([true, undefined, undefined]);
		expect(JSON.parse(content[0].text)).toEqual(details);
		const docsOnly = makeEnvelope("ok", [{ question: "Which areas?", answer: "docs", kind: "option", values: ["docs"], source: "dialog" }]);
		expect(toToolResult(docsOnly, asked).details.answers[0]?.recommended).toBe(true);
		const typed = makeEnvelope("ok", [{ question: "Which database?", id: "db", answer: "SQLite", kind: "other", source: "dialog" }]);
		expect(toToolResult(typed, asked).details.answers[0]).not.toHaveProperty("recommended");
		// Without the questions, nothing is marked.
		expect(toToolResult(envelope).details).toBe(envelope);
	});
});
