/**
 * The real `pi --mode rpc` as host, the real pi-subagents, and foreground children defined by the
 * example agent files: a child's questions reach the RPC client, and the answers travel back to the
 * child's tool result and on into the main agent's `subagent` result.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
	ASK_TOOL,
	answerPairs,
	childAskResults,
	type Envelope,
	type Frame,
	isDialog,
	isNotify,
	offeredOptions,
	onlyEnvelope,
	PiRpcFixture,
	resultText,
} from "./harness/pi-cli.ts";

const isToolMissingNotice = (frame: Frame) => isNotify(frame) && String(frame.message).includes("cannot ask you");

/** pi-subagents names a child session `subagent-<agent>-<runId>`; the bridge shows `subagent-<agent>`. */
const childTitle = (agent: string, rest: string) => new RegExp(`^\\[subagent-${agent}\\] ${rest.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);

/** pi-subagents loads slowly (it compiles its TypeScript on start): allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;

describe("RPC host with pi-subagents children", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("a foreground child's batch is shown to the RPC client and the answers reach the child and the main agent", async () => {
		run.createEnv({
			agents: ["checkpoint-planner"],
			script: {
				main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer." } },
				children: {
					"checkpoint-planner": {
						questions: [
							{ question: "Which storage backend?", options: ["sqlite", "postgres"] },
							{ question: "Name of the new table?", placeholder: "snake_case" },
						],
					},
				},
			},
		});
		const pi = run.startPi({ subagents: true });
		const start = pi.mark();
		await pi.prompt("Plan the storage layer with the planner.");

		const first = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(first.method).toBe("select");
		expect(first.title).toMatch(childTitle("checkpoint-planner", "(1/2) Which storage backend?"));
		expect(offeredOptions(first, 2)).toEqual(["sqlite", "postgres"]);
		// The host was told that a batch from another session arrived, before its first dialog.
		const receipt = pi.frames.slice(start, pi.frames.indexOf(first)).find(isNotify);
		expect(receipt?.message, "notify receipt for the child's batch").toContain("checkpoint-planner");

		const second = await pi.answerThenNextDialog(first, "postgres");
		expect(second.method).toBe("input");
		expect(second.title).toMatch(childTitle("checkpoint-planner", "(2/2) Name of the new table?"));
		expect(second.placeholder).toBe("snake_case");
		pi.answer(second, "storage_items");

		const subagentEnd = await pi.waitForToolEnd("subagent", { from: start });
		expect(subagentEnd.isError).toBe(false);
		// The example's acceptanceRole: pi-subagents asks no acceptance report of it, so none is rejected.
		expect(JSON.stringify(subagentEnd.result)).not.toContain('"status":"rejected"');
		const expectedAnswers = [
			{ question: "Which storage backend?", answer: "postgres" },
			{ question: "Name of the new table?", answer: "storage_items" },
		];

		// 1. The child's own tool result.
		const childResults = childAskResults(subagentEnd);
		expect(childResults).toHaveLength(1);
		const childEnvelope = onlyEnvelope(childResults[0]!);
		expect(childEnvelope.status).toBe("ok");
		expect(answerPairs(childEnvelope)).toEqual(expectedAnswers);
		expect(childEnvelope.asker).toBe("subagent-checkpoint-planner");
		expect(first.title.startsWith(`[${childEnvelope.asker}]`)).toBe(true);

		// 2. The main agent's `subagent` result carries the same envelope (the child's final text embeds it).
		expect(onlyEnvelope(resultText(subagentEnd.result))).toEqual(childEnvelope);

		await pi.waitForSettled({ from: start });
		expect(pi.frames.slice(start).filter(isDialog)).toHaveLength(2);
		expect(pi.frames.filter(isToolMissingNotice), "a child without a tools: line has the tool").toEqual([]);
	});

	it("a child whose agent file narrows tools: brings the host one notice per agent, naming the agent and the fix", async () => {
		const piEnv = run.createEnv({
			agents: ["checkpoint-reviewer"],
			script: {
				prompts: {
					"review it": { subagent: { agent: "checkpoint-reviewer", task: "Review the pending change." } },
					"review it again": { subagent: { agent: "checkpoint-reviewer", task: "Review the change once more." } },
				},
				children: { "checkpoint-reviewer": { questions: [{ question: "Does the missing test block the merge?", options: ["yes", "no"] }] } },
			},
		});
		// The mistake the examples warn about: a tools: allowlist instead of excludeTools.
		const agentFile = join(piEnv.agentDir, "agents", "checkpoint-reviewer.md");
		writeFileSync(agentFile, readFileSync(agentFile, "utf8").replace(/^excludeTools: .*$/m, "tools: read, bash"));
		const pi = run.startPi({ subagents: true });
		for (const prompt of ["review it", "review it again"]) {
			const from = pi.mark();
			await pi.prompt(prompt);
			const end = await pi.waitForToolEnd("subagent", { from, timeoutMs: FIRST_DIALOG_MS });
			expect(JSON.stringify(end.result), "the child's model was told the tool is missing").toContain(`Tool ${ASK_TOOL} not found`);
			await pi.waitForSettled({ from });
		}
		const notices = pi.frames.filter(isToolMissingNotice);
		expect(notices, "one notice for the agent, though it ran twice").toHaveLength(1);
		expect(notices[0]!.notifyType).toBe("warning");
		expect(notices[0]!.message).toBe(
			`checkpoint-bridge: sub-agent "checkpoint-reviewer" cannot ask you: its agent file's tools: line leaves out ${ASK_TOOL} (its model reads "Tool ${ASK_TOOL} not found"). Use excludeTools: instead of tools: in that agent file.`,
		);
		expect(pi.frames.filter(isDialog)).toEqual([]);
	});

	it("while a child waits on its question the main model asks too: dialogs reach the client one at a time, each answer reaches its asker", async () => {
		run.createEnv({
			agents: ["checkpoint-reviewer"],
			script: {
				// One assistant message with both calls: pi runs them side by side.
				main: {
					subagent: { agent: "checkpoint-reviewer", task: "Review the pending change." },
					ask: { questions: [{ question: "Release today?", options: ["yes", "no"] }] },
				},
				children: {
					"checkpoint-reviewer": {
						questions: [{ question: "Does the missing test block the merge?", options: ["blocks the merge", "follow-up issue"] }],
					},
				},
			},
		});
		const pi = run.startPi({ subagents: true });
		await pi.command("get_state", {}, FIRST_DIALOG_MS);
		// The host's own model asks as the main session, never by its session id.
		const mainAsker = "main session";
		const mainTitle = `[${mainAsker}] Release today?`;
		const childPattern = childTitle("checkpoint-reviewer", "Does the missing test block the merge?");
		const start = pi.mark();
		await pi.prompt("Review the change and tell me whether to release.");

		const first = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		// Both batches must be with the host while the first dialog is open. The child's batch is
		// announced by the host's receipt; the main model's call was started next to the `subagent` call.
		await pi.waitFor((f) => isNotify(f) && String(f.message).includes("checkpoint-reviewer"), { from: start, what: "receipt of the child's batch" });
		await pi.waitFor((f) => f.type === "tool_execution_start" && f.toolName === ASK_TOOL, { from: start, what: "main ask started" });
		// No event says "not shown"; the host's own report does say what it holds: once it lists both batches,
		// one shown and one queued, a wrongly concurrent host would already have shown the other dialog.
		for (let asked = 0; ; asked++) {
			const from = pi.mark();
			await pi.prompt("/checkpoints");
			const report = String(
				(await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith("checkpoint-bridge:"), { from, what: "the /checkpoints report" })).message,
			);
			if (/^checkpoint-bridge: 2 open/.test(report)) {
				expect(report.match(/\] (shown|queued)/g)?.sort()).toEqual(["] queued", "] shown"]);
				break;
			}
			expect(asked, `both batches held by the host (last report: ${report})`).toBeLessThan(50);
		}
		const answeredAt = pi.mark();
		expect(pi.frames.slice(start, answeredAt).filter(isDialog), "only one dialog before the first answer").toEqual([first]);

		const answerFor = (dialog: Frame) => (dialog.title === mainTitle ? "no" : "follow-up issue");
		const second = await pi.answerThenNextDialog(first, answerFor(first));
		const titles = [first, second].map((d) => d.title as string);
		expect(titles.filter((t) => t === mainTitle)).toHaveLength(1);
		expect(titles.filter((t) => childPattern.test(t))).toHaveLength(1);
		pi.answer(second, answerFor(second));

		const mainEnd = await pi.waitForToolEnd(ASK_TOOL, { from: start });
		const subagentEnd = await pi.waitForToolEnd("subagent", { from: start });

		const mainEnvelope = mainEnd.result.details as Envelope;
		expect(onlyEnvelope(resultText(mainEnd.result))).toEqual(mainEnvelope);
		expect(mainEnvelope.status).toBe("ok");
		expect(mainEnvelope.asker).toBe(mainAsker);
		expect(answerPairs(mainEnvelope)).toEqual([{ question: "Release today?", answer: "no" }]);

		const childEnvelope = onlyEnvelope(childAskResults(subagentEnd)[0] ?? "");
		expect(childEnvelope.status).toBe("ok");
		expect(answerPairs(childEnvelope)).toEqual([{ question: "Does the missing test block the merge?", answer: "follow-up issue" }]);
		expect(onlyEnvelope(resultText(subagentEnd.result))).toEqual(childEnvelope);

		await pi.waitForSettled({ from: start });
		expect(pi.frames.slice(start).filter(isDialog)).toHaveLength(2);
	});
});
