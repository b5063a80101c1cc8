/**
 * The forms open elsewhere (core/answering/elsewhere.ts): what adapters add is sanitised and validated like
 * asker text, an answer reaches the tool only through the one answer check, the tool's verdict is
 * recorded, and the registry is bounded.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import {
	FormsElsewhere,
	formsElsewhere,
	MAX_FORMS_ELSEWHERE,
	type SubmitToTool,
	VERDICT_TIMEOUT_MS,
} from "../../../extensions/checkpoint-bridge/core/answering/elsewhere.ts";
import { UNSAFE_CHARACTER } from "../../../extensions/checkpoint-bridge/model/sanitise.ts";
import { hostileText } from "../support/hostile-text.ts";
import { propertyRun } from "../support/property-policy.ts";

const questions = [
	{ id: "stack", header: "Stack", question: "Which stack?", options: ["TypeScript", "Go"], allowOther: false },
	{ id: "checks", question: "Which checks run?", options: ["Lint", "E2E"], multiSelect: true },
];

describe("forms open elsewhere", () => {
	it("adds, lists and removes forms, telling subscribers each change", () => {
		const forms = new FormsElsewhere();
		const changes: unknown[] = [];
		forms.subscribe((change) => changes.push(change));
		const id = forms.add({ tool: "pi-agent-ask", title: "Release plan", questions, submit: async () => ({ ok: true }) });
		const form = forms.get(id)!;
		expect(form).toMatchObject({ id, tool: "pi-agent-ask", title: "Release plan", answerable: true });
		expect(form.questions.map((q) => q.question)).toEqual(["Which stack?", "Which checks run?"]);
		expect(forms.list()).toEqual([form]);
		expect(forms.remove(id)).toBe(true);
		expect(forms.remove(id)).toBe(false);
		expect(forms.list()).toEqual([]);
		expect(changes).toEqual([
			{ type: "form", form },
			{ type: "form-gone", id },
		]);
	});

	it("a form without a submit, or with questions the tool's validation refuses, is read-only", async () => {
		const forms = new FormsElsewhere();
		const plain = forms.add({ tool: "rpiv-ask-user-question", questions });
		const bad = forms.add({ tool: "pi-agent-ask", questions: [{ question: "Lone?", options: ["only"] }], submit: async () => ({ ok: true }) });
		expect(forms.get(plain)).toMatchObject({ answerable: false });
		expect(forms.get(bad)).toMatchObject({ answerable: false, questions: [] });
		expect(await forms.submit(plain, ["Go", ["Lint"]])).toEqual({
			ok: false,
			code: "read-only",
			reason: "rpiv-ask-user-question takes no answer from outside the terminal: answer it there",
		});
	});

	it("an answer reaches the tool only once the one answer check passes it; the tool's verdict is recorded", async () => {
		const forms = new FormsElsewhere();
		const submit = vi.fn<SubmitToTool>(async () => ({ ok: true }));
		const id = forms.add({ tool: "pi-agent-ask", questions, submit });
		expect(await forms.submit("form-nope", [])).toMatchObject({ ok: false, code: "not_found" });
		expect(await forms.submit(id, "Go")).toMatchObject({ ok: false, code: "invalid_payload" });
		expect(await forms.submit(id, ["Go"])).toMatchObject({ ok: false, code: "invalid_payload", reason: "expected 2 answers, one per question, got 1" });
		// Not offered, and the first question takes no typed text.
		expect(await forms.submit(id, ["Rust", ["Lint"]])).toMatchObject({ ok: false, code: "invalid_answer" });
		expect(submit).not.toHaveBeenCalled();
		expect(forms.get(id)!.verdict).toBeUndefined();
		expect(await forms.submit(id, ["Go", ["Lint", "typed"]])).toEqual({ ok: true });
		expect(submit).toHaveBeenCalledTimes(1);
		const [answers] = submit.mock.calls[0]!;
		expect(answers).toEqual([
			{ id: "stack", question: "Which stack?", answer: "Go", kind: "option", source: "web" },
			{ id: "checks", question: "Which checks run?", answer: "Lint, typed", kind: "other", values: ["Lint", "typed"], source: "web" },
		]);
		expect(forms.get(id)!.verdict).toMatchObject({ ok: true, text: "pi-agent-ask took the answer" });
	});

	it("a refusal, a throw and a silence of the tool are verdicts that say so; the form stays answerable", async () => {
		vi.useFakeTimers();
		try {
			const forms = new FormsElsewhere();
			let next: () => Promise<{ ok: true } | { ok: false; reason: string }> = async () => ({ ok: false, reason: "invalid_answer: \x1b[31mneeds a reviewer" });
			const id = forms.add({ tool: "pi-agent-ask", questions, submit: () => next() });
			expect(await forms.submit(id, ["Go", ["Lint"]])).toEqual({
				ok: false,
				code: "refused",
				reason: "pi-agent-ask refused the answer: invalid_answer: needs a reviewer",
			});
			expect(forms.get(id)).toMatchObject({
				answerable: true,
				verdict: { ok: false, text: "pi-agent-ask refused the answer: invalid_answer: needs a reviewer" },
			});
			next = async () => {
				throw new Error("bus gone");
			};
			expect(await forms.submit(id, ["Go", ["Lint"]])).toMatchObject({ ok: false, code: "refused", reason: "pi-agent-ask refused the answer: bus gone" });
			let signal: AbortSignal | undefined;
			next = () => new Promise(() => {});
			const stalled = forms.add({
				tool: "pi-agent-ask",
				questions,
				submit: (_answers, s) => {
					signal = s;
					return new Promise(() => {});
				},
			});
			const waiting = forms.submit(stalled, ["Go", ["Lint"]]);
			await vi.advanceTimersByTimeAsync(VERDICT_TIMEOUT_MS);
			expect(await waiting).toMatchObject({ ok: false, code: "no-verdict" });
			// The adapter is told to stop listening.
			expect(signal?.aborted).toBe(true);
		} finally {
			vi.useRealTimers();
		}
	});

	it(`keeps at most ${MAX_FORMS_ELSEWHERE} forms: one more drops the oldest`, () => {
		const forms = new FormsElsewhere();
		const ids = Array.from({ length: MAX_FORMS_ELSEWHERE + 1 }, () => forms.add({ tool: "t", questions }));
		expect(forms.list().map((f) => f.id)).toEqual(ids.slice(1));
	});

	it("one registry per process, on the target it is given", () => {
		const target = {};
		expect(formsElsewhere(target)).toBe(formsElsewhere(target));
		expect(formsElsewhere(target)).not.toBe(formsElsewhere({}));
	});

	it("other extensions' text (tool, title, questions, verdicts) is sanitised like asker text", async () => {
		await fc.assert(
			fc.asyncProperty(hostileText(), hostileText(), hostileText(), hostileText(), async (tool, title, question, reason) => {
				const forms = new FormsElsewhere();
				const id = forms.add({
					tool,
					title,
					questions: [{ question: question.trim() || "q", options: ["a", "b"] }],
					submit: async () => ({ ok: false, reason }),
				});
				await forms.submit(id, ["a"]);
				const form = forms.get(id)!;
				const texts = [form.tool, form.title ?? "", form.verdict?.text ?? "", ...form.questions.map((q) => q.question)];
				for (const text of texts) expect(text).not.toMatch(UNSAFE_CHARACTER);
			}),
			propertyRun(200),
		);
	});
});
