/**
 * Ask now, answer later on the real `pi --mode rpc` (pi 1.6, and pi 0.85 in its own project): the
 * main session asks with `wait: false` and gets `queued` at once; the human answers later in pi's
 * dialog and the answer arrives as one message of this project's type, which starts a turn when the
 * session is idle and follows the running turn when it is busy.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { ASK_TOOL, isAnswerMessage, isNotify, onlyEnvelope, PiRpcFixture, resultText } from "./harness/pi-cli.ts";

const FIRST_DIALOG_MS = 60_000;
const QUEUED = { questions: [{ question: "Which database?", options: ["Postgres", "SQLite"] }], wait: false } as unknown as ScriptAsk;

describe("wait: false over RPC", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("the main session gets queued at once; the answer given two seconds later arrives as one message and starts a turn", async () => {
		run.createEnv({ script: { main: { ask: QUEUED } } });
		const rpc = run.startPi();
		const start = rpc.mark();
		await rpc.prompt("Set up the storage.");

		const receipt = onlyEnvelope(resultText((await rpc.waitForToolEnd(ASK_TOOL, { from: start, timeoutMs: FIRST_DIALOG_MS })).result));
		expect(receipt).toMatchObject({ status: "queued", answers: [] });
		// At once: as soon as the host took it, nothing of the human's time.
		expect(receipt.waitedMs).toBeLessThan(1_000);
		expect(receipt.requestId).toEqual(expect.any(String));
		expect(receipt.note).toContain("not an answer");
		// The call returned: its turn ends while the question waits for the human.
		await rpc.waitForSettled({ from: start });

		const dialog = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		await sleep(2_000);
		const answeredAt = rpc.mark();
		rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("SQLite"))!);

		const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, what: "the answer message" });
		expect(message.message.details).toMatchObject({
			v: 1,
			requestId: receipt.requestId,
			envelope: { status: "ok", requestId: receipt.requestId, answers: [{ question: "Which database?", answer: "SQLite" }] },
			questions: ["Which database?"],
		});
		// It started a turn: the model replies to it.
		const messageAt = rpc.frames.indexOf(message);
		await rpc.waitFor((f) => f.type === "message_end" && f.message?.role === "assistant", { from: messageAt, what: "the turn the answer started" });
		await rpc.waitForSettled({ from: messageAt });
		await sleep(500);
		expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
	});

	it("a session busy when the answer comes gets it after the running turn, once", async () => {
		run.createEnv({ script: { main: { ask: QUEUED, bash: { command: "sleep 4" } } } });
		const rpc = run.startPi();
		const start = rpc.mark();
		await rpc.prompt("Set up the storage while the build runs.");

		const dialog = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		const answeredAt = rpc.mark();
		rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("Postgres"))!);

		const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, what: "the answer message" });
		expect(message.message.details.envelope).toMatchObject({ status: "ok", answers: [{ answer: "Postgres" }] });
		// Not while the bash call ran: after its result, when the turn had nothing more to do.
		const bashEnd = rpc.frames.findIndex((f, i) => i >= start && f.type === "tool_execution_end" && f.toolName === "bash");
		expect(bashEnd).toBeGreaterThan(-1);
		expect(rpc.frames.indexOf(message)).toBeGreaterThan(bashEnd);
		await rpc.waitFor((f) => f.type === "message_end" && f.message?.role === "assistant", {
			from: rpc.frames.indexOf(message),
			what: "the turn after the answer",
		});
		await rpc.waitForSettled({ from: rpc.frames.indexOf(message) });
		await sleep(500);
		expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
	});

	it("a call with timeoutMs 3000 ends timeout; its question, late, is answered from /checkpoints in pi's dialogs and reaches the session once", async () => {
		run.createEnv({ script: { main: { ask: { questions: [{ question: "Which database?", options: ["Postgres", "SQLite"] }], timeoutMs: 3_000 } } } });
		const rpc = run.startPi();
		const start = rpc.mark();
		await rpc.prompt("Set up the storage.");
		const first = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		const ended = onlyEnvelope(resultText((await rpc.waitForToolEnd(ASK_TOOL, { from: start, timeoutMs: 30_000 })).result));
		expect(ended.status).toBe("timeout");
		expect(ended.note).toContain("stays open on the host, marked late");
		await rpc.waitForSettled({ from: start });

		const listedAt = rpc.mark();
		await rpc.prompt("/checkpoints");
		const report = await rpc.waitFor((f) => isNotify(f) && String(f.message).includes("late"), { from: listedAt, what: "the /checkpoints report" });
		expect(report.message).toContain("1 late");
		expect(report.message).toContain("Which database?");

		const reopenedAt = rpc.mark();
		await rpc.prompt("/checkpoints answer 1");
		const again = await rpc.waitForDialog({ from: reopenedAt, failOn: () => false });
		expect(again.id).not.toBe(first.id);
		expect(String(again.title)).toContain("Which database?");
		const answeredAt = rpc.mark();
		rpc.answer(again, (again.options as string[]).find((o) => o.startsWith("SQLite"))!);
		const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, what: "the late answer message" });
		expect(message.message.details).toMatchObject({
			late: true,
			requestId: ended.requestId,
			envelope: { status: "ok", answers: [{ question: "Which database?", answer: "SQLite" }] },
		});
		await rpc.waitForSettled({ from: rpc.frames.indexOf(message) });
		await sleep(500);
		expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
	});
});
