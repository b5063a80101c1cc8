/**
 * Dialogs of other extensions in pi-subagents children (CHECKPOINT_BRIDGE_RELAY_DIALOGS=1), on the
 * real pi CLI (1.6 and 0.85) with the real pi-subagents, an RPC client as the human: a small
 * third-party extension's confirm, select and input, and the real rpiv-ask-user-question, in a
 * foreground child and (pi 0.85's runner) in a background child over the local endpoint. Without
 * the switch, and with no host, nothing changes.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NOTICE, TARGETS } from "./fixtures/permission-gate.ts";
import { installRelayAgent } from "./fixtures/relay-agent.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import {
	BACKGROUND_CHILDREN,
	baseArgs,
	childTranscripts,
	type Frame,
	hostEndpoint,
	isDialog,
	isNotify,
	PI_VERSION,
	PiRpcFixture,
	parseJsonLines,
	REPO_ROOT,
	resultText,
	runPi,
	toolResultsIn,
} from "./harness/pi-cli.ts";

const GATE_EXT = join(REPO_ROOT, "test/integration/fixtures/permission-gate.ts");
const RPIV_EXT = join(REPO_ROOT, "node_modules/@juicesharp/rpiv-ask-user-question/index.ts");
const SWITCH = { CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1" };
/** pi-subagents loads slowly (it compiles its TypeScript on start): allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;

const RPIV_QUESTIONS = {
	questions: [
		{
			question: "Which database?",
			header: "DB",
			options: [
				{ label: "sqlite", description: "a file" },
				{ label: "postgres", description: "a server" },
			],
		},
	],
};

const script: ScriptConfig = {
	prompts: {
		gate: { subagent: { agent: "gatekeeper", task: "Run the guarded step." } },
		rpiv: { subagent: { agent: "rpiv-child", task: "Ask which database." } },
		background: { subagent: { agent: "gatekeeper", task: "Run the guarded step.", async: true } },
	},
	childCalls: {
		gatekeeper: { tool: "guarded_step", arguments: {} },
		"rpiv-child": { tool: "ask_user_question", arguments: RPIV_QUESTIONS },
	},
};

/** What guarded_step reported, from a child transcript. */
const gateReport = (text: string) => JSON.parse(/guarded_step: (\{.*\})/.exec(text)?.[1] ?? "null") as Record<string, unknown> | null;

/** Resolves once process `pid` is gone (at most 30 s). */
async function exitOf(pid: number): Promise<void> {
	for (let waited = 0; waited < 30_000; waited += 100) {
		try {
			process.kill(pid, 0);
		} catch {
			return;
		}
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

function transcriptResults(run: PiRpcFixture, tool: string): string[] {
	return childTranscripts(run.piEnv!).flatMap((t) => toolResultsIn(t.records, tool));
}

describe(`dialogs of other extensions in children reach the RPC client (pi ${PI_VERSION})`, () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("with the switch: a foreground child's confirm, select and input, and rpiv's questionnaire, answered by the human", async () => {
		const piEnv = run.createEnv({ script, env: SWITCH });
		installRelayAgent(piEnv.agentDir, "gatekeeper", GATE_EXT);
		installRelayAgent(piEnv.agentDir, "rpiv-child", RPIV_EXT);
		const pi = run.startPi({ subagents: true });
		await hostEndpoint(piEnv, FIRST_DIALOG_MS);

		let start = pi.mark();
		await pi.prompt("gate");
		const confirm = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(confirm.method).toBe("select");
		expect(confirm.title).toBe("[subagent-gatekeeper] Run rm -rf build/?\nThe build folder is deleted.");
		expect(confirm.options).toEqual(["Yes", "No"]);
		const select = await pi.answerThenNextDialog(confirm, "Yes");
		expect(select.title).toBe("[subagent-gatekeeper] Which target?");
		// Exactly the extension's options: sixteen, one of 120 characters, no Other, in its order.
		expect(select.options).toEqual(TARGETS);
		const input = await pi.answerThenNextDialog(select, TARGETS.at(-1)!);
		expect(input).toMatchObject({ method: "input", title: "[subagent-gatekeeper] Release note?", placeholder: "one line" });
		pi.answer(input, "ship it");
		await pi.waitForToolEnd("subagent", { from: start });
		expect(transcriptResults(run, "guarded_step").map(gateReport)).toEqual([
			{ hasUI: true, mode: "rpc", confirmed: true, target: TARGETS.at(-1), note: "ship it" },
		]);
		// Its notice reached the human before its dialogs, prefixed with who sent it.
		expect(pi.frames.filter(isNotify).filter((f) => f.message.includes(NOTICE))).toMatchObject([
			{ message: `[subagent-gatekeeper] ${NOTICE}`, notifyType: "warning" },
		]);
		await pi.waitForSettled({ from: start });

		// The real rpiv-ask-user-question keeps its tool in the child and walks its questions as dialogs.
		start = pi.mark();
		await pi.prompt("rpiv");
		const question = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(question.title).toBe("[subagent-rpiv-child] [DB] Which database?");
		expect(question.options).toEqual(["1. sqlite — a file", "2. postgres — a server", "3. Type something."]);
		pi.answer(question, "2. postgres — a server");
		const ended = await pi.waitForToolEnd("subagent", { from: start });
		const rpivResults = transcriptResults(run, "ask_user_question");
		expect(rpivResults, resultText(ended.result)).toHaveLength(1);
		expect(rpivResults[0]).toContain("postgres");
		await pi.waitForSettled({ from: start });
		expect(pi.frames.filter(isDialog)).toHaveLength(4);

		if (!BACKGROUND_CHILDREN) return;
		// pi 0.85: a background child in pi-subagents' runner process, over the local endpoint.
		start = pi.mark();
		await pi.prompt("background");
		const remote = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
		expect(remote.title).toMatch(/^\[subagent-gatekeeper \(pid \d+\)\] Run rm -rf build\/\?\nThe build folder is deleted\.$/);
		// The runner's notice came over the local endpoint, marked with the runner's process.
		const runnerPid = Number(/\(pid (\d+)\)/.exec(remote.title)?.[1]);
		await pi.waitFor((f: Frame) => isNotify(f) && f.message === `[subagent-gatekeeper (pid ${runnerPid})] ${NOTICE}`, {
			from: start,
			timeoutMs: 10_000,
			what: "the background child's notice",
		});
		const remoteSelect = await pi.answerThenNextDialog(remote, "No");
		expect(remoteSelect.options).toEqual(TARGETS);
		const remoteInput = await pi.answerThenNextDialog(remoteSelect, "target-3");
		pi.answer(remoteInput, "from the runner");
		await pi.waitFor((f: Frame) => f.type === "message_end" && JSON.stringify(f.message?.content ?? "").includes("from the runner"), {
			from: start,
			timeoutMs: 60_000,
			what: "the background child's result",
		});
		expect(transcriptResults(run, "guarded_step").map(gateReport)).toContainEqual({
			hasUI: true,
			mode: "rpc",
			confirmed: false,
			target: "target-3",
			note: "from the runner",
		});
		// The runner (its pid is in the title) writes into the temp tree until it exits: let it go before the tree is removed.
		await exitOf(runnerPid);
	});

	it("without the switch nothing changes: the child has no UI, its dialogs answer themselves, rpiv's tool stays stripped", async () => {
		const piEnv = run.createEnv({ script });
		installRelayAgent(piEnv.agentDir, "gatekeeper", GATE_EXT);
		installRelayAgent(piEnv.agentDir, "rpiv-child", RPIV_EXT);
		const pi = run.startPi({ subagents: true });
		let start = pi.mark();
		await pi.prompt("gate");
		await pi.waitForToolEnd("subagent", { from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(transcriptResults(run, "guarded_step").map(gateReport)).toEqual([{ hasUI: false, mode: "print", confirmed: false, target: null, note: null }]);
		await pi.waitForSettled({ from: start });
		start = pi.mark();
		await pi.prompt("rpiv");
		const ended = await pi.waitForToolEnd("subagent", { from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(transcriptResults(run, "ask_user_question").join("\n"), resultText(ended.result)).toMatch(/not found|UI not available/);
		await pi.waitForSettled({ from: start });
		expect(pi.frames.filter(isDialog)).toEqual([]);
	});

	it("with the switch but no host reachable (a pi -p run of its own): the session stays without UI", async () => {
		const piEnv = run.createEnv({ script: { main: { call: { tool: "guarded_step", arguments: {} } } }, env: SWITCH });
		const result = await runPi(piEnv, [...baseArgs(), "--extension", GATE_EXT, "--mode", "json", "-p", "go"]);
		const end = parseJsonLines(result.stdout).find((f) => f.type === "tool_execution_end" && f.toolName === "guarded_step");
		expect(gateReport(resultText(end?.result)), result.stderr.slice(-2_000)).toEqual({
			hasUI: false,
			mode: "json",
			confirmed: false,
			target: null,
			note: null,
		});
	});
});
