/**
 * The README's agent example, copied as written (only its path to checkpoint-bridge replaced, and the
 * scripted model added, since a child sees only the model providers it loads), run as a foreground
 * pi-subagents child of the real `pi --mode rpc`: its question reaches the human, and pi-subagents
 * ends the run without an acceptance verdict against it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BRIDGE_EXT, PiRpcFixture, REPO_ROOT, resultText, SCRIPTED_MODEL_EXT } from "./harness/pi-cli.ts";

/** The README's ```markdown agent file. */
function readmeAgent(): string {
	const block = /```markdown\n(---\n[\s\S]*?)```/.exec(readFileSync(join(REPO_ROOT, "README.md"), "utf8"))?.[1];
	if (!block) throw new Error("README.md has no ```markdown agent example");
	return block;
}

describe("the README's agent example", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("front matter reads clean; run as written, its question reaches the human and the run ends without a rejected acceptance", async () => {
		const agent = readmeAgent();
		// Front matter starts on the line after the opening ---, every line a key.
		const frontMatter = agent.split("\n---\n")[0]!.split("\n").slice(1);
		expect(frontMatter.every((line) => /^[\w-]+: \S/.test(line))).toBe(true);
		const piEnv = run.createEnv({
			script: {
				main: { subagent: { agent: "planner", task: "Plan the storage layer." } },
				children: { planner: { questions: [{ question: "Which storage backend?", options: ["sqlite", "postgres"] }] } },
			},
		});
		writeFileSync(
			join(piEnv.agentDir, "agents", "planner.md"),
			agent.replace("/path/to/checkpoint-bridge/extensions/checkpoint-bridge/index.ts", `${BRIDGE_EXT}, ${SCRIPTED_MODEL_EXT}`),
		);
		const pi = run.startPi({ subagents: true });
		const start = pi.mark();
		await pi.prompt("Plan the storage layer with the planner.");
		const dialog = await pi.waitForDialog({ from: start, timeoutMs: 90_000 });
		expect(dialog.title).toMatch(/^\[subagent-planner\] Which storage backend\?$/);
		pi.answer(dialog, "postgres");
		const end = await pi.waitForToolEnd("subagent", { from: start });
		const text = resultText(end.result);
		expect(end.isError).toBe(false);
		expect(text).toContain('"answer":"postgres"');
		// pi-subagents infers an attestation from the name "planner" unless told the child writes no code.
		expect(JSON.stringify(end.result)).not.toContain('"status":"rejected"');
		await pi.waitForSettled({ from: start });
	});
});
