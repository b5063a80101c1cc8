/**
 * `npm run demo -- --tour` in a real terminal (tmux), on the dev pi with its scripted model (no API
 * key): five scenes, each announced on screen by the main agent as it happens, answered with the keys
 * a person would press, but for the last. 1: `wait: false`, the call back at once as queued while the form is open, the
 * answer arriving later as a message; 2: a 10 s budget runs out, the question stays late,
 * `/checkpoints` lists it, `/checkpoints answer 1` opens it again, the late answer arrives; 3: a
 * foreground child's own screen (pi's example question tool) drawn here under who asks; 4: pi stops
 * as a crash would, the launcher starts it again with `--continue`, the question opens again marked
 * as asked before the restart and its answer comes back; 5: no key at all: a child asks, the tour's
 * stand-in for a phone (its notify command) presses a one-tap button, the form closes and the
 * terminal says where and when the answer came from. The screen of each step is written under
 * .tmp/tui-tour/ (the path is printed).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PHONE_ANSWER } from "../../demo/phone.ts";
import { RESTARTED_NOTICE } from "../../demo/tour.ts";
import { LATE_BUDGET_MS, TOUR_DONE, TOUR_QUESTIONS } from "../../demo/tour-model.ts";
import { ScreenCaptures, squeezed, TmuxSession, tmuxAvailable, waitForSqueezed } from "./harness/tmux.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const hasTmux = tmuxAvailable();
const EXIT_MARKER = "tour-exited-with-";
/** After any of these the next step will not come: fail at once. */
const DEAD_END = /The tour has no script|Startup is still in progress|could not start pi|pi exited with code/;
/** A cold start compiles pi-subagents and the extensions; a busy machine takes a while more. */
const BOOT_MS = 150_000;
const captures = new ScreenCaptures(path.join(root, ".tmp", "tui-tour"));

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The terminal form of one question, headed with who asks. */
const formOf = (asker: string, question: string) => new RegExp(`\\[${escape(asker)}\\] · question [^\\n]*· 1 question\\s*\\n ${escape(question)}`);
/** The option rows of a form, the cursor on `cursor`. */
const rowsOf = (options: readonly string[], cursor: string) => options.map((o) => new RegExp(`^${o === cursor ? "→" : " "} ○ ${escape(o)}\\s*$`, "m"));

describe.skipIf(!hasTmux)(`npm run demo -- --tour in the real TUI${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let runDir: string | undefined;
	afterAll(() => {
		if (captures.files.length) console.log(captures.report("tui-tour.test.ts"));
	});
	afterEach(async () => {
		await tmux?.dispose();
		if (runDir) fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
	});

	/** Picks the option `keys` move to in the open form, once it takes keys, and sends it. */
	async function pick(session: TmuxSession, keys: string[], cursor: RegExp, what: string): Promise<void> {
		await session.formTakesKeys();
		await session.keys(...keys);
		await session.waitFor(cursor, 5_000, what, DEAD_END);
		await session.keys("Enter");
	}

	/** Types a command into the editor and sends it. */
	async function command(session: TmuxSession, text: string): Promise<void> {
		await session.type(text);
		await session.waitFor(new RegExp(`^${escape(text)}\\s*$`, "m"), 5_000, `"${text}" in the editor`);
		await session.keys("Enter");
	}

	it("shows ask now and answer later, a timed-out question answered late from /checkpoints, a child's own screen, a host restart that keeps a question and a phone's one-tap answer with no key pressed, each announced as it happens", async () => {
		runDir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-tui-tour-"));
		const stderrFile = path.join(runDir, "stderr.log");
		const session = (tmux = new TmuxSession());
		await session.start({
			command: `env TMPDIR=${JSON.stringify(runDir)} TERM=xterm-256color npm run --silent demo -- --tour 2>${JSON.stringify(stderrFile)}; echo "${EXIT_MARKER}$?"; sleep 30`,
			cwd: root,
			width: 120,
			height: 45,
		});
		try {
			const opening = await session.waitFor(/^─+\n\s*Start the checkpoint-bridge tour\./m, BOOT_MS, "the prepared message in the editor", DEAD_END);
			captures.save("opening", opening);
			expect(opening).toContain("checkpoint-bridge tour (pi 1.6.");
			expect(opening).toContain("4. a host restart that keeps a question");
			expect(opening).toContain("5. a phone answers");
			await session.keys("Enter");

			// 1. wait: false: the call is back ("queued") and the turn over while the form is still open.
			const { later, late, child, restart, phone } = TOUR_QUESTIONS;
			let screen = await session.waitFor(/The call came back at once, "queued"/, 30_000, "the queued receipt", DEAD_END);
			screen = await session.waitFor(formOf("main session", later.question), 10_000, "scene 1's form", DEAD_END);
			captures.save("1-queued-form-open", screen);
			expect(screen).toContain("Tour 1 of 5 — ask now, answer later");
			expect(screen).not.toContain("Tour 1 done");
			for (const row of rowsOf(later.options, "teal")) expect(screen).toMatch(row);
			await pick(session, ["Down"], rowsOf(later.options, "amber")[1]!, "the cursor on amber");
			screen = await session.waitFor('Tour 1 done: your answer "amber" arrived later, as a message', 30_000, "scene 1's answer as a message", DEAD_END);
			captures.save("1-answer-arrived", screen);

			// 2. The budget runs out unanswered: late; /checkpoints lists it; answer 1 opens it again.
			screen = await session.waitFor(formOf("main session", late.question), 30_000, "scene 2's form", DEAD_END);
			expect(screen).toContain(`Tour 2 of 5 — a timed-out question answered late: I ask with a budget of ${LATE_BUDGET_MS / 1000} s`);
			screen = await session.waitFor(/The call ended "timeout"/, LATE_BUDGET_MS + 20_000, "scene 2's timeout", DEAD_END);
			captures.save("2-timed-out", screen);
			expect(screen, "the form is gone with the call's budget").not.toMatch(formOf("main session", late.question));
			expect(screen).toMatch(/checkpoint-bridge: 1 late: main session \(\d+ min\)/);
			await command(session, "/checkpoints");
			screen = await session.waitFor(
				new RegExp(
					`1 late \\(the call's budget ran out[^\\n]*\\n\\s*1\\. \\[main session\\] late since [\\d:]+ \\(asked \\d+ min ago\\): ${escape(late.question)}`,
				),
				10_000,
				"the late question in /checkpoints",
				DEAD_END,
			);
			captures.save("2-checkpoints-lists-late", screen);
			await command(session, "/checkpoints answer 1");
			screen = await session.waitFor(formOf("main session", late.question), 10_000, "scene 2's form again", DEAD_END);
			captures.save("2-shown-again", screen);
			await pick(session, ["Down", "Down"], rowsOf(late.options, "Friday")[2]!, "the cursor on Friday");
			await session.waitFor('Tour 2 done: your late answer "Friday" arrived as a message', 30_000, "scene 2's late answer", DEAD_END);

			// 3. A foreground child's own screen, drawn here under who asks.
			screen = await session.waitFor(
				new RegExp(`\\[subagent-tour-child\\] · question\\.ts's own screen[^\\n]*\\n[^\\n]*\\n ${escape(child.question)}\\s*\\n> 1\\. README\\.md`),
				90_000,
				"the child's own screen",
				DEAD_END,
			);
			captures.save("3-child-screen", screen);
			expect(screen).toContain("Tour 3 of 5 — a child's own screen");
			// The host guards a child's screen from keys for a moment after it shows, and says so above it.
			for (let shown = await session.screen(); shown.includes("keys reach it in a moment"); shown = await session.screen())
				await new Promise((resolve) => setTimeout(resolve, 100));
			await session.keys("Down");
			await session.waitFor(/^> 2\. CHANGELOG\.md/m, 5_000, "the cursor on CHANGELOG.md", DEAD_END);
			await session.keys("Enter");
			screen = await session.waitFor("the child reported: User selected: 2. CHANGELOG.md", 60_000, "scene 3's report", DEAD_END);
			captures.save("3-child-answered", screen);

			// 4. pi stops as a crash would with the question open; started again, it opens the question again.
			screen = await session.waitFor(formOf("main session", restart.question), 30_000, "scene 4's form", DEAD_END);
			screen = await session.waitFor(/Tour 4: pi stops in 6 s, as a crash would/, 10_000, "the restart announced", DEAD_END);
			captures.save("4-before-restart", screen);
			screen = await session.waitFor(
				formOf("main session · asked before the restart", restart.question),
				BOOT_MS,
				"scene 4's form after the restart",
				DEAD_END,
			);
			captures.save("4-after-restart", screen);
			// Announced where the eye is: the header with the explanation has scrolled away above the continued transcript.
			captures.save("4-restart-announced", await waitForSqueezed(session, new RegExp(escape(squeezed(RESTARTED_NOTICE))), 10_000, "the restart's notice"));
			await pick(session, ["Down"], rowsOf(restart.options, "us-east")[1]!, "the cursor on us-east");
			screen = await session.waitFor(/Tour 4 done: [^\n]*\n?[^\n]*"us-east" came back/, 30_000, "scene 4's answer", DEAD_END);
			captures.save("4-answer-after-restart", screen);

			// 5. No key: the phone's stand-in presses a one-tap button; the form closes and the terminal says where and when.
			screen = await session.waitFor(formOf("subagent-tour-phone", phone.question), 60_000, "scene 5's form", DEAD_END);
			captures.save("5-phone-form-open", screen);
			expect(screen).toContain("Tour 5 of 5 — a phone answers");
			screen = await waitForSqueezed(
				session,
				new RegExp(`checkpoint-bridge:\\[subagent-tour-phone\\]answered[^\\n]*at\\d\\d:\\d\\d:${PHONE_ANSWER}`),
				30_000,
				"the terminal saying where and when the phone's answer came from",
			);
			captures.save("5-phone-answered", screen);
			screen = await session.waitFor(TOUR_DONE, 30_000, "the end of the tour", DEAD_END);
			captures.save("5-tour-done", screen);
			expect(squeezed(screen)).toContain(squeezed(`Tour 5 done: your phone answered with one tap and the child got "${PHONE_ANSWER}"`));
			expect(screen, "the form closed by itself").not.toMatch(formOf("subagent-tour-phone", phone.question));

			await session.keys("C-d");
			await session.waitFor(`${EXIT_MARKER}0`, 20_000, "a clean exit of the tour");
			expect(fs.readdirSync(runDir).filter((name) => name.startsWith("checkpoint-bridge-demo-"))).toEqual([]);
		} catch (error) {
			const stderr = fs.existsSync(stderrFile) ? fs.readFileSync(stderrFile, "utf8") : "";
			if (error instanceof Error) error.message += `\n--- stderr of the tour:\n${stderr || "(empty)"}`;
			throw error;
		}
	}, 420_000);
});

describe("npm run demo -- --tour with a model of its own", () => {
	it("refuses at once, naming why: the tour runs its own scripted model", () => {
		const run = spawnSync(path.join(root, "node_modules", ".bin", "node"), ["demo/run.mjs", "--tour", "--model", "anthropic/claude"], {
			cwd: root,
			stdio: "pipe",
			encoding: "utf8",
			timeout: 10_000,
		});
		expect(run.status).toBe(1);
		expect(run.stderr).toMatch(/^--tour runs its own scripted model: leave out --model\n/);
	});
});
