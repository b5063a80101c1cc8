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
	childAskResults,
	type Frame,
	isDialog,
	isNotify,
	NOT_ON_OLDEST_PI,
	onDevPiOnly,
	onlyEnvelope,
	PiRpcFixture,
	resultText,
} from "./harness/pi-cli.ts";

/** pi-subagents compiles itself on a cold cache: allow for it before the first dialog. */
const FIRST_DIALOG_MS = 90_000;
const OTHER = "Other (type your own)";

/** The scripted model passes questions through as JSON, so v2 fields need no fixture change. */
const ask = (questions: Record<string, unknown>[]): ScriptAsk => ({ questions }) as unknown as ScriptAsk;

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

/** A dialog title of the planner child: `[subagent-checkpoint-planner] rest`. */
function expectChildTitle(dialog: Frame, rest: string): void {
	expect(dialog.title).toMatch(/^\[subagent-checkpoint-planner\] /);
	expect(String(dialog.title).replace(/^\[[^\]]+\] /, "")).toBe(rest);
}

describe("v2 questions over RPC", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("a child's batch: multi-select by entries then Done, Other then typed text, a confirm, a recommended option first and marked", async () => {
		run.createEnv({
			agents: ["checkpoint-planner"],
			script: {
				main: { subagent: { agent: "checkpoint-planner", task: "Prepare the release." } },
				children: { "checkpoint-planner": RELEASE_BATCH },
			},
		});
		const rpc = run.startPi({ subagents: true });
		const start = rpc.mark();
		await rpc.prompt("Prepare the release with the planner.");

		// 1/4 multi-select: each option with an empty box, descriptions after a dash, then Other and Done.
		const multi1 = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(multi1.method).toBe("select");
		expectChildTitle(multi1, "(1/4) Which areas go into the release notes?");
		expect(multi1.options).toEqual(["☐ api — public API changes", "☐ cli", "☐ docs — guides and reference", OTHER, "Done (0 selected)"]);

		const multi2 = await rpc.answerThenNextDialog(multi1, "☐ api — public API changes");
		expect(multi2.method).toBe("select");
		expect(multi2.title).toBe(multi1.title);
		expect(multi2.options).toEqual(["☑ api — public API changes", "☐ cli", "☐ docs — guides and reference", OTHER, "Done (1 selected)"]);

		const multi3 = await rpc.answerThenNextDialog(multi2, "☐ docs — guides and reference");
		expect(multi3.options).toEqual(["☑ api — public API changes", "☐ cli", "☑ docs — guides and reference", OTHER, "Done (2 selected)"]);

		// 2/4 single choice: "Other" leads to an input titled after the question.
		const codename = await rpc.answerThenNextDialog(multi3, "Done (2 selected)");
		expect(codename.method).toBe("select");
		expectChildTitle(codename, "(2/4) Codename of the release?");
		expect(codename.options).toEqual(["aurora", "borealis", OTHER]);
		const typed = await rpc.answerThenNextDialog(codename, OTHER);
		expect(typed.method).toBe("input");
		expect(typed.title).toBe(`${codename.title} — type your own answer`);

		// 3/4 confirm: a Yes/No select (pi's confirm cannot tell "no" from a dismissed dialog).
		const publish = await rpc.answerThenNextDialog(typed, "nimbus");
		expect(publish.method).toBe("select");
		expectChildTitle(publish, "(3/4) Publish to the registry now?");
		expect(publish.options).toEqual(["Yes", "No"]);

		// 4/4 recommended option first and marked, the header before the question.
		const bump = await rpc.answerThenNextDialog(publish, "Yes");
		expect(bump.method).toBe("select");
		// The details follow the question on their own line.
		expectChildTitle(bump, "(4/4) Version: Which version bump?\nThe last release was 1.4.2.");
		expect(bump.options).toEqual(["minor (recommended) — new features, compatible", "patch — fixes only", "major — breaking changes", OTHER]);
		const mark = rpc.mark();
		rpc.answer(bump, "minor (recommended) — new features, compatible");

		const subagentEnd = await rpc.waitForToolEnd("subagent", { from: mark });
		expect(subagentEnd.isError).toBe(false);
		const childResults = childAskResults(subagentEnd);
		expect(childResults).toHaveLength(1);
		const envelope = onlyEnvelope(childResults[0]!);

		expect(envelope.status).toBe("ok");
		expect(envelope.asker).toBe("subagent-checkpoint-planner");
		expect(envelope.answers).toEqual([
			{ id: "areas", question: "Which areas go into the release notes?", answer: "api, docs", kind: "option", values: ["api", "docs"], source: "dialog" },
			{ id: "codename", question: "Codename of the release?", answer: "nimbus", kind: "other", source: "dialog" },
			{ id: "publish", question: "Publish to the registry now?", answer: "yes", kind: "confirm", source: "dialog" },
			{ id: "bump", question: "Which version bump?", answer: "minor", kind: "option", source: "dialog", recommended: true },
		]);
		// The main agent's `subagent` result carries the same envelope.
		expect(onlyEnvelope(resultText(subagentEnd.result))).toEqual(envelope);

		await rpc.waitForSettled({ from: start });
		expect(
			rpc.frames.slice(start).filter(isDialog),
			"one frame per step (3 multi-select rounds, choice, input, confirm, choice), nothing asked twice",
		).toHaveLength(7);
		expect(
			rpc.frames.slice(start).filter((f) => isNotify(f) && f.notifyType === "warning"),
			"no answer was refused",
		).toEqual([]);
	});

	it.skipIf(NOT_ON_OLDEST_PI)(onDevPiOnly("a multi-select answered with bare labels (toggle, untoggle) and a typed Other value"), async () => {
		const script: ScriptConfig = {
			prompts: {
				platforms: {
					ask: ask([{ id: "targets", question: "Build for which platforms?", options: ["linux", "macos", "windows"], multiSelect: true }]),
				},
			},
		};
		run.createEnv({ script });
		const rpc = run.startPi({ args: ["--name", "host"] });
		const start = rpc.mark();
		await rpc.prompt("platforms");

		const first = await rpc.waitForDialog({ from: start });
		expect(first.title).toBe("[host] Build for which platforms?");
		expect(first.options).toEqual(["☐ linux", "☐ macos", "☐ windows", OTHER, "Done (0 selected)"]);

		// Done with nothing picked is refused with a warning, and the same round is asked again.
		const refusedAt = rpc.mark();
		let dialog = await rpc.answerThenNextDialog(first, "Done (0 selected)");
		expect(rpc.frames.slice(refusedAt, rpc.frames.indexOf(dialog)).filter((f) => isNotify(f) && f.notifyType === "warning")).toHaveLength(1);
		expect(dialog.options).toEqual(first.options);

		// A bare label toggles like its entry: on, on, then off again.
		dialog = await rpc.answerThenNextDialog(dialog, "windows");
		dialog = await rpc.answerThenNextDialog(dialog, "linux");
		expect(dialog.options).toEqual(["☑ linux", "☐ macos", "☑ windows", OTHER, "Done (2 selected)"]);
		dialog = await rpc.answerThenNextDialog(dialog, "windows");
		expect(dialog.options).toEqual(["☑ linux", "☐ macos", "☐ windows", OTHER, "Done (1 selected)"]);

		// Other adds a typed value, listed after the options with its own checked entry.
		const typed = await rpc.answerThenNextDialog(dialog, OTHER);
		expect(typed.method).toBe("input");
		expect(typed.title).toBe("[host] Build for which platforms? — type your own answer");
		dialog = await rpc.answerThenNextDialog(typed, "freebsd");
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
	it.skipIf(NOT_ON_OLDEST_PI)(onDevPiOnly("typing an offered option's label through Other picks that option once, as an outside answer would"), async () => {
		run.createEnv({
			script: { prompts: { platforms: { ask: ask([{ question: "Build for which platforms?", options: ["linux", "macos"], multiSelect: true }]) } } },
		});
		const rpc = run.startPi({ args: ["--name", "host"] });
		const start = rpc.mark();
		await rpc.prompt("platforms");
		let dialog = await rpc.waitForDialog({ from: start });
		dialog = await rpc.answerThenNextDialog(dialog, "☐ linux");
		dialog = await rpc.answerThenNextDialog(dialog, OTHER);
		expect(dialog.method).toBe("input");
		dialog = await rpc.answerThenNextDialog(dialog, "linux");
		const mark = rpc.mark();
		rpc.answer(dialog, String((dialog.options as string[]).at(-1)));
		const envelope = onlyEnvelope(resultText((await rpc.waitForToolEnd(ASK_TOOL, { from: mark })).result));
		expect(envelope.status).toBe("ok");
		// The outside-answer path treats an offered label as that option; the dialog path must agree.
		expect(envelope.answers).toEqual([{ question: "Build for which platforms?", answer: "linux", kind: "option", values: ["linux"], source: "dialog" }]);
	});

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("an option's preview is folded into the select's title, a long one cut with a visible mark; the entries are unchanged"),
		async () => {
			const diff = `--- a/src/store.ts\n+++ b/src/store.ts\n${"+const cache = new Map();\n".repeat(20)}`;
			run.createEnv({
				script: {
					prompts: {
						store: {
							ask: ask([
								{
									id: "store",
									question: "Which store?",
									options: [
										{ label: "sql", description: "one table", preview: "CREATE TABLE t (id int);" },
										{ label: "cache", preview: diff },
									],
								},
							]),
						},
					},
				},
			});
			const rpc = run.startPi({ args: ["--name", "host"] });
			const start = rpc.mark();
			await rpc.prompt("store");
			const dialog = await rpc.waitForDialog({ from: start });
			expect(dialog.method).toBe("select");
			const cut = [...diff].slice(0, 300).join("");
			expect(dialog.title).toBe(
				[
					"[host] Which store?",
					"── preview: sql ──",
					"CREATE TABLE t (id int);",
					"── preview: cache ──",
					`${cut}… [preview cut: ${diff.length - 300} more characters]`,
				].join("\n"),
			);
			expect(dialog.options).toEqual(["sql — one table", "cache", OTHER]);
			const mark = rpc.mark();
			rpc.answer(dialog, "cache");
			const envelope = onlyEnvelope(resultText((await rpc.waitForToolEnd(ASK_TOOL, { from: mark })).result));
			expect(envelope).toMatchObject({ status: "ok", answers: [{ id: "store", answer: "cache", kind: "option", source: "dialog" }] });
			await rpc.waitForSettled({ from: mark });
		},
	);
});
