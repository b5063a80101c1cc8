/**
 * A child's own screens where the host has no terminal: pi's RPC mode, with the real pi-subagents
 * and CHECKPOINT_BRIDGE_RELAY_DIALOGS=1 (ADR-0015), on the pi under test. Nothing changes for the
 * child (mode "rpc", pi's dialogs relayed); an extension that could not show its question because it
 * asks only in pi's terminal (pi's example question.ts) leaves the host one notice naming the child
 * and the extension. rpiv-ask-user-question, which takes its dialog path in mode "rpc", leaves none.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installRelayAgent } from "./fixtures/relay-agent.ts";
import { RPIV_DB_QUESTION, RPIV_EXT } from "./fixtures/rpiv.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import { childTranscripts, hostEndpoint, isDialog, isNotify, PI_PACKAGE, PI_VERSION, PiRpcFixture, toolResultsIn } from "./harness/pi-cli.ts";

const QUESTION_EXT = join(PI_PACKAGE, "examples/extensions/question.ts");
/** pi and pi-subagents load slowly on a busy machine. */
const FIRST_DIALOG_MS = 90_000;

const script: ScriptConfig = {
	prompts: {
		pick: { subagent: { agent: "picker", task: "Ask which colour." } },
		rpiv: { subagent: { agent: "rpiv-child", task: "Ask which database." } },
	},
	childCalls: {
		picker: { tool: "question", arguments: { question: "Which colour?", options: [{ label: "Red" }, { label: "Green" }] } },
		"rpiv-child": {
			tool: "ask_user_question",
			arguments: {
				questions: [RPIV_DB_QUESTION],
			},
		},
	},
};

/** The notices that say an extension's screen could not be shown. */
const unshown = (frames: { type: string; [key: string]: unknown }[]) =>
	frames.filter(isNotify).filter((f) => String(f.message).includes("could not show its own screen"));

describe(`a child's own screens under an RPC host (pi ${PI_VERSION})`, () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("the child is as before (mode rpc: question.ts refuses); the host gets one notice naming the child and question.ts; rpiv's dialogs leave none", async () => {
		const piEnv = run.createEnv({ script, env: { CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1" } });
		installRelayAgent(piEnv.agentDir, "picker", QUESTION_EXT);
		installRelayAgent(piEnv.agentDir, "rpiv-child", RPIV_EXT);
		const pi = run.startPi({ subagents: true });
		await hostEndpoint(piEnv, FIRST_DIALOG_MS);

		let start = pi.mark();
		await pi.prompt("pick");
		await pi.waitForToolEnd("subagent", { from: start, timeoutMs: FIRST_DIALOG_MS });
		await pi.waitForSettled({ from: start });
		const results = childTranscripts(piEnv).flatMap((t) => toolResultsIn(t.records, "question"));
		expect(results).toEqual(["Error: UI not available (running in non-interactive mode)"]);
		expect(pi.frames.filter(isDialog)).toEqual([]);
		expect(unshown(pi.frames)).toMatchObject([
			{
				message:
					"[subagent-picker] question.ts could not show its own screen here: it asks only in pi's terminal (it checked for mode \"tui\" and asked nothing), and only pi's dialogs reach this host.",
				notifyType: "warning",
			},
		]);

		// rpiv reads the mode too, then asks through pi's dialogs: answered, and no notice.
		start = pi.mark();
		await pi.prompt("rpiv");
		const question = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(question.title).toBe("[subagent-rpiv-child] [DB] Which database?");
		pi.answer(question, "2. postgres — a server");
		await pi.waitForToolEnd("subagent", { from: start });
		await pi.waitForSettled({ from: start });
		expect(childTranscripts(piEnv).flatMap((t) => toolResultsIn(t.records, "ask_user_question"))[0]).toContain("postgres");
		expect(unshown(pi.frames)).toHaveLength(1);
	});
});
