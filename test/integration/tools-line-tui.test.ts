/**
 * The mistake a `tools:` line makes, in the real TUI (tmux) with the real pi-subagents: a child whose
 * agent file narrows its tools has no ask_user_via_host, and the host's human is told so, with the fix.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { baseArgs, createPiEnv, NODE_BIN, PI_CLI, type PiEnv } from "./harness/pi-cli.ts";
import { TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

if (!hasTmux) console.warn("tools-line-tui.test.ts: skipped: tmux is not installed");
describe.skipIf(!hasTmux)(`a tools: line in the real TUI${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let piEnv: PiEnv | undefined;
	afterAll(async () => {
		await tmux?.dispose();
		piEnv?.cleanup();
	});

	it("a child whose agent file narrows tools: brings the host's terminal a notice naming the agent and the fix", async () => {
		piEnv = createPiEnv({
			agents: ["checkpoint-reviewer"],
			script: {
				prompts: { "review it": { subagent: { agent: "checkpoint-reviewer", task: "Review the pending change." } } },
				children: { "checkpoint-reviewer": { questions: [{ question: "Does the missing test block the merge?", options: ["yes", "no"] }] } },
			},
		});
		const agentFile = join(piEnv.agentDir, "agents", "checkpoint-reviewer.md");
		writeFileSync(agentFile, readFileSync(agentFile, "utf8").replace(/^excludeTools: .*$/m, "tools: read, bash"));
		const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs({ subagents: true }), "--name", "tui-host"].map(quote);
		tmux = new TmuxSession();
		await tmux.start({ command: `env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>/dev/null; sleep 30`, cwd: piEnv.cwd, width: 200, height: 50 });
		await tmux.waitFor("tui-host", 60_000, "pi's editor and footer");
		await tmux.type("review it");
		// pi drops an Enter pressed while its startup is still in progress: press again until the run starts.
		for (let attempt = 0; ; attempt++) {
			await tmux.keys("Enter");
			try {
				// Not "pi-subagents" of the startup banner: the call itself.
				await tmux.waitFor(/(?<!pi-)subagent(?!s)/, 5_000, "the subagent call");
				break;
			} catch (error) {
				if (attempt >= 5) throw error;
			}
		}
		const screen = await tmux.waitFor(/cannot ask you/, 60_000, "the host's notice");
		// pi wraps the warning at its own width: compared without whitespace.
		const squeezed = (text: string) => text.replace(/\s+/g, "");
		expect(squeezed(screen)).toContain(
			squeezed(
				`checkpoint-bridge: sub-agent "checkpoint-reviewer" cannot ask you: its agent file's tools: line leaves out ask_user_via_host (its model reads "Tool ask_user_via_host not found"). Use excludeTools: instead of tools: in that agent file.`,
			),
		);
	});
});
