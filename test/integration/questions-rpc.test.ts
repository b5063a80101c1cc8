/**
 * Question model v2 on the real `pi --mode rpc`: a pi-subagents child asks a batch with a
 * multi-select, a choice answered through "Other (type your own)", a confirm and a choice with a
 * recommended option. Every dialog is a plain select or input frame; the client answers by sending
 * back one of the offered entries (or, for a multi-select, an option's bare label).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptAsk, ScriptConfig } from "./fixtures/scripted-model.ts";
import {
	ASK_TOOL,
	createPiEnv,
	envelopesIn,
	isDialog,
	isNotify,
	PiRpc,
	readTranscript,
	resultText,
	toolResultsIn,
	type Frame,
	type PiEnv,
} from "./harness/pi-cli.ts";

/** pi-subagents compiles itself on a cold cache: allow for it before the first dialog. */
const FIRST_DIALOG_MS = 90_000;
const OTHER = "Other (type your own)";

/** The v2 answer fields this file asserts on (the harness's Envelope type predates them). */
interface AnswerV2 {
	question: string;
	answer: string;
	kind: string;
	id?: string;
	values?: string[];
	source?: string;
}
interface EnvelopeV2 {
	status: string;
	answers: AnswerV2[];
	asker?: string;
	requestId?: string;
}

/** The scripted model passes questions through as JSON, so v2 fields need no fixture change. */
const ask = (questions: Record<string, unknown>[]): ScriptAsk => ({ questions } as unknown as ScriptAsk);

const RELEASE_BATCH = ask([
	{
		id: "areas",
		question: "Which areas go into the release notes?",
		options: [{ label: "api", description: "public API changes" }, { label: "cli" }, { label: "docs", description: "guides and reference" }],
		multiSelect: true,
	},
	{ id: "codename", question: "Codename of the release?", options: ["aurora", "borealis"] },
	{ id: "publish", question: "Publish to the registry now?", kind: "confirm" },
	{
		id: "bump",
		header: "Version",
		question: "Which version bump?",
		details: "The last release was 1.4.2.",
		options: [
			{ label: "patch", description: "fixes only" },
			{ label: "minor", description: "new features, compatible" },
			{ label: "major", description: "breaking changes" },
		],
		recommended: "minor",
	},
]);

function onlyEnvelope(text: string): EnvelopeV2 {
	const found = envelopesIn(text);
	expect(found, `one envelope in: ${text.slice(0, 500)}`).toHaveLength(1);
	return found[0] as unknown as EnvelopeV2;
}

/** A dialog title of the planner child: `[subagent-checkpoint-planner-…] rest`. */
function expectChildTitle(dialog: Frame, rest: string): void {
	expect(dialog.title).toMatch(/^\[subagent-checkpoint-planner-[^\]]+\] /);
	expect(String(dialog.title).replace(/^\[[^\]]+\] /, "")).toBe(rest);
}

describe("v2 questions over RPC", () => {
	let piEnv: PiEnv | undefined;
	let pi: PiRpc | undefined;

	afterEach(async () => {
		await pi?.close();
		piEnv?.cleanup();
		pi = undefined;
		piEnv = undefined;
	});

	it("a child's batch: multi-select by entries then Done, Other then typed text, a confirm, a recommended option first and marked", async () => {
		piEnv = createPiEnv({
			agents: ["checkpoint-planner"],
			script: {
				main: { subagent: { agent: "checkpoint-planner", task: "Prepare the release." } },
				children: { "checkpoint-planner": RELEASE_BATCH },
			},
		});
		pi = PiRpc.start(piEnv, { subagents: true });
		const rpc = pi;
		const start = rpc.mark();
		await rpc.prompt("Prepare the release with the planner.");

		/** Sends `value` for `dialog` and returns the next dialog. */
		const answerThenNext = async (dialog: Frame, value: string): Promise<Frame> => {
			const mark = rpc.mark();
			rpc.answer(dialog, value);
			return rpc.waitForDialog({ from: mark });
		};

		// 1/4 multi-select: each option with an empty box, descriptions after a dash, then Other and Done.
		const multi1 = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(multi1.method).toBe("select");
		expectChildTitle(multi1, "(1/4) Which areas go into the release notes?");
		expect(multi1.options).toEqual(["☐ api — public API changes", "☐ cli", "☐ docs — guides and reference", OTHER, "Done (0 selected)"]);

		const multi2 = await answerThenNext(multi1, "☐ api — public API changes");
		expect(multi2.method).toBe("select");
		expect(multi2.title).toBe(multi1.title);
		expect(multi2.options).toEqual(["☑ api — public API changes", "☐ cli", "☐ docs — guides and reference", OTHER, "Done (1 selected)"]);

		const multi3 = await answerThenNext(multi2, "☐ docs — guides and reference");
		expect(multi3.options).toEqual(["☑ api — public API changes", "☐ cli", "☑ docs — guides and reference", OTHER, "Done (2 selected)"]);

		// 2/4 single choice: "Other" leads to an input titled after the question.
		const codename = await answerThenNext(multi3, "Done (2 selected)");
		expect(codename.method).toBe("select");
		expectChildTitle(codename, "(2/4) Codename of the release?");
		expect(codename.options).toEqual(["aurora", "borealis", OTHER]);
		const typed = await answerThenNext(codename, OTHER);
		expect(typed.method).toBe("input");
		expect(typed.title).toBe(`${codename.title} — type your own answer`);

		// 3/4 confirm: a Yes/No select (pi's confirm cannot tell "no" from a dismissed dialog).
		const publish = await answerThenNext(typed, "nimbus");
		expect(publish.method).toBe("select");
		expectChildTitle(publish, "(3/4) Publish to the registry now?");
		expect(publish.options).toEqual(["Yes", "No"]);

		// 4/4 recommended option first and marked, the header before the question.
		const bump = await answerThenNext(publish, "Yes");
		expect(bump.method).toBe("select");
		// The details follow the question on their own line.
		expectChildTitle(bump, "(4/4) Version: Which version bump?\nThe last release was 1.4.2.");
		expect(bump.options).toEqual([
			"minor (recommended) — new features, compatible",
			"patch — fixes only",
			"major — breaking changes",
			OTHER,
		]);
		const mark = rpc.mark();
		rpc.answer(bump, "minor (recommended) — new features, compatible");

		const subagentEnd = await rpc.waitForToolEnd("subagent", { from: mark });
		expect(subagentEnd.isError).toBe(false);
		const transcriptPath = subagentEnd.result?.details?.results?.[0]?.transcriptPath as string | undefined;
		expect(transcriptPath, "subagent result names the child transcript").toBeTypeOf("string");
		const childResults = toolResultsIn(readTranscript(transcriptPath!), ASK_TOOL);
		expect(childResults).toHaveLength(1);
		const envelope = onlyEnvelope(childResults[0]!);

		expect(envelope.status).toBe("ok");
		expect(envelope.asker).toMatch(/^subagent-checkpoint-planner-/);
		expect(envelope.answers).toEqual([
			{ id: "areas", question: "Which areas go into the release notes?", answer: "api, docs", kind: "option", values: ["api", "docs"], source: "dialog" },
			{ id: "codename", question: "Codename of the release?", answer: "nimbus", kind: "other", source: "dialog" },
			{ id: "publish", question: "Publish to the registry now?", answer: "yes", kind: "confirm", source: "dialog" },
			{ id: "bump", question: "Which version bump?", answer: "minor", kind: "option", source: "dialog" },
		]);
		// The main agent's `subagent` result carries the same envelope.
		expect(onlyEnvelope(resultText(subagentEnd.result))).toEqual(envelope);

		await rpc.waitForSettled({ from: start });
		expect(rpc.frames.slice(start).filter(isDialog), "one frame per step (3 multi-select rounds, choice, input, confirm, choice), nothing asked twice").toHaveLength(7);
		expect(rpc.frames.slice(start).filter((f) => isNotify(f) && f.notifyType === "warning"), "no answer was refused").toEqual([]);
	});

	it("a multi-select answered with bare labels (toggle, untoggle) and a typed Other value", async () => {
		const script: ScriptConfig = {
			prompts: {
				platforms: {
					ask: ask([
						{ id: "targets", question: "Build for which platforms?", options: ["linux", "macos", "windows"], multiSelect: true },
					]),
				},
			},
		};
		piEnv = createPiEnv({ script });
		pi = PiRpc.start(piEnv, { args: ["--name", "host"] });
		const rpc = pi;
		const start = rpc.mark();
		await rpc.prompt("platforms");

		const answerThenNext = async (dialog: Frame, value: string): Promise<Frame> => {
			const mark = rpc.mark();
			rpc.answer(dialog, value);
			return rpc.waitForDialog({ from: mark });
		};
		const first = await rpc.waitForDialog({ from: start });
		expect(first.title).toBe("[host] Build for which platforms?");
		expect(first.options).toEqual(["☐ linux", "☐ macos", "☐ windows", OTHER, "Done (0 selected)"]);

		// Done with nothing picked is refused with a warning, and the same round is asked again.
		const refusedAt = rpc.mark();
		let dialog = await answerThenNext(first, "Done (0 selected)");
		expect(rpc.frames.slice(refusedAt, rpc.frames.indexOf(dialog)).filter((f) => isNotify(f) && f.notifyType === "warning")).toHaveLength(1);
		expect(dialog.options).toEqual(first.options);

		// A bare label toggles like its entry: on, on, then off again.
		dialog = await answerThenNext(dialog, "windows");
		dialog = await answerThenNext(dialog, "linux");
		expect(dialog.options).toEqual(["☑ linux", "☐ macos", "☑ windows", OTHER, "Done (2 selected)"]);
		dialog = await answerThenNext(dialog, "windows");
		expect(dialog.options).toEqual(["☑ linux", "☐ macos", "☐ windows", OTHER, "Done (1 selected)"]);

		// Other adds a typed value, listed after the options with its own checked entry.
		const typed = await answerThenNext(dialog, OTHER);
		expect(typed.method).toBe("input");
		expect(typed.title).toBe("[host] Build for which platforms? — type your own answer");
		dialog = await answerThenNext(typed, "freebsd");
		expect(dialog.method).toBe("select");
		expect(dialog.options).toEqual(["☑ linux", "☐ macos", "☐ windows", "☑ freebsd (typed)", OTHER, "Done (2 selected)"]);

		const mark = rpc.mark();
		rpc.answer(dialog, "Done (2 selected)");
		const end = await rpc.waitForToolEnd(ASK_TOOL, { from: mark });
		const envelope = onlyEnvelope(resultText(end.result));
		expect(end.result.details).toEqual(envelope);
		expect(envelope.status).toBe("ok");
		expect(envelope.answers).toEqual([
			{ id: "targets", question: "Build for which platforms?", answer: "linux, freebsd", kind: "other", values: ["linux", "freebsd"], source: "dialog" },
		]);
		// While it waited, the call streamed where its question stood; the rounds do not repeat it.
		const progress = rpc.frames
			.slice(start)
			.filter((f) => f.type === "tool_execution_update" && f.toolName === ASK_TOOL)
			.map((f) => resultText(f.partialResult));
		expect(progress).toEqual([
			"checkpoint-bridge: queued, next to be shown",
			"checkpoint-bridge: shown to the human, question 1 of 1",
			"checkpoint-bridge: answered question 1 of 1",
		]);
		await rpc.waitForSettled({ from: mark });
	});
	it("typing an offered option's label through Other picks that option once, as an outside answer would", async () => {
		piEnv = createPiEnv({
			script: { prompts: { platforms: { ask: ask([{ question: "Build for which platforms?", options: ["linux", "macos"], multiSelect: true }]) } } },
		});
		pi = PiRpc.start(piEnv, { args: ["--name", "host"] });
		const rpc = pi;
		const start = rpc.mark();
		await rpc.prompt("platforms");
		const answerThenNext = async (dialog: Frame, value: string): Promise<Frame> => {
			const mark = rpc.mark();
			rpc.answer(dialog, value);
			return rpc.waitForDialog({ from: mark });
		};
		let dialog = await rpc.waitForDialog({ from: start });
		dialog = await answerThenNext(dialog, "☐ linux");
		dialog = await answerThenNext(dialog, OTHER);
		expect(dialog.method).toBe("input");
		dialog = await answerThenNext(dialog, "linux");
		const mark = rpc.mark();
		rpc.answer(dialog, String((dialog.options as string[]).at(-1)));
		const envelope = onlyEnvelope(resultText((await rpc.waitForToolEnd(ASK_TOOL, { from: mark })).result));
		expect(envelope.status).toBe("ok");
		// The outside-answer path treats an offered label as that option; the dialog path must agree.
		expect(envelope.answers).toEqual([{ question: "Build for which platforms?", answer: "linux", kind: "option", values: ["linux"], source: "dialog" }]);
	});
});
