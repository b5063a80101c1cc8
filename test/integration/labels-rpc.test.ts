/**
 * Who asks, as a human reads it, on the real pi: one `pi --mode rpc` host (an unnamed session) with
 * the real pi-subagents. Its RPC dialogs' titles name the asker: the host's own model as the main
 * session, a foreground child by its agent, and a `pi -p` run its model starts (through the host's
 * local endpoint) by the first words of its task and its directory, with its pid; never a session
 * id. A child's question cancelled while it is shown (the main session aborted) brings the host a
 * notice naming the child and the question.
 */

import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
	ASK_TOOL,
	baseArgs,
	createPiEnv,
	type Envelope,
	type Frame,
	hostEndpoint,
	isNotify,
	NODE_BIN,
	PI_CLI,
	type PiEnv,
	PiRpc,
	parseJsonLines,
} from "./harness/pi-cli.ts";

/** pi-subagents loads slowly (it compiles its TypeScript on start): allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;
const TASK = "Fix the flaky payment tests and report back";
const OWN = { question: "Release today?", options: ["yes", "no"] };
const CHILDS = { question: "Does the missing test block the merge?", options: ["blocks", "follow-up"] };
const PRINTS = { question: "Which test runner?", options: ["vitest", "jest"] };
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
/** A session id as pi makes them (a uuid), or its last 8 characters: what a title must never be. */
const SESSION_ID_TITLE = /^\[(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f-]{8})[\] ]/;

describe("who asks, in an RPC host's dialog titles", () => {
	let piEnv: PiEnv | undefined;
	let pi: PiRpc | undefined;
	afterAll(async () => {
		await pi?.close();
		piEnv?.cleanup();
	});

	/** One host for the file: an unnamed RPC session with pi-subagents, whose model asks, delegates or starts a `pi -p` run. */
	async function host(): Promise<{ pi: PiRpc; piEnv: PiEnv; events: string }> {
		if (pi && piEnv) return { pi, piEnv, events: join(piEnv.root, "asker-events.jsonl") };
		const env = createPiEnv({ agents: ["checkpoint-reviewer"] });
		const events = join(env.root, "asker-events.jsonl");
		env.writeScript({
			prompts: {
				"ask yourself": { ask: { questions: [OWN] } },
				"run the child": { subagent: { agent: "checkpoint-reviewer", task: "Review the pending change." } },
				// The host's model starts the pi -p run with its bash tool: it inherits the host's endpoint.
				"start the asker": {
					bash: {
						command: `exec ${[NODE_BIN, PI_CLI, ...baseArgs(), "--mode", "json", TASK].map(quote).join(" ")} < /dev/null > ${quote(events)} 2>/dev/null`,
					},
				},
				[TASK]: { ask: { questions: [PRINTS] } },
			},
			children: { "checkpoint-reviewer": { questions: [CHILDS] } },
		});
		piEnv = env;
		pi = PiRpc.start(env, { subagents: true });
		await hostEndpoint(env);
		return { pi, piEnv: env, events: join(env.root, "asker-events.jsonl") };
	}

	async function dialogOf(prompt: string): Promise<{ dialog: Frame; from: number }> {
		const { pi } = await host();
		const from = pi.mark();
		await pi.prompt(prompt);
		return { dialog: await pi.waitForDialog({ from, timeoutMs: FIRST_DIALOG_MS }), from };
	}

	it("the host's own model as the main session, a child by its agent, a pi -p run by its task, directory and pid: never a session id", async () => {
		const own = await dialogOf("ask yourself");
		expect(own.dialog.title).toBe(`[main session] ${OWN.question}`);
		pi!.answer(own.dialog, "no");
		await pi!.waitForToolEnd(ASK_TOOL, { from: own.from });
		await pi!.waitForSettled({ from: own.from });

		const child = await dialogOf("run the child");
		expect(child.dialog.title).toBe(`[subagent-checkpoint-reviewer] ${CHILDS.question}`);
		pi!.answer(child.dialog, "follow-up");
		await pi!.waitForToolEnd("subagent", { from: child.from });
		await pi!.waitForSettled({ from: child.from });

		const { events } = await host();
		const printed = await dialogOf("start the asker");
		const match = /^\[(.+) \(pid (\d+)\)\] (.+)$/.exec(String(printed.dialog.title));
		expect(match, String(printed.dialog.title)).not.toBeNull();
		const [, label, pid] = match!;
		expect(label).toBe(`"Fix the flaky payment…" in ${basename(piEnv!.cwd)}`);
		expect(Number(pid)).not.toBe(pi!.pid);
		expect(match![3]).toBe(PRINTS.question);
		pi!.answer(printed.dialog, "vitest");
		await pi!.waitForToolEnd("bash", { from: printed.from, timeoutMs: 60_000 });
		const end = parseJsonLines(readFileSync(events, "utf8")).find((e) => e.type === "tool_execution_end" && e.toolName === ASK_TOOL);
		const envelope = end?.result?.details as Envelope;
		expect(envelope.status).toBe("ok");
		// The pi -p run names itself so; the host adds its pid to what it shows.
		expect(envelope.asker).toBe(label);
		for (const dialog of pi!.frames.filter((f) => f.type === "extension_ui_request" && typeof f.title === "string"))
			expect(dialog.title, "no title names a bare session id").not.toMatch(SESSION_ID_TITLE);
		await pi!.waitForSettled({ from: printed.from });
	});

	it("a child's question cancelled while it is shown brings the host a notice naming the child and the question", async () => {
		const child = await dialogOf("run the child");
		expect(child.dialog.title).toBe(`[subagent-checkpoint-reviewer] ${CHILDS.question}`);
		await pi!.command("abort", {});
		const notice = await pi!.waitFor((f) => isNotify(f) && String(f.message).includes("cancelled its question"), {
			from: child.from,
			what: "the cancel's notice",
		});
		expect(notice.message).toBe(`checkpoint-bridge: [subagent-checkpoint-reviewer] cancelled its question "${CHILDS.question}"; it is no longer asked.`);
	});
});
