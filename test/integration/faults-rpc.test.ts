/**
 * Host replacement and shutdown on the real `pi --mode rpc`, driven as its client.
 *
 * What pi (1.6, and 0.85 alike) does on `new_session` while a tool call runs: AgentSessionRuntime.newSession() first
 * aborts the running turn and waits for it to settle, then emits session_shutdown ("new") on the
 * old session, disposes it and starts the next one (session_start). A question from the main
 * model, or from a foreground pi-subagents child (which runs inside that turn), is therefore
 * cancelled before the host hands anything over; nothing is shown again.
 *
 * Only an asker that lives outside the host's turn survives the replacement: harness/fault-asker.ts
 * provides one in the pi process (`/fault-ask`, `/fault-probe`).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import { type AskResult, askOutside, isReport, probe, reportData, resultOf, writeFaultAsker } from "./harness/fault-asker.ts";
import { ASK_TOOL, childTranscripts, envelopesIn, isDialog, type PiRpc, PiRpcFixture, toolResultsIn } from "./harness/pi-cli.ts";

/** pi-subagents compiles on first use: allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;
describe("RPC host replaced or shut down while questions are open", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	function start(options: { script?: ScriptConfig; agents?: string[]; subagents?: boolean } = {}): PiRpc {
		const piEnv = run.createEnv({ script: options.script ?? {}, agents: options.agents ?? [] });
		const extension = writeFaultAsker(piEnv);
		return run.startPi({ subagents: options.subagents ?? false, args: ["--name", "host", "--extension", extension] });
	}

	async function ask(rpc: PiRpc, label: string, question: string, options?: string[]): Promise<void> {
		await askOutside(rpc, label, question, options);
	}

	it("new_session during a foreground child's question: pi aborts the turn first, so the child's call ends cancelled and nothing is shown again", async () => {
		const rpc = start({
			subagents: true,
			agents: ["checkpoint-planner"],
			script: {
				main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer." } },
				children: { "checkpoint-planner": { questions: [{ question: "Which storage backend?", options: ["sqlite", "postgres"] }] } },
			},
		});
		const oldSession = (await rpc.command("get_state", {}, FIRST_DIALOG_MS)).data.sessionId as string;
		const baseline = await probe(rpc);
		const begin = rpc.mark();
		await rpc.prompt("Plan the storage layer with the planner.");
		const dialog = await rpc.waitForDialog({ from: begin, timeoutMs: FIRST_DIALOG_MS });
		expect(dialog.title).toBe("[subagent-checkpoint-planner] Which storage backend?");

		const replacing = rpc.mark();
		const response = await rpc.command("new_session");
		expect(response.data).toEqual({ cancelled: false });
		const frames = rpc.frames.slice(replacing);
		const responseAt = frames.indexOf(response);
		// The turn ended aborted before pi answered the command, i.e. before the new session started.
		const subagentEnd = frames.findIndex((f) => f.type === "tool_execution_end" && f.toolName === "subagent");
		expect(subagentEnd).toBeGreaterThanOrEqual(0);
		expect(subagentEnd).toBeLessThan(responseAt);
		// pi 1.6 ends the turn with stopReason "aborted", pi 0.85 with "error"; both say why.
		const aborted = frames.findIndex(
			(f) => f.type === "message_end" && f.message?.role === "assistant" && /abort/i.test(String(f.message?.errorMessage ?? "")),
		);
		expect(aborted).toBeGreaterThan(subagentEnd);
		expect(frames.findIndex((f) => f.type === "agent_end")).toBeGreaterThan(aborted);
		expect(frames.findIndex((f) => f.type === "agent_end")).toBeLessThan(responseAt);

		// The child's own call saw the abort.
		const childResults = childTranscripts(run.piEnv!).flatMap((t) => toolResultsIn(t.records, ASK_TOOL));
		expect(childResults).toHaveLength(1);
		const envelope = envelopesIn(childResults[0]!)[0];
		expect(envelope?.status).toBe("cancelled");

		const state = await rpc.command("get_state");
		expect(state.data.sessionId).not.toBe(oldSession);
		const after = await probe(rpc);
		expect(after.host, "the new session holds the host role").toBe(state.data.sessionId);
		expect(after.open).toEqual([]);
		expect(after.listeners).toEqual(baseline.listeners);
		expect(rpc.frames.slice(begin).filter(isDialog)).toEqual([dialog]);
	});

	it("new_session while an asker outside the turn has a question open and one queued: the new host shows each once more and the answers reach the askers", async () => {
		const rpc = start();
		const baseline = await probe(rpc);
		expect(baseline.host).not.toBeNull();
		const begin = rpc.mark();
		await ask(rpc, "alpha", "Keep the cache?", ["keep", "drop"]);
		const first = await rpc.waitForDialog({ from: begin });
		expect(first.title).toBe("[alpha] Keep the cache?");
		await ask(rpc, "beta", "Which branch?");
		await rpc.waitFor((f) => f.type === "extension_ui_request" && f.method === "notify" && String(f.message).includes("[beta] asks"), {
			from: begin,
			what: "receipt of beta's question",
		});

		const replacing = rpc.mark();
		await rpc.command("new_session");
		const again = await rpc.waitForDialog({ from: replacing });
		expect(again.title).toBe(first.title);
		expect(again.options).toEqual(first.options);
		expect(again.id).not.toBe(first.id);
		// The old dialog is gone on pi's side: an answer to it is ignored.
		rpc.answer(first, "keep");
		const branch = await rpc.answerThenNextDialog(again, "drop");
		expect(branch.title).toBe("[beta] Which branch?");
		rpc.answer(branch, "main");

		const alpha = await resultOf(rpc, "alpha", begin);
		const beta = await resultOf(rpc, "beta", begin);
		expect(alpha.envelope).toMatchObject({ status: "ok", answers: [{ question: "Keep the cache?", answer: "drop" }] });
		expect(beta.envelope).toMatchObject({ status: "ok", answers: [{ question: "Which branch?", answer: "main" }] });

		const after = await probe(rpc);
		expect(after.open).toEqual([]);
		expect(after.listeners).toEqual(baseline.listeners);
		expect(after.host).not.toBe(baseline.host);
		// Shown once before the replacement and once after; beta once. Answered "ok", not "no-host": the new
		// host took both over within the hand-over grace, whatever the machine's speed.
		expect(
			rpc.frames
				.slice(begin)
				.filter(isDialog)
				.map((f) => f.title),
		).toEqual([first.title, first.title, branch.title]);
	});

	it("switch_session (/resume) while an asker outside the turn has a question open: the resumed host shows it again and the answer reaches the asker", async () => {
		const rpc = start();
		// A saved session to resume: its header is all pi needs (docs/session-format.md).
		const saved = join(run.piEnv!.root, "saved-session.jsonl");
		writeFileSync(
			saved,
			`${JSON.stringify({ type: "session", version: 3, id: "0b9d6a52-1f6e-4c39-9a54-7d1f3c2e8a10", timestamp: new Date().toISOString(), cwd: run.piEnv!.cwd })}\n`,
		);
		const baseline = await probe(rpc);
		const begin = rpc.mark();
		await ask(rpc, "delta", "Resume the migration?", ["resume", "abandon"]);
		const first = await rpc.waitForDialog({ from: begin });
		expect(first.title).toBe("[delta] Resume the migration?");

		const resuming = rpc.mark();
		const response = await rpc.command("switch_session", { sessionPath: saved });
		expect(response.data).toEqual({ cancelled: false });
		const again = await rpc.waitForDialog({ from: resuming });
		expect(again.title).toBe(first.title);
		expect(again.id).not.toBe(first.id);
		rpc.answer(again, "resume");
		const delta = await resultOf(rpc, "delta", begin);
		expect(delta.envelope).toMatchObject({ status: "ok", answers: [{ question: "Resume the migration?", answer: "resume" }] });

		const after = await probe(rpc);
		expect(after.host, "the resumed session holds the host role").toBe("0b9d6a52-1f6e-4c39-9a54-7d1f3c2e8a10");
		expect(after.open).toEqual([]);
		expect(after.listeners).toEqual(baseline.listeners);
		expect(
			rpc.frames
				.slice(begin)
				.filter(isDialog)
				.map((f) => f.title),
		).toEqual([first.title, first.title]);
	});

	it("the client closes stdin (quit) while a question is open: the asker gets no-host at once", async () => {
		const rpc = start();
		const begin = rpc.mark();
		await ask(rpc, "gamma", "Rotate the keys?", ["rotate", "keep"]);
		await rpc.waitForDialog({ from: begin });
		await rpc.close();
		// Reported before pi exited: the quit settled it, not its 30 s budget nor a hand-over grace.
		const frame = await rpc.waitFor(isReport("result", "gamma"), { from: begin, what: "gamma's result before pi exited" });
		const gamma = reportData<AskResult>(frame, "result");
		expect(gamma.envelope.status).toBe("no-host");
		expect(gamma.envelope.note ?? "").toMatch(/ended \(quit\)/);
		expect(gamma.envelope.note ?? "").not.toMatch(/No new host took over/);
	});
});
