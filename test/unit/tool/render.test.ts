import { describe, expect, it } from "vitest";
import { sessionAsker } from "../../../extensions/checkpoint-bridge/core/shared/identity.ts";
import { makeEnvelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { askTool } from "../../../extensions/checkpoint-bridge/tool/ask.ts";
import type { AskToolParts } from "../../../extensions/checkpoint-bridge/tool/ask-call.ts";
import { type RenderTheme, renderCallView, renderResultView } from "../../../extensions/checkpoint-bridge/tool/render.ts";

const plain: RenderTheme = { fg: (_c, t) => t, bold: (t) => t };
const tagged: RenderTheme = { fg: (c, t) => `<${c}>${t}</${c}>`, bold: (t) => `*${t}*` };
const answers = ["one", "two", "three", "four"].map((a, i) => ({ question: `Question ${i + 1}?`, answer: a, kind: "text" as const }));

describe("transcript rendering", () => {
	it("shows who asks and each question with its options", () => {
		const view = renderCallView({ questions: [{ question: "Which naming?", options: ["camel", "snake"] }, { question: "Name?" }] }, "planner", plain);
		expect(view.render(80)).toEqual(["ask the human · from planner · 2 questions", "  1. Which naming? [camel | snake]", "  2. Name?"]);
	});

	it("names no asker for a call drawn before its session started (a resumed session's calls), and the session once it has", () => {
		const me = sessionAsker(() => "reviewer");
		const tool = askTool({ asker: me.identity } as unknown as AskToolParts);
		const title = () =>
			(tool.renderCall!({ questions: [{ question: "Ship?" }] } as never, plain as never, {} as never) as { render(width: number): readonly string[] }).render(
				80,
			)[0];
		expect(title()).toBe("ask the human · 1 question");
		me.started({ sessionId: "0198-resumed-session", systemPrompt: () => undefined, main: () => false });
		expect(title()).toBe("ask the human · from reviewer · 1 question");
	});

	it("shows v2 option objects by their labels", () => {
		const view = renderCallView({ questions: [{ question: "Areas?", options: [{ label: "api" }, "cli", { label: "docs", description: "d" }] }] }, "p", plain);
		expect(view.render(80)[1]).toBe("  1. Areas? [api | cli | docs]");
	});

	it("shows the status and the first answers when compact, all of them and the note when expanded", () => {
		const result = { details: makeEnvelope("timeout", answers, "Budget ran out.", { asker: "planner", waitedMs: 1500 }) };
		const compact = renderResultView(result, { expanded: false, isPartial: false }, plain).render(200);
		expect(compact[0]).toBe("timeout · 4 answered · planner · 1.5 s");
		expect(compact.slice(1, 5)).toEqual(["  Question 1? → one", "  Question 2? → two", "  Question 3? → three", "  … 1 more (expand to see all)"]);
		expect(compact[5]).toContain("Budget ran out.");
		const expanded = renderResultView(result, { expanded: true, isPartial: false }, plain).render(200);
		expect(expanded).toContain("  Question 4? → four");
		expect(expanded.join("\n")).toContain("needs_input");
	});

	it("colours the status line and keeps every line within the width", () => {
		const result = { details: makeEnvelope("ok", [{ question: "A very long question ".repeat(10), answer: "x".repeat(300), kind: "text" }]) };
		expect(renderResultView(result, { expanded: false, isPartial: false }, tagged).render(40)[0]).toBe("*<success>ok · 1 answered</success>*");
		for (const expanded of [false, true])
			for (const line of renderResultView(result, { expanded, isPartial: false }, plain).render(40)) expect([...line].length).toBeLessThanOrEqual(40);
		for (const line of renderCallView({ questions: [{ question: "q".repeat(100) }] }, "p", plain).render(30)) expect(line.length).toBeLessThanOrEqual(30);
	});

	it("shows the streamed progress while the call waits", () => {
		const view = renderResultView({ content: [{ type: "text", text: "queued, position 2" }] }, { expanded: false, isPartial: true }, plain);
		expect(view.render(80)).toEqual(["queued, position 2"]);
	});
});
