/**
 * Headless pi (no UI anywhere): `pi -p` prints only the final assistant text; `pi --mode json` prints
 * the events. No session can hold the host role, so a child that asks (and the main model, asking in
 * the same turn) gets a `no-host` envelope at once, and the run ends normally.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import {
	ASK_TOOL,
	baseArgs,
	childTranscripts,
	createPiEnv,
	type Envelope,
	envelopesIn,
	type PiEnv,
	parseJsonLines,
	resultText,
	runPi,
	toolResultsIn,
} from "./harness/pi-cli.ts";

/** Whole run, pi-subagents' start-up included; nobody can answer, so nothing may wait on a human. */
const RUN_DEADLINE_MS = 90_000;

const SCRIPT: ScriptConfig = {
	main: {
		subagent: { agent: "checkpoint-reviewer", task: "Review the pending change." },
		ask: { questions: [{ question: "Release today?", options: ["yes", "no"] }] },
	},
	children: {
		"checkpoint-reviewer": {
			questions: [
				{ question: "Does the missing test block the merge?", options: ["blocks the merge", "follow-up issue"] },
				{ question: "Anything else to check?" },
			],
		},
	},
};

function expectNoHost(envelope: Envelope | undefined, asker: RegExp): void {
	expect(envelope).toBeDefined();
	expect(envelope!.status).toBe("no-host");
	expect(envelope!.answers).toEqual([]);
	expect(envelope!.asker).toMatch(asker);
	// At once: the relay found no host when asked; a call that waited for one would have ended "timeout".
	expect(envelope!.note).toMatch(/No session with a UI holds the host role/);
	expect(envelope!.waitedMs).toBeTypeOf("number");
	expect(envelope!.waitedMs).toBeGreaterThanOrEqual(0);
}

/** The child's own tool result, read from the transcript pi-subagents wrote for it. */
function childEnvelope(piEnv: PiEnv): Envelope | undefined {
	const transcripts = childTranscripts(piEnv);
	expect(transcripts.map((t) => t.records[0]?.agent)).toEqual(["checkpoint-reviewer"]);
	const results = toolResultsIn(transcripts[0]!.records, ASK_TOOL);
	expect(results).toHaveLength(1);
	const envelopes = envelopesIn(results[0]!);
	expect(envelopes).toHaveLength(1);
	return envelopes[0];
}

describe("headless pi with pi-subagents", () => {
	let piEnv: PiEnv | undefined;

	afterEach(() => {
		piEnv?.cleanup();
		piEnv = undefined;
	});

	it("pi -p: the asking child and the main model get no-host at once, the final text carries both, exit 0", async () => {
		piEnv = createPiEnv({ agents: ["checkpoint-reviewer"], script: SCRIPT });
		const run = await runPi(piEnv, [...baseArgs({ subagents: true }), "-p", "Review the change and tell me whether to release."], RUN_DEADLINE_MS);
		expect(run.code, `stderr: ${run.stderr.slice(-2_000)}`).toBe(0);

		// -p prints the main model's final text, which embeds both tool results (the child's via its own text).
		const printed = envelopesIn(run.stdout);
		expect(printed, run.stdout.slice(0, 2_000)).toHaveLength(2);
		const child = childEnvelope(piEnv);
		expectNoHost(child, /^subagent-checkpoint-reviewer$/);
		expect(printed).toContainEqual(child);
		const mainOnes = printed.filter((e) => JSON.stringify(e) !== JSON.stringify(child));
		expect(mainOnes).toHaveLength(1);
		expectNoHost(mainOnes[0], /^"Review the change and…" in \S+$/);
	});

	it("pi --mode json: the tool_execution_end events show no-host for both askers", async () => {
		piEnv = createPiEnv({ agents: ["checkpoint-reviewer"], script: SCRIPT });
		const run = await runPi(piEnv, [...baseArgs({ subagents: true }), "--mode", "json", "Review the change and tell me whether to release."], RUN_DEADLINE_MS);
		expect(run.code, `stderr: ${run.stderr.slice(-2_000)}`).toBe(0);
		const events = parseJsonLines(run.stdout);
		expect(
			events.filter((e) => e.type === "extension_ui_request"),
			"no dialog in a run without UI",
		).toEqual([]);

		const mainEnd = events.find((e) => e.type === "tool_execution_end" && e.toolName === ASK_TOOL);
		const mainEnvelope = mainEnd?.result?.details as Envelope | undefined;
		expect(envelopesIn(resultText(mainEnd?.result))).toEqual([mainEnvelope]);
		expectNoHost(mainEnvelope, /^"Review the change and…" in \S+$/);

		const subagentEnd = events.find((e) => e.type === "tool_execution_end" && e.toolName === "subagent");
		expect(subagentEnd?.isError).toBe(false);
		const child = childEnvelope(piEnv);
		expectNoHost(child, /^subagent-checkpoint-reviewer$/);
		expect(envelopesIn(resultText(subagentEnd?.result))).toEqual([child]);
		expect(events.at(-1)?.type).toBe("agent_settled");
	});
});
