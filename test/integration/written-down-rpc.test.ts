/**
 * Written down (core/store/, ADR-0033) on the real pi CLI: a host (`pi --mode rpc`) killed with
 * SIGKILL and started again in the same directory takes back the questions of other processes under
 * their ids. A `pi -p` run that asked with `wait: false` and ended gets its answer through a later
 * `pi -p` run's `wait_for_host_answers`; a waiting asker that re-sends finds its own record (one
 * dialog, one answer); a second restart changes nothing.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import {
	ASK_TOOL,
	answerPairs,
	askToolEnd,
	baseArgs,
	createPiEnv,
	type Envelope,
	envelopesIn,
	eventsIn,
	hostAdvertised,
	hostEndpoint,
	isAnswerMessage,
	isDialog,
	isNotify,
	NODE_BIN,
	PI_CLI,
	type PiEnv,
	PiRpc,
	parseJsonLines,
	runPi,
} from "./harness/pi-cli.ts";

const FIRST_DIALOG_MS = 90_000;
const QUEUED = { questions: [{ question: "Which database?", options: ["Postgres", "SQLite"] }], wait: false } as unknown as ScriptAsk;
const WAIT_TOOL = "wait_for_host_answers";

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

describe("written down: a host killed and started again in the same directory", () => {
	let env: PiEnv | undefined;
	const hosts: PiRpc[] = [];
	const startHost = (name: string) => {
		const host = PiRpc.start(env!, { args: ["--name", name] });
		hosts.push(host);
		return host;
	};
	const killed = async (host: PiRpc) => {
		host.kill("SIGKILL");
		await host.exited;
	};
	afterEach(async () => {
		for (const host of hosts.splice(0)) await host.close();
		env?.cleanup();
		env = undefined;
	});

	/** A later `pi -p` run (JSON events) whose model waits on `requestIds`; what its wait returned. */
	async function laterWait(requestIds: string[]) {
		env!.writeScript({ prompts: { "pick up the answer": { call: { tool: WAIT_TOOL, arguments: { requestIds, timeoutMs: 5_000 } } } } });
		const run = await runPi(env!, [...baseArgs(), "--mode", "json", "pick up the answer"], 90_000);
		expect(run.code, run.stderr.slice(-2_000)).toBe(0);
		const end = parseJsonLines(run.stdout).find((f) => f.type === "tool_execution_end" && f.toolName === WAIT_TOOL);
		expect(end, run.stdout.slice(-2_000)).toBeDefined();
		return end!.result?.details as { status: string; ended: Envelope[]; open: string[] };
	}

	it("a pi -p run asks with wait: false and ends; the host is killed and started again: the question comes back once under its id, is answered once, and a later pi -p run's wait_for_host_answers gets the envelope; a second restart changes nothing", async () => {
		env = createPiEnv({ script: { prompts: { "ask later": { ask: QUEUED } } } });
		const first = startHost("host");
		await hostEndpoint(env);
		const asked = await runPi(env, [...baseArgs(), "-p", "ask later"], 90_000);
		expect(asked.code, asked.stderr.slice(-2_000)).toBe(0);
		const receipt = envelopesIn(asked.stdout).find((e) => e.status === "queued");
		expect(receipt?.requestId, asked.stdout.slice(-2_000)).toEqual(expect.any(String));
		const requestId = receipt!.requestId!;
		await first.waitForDialog({ timeoutMs: FIRST_DIALOG_MS });
		await killed(first);

		const second = startHost("host-again");
		const dialog = await second.waitForDialog({ timeoutMs: FIRST_DIALOG_MS });
		expect(String(dialog.title)).toMatch(/ · asked before the restart\] Which database\?$/);
		const answeredAt = second.mark();
		second.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("SQLite"))!);
		// Its asker is gone: the host's session gets it, once, named by the asker's id.
		const message = await second.waitFor(isAnswerMessage, { from: answeredAt, what: "the forwarded answer" });
		expect(message.message.details).toMatchObject({ requestId, forwarded: true, envelope: { status: "ok" } });

		const waited = await laterWait([requestId]);
		expect(waited.status).toBe("ok");
		expect(waited.open).toEqual([]);
		expect(waited.ended).toHaveLength(1);
		expect(waited.ended[0]).toMatchObject({ status: "ok", requestId });
		expect(answerPairs(waited.ended[0]!)).toEqual([{ question: "Which database?", answer: "SQLite" }]);

		await sleep(500);
		expect(second.frames.filter(isDialog)).toHaveLength(1);
		expect(second.frames.filter(isAnswerMessage)).toHaveLength(1);
		await killed(second);

		// A second restart: nothing is asked again, and the answer is still there for a later wait.
		const third = startHost("host-third");
		// The killed host's socket is still there: the window starts once this host is up.
		await hostAdvertised(env, third);
		await sleep(3_000);
		expect(third.frames.filter(isDialog)).toEqual([]);
		expect(third.frames.filter(isAnswerMessage)).toEqual([]);
		const again = await laterWait([requestId]);
		expect(again.ended.map((e) => [e.status, e.requestId])).toEqual([["ok", requestId]]);
	});

	it("a pi -p run asks with wait: false and ends; the host quits (end of input) and is started again: the question comes back once, and its answer reaches a later run's wait", async () => {
		env = createPiEnv({ script: { prompts: { "ask later": { ask: QUEUED } } } });
		const first = startHost("host");
		await hostEndpoint(env);
		const asked = await runPi(env, [...baseArgs(), "-p", "ask later"], 90_000);
		const requestId = envelopesIn(asked.stdout).find((e) => e.status === "queued")?.requestId;
		expect(requestId, asked.stdout.slice(-2_000)).toEqual(expect.any(String));
		await first.waitForDialog({ timeoutMs: FIRST_DIALOG_MS });
		await first.close();
		// Nothing was forwarded as no-host on the way out.
		expect(first.frames.filter(isAnswerMessage)).toEqual([]);

		const second = startHost("host-again");
		const dialog = await second.waitForDialog({ timeoutMs: FIRST_DIALOG_MS });
		expect(String(dialog.title)).toMatch(/ · asked before the restart\] Which database\?$/);
		second.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("Postgres"))!);
		await second.waitFor(isAnswerMessage, { what: "the forwarded answer" });
		const waited = await laterWait([requestId!]);
		expect(waited.ended.map((e) => [e.status, e.requestId, answerPairs(e)])).toEqual([
			["ok", requestId, [{ question: "Which database?", answer: "Postgres" }]],
		]);
		expect(second.frames.filter(isDialog)).toHaveLength(1);
	});

	it("a pi -p run's call ends timeout and the run ends, its question late at the host; the host is killed and started again: the question is late again, answered from /checkpoints, and a later pi -p run's wait gets the late answer", async () => {
		const budgeted = { questions: [{ question: "Which region?", options: ["eu-west", "us-east"] }], timeoutMs: 3_000 };
		env = createPiEnv({ script: { prompts: { "ask with a budget": { ask: budgeted } } } });
		const first = startHost("host");
		await hostEndpoint(env);
		const asked = await runPi(env, [...baseArgs(), "-p", "ask with a budget"], 90_000);
		expect(asked.code, asked.stderr.slice(-2_000)).toBe(0);
		const timedOut = envelopesIn(asked.stdout).find((e) => e.status === "timeout");
		expect(timedOut?.requestId, asked.stdout.slice(-2_000)).toEqual(expect.any(String));
		const requestId = timedOut!.requestId!;
		await killed(first);

		const second = startHost("host-again");
		await hostAdvertised(env, second);
		const listedAt = second.mark();
		await second.prompt("/checkpoints");
		const report = await second.waitFor((f) => isNotify(f) && String(f.message).includes("late"), { from: listedAt, what: "the /checkpoints report" });
		expect(report.message).toContain("1 late");
		expect(report.message).toContain("Which region?");
		const reopenedAt = second.mark();
		await second.prompt("/checkpoints answer 1");
		const dialog = await second.waitForDialog({ from: reopenedAt, failOn: () => false });
		const answeredAt = second.mark();
		second.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("us-east"))!);
		const message = await second.waitFor(isAnswerMessage, { from: answeredAt, what: "the forwarded late answer" });
		expect(message.message.details).toMatchObject({ requestId, late: true, forwarded: true, envelope: { status: "ok" } });

		const waited = await laterWait([requestId]);
		expect(waited.ended.map((e) => [e.status, e.requestId, answerPairs(e)])).toEqual([["ok", requestId, [{ question: "Which region?", answer: "us-east" }]]]);
		await sleep(500);
		expect(second.frames.filter(isAnswerMessage)).toHaveLength(1);
	});

	it("a waiting pi asker's host is killed while its question shows: the next host shows it once, the asker's re-send finds it, the answer reaches the asker once; a second restart changes nothing", async () => {
		env = createPiEnv();
		const events = join(env.root, "asker-events.jsonl");
		const asker = [NODE_BIN, PI_CLI, ...baseArgs(), "--mode", "json", "ask the human"].map(quote).join(" ");
		env.writeScript({
			prompts: {
				"start the asker": { bash: { command: `exec ${asker} < /dev/null > ${quote(events)} 2> ${quote(`${events}.stderr`)}` } },
				"ask the human": { ask: { questions: [{ question: "Proceed with the rollback?", options: ["yes", "no"] }] } },
			},
		});
		const first = startHost("host");
		await hostEndpoint(env);
		const start = first.mark();
		await first.prompt("start the asker");
		await first.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		await killed(first);

		const second = startHost("host-again");
		const dialog = await second.waitForDialog({ timeoutMs: FIRST_DIALOG_MS });
		expect(String(dialog.title)).toMatch(/ · asked before the restart\] Proceed with the rollback\?$/);
		// The asker finds the new host and sends its request again (its grace looks every few hundred ms): still one dialog.
		await sleep(3_000);
		second.answer(dialog, "no");
		const askerEvents = () => eventsIn(events);
		const end = await askToolEnd(events, "the asker's tool result after the restart");
		const envelope = end.result?.details as Envelope;
		expect(envelope.status).toBe("ok");
		expect(answerPairs(envelope)).toEqual([{ question: "Proceed with the rollback?", answer: "no" }]);
		await until(() => askerEvents().at(-1)?.type === "agent_settled", "the asker's run to settle", 30_000, 50);
		expect(askerEvents().filter((e) => e.type === "tool_execution_end" && e.toolName === ASK_TOOL)).toHaveLength(1);
		await sleep(500);
		expect(second.frames.filter(isDialog)).toHaveLength(1);
		// Its asker took it: nothing is forwarded to the host's session.
		expect(second.frames.filter(isAnswerMessage)).toEqual([]);
		await killed(second);

		const third = startHost("host-third");
		// The killed host's socket is still there: the window starts once this host is up.
		await hostAdvertised(env, third);
		await sleep(3_000);
		expect(third.frames.filter(isDialog)).toEqual([]);
	});
});
