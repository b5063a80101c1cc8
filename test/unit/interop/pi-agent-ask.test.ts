/**
 * The pi-agent-ask adapter on pi's own event bus and the real relay (host role, dialog host, RPC
 * dialog surface) with a programmatic UI: the negotiation, the form as questions, the answers back.
 * The end-to-end proof with real pi sessions is test/integration/pi-agent-ask.test.ts.
 */
import { createEventBus } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { type ExternalAskProvider, offerExternalUI, PROVIDER_ID } from "../../../extensions/checkpoint-bridge/interop/external-ui.ts";
import {
	type AskQuestion,
	type ExternalAskRequest,
	type HostRoute,
	toRelayQuestions,
	toResponse,
} from "../../../extensions/checkpoint-bridge/interop/pi-agent-ask.ts";
import { checks, stack } from "../../support/pi-agent-ask-questions.ts";
import type { FakeDialog } from "../support/fake-ui.ts";
import { relay } from "../support/relay.ts";

/** Emits the negotiation as pi-agent-ask does: `connect` works only while the event is being emitted. */
function negotiate(bus: ReturnType<typeof createEventBus>, mode = "rpc", version = 1) {
	let open = true;
	let provider: ExternalAskProvider | undefined;
	const connections: ExternalAskProvider[] = [];
	bus.emit("pi-agent-ask:external-ui", {
		version,
		mode,
		toolCallId: "call-1",
		connect(p: ExternalAskProvider) {
			connections.push(p);
			if (!open || provider || p.version !== 1 || !p.id) return false;
			provider = p;
			return true;
		},
	});
	open = false;
	return { provider, connections };
}

function routeOver(r: ReturnType<typeof relay>, reachable = true): HostRoute {
	return { reachable: () => reachable, ask: (questions, signal) => r.ask(questions, { signal, label: "subagent-worker" }) };
}

const request = (questions: AskQuestion[], extra: Partial<ExternalAskRequest> = {}): ExternalAskRequest => ({
	version: 1,
	flowId: "flow-1",
	toolCallId: "call-1",
	questions,
	signal: new AbortController().signal,
	...extra,
});

/** Answers each dialog from a list, in order (select picks by entry prefix, input types the text). */
function scripted(steps: (string | undefined)[]) {
	return (d: FakeDialog) =>
		queueMicrotask(() => {
			const step = steps.shift();
			if (step === undefined) return d.answer(undefined);
			if (d.method === "input") return d.answer(step);
			d.answer(d.options!.find((o) => o.startsWith(step) || o.replace(/^[☐☑] /, "").startsWith(step)) ?? step);
		});
}

describe("negotiation", () => {
	it("connects one provider, id checkpoint-bridge, synchronously inside the listener when a host is reachable", () => {
		const bus = createEventBus();
		offerExternalUI(bus, routeOver(relay()));
		const { provider } = negotiate(bus);
		expect(provider?.id).toBe(PROVIDER_ID);
		expect(provider?.version).toBe(1);
	});

	it("does not connect with no host reachable, in TUI mode, or for another contract version", () => {
		const bus = createEventBus();
		offerExternalUI(bus, routeOver(relay(), false));
		expect(negotiate(bus).connections).toEqual([]);
		const other = createEventBus();
		offerExternalUI(other, routeOver(relay()));
		expect(negotiate(other, "tui").connections).toEqual([]);
		expect(negotiate(other, "rpc", 2).connections).toEqual([]);
		expect(negotiate(other, "print").connections).toHaveLength(1);
	});
});

describe("the form as questions", () => {
	it("label as header, prompt as question, descriptions, previews, the recommended option, multi as multi-select, the title in the details", () => {
		const mapped = toRelayQuestions({ title: "Project setup", questions: [stack, checks] });
		expect(mapped).toEqual({
			ok: true,
			questions: [
				{
					question: "Which stack?",
					header: "Stack",
					details: "Project setup",
					options: [
						{ label: "TypeScript", description: "typed" },
						{ label: "Go", preview: "package main" },
					],
					recommended: "Go",
					multiSelect: false,
				},
				{
					question: "Which checks run?",
					header: "Checks",
					details: "Project setup",
					options: [{ label: "Lint" }, { label: "Unit tests" }, { label: "E2E" }],
					multiSelect: true,
				},
			],
			back: expect.any(Array),
		});
	});

	it("cuts what exceeds our limits (the whole prompt kept in the details), makes labels shown alike unique, and defaults the header to the id", () => {
		const long = "Why? ".repeat(150).trim();
		const mapped = toRelayQuestions({
			questions: [
				{
					id: "x".repeat(100),
					prompt: long,
					options: [
						{ label: "Same", value: "a" },
						{ label: "Same", value: "b" },
						{ label: "L".repeat(200), value: "c" },
					],
				},
			],
		});
		if (!mapped.ok) throw new Error(mapped.problem);
		const [q] = mapped.questions;
		expect(q!.question).toHaveLength(500);
		expect(q!.details).toBe(long);
		expect(q!.header).toHaveLength(40);
		expect((q!.options as { label: string }[]).map((o) => o.label)).toEqual(["Same", "Same #2", `${"L".repeat(79)}…`]);
		expect([...mapped.back[0]!.values.values()]).toEqual(["a", "b", "c"]);
	});

	it("numbers three options shown alike x, x #2, x #3 (each number added to the label as shown, not to the last one made)", () => {
		const alike = ["a", "b", "c"].map((value) => ({ label: "x", value }));
		const mapped = toRelayQuestions({ questions: [{ id: "q", prompt: "Which?", options: alike }] });
		if (!mapped.ok) throw new Error(mapped.problem);
		expect((mapped.questions[0]!.options as { label: string }[]).map((o) => o.label)).toEqual(["x", "x #2", "x #3"]);
		expect([...mapped.back[0]!.values]).toEqual([
			["x", "a"],
			["x #2", "b"],
			["x #3", "c"],
		]);
	});

	it("counts questions and options before mapping any: 4,000 alike labels or 50 prompts of 1 MB are refused by their count, each named", () => {
		const big = "p".repeat(1_000_000);
		const alike = Array.from({ length: 4_000 }, (_, i) => ({ label: "same", value: `v${i}` }));
		expect(toRelayQuestions({ questions: [{ id: "q", prompt: big, options: alike }] })).toEqual({
			ok: false,
			problem: "question 1 has 4000 options, at most 12",
		});
		const prompts = Array.from({ length: 50 }, (_, i) => ({ id: `q${i}`, prompt: big, options: alike.slice(0, 2) }));
		expect(toRelayQuestions({ questions: prompts })).toEqual({ ok: false, problem: "the form has 50 questions, at most 10" });
	});

	it("names what the relay would refuse: a lone option, more than 12 options, more than 10 questions", () => {
		const one = toRelayQuestions({ questions: [{ id: "a", prompt: "Only one?", options: [{ label: "yes", value: "y" }] }] });
		expect(one).toEqual({ ok: false, problem: expect.stringContaining("options: has 1, needs 2 to 12") });
		const many = Array.from({ length: 13 }, (_, i) => ({ label: `o${i}`, value: `v${i}` }));
		expect(toRelayQuestions({ questions: [{ id: "a", prompt: "Many?", options: many }] }).ok).toBe(false);
		const questions = Array.from({ length: 11 }, (_, i) => ({ id: `q${i}`, prompt: `Q${i}?`, options: many.slice(0, 2) }));
		expect(toRelayQuestions({ questions })).toEqual({ ok: false, problem: expect.stringContaining("at most 10") });
	});
});

describe("answers through the relay", () => {
	it("single and multi come back as option values keyed by question id; a typed Other as customText", async () => {
		const r = relay({ respond: scripted(["TypeScript", "Lint", "E2E", "Other", "smoke", "Done"]) });
		const bus = createEventBus();
		offerExternalUI(bus, routeOver(r));
		const { provider } = negotiate(bus);
		const response = await provider!.open(request([stack, checks], { title: "Setup" }));
		expect(response).toEqual({
			kind: "answer",
			mode: "submit",
			answers: { stack: { values: ["ts"] }, checks: { values: ["lint", "e2e"], customText: "smoke" } },
		});
		expect(r.fake.dialogs[0]!.title).toContain("Setup");
		expect(r.fake.dialogs[0]!.options).toContain("Go (recommended)");
	});

	it("a typed Other for a single choice is customText alone; a question without options is free text", async () => {
		const r = relay({ respond: scripted(["Other", "Rust", "atlas"]) });
		const { provider } = negotiate(((bus) => (offerExternalUI(bus, routeOver(r)), bus))(createEventBus()));
		const response = await provider!.open(request([stack, { id: "name", prompt: "Project name?" }]));
		expect(response).toEqual({ kind: "answer", mode: "submit", answers: { stack: { customText: "Rust" }, name: { customText: "atlas" } } });
	});

	it("the human's dismiss is cancel", async () => {
		const r = relay({ respond: scripted([undefined]) });
		const { provider } = negotiate(((bus) => (offerExternalUI(bus, routeOver(r)), bus))(createEventBus()));
		await expect(provider!.open(request([stack]))).resolves.toEqual({ kind: "cancel" });
	});

	it("an aborted signal takes the request off the host and closes its dialog at once; the open rejects", async () => {
		const r = relay();
		const { provider } = negotiate(((bus) => (offerExternalUI(bus, routeOver(r)), bus))(createEventBus()));
		const abort = new AbortController();
		const opened = provider!.open(request([stack], { signal: abort.signal }));
		await new Promise((resolve) => setTimeout(resolve, 0));
		expect(r.fake.open).toHaveLength(1);
		abort.abort();
		await expect(opened).rejects.toThrow(/cancelled/);
		expect(r.fake.dialogs[0]!.closedBy).toBe("signal");
		expect(r.fake.open).toEqual([]);
	});

	it("a form the relay would refuse rejects with what is wrong, and nothing is shown", async () => {
		const r = relay();
		const { provider } = negotiate(((bus) => (offerExternalUI(bus, routeOver(r)), bus))(createEventBus()));
		await expect(provider!.open(request([{ id: "a", prompt: "One?", options: [{ label: "y", value: "y" }] }]))).rejects.toThrow(/cannot show this form/);
		expect(r.fake.dialogs).toEqual([]);
	});
});

describe("the envelope as a response", () => {
	const mapped = toRelayQuestions({ questions: [stack, checks] });
	if (!mapped.ok) throw new Error(mapped.problem);
	it("carries the human's note", () => {
		const response = toResponse(
			{
				status: "ok",
				answers: [
					{ question: "Which stack?", answer: "Go", kind: "option", note: "we know it" },
					{ question: "Which checks run?", answer: "Unit tests", kind: "option", values: ["Unit tests"] },
				],
			},
			mapped.back,
		);
		expect(response).toEqual({ kind: "answer", mode: "submit", answers: { stack: { values: ["go"], note: "we know it" }, checks: { values: ["unit"] } } });
	});

	it.each(["timeout", "no-host", "error", "cancelled"] as const)("%s rejects with an error that says what happened", (status) => {
		expect(() => toResponse({ status, answers: [], note: `the ${status} note` }, mapped.back)).toThrow(`checkpoint-bridge: ${status}: the ${status} note`);
	});
});
