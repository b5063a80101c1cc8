/**
 * Askers in other processes than the host's, on the real pi CLI: they reach the host's dialogs through
 * the local endpoint the host advertises in CHECKPOINT_BRIDGE_ENDPOINT, which what it spawns inherits.
 *
 * - pi-subagents background children (`async: true`, a workflow's `runs.all`) run in detached runner
 *   processes; pi-subagents 0.67 starts them only on a pi whose pi-agent-core has `./node` (0.85.x).
 * - A separate `pi -p` asks a host that lives in this test process (pi's SDK, programmatic UI).
 * - Faults: the host process killed while a remote asker's dialog is open; a wrong token (the host cannot prove itself).
 */
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { advertDir, advertPath } from "../../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { until } from "../support/until.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import {
	ASK_TOOL,
	answerPairs,
	askToolEnd,
	BACKGROUND_CHILDREN,
	baseArgs,
	childTranscripts,
	createPiEnv,
	type Envelope,
	envelopesIn,
	eventsIn,
	type Frame,
	hostEndpoint,
	installExampleAgent,
	isDialog,
	isNotify,
	NODE_BIN,
	NOT_ON_OLDEST_PI,
	offeredOptions,
	onDevPiOnly,
	PI_CLI,
	PI_VERSION,
	type PiEnv,
	PiRpc,
	resultText,
	runPi,
	toolResultsIn,
} from "./harness/pi-cli.ts";
import { PiWorld, type ProgrammaticUI } from "./harness/sdk-sessions.ts";

/** A cold start compiles pi-subagents in the host and again in every runner process. */
const FIRST_DIALOG_MS = 120_000;
/** ADR-0002: an asker learns that its host is gone within two seconds. */
const HOST_LOSS_MS = 2_000;
const NEEDS_RUNNER = `(pi-subagents' background runner needs pi 0.85; this is pi ${PI_VERSION})`;
// The run's summary only counts skipped tests: say which and why where the run prints it.
if (!BACKGROUND_CHILDREN) console.warn(`cross-process.test.ts: the background-children tests are skipped ${NEEDS_RUNNER}; the pi-0.85 project runs them`);

/** A relayed asker's title: `[<label> (pid N)] <question>`; the pid marks an asker in another process. */
interface RemoteTitle {
	label: string;
	pid: number;
	question: string;
}

function parseRemoteTitle(dialog: Frame): RemoteTitle {
	const match = /^\[(.+) \(pid (\d+)\)\] (.+)$/.exec(String(dialog.title));
	expect(match, `a remote asker's title: ${dialog.title}`).not.toBeNull();
	return { label: match![1]!, pid: Number(match![2]), question: match![3]! };
}

/** pi-subagents names a child `subagent-<agent>-<runId>[-<step>]`; the title shows `subagent-<agent>[#<step>]`. */
const namesAgent = (label: string, agent: string) => new RegExp(`^subagent-${agent}(?:#\\d+)?$`).test(label);

/**
 * Whether `pid` is a live process started under `piEnv` (its environment names the run's agent dir):
 * runners and askers outlive the pi that started them, and a pid may be reused once they are gone.
 */
function runningIn(piEnv: PiEnv, pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
		return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`PI_CODING_AGENT_DIR=${piEnv.agentDir}`);
	} catch {
		return false;
	}
}

/** The background runs pi-subagents started in this environment: run id, runner pid, mode. */
function backgroundRuns(piEnv: PiEnv): { runId: string; pid?: number; mode?: string; agent?: string }[] {
	const dir = join(piEnv.subagentsTmp, "async-subagent-runs");
	if (!existsSync(dir)) return [];
	return readdirSync(dir)
		.filter((name) => existsSync(join(dir, name, "status.json")))
		.map((runId) => {
			const status = JSON.parse(readFileSync(join(dir, runId, "status.json"), "utf8")) as {
				pid?: number;
				mode?: string;
				agent?: string;
				agents?: string[];
				steps?: { agent?: string }[];
			};
			return { runId, pid: status.pid, mode: status.mode, agent: status.agent ?? status.agents?.[0] ?? status.steps?.[0]?.agent };
		});
}

/** The child's own `ask_user_via_host` results, from the transcript pi-subagents keeps for that run. */
function childAskEnvelopes(piEnv: PiEnv, runId: string): Envelope[] {
	const transcripts = childTranscripts(piEnv).filter((t) => basename(t.path).startsWith(`${runId}_`));
	expect(transcripts, `one transcript for run ${runId}`).toHaveLength(1);
	return toolResultsIn(transcripts[0]!.records, ASK_TOOL).flatMap((text) => envelopesIn(text));
}

/** pi-subagents' completion notice for a background run, delivered into the main session. */
const completionOf = (what: string) => (frame: Frame) =>
	frame.type === "message_end" &&
	frame.message?.role === "custom" &&
	frame.message?.customType === "subagent-notify" &&
	String(frame.message?.content).includes(`Background task completed: **${what}**`);

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

describe("askers in other processes reach the host's dialogs", () => {
	let piEnv: PiEnv | undefined;
	let pi: PiRpc | undefined;
	let world: PiWorld | undefined;
	/** Processes started by the test's pi processes (askers; runners are found in pi-subagents' records). */
	const strays = new Set<number>();

	afterEach(async () => {
		const env = piEnv;
		for (const run of env ? backgroundRuns(env) : []) if (run.pid) strays.add(run.pid);
		// The host goes first: its remote askers then get no-host and finish by themselves.
		await pi?.close();
		await world?.close();
		if (env) {
			const left = () => [...strays].filter((pid) => runningIn(env, pid));
			await until(() => left().length === 0, "stray processes to end", 10_000, 50).catch(() => {
				for (const pid of left()) process.kill(pid, "SIGKILL");
			});
			// Removing the temp dir while one of them still writes there would fail.
			await until(() => left().length === 0, "killed processes to go", 5_000, 50);
		}
		strays.clear();
		piEnv?.cleanup();
		pi = undefined;
		piEnv = undefined;
		world = undefined;
	});

	/** A host whose model launches the planner as a background child (async: true); resolves once the main turn has ended. */
	async function launchBackgroundPlanner() {
		piEnv = createPiEnv({
			agents: ["checkpoint-planner"],
			script: {
				main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer.", async: true } },
				children: { "checkpoint-planner": { questions: [{ question: "Which storage backend?", options: ["sqlite", "postgres"] }] } },
			},
		});
		const host = PiRpc.start(piEnv, { subagents: true });
		pi = host;
		await hostEndpoint(piEnv, FIRST_DIALOG_MS);
		const start = host.mark();
		await host.prompt("Plan the storage layer in the background.");
		// The launch returns at once and the main turn ends: the child runs detached.
		const launched = await host.waitForToolEnd("subagent", { from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(launched.isError, resultText(launched.result)).toBe(false);
		const runId = launched.result?.details?.asyncId as string;
		expect(runId, "the launch names its background run").toBeTypeOf("string");
		return { runId, start, settled: await host.waitForSettled({ from: start }), host, env: piEnv };
	}

	it.skipIf(!BACKGROUND_CHILDREN)(
		`a background child (async: true) asks from its runner process; the answer reaches it and its result reaches the main session ${BACKGROUND_CHILDREN ? "" : NEEDS_RUNNER}`,
		async () => {
			const { runId, settled, host: pi, env: piEnv } = await launchBackgroundPlanner();
			const afterTurn = pi.frames.indexOf(settled) + 1;

			const dialog = await pi.waitForDialog({ from: afterTurn, timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
			expect(dialog.method).toBe("select");
			expect(offeredOptions(dialog, 2)).toEqual(["sqlite", "postgres"]);
			const title = parseRemoteTitle(dialog);
			expect(title.question).toBe("Which storage backend?");
			expect(namesAgent(title.label, "checkpoint-planner"), `${title.label} names the child's agent`).toBe(true);
			// The pid is the runner's, another process than the host.
			const run = backgroundRuns(piEnv).find((r) => r.runId === runId);
			expect(run?.pid, "pi-subagents recorded the runner's pid").toBeTypeOf("number");
			expect(title.pid).toBe(run!.pid);
			expect(title.pid).not.toBe(pi.pid);
			const receipt = pi.frames.slice(afterTurn, pi.frames.indexOf(dialog)).find(isNotify);
			expect(receipt?.message, "an arrival receipt before the dialog").toContain(`[${title.label} (pid ${title.pid})]`);

			const answeredAt = pi.mark();
			pi.answer(dialog, "postgres");

			// The background result comes back later, as a message that starts a new turn of the main session.
			const completion = await pi.waitFor(completionOf("checkpoint-planner"), { from: answeredAt, timeoutMs: 60_000, what: "the background completion" });
			const delivered = envelopesIn(String(completion.message.content));
			expect(delivered, String(completion.message.content).slice(0, 1_000)).toHaveLength(1);
			const envelope = delivered[0]!;
			expect(envelope.status).toBe("ok");
			expect(answerPairs(envelope)).toEqual([{ question: "Which storage backend?", answer: "postgres" }]);
			expect(envelope.asker, "the child knows itself by the label the host showed").toBe(title.label);
			expect(childAskEnvelopes(piEnv, runId)).toEqual([envelope]);
			await pi.waitFor((f) => f.type === "agent_end", { from: pi.frames.indexOf(completion), what: "the main session's turn on the result" });
			expect(pi.frames.filter(isDialog)).toEqual([dialog]);
		},
	);

	it.skipIf(!BACKGROUND_CHILDREN)(
		`a background child keeps its question across a host killed (SIGKILL) and started again in the same directory; the answer reaches the child ${BACKGROUND_CHILDREN ? "" : NEEDS_RUNNER}`,
		async () => {
			const { runId, settled, host, env } = await launchBackgroundPlanner();
			const dialog = await host.waitForDialog({ from: host.frames.indexOf(settled) + 1, timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
			const title = parseRemoteTitle(dialog);
			host.kill("SIGKILL");
			await host.exited;

			pi = PiRpc.start(env, { subagents: true, args: ["--name", "host-again"] });
			const again = await pi.waitForDialog({ timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
			expect(again.title).toBe(`[${title.label} (pid ${title.pid}) · asked before the restart] Which storage backend?`);
			pi.answer(again, "postgres");
			const written = () => {
				try {
					return childAskEnvelopes(env, runId)[0];
				} catch {
					return undefined; // the child's transcript is not written yet
				}
			};
			const envelope = await until(written, "the child's result after the restart", 60_000, 100);
			expect(envelope.status).toBe("ok");
			expect(answerPairs(envelope)).toEqual([{ question: "Which storage backend?", answer: "postgres" }]);
			expect(pi.frames.filter(isDialog)).toEqual([again]);
		},
	);

	it.skipIf(!BACKGROUND_CHILDREN)(
		`three workflow children (runs.all) ask at once: one dialog at a time, titled by asker, each answer to its asker ${BACKGROUND_CHILDREN ? "" : NEEDS_RUNNER}`,
		async () => {
			const asks: ScriptConfig["children"] = {
				"checkpoint-planner": { questions: [{ question: "Which storage backend?", options: ["sqlite", "postgres"] }] },
				"checkpoint-reviewer": { questions: [{ question: "Does the missing test block the merge?", options: ["blocks the merge", "follow-up issue"] }] },
				"checkpoint-scout": { questions: [{ question: "Which module goes first?", placeholder: "a path" }] },
			};
			const answers: Record<string, string> = {
				"checkpoint-planner": "postgres",
				"checkpoint-reviewer": "follow-up issue",
				"checkpoint-scout": "src/storage",
			};
			const agents = Object.keys(answers);
			const workflowScript = [
				"const results = await runs.all([",
				...agents.map((agent) => `  { key: ${JSON.stringify(agent)}, agent: ${JSON.stringify(agent)}, task: "Settle your open question with the user." },`),
				"]);",
				"return results.map((result) => result.output);",
			].join("\n");
			piEnv = createPiEnv({
				agents: ["checkpoint-planner", "checkpoint-reviewer"],
				script: { main: { workflow: { script: workflowScript } }, children: asks },
			});
			installExampleAgent(piEnv.agentDir, "checkpoint-reviewer", { as: "checkpoint-scout" });
			pi = PiRpc.start(piEnv, { subagents: true });
			await hostEndpoint(piEnv, FIRST_DIALOG_MS);
			const start = pi.mark();
			await pi.prompt("Run the three checks in parallel.");
			const launched = await pi.waitForToolEnd("subagent", { from: start, timeoutMs: FIRST_DIALOG_MS });
			expect(launched.isError, resultText(launched.result)).toBe(false);
			const settled = await pi.waitForSettled({ from: start });
			const afterTurn = pi.frames.indexOf(settled) + 1;

			// All three must be waiting at the host while the first dialog is open: one receipt per asker.
			const receipts = () =>
				new Set(
					pi!.frames
						.slice(afterTurn)
						.filter((f) => isNotify(f) && /\(pid \d+\)\] asks/.test(String(f.message)))
						// A notice restates the earlier arrivals of its window still open: every asker it names counts.
						.flatMap((f) => [...String(f.message).matchAll(/\[([^\]]+?) \(pid \d+\)\] asks/g)].map((m) => m[1]!)),
				);
			await until(() => receipts().size === 3, "receipts of all three askers", FIRST_DIALOG_MS, 50);
			const shown: Frame[] = [];
			const titles: (RemoteTitle & { agent: string })[] = [];
			let from = afterTurn;
			for (let turn = 0; turn < agents.length; turn++) {
				const dialog = await pi.waitForDialog({ from, timeoutMs: 30_000, failOn: () => false });
				// The host's own report of what it holds (one shown, the rest queued) comes after the dialog: a
				// wrongly concurrent host would have shown another dialog by then.
				const reporting = pi.mark();
				await pi.prompt("/checkpoints");
				const report = String(
					(await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith("checkpoint-bridge:"), { from: reporting, what: "the /checkpoints report" }))
						.message,
				);
				expect(report.match(/\] (shown|queued)/g), report).toEqual(["] shown", ...Array<string>(agents.length - turn - 1).fill("] queued")]);
				const open = pi.frames.slice(from).filter(isDialog);
				expect(open, `exactly one dialog before answer ${turn + 1}`).toEqual([dialog]);
				shown.push(dialog);
				const title = parseRemoteTitle(dialog);
				const agent = agents.find((name) => namesAgent(title.label, name));
				expect(agent, `the title names one of the children: ${dialog.title}`).toBeDefined();
				titles.push({ ...title, agent: agent! });
				const question = asks[agent!]!.questions[0]!;
				expect(title.question).toBe(question.question);
				expect(dialog.method).toBe(question.options ? "select" : "input");
				from = pi.mark();
				pi.answer(dialog, answers[agent!]!);
			}

			// Three askers, each in its own runner process, none of them the host.
			expect(titles.map((t) => t.agent).sort()).toEqual([...agents].sort());
			const pids = titles.map((t) => t.pid);
			expect(new Set(pids).size).toBe(3);
			expect(pids).not.toContain(pi.pid);

			const completion = await pi.waitFor(completionOf("workflow"), { from, timeoutMs: 60_000, what: "the workflow's completion" });
			expect(String(completion.message.content)).toContain("Workflow completed with 3 child run(s)");
			const runs = backgroundRuns(piEnv).filter((r) => r.mode !== "workflow");
			expect(runs).toHaveLength(3);
			for (const { agent, ...title } of titles) {
				const run = runs.find((r) => r.agent === agent);
				expect(run, `a background run for ${title.label}`).toBeDefined();
				expect(title.pid, `the title's pid is ${agent}'s runner`).toBe(run!.pid);
				const [envelope, ...more] = childAskEnvelopes(piEnv, run!.runId);
				expect(more).toEqual([]);
				expect(envelope?.status).toBe("ok");
				expect(envelope?.asker).toBe(title.label);
				expect(answerPairs(envelope)).toEqual([{ question: title.question, answer: answers[agent]! }]);
				expect(String(completion.message.content), `the workflow's return carries ${agent}'s answer`).toContain(answers[agent]!);
			}
			expect(pi.frames.filter(isDialog)).toEqual(shown);
		},
	);

	describe("a separate pi -p and a host in this process", () => {
		/** A host session in this test process (pi's SDK): its endpoint is advertised in this process's env. */
		async function sdkHost(): Promise<{ ui: ProgrammaticUI; endpoint: string }> {
			world = new PiWorld();
			const { ui } = await world.createHost({ name: "sdk-host" });
			const endpoint = await until(() => process.env.CHECKPOINT_BRIDGE_ENDPOINT, "CHECKPOINT_BRIDGE_ENDPOINT in the host's environment");
			return { ui, endpoint };
		}

		const SCRIPT: ScriptConfig = { main: { ask: { questions: [{ question: "Which region should the job run in?", options: ["eu-west", "us-east"] }] } } };

		it("pi -p started with the host's CHECKPOINT_BRIDGE_ENDPOINT asks through it and prints the answer", async () => {
			const { ui, endpoint } = await sdkHost();
			piEnv = createPiEnv({ script: SCRIPT, env: { CHECKPOINT_BRIDGE_ENDPOINT: endpoint } });
			const running = runPi(piEnv, [...baseArgs(), "-p", "Run the job."], 60_000);

			const dialog = await ui.waitForDialog(() => true, 60_000, "the pi -p question");
			expect(dialog.method).toBe("select");
			expect(dialog.options?.slice(0, 2)).toEqual(["eu-west", "us-east"]);
			const title = parseRemoteTitle({ type: "dialog", title: dialog.title });
			expect(title.question).toBe("Which region should the job run in?");
			// An unnamed pi -p run is shown by the first words of its task and its directory, never by its session id.
			expect(title.label).toMatch(/^"Run the job\." in \S+$/);
			expect(
				ui.notifications.some((n) => n.message.includes(`[${title.label} (pid ${title.pid})]`)),
				"an arrival receipt",
			).toBe(true);
			dialog.answer("us-east");

			const run = await running;
			expect(run.code, run.stderr.slice(-2_000)).toBe(0);
			expect(title.pid, "the title names the pi -p process").toBe(run.pid);
			const printed = envelopesIn(run.stdout);
			expect(printed, run.stdout.slice(0, 2_000)).toHaveLength(1);
			expect(printed[0]!.status).toBe("ok");
			expect(printed[0]!.asker).toBe(title.label);
			expect(answerPairs(printed[0])).toEqual([{ question: "Which region should the job run in?", answer: "us-east" }]);
			expect(ui.dialogs).toHaveLength(1);
		});

		it.skipIf(NOT_ON_OLDEST_PI)(
			onDevPiOnly(
				"an asker holding a wrong token asks nothing: the host cannot prove itself with that token, so no-host at once, no dialog, and the host serves on",
			),
			async () => {
				const { ui, endpoint } = await sdkHost();
				// The same socket (a hard link to it) in a private directory of this user, with another token beside it:
				// what a process holding a stale or guessed token would see. The host cannot prove it holds that token.
				const forged = mkdtempSync(join(tmpdir(), "cb-forged-"));
				try {
					linkSync(endpoint, join(forged, "socket"));
					writeFileSync(join(forged, "token"), "A".repeat(43), { mode: 0o600 });
					piEnv = createPiEnv({ script: SCRIPT, env: { CHECKPOINT_BRIDGE_ENDPOINT: join(forged, "socket") } });
					const refused = await runPi(piEnv, [...baseArgs(), "-p", "Run the job."], 60_000);
					expect(refused.code, refused.stderr.slice(-2_000)).toBe(0);
					const [envelope, ...more] = envelopesIn(refused.stdout);
					expect(more).toEqual([]);
					expect(envelope?.status, refused.stdout.slice(0, 2_000)).toBe("no-host");
					// At once: refused by the endpoint's trust check, not ended by the call's budget ("timeout").
					expect(envelope?.note).toMatch(/is not trusted: it could not prove it holds the token/);
					expect(ui.dialogs, "nothing reached the human").toEqual([]);
				} finally {
					rmSync(forged, { recursive: true, force: true });
				}

				// The refusal closed only that connection: the next asker with the real token is served.
				ui.respond = (dialog) => dialog.answer("eu-west");
				piEnv.env.CHECKPOINT_BRIDGE_ENDPOINT = endpoint;
				const served = await runPi(piEnv, [...baseArgs(), "-p", "Run the job."], 60_000);
				expect(served.code, served.stderr.slice(-2_000)).toBe(0);
				expect(envelopesIn(served.stdout).map((e) => [e.status, answerPairs(e)])).toEqual([
					["ok", [{ question: "Which region should the job run in?", answer: "eu-west" }]],
				]);
				expect(ui.dialogs).toHaveLength(1);
			},
		);
	});

	/** A host whose model starts a `pi --mode json` asker with its bash tool (so it inherits the host's environment); resolves once the asker's dialog is open. */
	async function hostWithAskerWaiting(env: Record<string, string> = {}) {
		const tree = createPiEnv({ env });
		piEnv = tree;
		const events = join(tree.root, "asker-events.jsonl");
		const asker = [NODE_BIN, PI_CLI, ...baseArgs(), "--mode", "json", "ask the human"].map(quote).join(" ");
		tree.writeScript({
			prompts: {
				"start the asker": { bash: { command: `exec ${asker} < /dev/null > ${quote(events)} 2> ${quote(`${events}.stderr`)}` } },
				"ask the human": { ask: { questions: [{ question: "Proceed with the rollback?", options: ["yes", "no"] }] } },
			},
		});
		const host = PiRpc.start(tree, { args: ["--name", "rpc-host"] });
		pi = host;
		await hostEndpoint(tree);
		const start = host.mark();
		await host.prompt("start the asker");
		await host.waitFor((f) => f.type === "tool_execution_start" && f.toolName === "bash", { from: start, what: "the bash call" });
		const dialog = await host.waitForDialog({ from: start, timeoutMs: 60_000 });
		return { host, events, dialog, env: tree };
	}

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly(
			"with CHECKPOINT_BRIDGE_HOST_GRACE_MS=0, the host process killed (SIGKILL) while a remote asker's dialog is open: the asker gets no-host in under 2 s",
		),
		async () => {
			const { host: pi, events, dialog } = await hostWithAskerWaiting({ CHECKPOINT_BRIDGE_HOST_GRACE_MS: "0" });
			const title = parseRemoteTitle(dialog);
			expect(title.question).toBe("Proceed with the rollback?");
			expect(title.pid).not.toBe(pi.pid);
			strays.add(title.pid);

			const killedAt = Date.now();
			pi.kill("SIGKILL");
			await pi.exited;
			const askerEvents = () => eventsIn(events);
			const seenAt = await until(
				() => (askerEvents().some((e) => e.type === "tool_execution_end" && e.toolName === ASK_TOOL) ? Date.now() : undefined),
				"the asker's tool result after the host died",
			);
			expect(seenAt - killedAt, "host loss noticed within two seconds").toBeLessThan(HOST_LOSS_MS);
			const end = askerEvents().find((e) => e.type === "tool_execution_end" && e.toolName === ASK_TOOL)!;
			const envelope = end.result?.details as Envelope;
			expect(envelope.status).toBe("no-host");
			expect(envelope.answers).toEqual([]);
			expect(envelope.note).toBeTruthy();
			expect(envelope.asker).toBe(title.label);

			// The asker finishes its run by itself (its pid may linger as a zombie: nobody is left to reap it).
			await until(() => askerEvents().at(-1)?.type === "agent_settled", "the asker's run to settle", 30_000, 50);
		},
	);
	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly(
			"the host process killed (SIGKILL) while a pi asker waits: a new host started in the same directory shows the question within 5 s, marked as asked before the restart, and the answer reaches the asker",
		),
		async () => {
			const { host, events, dialog, env } = await hostWithAskerWaiting();
			const title = parseRemoteTitle(dialog);
			strays.add(title.pid);
			host.kill("SIGKILL");
			await host.exited;

			// The asker keeps its question; pi started again in the same directory (nothing passes it the old variable) shows it.
			const startedAt = Date.now();
			pi = PiRpc.start(env, { args: ["--name", "rpc-host-again"] });
			const advert = advertPath(advertDir(env.env.TMPDIR!), env.cwd);
			const advertisedAt = await until(
				() => (existsSync(advert) && JSON.parse(readFileSync(advert, "utf8")).pid === pi!.pid ? Date.now() : undefined),
				"the new host's advertisement",
				90_000,
			);
			const again = await pi.waitForDialog({ timeoutMs: 30_000 });
			const shownAt = Date.now();
			console.info(
				`cross-process.test.ts: the new host showed the question ${shownAt - advertisedAt} ms after it advertised its endpoint, ${shownAt - startedAt} ms after pi was started`,
			);
			expect(shownAt - advertisedAt, "shown within 5 s of the new host's start").toBeLessThan(5_000);
			expect(again.title).toBe(`[${title.label} (pid ${title.pid}) · asked before the restart] Proceed with the rollback?`);
			pi.answer(again, "no");

			const askerEvents = () => eventsIn(events);
			const end = await askToolEnd(events, "the asker's tool result after the restart");
			const envelope = end.result?.details as Envelope;
			expect(envelope.status).toBe("ok");
			expect(answerPairs(envelope)).toEqual([{ question: "Proceed with the rollback?", answer: "no" }]);
			expect(pi.frames.filter(isDialog)).toHaveLength(1);
			await until(() => askerEvents().at(-1)?.type === "agent_settled", "the asker's run to settle", 30_000, 50);
		},
	);
});
