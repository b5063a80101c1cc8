/**
 * pi-agent-ask's forms open in the host's terminal, fed to the forms open elsewhere from its events
 * on pi's own event bus: `:started` adds a card, an answer goes out as `:submit` (by option value)
 * and `:submit-result` is the verdict, `:completed` removes it. The end-to-end proof (the TUI in
 * tmux, the page in Chromium) is test/integration/pi-agent-ask.test.ts.
 */
import { createEventBus } from "@earendil-works/pi-coding-agent";
import { describe, expect, it, vi } from "vitest";
import { FormsElsewhere, MAX_FORMS_ELSEWHERE } from "../../../extensions/checkpoint-bridge/core/answering/elsewhere.ts";
import { PI_AGENT_ASK, piAgentAskOnPage } from "../../../extensions/checkpoint-bridge/interop/pi-agent-ask-page.ts";

const started = (flowId: string, extra: Record<string, unknown> = {}) => ({
	version: 1,
	flowId,
	toolCallId: "call-1",
	source: "tool",
	title: "Release \x1b[2Jplan",
	questions: [
		{
			id: "stack",
			label: "Stack",
			prompt: "Which stack?",
			type: "single",
			options: [
				{ label: "TypeScript", value: "ts" },
				{ label: "Go", value: "go", recommended: true },
			],
		},
		{
			id: "checks",
			prompt: "Which checks run?",
			type: "multi",
			options: [
				{ label: "Lint", value: "lint" },
				{ label: "E2E", value: "e2e" },
			],
		},
	],
	createdAt: 1,
	...extra,
});

function setup() {
	const bus = createEventBus();
	const forms = new FormsElsewhere({ verdictTimeoutMs: 200 });
	const stop = piAgentAskOnPage(bus, forms);
	const submits: any[] = [];
	bus.on("pi-agent-ask:submit", (data) => submits.push(data));
	return { bus, forms, stop, submits };
}

describe("pi-agent-ask's forms in the host's terminal, on the page", () => {
	it(":started adds an answerable card (title and questions sanitised, recommended first); :completed removes it", () => {
		const { bus, forms } = setup();
		bus.emit("pi-agent-ask:started", started("flow-1"));
		const [form] = forms.list();
		expect(form).toMatchObject({ tool: PI_AGENT_ASK, title: "Release plan", answerable: true });
		expect(form!.questions.map((q) => [q.header, q.question, q.recommended, q.multiSelect])).toEqual([
			["Stack", "Which stack?", "Go", false],
			["checks", "Which checks run?", undefined, true],
		]);
		// Another flow's end, and an end without a flow id, change nothing.
		bus.emit("pi-agent-ask:completed", { version: 1, flowId: "flow-2", result: {} });
		bus.emit("pi-agent-ask:completed", { version: 1 });
		expect(forms.list()).toHaveLength(1);
		bus.emit("pi-agent-ask:completed", { version: 1, flowId: "flow-1", source: "tool", result: {}, completedAt: 2 });
		expect(forms.list()).toEqual([]);
	});

	it("an answer goes out as one :submit naming option values and typed text; its :submit-result is the verdict", async () => {
		const { bus, forms, submits } = setup();
		bus.emit("pi-agent-ask:started", started("flow-1"));
		const id = forms.list()[0]!.id;
		// pi-agent-ask answers at once, and a result for another request or flow is not ours.
		bus.on("pi-agent-ask:submit", (data: any) => {
			bus.emit("pi-agent-ask:submit-result", { version: 1, requestId: "someone-else", flowId: data.flowId, ok: false, error: "invalid_answer", message: "no" });
			bus.emit("pi-agent-ask:submit-result", { version: 1, requestId: data.requestId, flowId: "flow-9", ok: false, error: "flow_not_found", message: "no" });
			bus.emit("pi-agent-ask:submit-result", { version: 1, requestId: data.requestId, flowId: data.flowId, ok: true });
		});
		expect(await forms.submit(id, ["Go", ["E2E", "smoke"]])).toEqual({ ok: true });
		expect(submits).toHaveLength(1);
		expect(submits[0]).toMatchObject({
			version: 1,
			flowId: "flow-1",
			response: { kind: "answer", mode: "submit", answers: { stack: { values: ["go"] }, checks: { values: ["e2e"], customText: "smoke" } } },
		});
		expect(submits[0].requestId).toMatch(/^checkpoint-bridge-/);
		expect(forms.get(id)!.verdict).toMatchObject({ ok: true });
	});

	it("a refused submit's reason is the verdict and the card stays; no verdict at all says so", async () => {
		const { bus, forms } = setup();
		bus.emit("pi-agent-ask:started", started("flow-1"));
		const id = forms.list()[0]!.id;
		const off = bus.on("pi-agent-ask:submit", (data: any) =>
			bus.emit("pi-agent-ask:submit-result", {
				version: 1,
				requestId: data.requestId,
				flowId: data.flowId,
				ok: false,
				error: "invalid_answer",
				message: "stack needs a reviewer",
			}),
		);
		expect(await forms.submit(id, ["Go", ["Lint"]])).toEqual({
			ok: false,
			code: "refused",
			reason: "pi-agent-ask refused the answer: invalid_answer: stack needs a reviewer",
		});
		expect(forms.get(id)).toMatchObject({ answerable: true });
		off();
		expect(await forms.submit(id, ["Go", ["Lint"]])).toMatchObject({ ok: false, code: "no-verdict" });
	});

	it("ignores :started of another version, without a flow id, or twice for one flow; a form the relay cannot show waits read-only", () => {
		const { bus, forms } = setup();
		bus.emit("pi-agent-ask:started", started("flow-1", { version: 2 }));
		bus.emit("pi-agent-ask:started", started(""));
		bus.emit("pi-agent-ask:started", "nonsense");
		bus.emit("pi-agent-ask:started", started("x".repeat(500)));
		expect(forms.list()).toEqual([]);
		bus.emit("pi-agent-ask:started", started("flow-1"));
		bus.emit("pi-agent-ask:started", started("flow-1"));
		expect(forms.list()).toHaveLength(1);
		bus.emit("pi-agent-ask:started", started("flow-2", { questions: [{ id: "lone", prompt: "Lone?", options: [{ label: "only", value: "o" }] }] }));
		expect(forms.list()[1]).toMatchObject({ answerable: false, questions: [] });
	});

	it("the stop removes its cards and stops listening", () => {
		const { bus, forms, stop } = setup();
		bus.emit("pi-agent-ask:started", started("flow-1"));
		stop();
		expect(forms.list()).toEqual([]);
		bus.emit("pi-agent-ask:started", started("flow-2"));
		expect(forms.list()).toEqual([]);
	});
});

describe("forms that never complete (issue 30, finding 9)", () => {
	it("1,000 started forms without a :completed leave the adapter holding no more than the forms keep (16)", () => {
		const { bus, forms, stop } = setup();
		for (let i = 0; i < 1_000; i++) bus.emit("pi-agent-ask:started", started(`never-${i}`));
		expect(forms.list()).toHaveLength(MAX_FORMS_ELSEWHERE);
		// The stop removes every form the adapter still holds: what it holds is what the forms show, the newest.
		const removed = vi.spyOn(forms, "remove");
		stop();
		expect(removed).toHaveBeenCalledTimes(MAX_FORMS_ELSEWHERE);
		expect(forms.list()).toEqual([]);
		// A form dropped long ago that completes now touches nothing.
		bus.emit("pi-agent-ask:completed", { version: 1, flowId: "never-0" });
		expect(removed).toHaveBeenCalledTimes(MAX_FORMS_ELSEWHERE);
	});
});
