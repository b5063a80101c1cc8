/**
 * Host replacement and shutdown on the real `pi --mode rpc`, driven as its client.
 *
 * What pi (1.6, and 0.85 alike) does on `new_session` while a tool call runs: AgentSessionRuntime.newSession() first
 * aborts the running turn and waits for it to settle, then emits session_shutdown ("new") on the
 * old session, disposes it and starts the next one (session_start). A question from the main
 * model, or from a foreground pi-subagents child (which runs inside that turn), is therefore
 * cancelled before the host hands anything over; nothing is shown again.
 *
 * Only an asker that lives outside the host's turn survives the replacement. A small extension
 * written by this file provides one in the pi process: the command `/fault-ask` asks through the
 * bridge's own asker module on the process-global bus and reports the result as a notify frame,
 * and `/fault-probe` reports the bus's listeners and the host's snapshot.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
	ASK_TOOL,
	BRIDGE_EXT,
	childTranscripts,
	envelopesIn,
	isDialog,
	PiRpcFixture,
	toolResultsIn,
	type Envelope,
	type Frame,
	type PiRpc,
} from "./harness/pi-cli.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";

/** pi-subagents compiles on first use: allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;
const REPORT = "fault:";

const ASKER_EXTENSION = `
import { askViaHost } from ${JSON.stringify(join(dirname(BRIDGE_EXT), "core", "asker.ts"))};
const HANDLE = Symbol.for("checkpoint-bridge.handle");
const UI = Symbol.for("checkpoint-bridge.test.fault-ui");

export default function faultAsker(pi) {
	// Reports go to whichever session holds the UI now: the asker outlives the session that started it.
	pi.on("session_start", (_event, ctx) => { globalThis[UI] = ctx.ui; });
	const report = (kind, data) => globalThis[UI].notify(${JSON.stringify(REPORT)} + kind + " " + JSON.stringify(data), "info");

	pi.registerCommand("fault-ask", {
		description: "asks one question through the bridge from outside any session's turn",
		handler: async (args) => {
			const { label, question, options, budgetMs } = JSON.parse(args);
			const startedAt = Date.now();
			void askViaHost({
				handle: globalThis[HANDLE],
				asker: { label, sessionId: "fault-" + label },
				questions: [{ question, ...(options ? { options } : {}) }],
				budgetMs,
				dialogTimeoutMs: budgetMs,
			}).then((envelope) => report("result", { label, envelope, tookMs: Date.now() - startedAt }));
		},
	});

	pi.registerCommand("fault-probe", {
		description: "reports the bus's listeners and what the host holds",
		handler: async () => {
			const handle = globalThis[HANDLE];
			const listeners = Object.fromEntries(handle.bus.eventNames().map((name) => [String(name), handle.bus.listenerCount(name)]));
			report("probe", { listeners, open: handle.snapshot()?.open ?? null, host: handle.host()?.sessionId ?? null });
		},
	});
}
`;

interface Probe {
	listeners: Record<string, number>;
	open: Array<{ asker: { label: string } }> | null;
	host: string | null;
}
interface AskResult {
	label: string;
	envelope: Envelope;
	tookMs: number;
}

const isReport = (kind: string, label?: string) => (frame: Frame) =>
	frame.type === "extension_ui_request" &&
	frame.method === "notify" &&
	typeof frame.message === "string" &&
	frame.message.startsWith(`${REPORT}${kind} `) &&
	(label === undefined || (JSON.parse(frame.message.slice(REPORT.length + kind.length + 1)) as { label?: string }).label === label);
const reportData = <T>(frame: Frame, kind: string): T => JSON.parse(String(frame.message).slice(REPORT.length + kind.length + 1)) as T;

describe("RPC host replaced or shut down while questions are open", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	function start(options: { script?: ScriptConfig; agents?: string[]; subagents?: boolean } = {}): PiRpc {
		const piEnv = run.createEnv({ script: options.script ?? {}, agents: options.agents ?? [] });
		const extension = join(piEnv.root, "fault-asker.ts");
		writeFileSync(extension, ASKER_EXTENSION);
		return run.startPi({ subagents: options.subagents ?? false, args: ["--name", "host", "--extension", extension] });
	}

	async function probe(rpc: PiRpc): Promise<Probe> {
		const from = rpc.mark();
		await rpc.prompt("/fault-probe");
		return reportData<Probe>(await rpc.waitFor(isReport("probe"), { from, what: "probe report" }), "probe");
	}

	async function ask(rpc: PiRpc, label: string, question: string, options?: string[]): Promise<void> {
		await rpc.prompt(`/fault-ask ${JSON.stringify({ label, question, options, budgetMs: 30_000 })}`);
	}

	async function resultOf(rpc: PiRpc, label: string, from = 0): Promise<AskResult> {
		return reportData<AskResult>(await rpc.waitFor(isReport("result", label), { from, what: `result of ${label}` }), "result");
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
		const sentAt = Date.now();
		await rpc.command("new_session");
		const again = await rpc.waitForDialog({ from: replacing });
		const reshownAfterMs = rpc.arrivals[rpc.frames.indexOf(again)]! - sentAt;
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
		// Shown once before the replacement and once after; beta once.
		expect(rpc.frames.slice(begin).filter(isDialog).map((f) => f.title)).toEqual([first.title, first.title, branch.title]);
		// Recorded for the report: how long the client waited for the dialog to come back.
		expect(reshownAfterMs).toBeLessThan(1_000);
	});

	it("the client closes stdin (quit) while a question is open: the asker gets no-host at once", async () => {
		const rpc = start();
		const begin = rpc.mark();
		await ask(rpc, "gamma", "Rotate the keys?", ["rotate", "keep"]);
		await rpc.waitForDialog({ from: begin });
		const closedAt = Date.now();
		await rpc.close();
		const frame = await rpc.waitFor(isReport("result", "gamma"), { from: begin, timeoutMs: 1_000, what: "gamma's result before pi exited" });
		const gamma = reportData<AskResult>(frame, "result");
		expect(gamma.envelope.status).toBe("no-host");
		expect(gamma.envelope.note ?? "").toMatch(/ended \(quit\)/);
		expect(rpc.arrivals[rpc.frames.indexOf(frame)]! - closedAt).toBeLessThan(500);
	});
});
