/**
 * Edge cases of the RPC client's side of a dialog, on the real `pi --mode rpc`: a dismissed dialog, an
 * answer that is not one of the options, a dialog nobody answers before the call's budget ends, a call
 * aborted while its dialog is open, and a call whose budget ends while it waits in the queue.
 * The main session asks its own questions here (no pi-subagents): the dialog path is the same for any
 * asker, and a pi process without pi-subagents starts in about a second. The question that holds the
 * dialog while another waits comes from an asker outside the turn (harness/fault-asker.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import { askOutside, resultOf, writeFaultAsker } from "./harness/fault-asker.ts";
import { ASK_TOOL, answerPairs, type Envelope, envelopesIn, type Frame, isDialog, isNotify, type PiRpc, PiRpcFixture, resultText } from "./harness/pi-cli.ts";

const CALL_BUDGET_MS = 2_000;

function envelopeOf(toolEnd: Frame): Envelope {
	const fromText = envelopesIn(resultText(toolEnd.result));
	expect(fromText).toHaveLength(1);
	expect(toolEnd.result.details).toEqual(fromText[0]);
	return fromText[0]!;
}

describe("RPC client edge cases", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	async function startWith(script: ScriptConfig): Promise<PiRpc> {
		const piEnv = run.createEnv({ script });
		return run.startPi({ args: ["--name", "host", "--extension", writeFaultAsker(piEnv)] });
	}

	it("a dialog the client cancels ends the batch as timeout-or-cancelled, keeping the answers given so far", async () => {
		const rpc = await startWith({
			prompts: {
				migrate: {
					ask: {
						questions: [
							{ question: "Which database?", options: ["staging", "production"] },
							{ question: "Proceed with the migration?", options: ["yes", "no"] },
						],
					},
				},
			},
		});
		const start = rpc.mark();
		await rpc.prompt("migrate");
		const first = await rpc.waitForDialog({ from: start });
		expect(first.title).toBe("[host] (1/2) Which database?");
		const second = await rpc.answerThenNextDialog(first, "staging");
		expect(second.title).toBe("[host] (2/2) Proceed with the migration?");
		const mark = rpc.mark();
		rpc.cancel(second);

		const envelope = envelopeOf(await rpc.waitForToolEnd(ASK_TOOL, { from: mark }));
		expect(envelope.status).toBe("timeout-or-cancelled");
		expect(answerPairs(envelope)).toEqual([{ question: "Which database?", answer: "staging" }]);
		expect(envelope.note).toBeTruthy();
		await rpc.waitForSettled({ from: mark });
		expect(rpc.frames.slice(mark).filter(isDialog), "a cancelled dialog is not asked again").toEqual([]);
	});

	it("a select answer that was not offered is refused with a notice and the same select is asked again", async () => {
		const rpc = await startWith({
			prompts: { region: { ask: { questions: [{ question: "Which region?", options: ["eu-west", "us-east"] }] } } },
		});
		const start = rpc.mark();
		await rpc.prompt("region");
		const first = await rpc.waitForDialog({ from: start });
		expect(first.method).toBe("select");

		// pi passes any string through for a select; the bridge must check it.
		let mark = rpc.mark();
		const again = await rpc.answerThenNextDialog(first, "mars");
		const refusal = rpc.frames.slice(mark, rpc.frames.indexOf(again)).filter(isNotify);
		expect(refusal, "a notice before the select is shown again").toHaveLength(1);
		expect(refusal[0]!.message).toContain("mars");
		expect(again.id).not.toBe(first.id);
		expect(again.method).toBe("select");
		expect(again.title).toBe(first.title);
		expect(again.options).toEqual(first.options);

		mark = rpc.mark();
		rpc.answer(again, "us-east");
		const envelope = envelopeOf(await rpc.waitForToolEnd(ASK_TOOL, { from: mark }));
		expect(envelope.status).toBe("ok");
		expect(answerPairs(envelope)).toEqual([{ question: "Which region?", answer: "us-east" }]);
		await rpc.waitForSettled({ from: mark });
		expect(rpc.frames.slice(start).filter(isDialog)).toHaveLength(2);
	});

	it("a dialog nobody answers ends with the call's budget as timeout, and pi does not keep holding it", async () => {
		const rpc = await startWith({
			prompts: {
				"name it": { ask: { questions: [{ question: "Name of the release?", placeholder: "e.g. 1.4" }], timeoutMs: CALL_BUDGET_MS } },
				"still there": { ask: { questions: [{ question: "Tag it now?", options: ["yes", "no"] }] } },
			},
		});
		const start = rpc.mark();
		await rpc.prompt("name it");
		const ignored = await rpc.waitForDialog({ from: start });
		expect(ignored.method).toBe("input");
		// pi resolves a dialog itself at its `timeout`: the dialog must not outlive the call's budget.
		expect(ignored.timeout).toBeGreaterThan(0);
		expect(ignored.timeout).toBeLessThanOrEqual(CALL_BUDGET_MS);

		const end = await rpc.waitForToolEnd(ASK_TOOL, { from: start, timeoutMs: CALL_BUDGET_MS + 10_000 });
		const envelope = envelopeOf(end);
		expect(envelope.status, `${JSON.stringify(envelope)}; dialog timeout ${ignored.timeout}`).toBe("timeout");
		expect(answerPairs(envelope)).toEqual([]);
		// Timers never fire early: the call ran its whole budget (the upper end is the machine's, not the relay's);
		// the asker's budget timer or the host's ended it, and the note says so.
		expect(envelope.waitedMs).toBeGreaterThanOrEqual(CALL_BUDGET_MS - 1);
		expect(envelope.note).toMatch(/budget/);
		await rpc.waitForSettled({ from: start });

		// The RPC protocol has no "dialog closed" event, so "pi is not left holding the dialog" is
		// observed as: (1) its request carried a timeout within the budget (above); (2) pi never asks
		// it again; (3) a late answer to it goes nowhere; (4) the next question is shown at once and
		// its answer is its own: nothing is queued behind, or answered by, the dead dialog.
		const afterTimeout = rpc.mark();
		rpc.answer(ignored, "too late");
		await rpc.prompt("still there");
		const next = await rpc.waitForDialog({ from: afterTimeout });
		expect(next.title).toBe("[host] Tag it now?");
		const mark = rpc.mark();
		rpc.answer(next, "yes");
		const nextEnvelope = envelopeOf(await rpc.waitForToolEnd(ASK_TOOL, { from: mark }));
		expect(nextEnvelope.status).toBe("ok");
		// Shown before its own budget (300 s) could have ended it: nothing was queued behind the dead dialog.
		expect(nextEnvelope.waitedMs).toBeLessThan(300_000);
		expect(answerPairs(nextEnvelope)).toEqual([{ question: "Tag it now?", answer: "yes" }]);
		await rpc.waitForSettled({ from: mark });

		const dialogs = rpc.frames.slice(start).filter(isDialog);
		expect(dialogs.map((d) => d.title)).toEqual(["[host] Name of the release?", "[host] Tag it now?"]);
		expect(rpc.frames.slice(afterTimeout).some((f) => f.type === "extension_ui_request" && f.id === ignored.id)).toBe(false);
	});

	it("a call aborted while its dialog is open ends cancelled; the dialog is not asked again, a late answer goes nowhere, and the next question is served", async () => {
		const rpc = await startWith({
			prompts: {
				deploy: { ask: { questions: [{ question: "Deploy to production?", options: ["yes", "no"] }] } },
				after: { ask: { questions: [{ question: "Notify the team?", options: ["yes", "no"] }] } },
			},
		});
		const start = rpc.mark();
		await rpc.prompt("deploy");
		const open = await rpc.waitForDialog({ from: start });
		expect(open.title).toBe("[host] Deploy to production?");
		const mark = rpc.mark();
		await rpc.command("abort");
		const envelope = envelopeOf(await rpc.waitForToolEnd(ASK_TOOL, { from: mark }));
		expect(envelope.status).toBe("cancelled");
		expect(envelope.note).toMatch(/aborted/);
		await rpc.waitForSettled({ from: start });

		// The next question is shown while the aborted dialog still has no answer: nothing holds the queue.
		const afterAbort = rpc.mark();
		await rpc.prompt("after");
		const next = await rpc.waitForDialog({ from: afterAbort });
		expect(next.title).toBe("[host] Notify the team?");
		rpc.answer(open, "yes");
		const answered = rpc.mark();
		rpc.answer(next, "no");
		const nextEnvelope = envelopeOf(await rpc.waitForToolEnd(ASK_TOOL, { from: answered }));
		expect(nextEnvelope).toMatchObject({ status: "ok", answers: [{ question: "Notify the team?", answer: "no" }] });
		await rpc.waitForSettled({ from: answered });
		expect(
			rpc.frames
				.slice(start)
				.filter(isDialog)
				.map((d) => d.title),
		).toEqual(["[host] Deploy to production?", "[host] Notify the team?"]);
	});

	it("a call whose budget ends while it waits in the queue ends timeout and its question is never shown", async () => {
		const rpc = await startWith({
			prompts: { queued: { ask: { questions: [{ question: "Rename the branch?", options: ["yes", "no"] }], timeoutMs: CALL_BUDGET_MS } } },
		});
		const start = rpc.mark();
		// An asker outside the turn holds the one dialog while the main model's call queues behind it.
		await askOutside(rpc, "holder", "Hold the dialog?", ["hold", "release"]);
		const holder = await rpc.waitForDialog({ from: start });
		expect(holder.title).toBe("[holder] Hold the dialog?");
		await rpc.prompt("queued");
		const envelope = envelopeOf(await rpc.waitForToolEnd(ASK_TOOL, { from: start, timeoutMs: CALL_BUDGET_MS + 30_000 }));
		expect(envelope.status).toBe("timeout");
		expect(envelope.waitedMs).toBeGreaterThanOrEqual(CALL_BUDGET_MS - 1);
		await rpc.waitForSettled({ from: start });

		// The holder's answer is the positive event after which a dropped question would have been shown.
		rpc.answer(holder, "release");
		const result = await resultOf(rpc, "holder", start);
		expect(result.envelope).toMatchObject({ status: "ok", answers: [{ answer: "release" }] });
		const probing = rpc.mark();
		await askOutside(rpc, "probe", "Anything left?", ["no", "yes"]);
		const probe = await rpc.waitForDialog({ from: probing });
		expect(probe.title).toBe("[probe] Anything left?");
		rpc.answer(probe, "no");
		await resultOf(rpc, "probe", start);
		expect(
			rpc.frames
				.slice(start)
				.filter(isDialog)
				.map((d) => d.title),
		).toEqual(["[holder] Hold the dialog?", "[probe] Anything left?"]);
	});
});
