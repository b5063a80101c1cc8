/**
 * The audit trail on the real `pi --mode rpc` with a session file: a pi-subagents child asks and is
 * answered, the main model's own call times out. Each settled request must be in the host's session
 * file as a `checkpoint-bridge` custom entry (who asked, the questions, the answers, the outcome,
 * the timings), and `/checkpoints` must list that history, also after the session is resumed by a
 * new pi process.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import {
	ASK_TOOL,
	baseArgs,
	createPiEnv,
	envelopesIn,
	type Frame,
	isDialog,
	isNotify,
	PI_VERSION,
	type PiEnv,
	PiRpc,
	parseJsonLines,
	readTranscript,
	resultText,
	toolResultsIn,
} from "./harness/pi-cli.ts";

/** pi-subagents compiles itself on a cold cache: allow for it before the first dialog. */
const FIRST_DIALOG_MS = 90_000;
const CALL_BUDGET_MS = 2_000;
const PLAN_QUESTIONS = ["Which storage backend?", "Name of the new table?"];
const RELEASE_QUESTION = "Name of the release?";

/** What the audit trail records of a settled request. */
interface AuditRecord {
	requestId: string;
	asker: string;
	askerSessionId: string;
	questions: string[];
	answers: { question: string; answer: string; kind: string; source?: string; place?: string }[];
	status: string;
	note?: string;
	queuedAt: number;
	shownAt?: number;
	settledAt: number;
	waitedMs: number;
}

/** The pi CLI with a session file in `sessionDir` (the harness's base arguments without --no-session). */
function startWithSession(piEnv: PiEnv, options: { subagents: boolean; args: string[] }): PiRpc {
	const args = baseArgs({ subagents: options.subagents }).filter((arg) => arg !== "--no-session");
	return new PiRpc(piEnv, [...args, ...options.args]);
}

function auditEntries(sessionFile: string): { entry: Frame; data: AuditRecord }[] {
	return parseJsonLines(readFileSync(sessionFile, "utf8"))
		.filter((entry) => entry.type === "custom" && entry.customType === "checkpoint-bridge")
		.map((entry) => ({ entry, data: entry.data as AuditRecord }));
}

/** Sends `/checkpoints` and returns the notify it produced. */
async function checkpointsReport(rpc: PiRpc): Promise<string> {
	const mark = rpc.mark();
	const response = await rpc.prompt("/checkpoints");
	// pi 1.x says how it handled the prompt; pi 0.85 answers a command prompt without that field.
	if (PI_VERSION !== "0.85") expect(response.data?.disposition, "an extension command is handled, no run starts").toBe("handled");
	const notify = await rpc.waitFor((f) => isNotify(f) && String(f.message).startsWith("checkpoint-bridge:"), {
		from: mark,
		what: "the /checkpoints notify",
		timeoutMs: 10_000,
	});
	return String(notify.message);
}

describe("audit trail in the host's session file", () => {
	let piEnv: PiEnv | undefined;
	const running: PiRpc[] = [];

	afterEach(async () => {
		for (const rpc of running.splice(0)) await rpc.close();
		piEnv?.cleanup();
		piEnv = undefined;
	});

	it("records an answered child request and a timed-out call, and /checkpoints lists them, also after a resume", async () => {
		piEnv = createPiEnv({
			agents: ["checkpoint-planner"],
			script: {
				prompts: {
					plan: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer." } },
					"release name": { ask: { questions: [{ question: RELEASE_QUESTION }], timeoutMs: CALL_BUDGET_MS } },
				},
				children: {
					"checkpoint-planner": {
						questions: [
							{ id: "backend", question: PLAN_QUESTIONS[0], options: [{ label: "sqlite" }, { label: "postgres", description: "shared server" }] },
							{ question: PLAN_QUESTIONS[1] },
						],
					} as unknown as ScriptAsk,
				},
			},
		});
		const sessionDir = join(piEnv.root, "sessions");
		const rpc = startWithSession(piEnv, { subagents: true, args: ["--session-dir", sessionDir, "--name", "host"] });
		running.push(rpc);
		const state = (await rpc.command("get_state", {}, FIRST_DIALOG_MS)).data;
		const sessionFile = String(state.sessionFile);
		const hostSessionId = String(state.sessionId);
		expect(sessionFile.startsWith(sessionDir), `session file ${sessionFile} in the session dir`).toBe(true);

		// 1. The child's batch, answered.
		let start = rpc.mark();
		await rpc.prompt("plan");
		const backend = await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		const firstShownAt = rpc.arrivals[rpc.frames.indexOf(backend)]!;
		const table = await rpc.answerThenNextDialog(backend, "postgres — shared server");
		const mark = rpc.mark();
		const lastAnswerAt = Date.now();
		rpc.answer(table, "storage_items");
		const subagentEnd = await rpc.waitForToolEnd("subagent", { from: mark });
		const subagentEndAt = rpc.arrivals[rpc.frames.indexOf(subagentEnd)]!;
		const transcriptPath = subagentEnd.result?.details?.results?.[0]?.transcriptPath as string;
		const [childEnvelope] = envelopesIn(toolResultsIn(readTranscript(transcriptPath), ASK_TOOL)[0] ?? "");
		expect(childEnvelope?.status).toBe("ok");
		await rpc.waitForSettled({ from: start });

		// 2. The main model's own call: nobody answers it within its budget.
		start = rpc.mark();
		await rpc.prompt("release name");
		const ignored = await rpc.waitForDialog({ from: start });
		expect(ignored.title).toBe(`[host] ${RELEASE_QUESTION}`);
		// While it is open, /checkpoints lists it (an extension command runs even during a run).
		const openReport = await checkpointsReport(rpc);
		expect(openReport.split("\n")[0]).toBe("checkpoint-bridge: 1 open (1 shown, 0 queued), oldest first:");
		expect(openReport).toMatch(
			new RegExp(`^  \\[host\\] shown \\(question 1 of 1\\) since \\d\\d:\\d\\d:\\d\\d, asked 0 min ago: ${RELEASE_QUESTION.replace("?", "\\?")}$`, "m"),
		);
		const mainEnd = await rpc.waitForToolEnd(ASK_TOOL, { from: start, timeoutMs: CALL_BUDGET_MS + 10_000 });
		const mainEnvelope = envelopesIn(resultText(mainEnd.result))[0];
		expect(mainEnvelope?.status).toBe("timeout");
		await rpc.waitForSettled({ from: start });
		expect(rpc.frames.filter(isDialog)).toHaveLength(3);
		// The status line named the asker, queued and then shown, and named it late when the call's budget ran out.
		const statuses = rpc.frames
			.slice(start)
			.filter((f) => f.type === "extension_ui_request" && f.method === "setStatus" && f.statusKey === "checkpoint-bridge");
		expect(statuses.map((f) => f.statusText ?? null)).toEqual([
			"checkpoint-bridge: 1 queued: host (0 min)",
			"checkpoint-bridge: shown: host (0 min)",
			"checkpoint-bridge: 1 late: host (0 min)",
		]);

		// The session file holds one audit entry per settled request, in order.
		expect(existsSync(sessionFile)).toBe(true);
		const audit = auditEntries(sessionFile);
		expect(audit.map(({ data }) => data.status)).toEqual(["ok", "timeout"]);
		const [answered, timedOut] = audit.map(({ data }) => data) as [AuditRecord, AuditRecord];

		expect(answered.requestId).toBe(childEnvelope!.requestId);
		expect(answered.asker).toBe(childEnvelope!.asker);
		expect(answered.asker).toBe("subagent-checkpoint-planner");
		expect(answered.askerSessionId).toMatch(/\S/);
		expect(answered.askerSessionId, "the child asked, not the host").not.toBe(hostSessionId);
		expect(answered.questions).toEqual(PLAN_QUESTIONS);
		expect(answered.answers).toEqual([
			{ id: "backend", question: PLAN_QUESTIONS[0], answer: "postgres", kind: "option", source: "dialog", place: "rpc" },
			{ question: PLAN_QUESTIONS[1], answer: "storage_items", kind: "text", source: "dialog", place: "rpc" },
		]);
		expect(answered.note).toBeUndefined();
		// Timings on the host's clock, checked against what the client saw.
		expect(answered.queuedAt).toBeLessThanOrEqual(answered.shownAt!);
		expect(answered.shownAt!).toBeLessThanOrEqual(firstShownAt);
		expect(answered.settledAt).toBeGreaterThanOrEqual(lastAnswerAt);
		expect(answered.settledAt).toBeLessThanOrEqual(subagentEndAt);
		expect(answered.waitedMs).toBe(answered.settledAt - answered.queuedAt);

		expect(timedOut.requestId).toBe(mainEnvelope!.requestId);
		expect(timedOut.asker).toBe("host");
		expect(timedOut.askerSessionId).toBe(hostSessionId);
		expect(timedOut.questions).toEqual([RELEASE_QUESTION]);
		expect(timedOut.answers).toEqual([]);
		expect(timedOut.note).toMatch(/budget/);
		expect(timedOut.shownAt).toBeGreaterThanOrEqual(timedOut.queuedAt);
		expect(timedOut.waitedMs).toBe(timedOut.settledAt - timedOut.queuedAt);
		expect(timedOut.waitedMs).toBeGreaterThanOrEqual(CALL_BUDGET_MS - 100);
		expect(timedOut.waitedMs).toBeLessThan(CALL_BUDGET_MS + 3_000);

		// /checkpoints: nothing open, the host's counts, then the recent history, oldest first.
		const report = await checkpointsReport(rpc);
		const lines = report.split("\n");
		expect(lines[0]).toBe("checkpoint-bridge: no questions open.");
		expect(report).toContain("3 questions asked, shown to you in 3 dialogs.");
		expect(lines).toContain("Recent (2):");
		const history = lines.slice(lines.indexOf("Recent (2):") + 1);
		const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 8);
		const seconds = (ms: number) => (ms / 1000).toFixed(1);
		expect(history).toEqual([
			`  ${clock(answered.settledAt)} [${answered.asker}] ok, 2/2 answered, waited ${seconds(answered.waitedMs)} s`,
			`  ${clock(timedOut.settledAt)} [host] timeout, 0/1 answered, waited ${seconds(timedOut.waitedMs)} s`,
		]);
		await rpc.close();

		// A new pi process that resumes the session reads the same history from the file.
		const resumed = startWithSession(piEnv, { subagents: false, args: ["--session", sessionFile] });
		running.push(resumed);
		expect((await resumed.command("get_state")).data.sessionId).toBe(hostSessionId);
		const resumedReport = await checkpointsReport(resumed);
		expect(resumedReport).not.toContain("shown to you in");
		// The timed-out call's question stayed late until that process quit: its end, host-gone, is the third record (ADR-0025).
		const resumedLines = resumedReport.split("\n").slice(-4);
		expect(resumedLines.slice(0, 3)).toEqual(["Recent (3):", ...history]);
		expect(resumedLines[3]).toMatch(/^ {2}\d\d:\d\d:\d\d \[host\] no-host, 0\/1 answered, waited \d+\.\d s$/);
	});
});
