/**
 * Ask now, answer later from pi-subagents children on the real `pi --mode rpc`: a child asks with
 * `wait: false`, gets its receipt and finishes; the human answers after it is gone, and the answer
 * reaches the host's session as one message naming the child and its question. A foreground child
 * runs in the host's process (the process keeps the request); a background child runs in a runner
 * process that may still run when the answer comes, its child's session gone: the answer goes to it
 * over the endpoint, and its ack (not recorded) sends it to the host's session (ADR-0028).
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { BACKGROUND_CHILDREN, hostEndpoint, isAnswerMessage, PI_VERSION, type PiEnv, PiRpcFixture } from "./harness/pi-cli.ts";

/** A cold start compiles pi-subagents in the host and again in every runner process. */
const FIRST_DIALOG_MS = 120_000;
const QUESTION = "Which storage backend?";
const ASK_LATER = { questions: [{ question: QUESTION, options: ["sqlite", "postgres"] }], wait: false } as unknown as ScriptAsk;

/**
 * Holds a background runner in its child's shutdown, once the extension under test (loaded before it)
 * has let the session go: writes the runner's pid to `pidFile`, then waits until `releaseFile` exists
 * (at most 4.5 s, within pi-subagents' 5 s for a shutdown). An answer given then reaches a runner whose
 * session is gone, as it did on a busy machine, where the runner was slow to exit.
 */
function holdInShutdown(piEnv: PiEnv, agent: string, pidFile: string, releaseFile: string): void {
	const extension = join(piEnv.root, "hold-in-shutdown.ts");
	writeFileSync(
		extension,
		`import { existsSync, writeFileSync } from "node:fs";
export default function holdInShutdown(pi) {
	pi.on("session_shutdown", async () => {
		writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
		const until = Date.now() + 4_500;
		while (!existsSync(${JSON.stringify(releaseFile)}) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
	});
}
`,
	);
	const agentFile = join(piEnv.agentDir, "agents", `${agent}.md`);
	writeFileSync(agentFile, readFileSync(agentFile, "utf8").replace(/^extensions: (.*)$/m, `extensions: $1, ${extension}`));
}

const alive = (pid: number) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

describe("wait: false from children that are gone when the answer comes", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("a foreground child asks with wait: false and finishes; the later answer reaches the host's session naming the child", async () => {
		const piEnv = run.createEnv({
			agents: ["checkpoint-planner"],
			script: { main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer." } }, children: { "checkpoint-planner": ASK_LATER } },
		});
		const rpc = run.startPi({ subagents: true });
		// Ready once its endpoint is: a cold start compiles pi-subagents first.
		await hostEndpoint(piEnv, FIRST_DIALOG_MS);
		const start = rpc.mark();
		await rpc.prompt("Plan the storage layer with the planner.");

		const dialog = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
		expect(String(dialog.title)).toMatch(/^\[subagent-checkpoint-planner\] /);
		// The child got its receipt and finished; the main turn ended with the question still open.
		const childDone = await rpc.waitForToolEnd("subagent", { from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(JSON.stringify(childDone.result)).toContain('\\"status\\":\\"queued\\"');
		await rpc.waitForSettled({ from: rpc.frames.indexOf(childDone) });

		const answeredAt = rpc.mark();
		rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("postgres"))!);
		const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, timeoutMs: 30_000, what: "the answer message in the host's session" });
		const details = message.message.details;
		expect(details).toMatchObject({
			forwarded: true,
			questions: [QUESTION],
			envelope: { status: "ok", answers: [{ question: QUESTION, answer: "postgres" }] },
		});
		expect(details.asker).toMatch(/checkpoint-planner/);
		expect(String(message.message.content)).toContain(`${details.asker} asked ("${QUESTION}")`);
		await rpc.waitForSettled({ from: rpc.frames.indexOf(message) });
		await sleep(500);
		expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
	});

	it.skipIf(!BACKGROUND_CHILDREN)(
		`a background child (local endpoint) asks with wait: false; its runner, still running when the answer comes, does not record it: the answer reaches the host's session once ${BACKGROUND_CHILDREN ? "" : `(needs pi 0.85; this is pi ${PI_VERSION})`}`,
		async () => {
			const piEnv = run.createEnv({
				agents: ["checkpoint-planner"],
				script: {
					main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer.", async: true } },
					children: { "checkpoint-planner": ASK_LATER },
				},
			});
			const runnerPid = join(piEnv.root, "runner.pid");
			const release = join(piEnv.root, "release");
			holdInShutdown(piEnv, "checkpoint-planner", runnerPid, release);
			const rpc = run.startPi({ subagents: true });
			await hostEndpoint(piEnv, FIRST_DIALOG_MS);
			const start = rpc.mark();
			await rpc.prompt("Plan the storage layer in the background.");

			const dialog = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
			expect(String(dialog.title)).toMatch(/ \(pid \d+\)\] /);
			// The child is done and its session gone; its runner still runs, held in the shutdown.
			await until(() => existsSync(runnerPid), "the child's session shut down", 90_000, 20);

			const answeredAt = rpc.mark();
			rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("sqlite"))!);
			const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, timeoutMs: 30_000, what: "the answer message in the host's session" });
			expect(message.message.details).toMatchObject({
				forwarded: true,
				questions: [QUESTION],
				envelope: { status: "ok", answers: [{ question: QUESTION, answer: "sqlite" }] },
			});
			expect(message.message.details.asker).toMatch(/checkpoint-planner/);
			// The runner was there to receive it: its ack, not its exit, sent the answer here.
			const pid = Number(readFileSync(runnerPid, "utf8"));
			expect(alive(pid), "the runner still runs").toBe(true);
			writeFileSync(release, "");
			// The background run's completion comes back as its own message once the runner is done.
			const completion = await rpc.waitFor(
				(f) =>
					f.type === "message_end" &&
					f.message?.customType === "subagent-notify" &&
					String(f.message?.content).includes("Background task completed: **checkpoint-planner**"),
				{ from: start, timeoutMs: 90_000, what: "the background completion" },
			);
			await rpc.waitForSettled({ from: Math.max(rpc.frames.indexOf(completion), rpc.frames.indexOf(message)) });
			await sleep(500);
			expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
			// Gone before the environment is removed: a runner still finishing writes into it.
			await until(() => !alive(pid), "the runner's exit", 30_000, 50);
		},
	);
});
