/**
 * `npm run demo` in a real terminal (tmux): the scripted main agent runs the planner and then the
 * writer sub-agent; each one's question must open as a dialog in the main TUI titled with the
 * asker's name, and the answers typed here must come back in what each sub-agent reported.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("tui-demo.test.ts: skipped because tmux is not installed (CI installs it)");

// The answers the "user" gives; the project name is one the demo never prints by itself.
const CHOSEN_CONVENTION = "snake_case";
const PROJECT_NAME = "Orbit Lab 7";
const EXIT_MARKER = "demo-exited-with-";
// After either of these the dialog or line being waited for will not come: fail at once.
const DEAD_END = /No answer reached (planner|writer)|Demo stopped:/;

describe.skipIf(!hasTmux)(`npm run demo in the real TUI${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let runDir: string | undefined;

	afterEach(async () => {
		await tmux?.dispose();
		if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
	});

	it("shows each sub-agent's question as a titled dialog and gets each answer back into that sub-agent", async () => {
		runDir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-tui-demo-"));
		const stderrFile = path.join(runDir, "stderr.log");
		// TMPDIR here makes the launcher put its own temp dir where this test can check its cleanup.
		const command = [
			`env TMPDIR=${JSON.stringify(runDir)} TERM=xterm-256color npm run --silent demo 2>${JSON.stringify(stderrFile)}`,
			`echo "${EXIT_MARKER}$?"`,
			"sleep 30",
		].join("; ");
		tmux = new TmuxSession();
		const stderr = () => (fs.existsSync(stderrFile) ? fs.readFileSync(stderrFile, "utf8") : "");
		const session = tmux;
		try {
			await session.start({ command, cwd: root, width: 120, height: 40 });

			// Opening screen: the explanation as header, the first message waiting in the editor.
			const opening = await session.waitFor(/^─+\n\s*Run the checkpoint-bridge demo/m, 45_000, "the prepared first message in the editor");
			expect(opening).toContain("checkpoint-bridge demo");
			expect(opening).toContain("Press Enter to send the prepared message and start.");
			expect(opening).not.toContain("Which naming convention should the project use?");
			await session.keys("Enter");

			// The planner's choice: a select dialog in the main TUI, titled with the asking session's name.
			const selectScreen = await session.waitFor(/\[subagent-planner-[^\]\s]*\] Which naming convention should the project use\?/, 45_000, "the planner's select dialog", DEAD_END);
			expect(selectScreen).toMatch(/→ camelCase/);
			expect(selectScreen).toMatch(/^\s+snake_case\s*$/m);
			expect(selectScreen).toMatch(/^\s+kebab-case\s*$/m);
			await session.keys("Down");
			await session.waitFor(`→ ${CHOSEN_CONVENTION}`, 5_000, "the cursor on the second option");
			await session.keys("Enter");

			// The writer's free-text question, asked only after the planner has finished.
			const inputScreen = await session.waitFor(/\[subagent-writer-[^\]\s]*\] What should the project be called\?/, 30_000, "the writer's input dialog", DEAD_END);
			expect(inputScreen).toContain(`Answer received by planner: ${CHOSEN_CONVENTION}`);
			await session.type(PROJECT_NAME);
			await session.waitFor(PROJECT_NAME, 5_000, "the typed project name in the input");
			await session.keys("Enter");

			// Each sub-agent reports what its ask_user_via_host call returned; the main agent's summary
			// is built only from those reports, so a right pairing proves each answer reached its asker.
			// The summary streams in; its last line complete means the whole summary is on screen.
			const writerLine = new RegExp(`^\\s*- writer received: ${PROJECT_NAME}\\s*$`, "m");
			const summary = await session.waitFor(writerLine, 30_000, `the summary line "- writer received: ${PROJECT_NAME}"`, DEAD_END);
			expect(summary).toContain("Demo summary (each line is what that sub-agent reported back):");
			expect(summary).toMatch(new RegExp(`^\\s*- planner received: ${CHOSEN_CONVENTION}\\s*$`, "m"));
			expect(summary).toContain(`Answer received by writer: ${PROJECT_NAME}`);

			// Ctrl+D on the empty editor quits pi; the launcher then removes its temp dir.
			await session.keys("C-d");
			await session.waitFor(`${EXIT_MARKER}0`, 15_000, "a clean exit of the demo");
			expect(fs.readdirSync(runDir).filter((name) => name.startsWith("checkpoint-bridge-demo-"))).toEqual([]);
		} catch (error) {
			const details = `\n--- stderr of the demo:\n${stderr() || "(empty)"}`;
			if (error instanceof Error) error.message += details;
			throw error;
		}
	});
});
