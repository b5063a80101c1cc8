/**
 * Question model v2 in the real interactive TUI (tmux): the main session's scripted model asks a
 * multi-select and a choice. The human toggles two options with arrow keys and Enter, picks Done,
 * then answers the choice through "Other (type your own)" by typing. The answers must be on screen
 * in the model's final text, which quotes the tool result verbatim.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { baseArgs, createPiEnv, NODE_BIN, PI_CLI, type PiEnv } from "./harness/pi-cli.ts";
import { TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("questions-tui.test.ts: skipped because tmux is not installed (CI installs it)");

const EXIT_MARKER = "pi-exited-with-";
const PROMPT = "ask me";
const TYPED = "nimbus";
const TITLE_MULTI = "[tui-host] (1/2) Which areas go into the release notes?";
const TITLE_CHOICE = "[tui-host] (2/2) Codename of the release?";

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
/** The screen without any whitespace: the TUI wraps long JSON lines wherever it likes. */
const squeezed = (screen: string) => screen.replace(/\s+/g, "");
/** The row of a select entry: `→ entry` under the cursor, indented otherwise. */
const row = (entry: string, cursor = false) => new RegExp(`^\\s*${cursor ? "→ " : "  "}${entry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`, "m");

/** Polls until the whitespace-free screen matches: a wrapped line may split any token. */
async function waitForSqueezed(session: TmuxSession, pattern: RegExp, timeoutMs: number, what: string): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const screen = await session.screen();
		if (pattern.test(squeezed(screen))) return screen;
		if (screen.includes(EXIT_MARKER) || Date.now() > deadline) throw new Error(`gave up waiting for ${what}; screen:\n${screen}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

describe.skipIf(!hasTmux)(`v2 questions in the real TUI${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let piEnv: PiEnv | undefined;

	afterEach(async () => {
		await tmux?.dispose();
		piEnv?.cleanup();
		tmux = undefined;
		piEnv = undefined;
	});

	it("a multi-select toggled with arrow keys and Enter, then an Other answer typed in; both answers reach the model's final text", async () => {
		piEnv = createPiEnv({
			script: {
				prompts: {
					[PROMPT]: {
						ask: {
							questions: [
								{
									id: "areas",
									question: "Which areas go into the release notes?",
									options: [{ label: "api", description: "public API changes" }, { label: "cli" }, { label: "docs" }],
									multiSelect: true,
								},
								{ id: "codename", question: "Codename of the release?", options: ["aurora", "borealis"] },
							],
						} as unknown as ScriptAsk,
					},
				},
			},
		});
		const stderrFile = join(piEnv.root, "stderr.log");
		const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
		// The extension's stderr would draw over the screen: keep it in a file for failure messages.
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>${quote(stderrFile)}`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		tmux = new TmuxSession();
		const session = tmux;
		const stderr = () => (existsSync(stderrFile) ? readFileSync(stderrFile, "utf8") : "");
		const deadEnd = new RegExp(`${EXIT_MARKER}|timeout-or-cancelled|"status":"(?!ok)`);
		try {
			await session.start({ command, cwd: piEnv.cwd, width: 120, height: 40 });
			await session.waitFor("tui-host", 30_000, "pi's editor and footer", deadEnd);
			await session.type(PROMPT);
			await session.keys("Enter");

			// Round 1: every option unchecked; the cursor on the first one.
			let screen = await session.waitFor(TITLE_MULTI, 20_000, "the multi-select dialog", deadEnd);
			expect(screen).toMatch(row("☐ api — public API changes", true));
			expect(screen).toMatch(row("☐ cli"));
			expect(screen).toMatch(row("☐ docs"));
			expect(screen).toMatch(row("Other (type your own)"));
			expect(screen).toMatch(row("Done (0 selected)"));
			// The host's status line names who waits.
			expect(screen).toContain("checkpoint-bridge: 1 waiting (tui-host)");
			// The call as the transcript shows it, before the answer: the option labels, not objects.
			expect.soft(screen, "the call's transcript line lists the v2 option labels").toContain("[api | cli | docs]");

			// Enter toggles the option under the cursor; the next round opens with the cursor back on top.
			await session.keys("Enter");
			screen = await session.waitFor("Done (1 selected)", 5_000, "round 2 after toggling api", deadEnd);
			expect(screen).toMatch(row("☑ api — public API changes", true));
			await session.keys("Down", "Down");
			await session.waitFor(row("☐ docs", true), 5_000, "the cursor on docs", deadEnd);
			await session.keys("Enter");
			screen = await session.waitFor("Done (2 selected)", 5_000, "round 3 after toggling docs", deadEnd);
			expect(screen).toMatch(row("☑ api — public API changes", true));
			expect(screen).toMatch(row("☐ cli"));
			expect(screen).toMatch(row("☑ docs"));

			// Done is always the last entry, and Down stops there: pressing it more often is harmless.
			await session.keys(...Array<string>(6).fill("Down"));
			await session.waitFor(row("Done (2 selected)", true), 5_000, "the cursor on Done", deadEnd);
			await session.keys("Enter");

			// Question 2: Other is the last entry and leads to a text field.
			screen = await session.waitFor(TITLE_CHOICE, 5_000, "the codename dialog", deadEnd);
			expect(screen).toMatch(row("aurora", true));
			expect(screen).toMatch(row("borealis"));
			await session.keys("Down", "Down");
			await session.waitFor(row("Other (type your own)", true), 5_000, "the cursor on Other", deadEnd);
			await session.keys("Enter");
			await session.waitFor(`${TITLE_CHOICE} — type your own answer`, 5_000, "the Other text field", deadEnd);
			await session.type(TYPED);
			await session.waitFor(`> ${TYPED}`, 5_000, "the typed codename", deadEnd);
			await session.keys("Enter");

			// The model's final text quotes the envelope: both answers, with kinds and values.
			const expectedAnswers = [
				'{"question":"Whichareasgointothereleasenotes?","answer":"api,docs","kind":"option","id":"areas","values":["api","docs"],"source":"dialog"}',
				`{"question":"Codenameoftherelease?","answer":"${TYPED}","kind":"other","id":"codename","source":"dialog"}`,
			].join(",");
			const done = await waitForSqueezed(session, /"waitedMs":\d+\}/, 20_000, "the final text with the whole envelope");
			const flat = squeezed(done);
			expect(flat).toContain('Toolask_user_via_hostreturned:{"status":"ok"');
			expect(flat).toContain(`"answers":[${expectedAnswers}]`);
			expect(flat).toContain('"asker":"tui-host"');
			// The result view in the transcript shows the same answers.
			expect(done).toMatch(/^\s*Which areas go into the release notes\? → api, docs\s*$/m);
			expect(done).toMatch(new RegExp(`^\\s*Codename of the release\\? → ${TYPED}\\s*$`, "m"));
			// Nothing waits any more: the status line is cleared.
			expect(done).not.toContain("checkpoint-bridge: 1 waiting");

			// Ctrl+D on the empty editor quits pi.
			await session.keys("C-d");
			await session.waitFor(`${EXIT_MARKER}0`, 15_000, "a clean exit");
		} catch (error) {
			if (error instanceof Error) error.message += `\n--- stderr of pi:\n${stderr() || "(empty)"}`;
			throw error;
		}
	});
});
