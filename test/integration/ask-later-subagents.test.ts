/**
 * Ask now, answer later from pi-subagents children on the real `pi --mode rpc`: a child asks with
 * `wait: false`, gets its receipt and finishes; the human answers after it is gone, and the answer
 * reaches the host's session as one message naming the child and its question. A foreground child
 * runs in the host's process (the process keeps the request); a background child runs in a runner
 * process that exits (the host's endpoint keeps it).
 */

import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { BACKGROUND_CHILDREN, hostEndpoint, isAnswerMessage, PI_VERSION, PiRpcFixture } from "./harness/pi-cli.ts";

/** A cold start compiles pi-subagents in the host and again in every runner process. */
const FIRST_DIALOG_MS = 120_000;
const QUESTION = "Which storage backend?";
const ASK_LATER = { questions: [{ question: QUESTION, options: ["sqlite", "postgres"] }], wait: false } as unknown as ScriptAsk;

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
		`a background child (local endpoint) asks with wait: false; its runner exits; the answer reaches the host's session once ${BACKGROUND_CHILDREN ? "" : `(needs pi 0.85; this is pi ${PI_VERSION})`}`,
		async () => {
			const piEnv = run.createEnv({
				agents: ["checkpoint-planner"],
				script: {
					main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer.", async: true } },
					children: { "checkpoint-planner": ASK_LATER },
				},
			});
			const rpc = run.startPi({ subagents: true });
			await hostEndpoint(piEnv, FIRST_DIALOG_MS);
			const start = rpc.mark();
			await rpc.prompt("Plan the storage layer in the background.");

			const dialog = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS, failOn: () => false });
			expect(String(dialog.title)).toMatch(/ \(pid \d+\)\] /);
			// The background run's completion comes back as its own message: the child is done, its runner gone.
			const completion = await rpc.waitFor(
				(f) =>
					f.type === "message_end" &&
					f.message?.customType === "subagent-notify" &&
					String(f.message?.content).includes("Background task completed: **checkpoint-planner**"),
				{ from: start, timeoutMs: 90_000, what: "the background completion" },
			);
			await rpc.waitForSettled({ from: rpc.frames.indexOf(completion) });
			await sleep(1_000);

			const answeredAt = rpc.mark();
			rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("sqlite"))!);
			const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, timeoutMs: 30_000, what: "the answer message in the host's session" });
			expect(message.message.details).toMatchObject({
				forwarded: true,
				questions: [QUESTION],
				envelope: { status: "ok", answers: [{ question: QUESTION, answer: "sqlite" }] },
			});
			expect(message.message.details.asker).toMatch(/checkpoint-planner/);
			await rpc.waitForSettled({ from: rpc.frames.indexOf(message) });
			await sleep(500);
			expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
		},
	);
});
