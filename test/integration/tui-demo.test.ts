/**
 * `npm run demo` in a real terminal (tmux). The scripted main agent runs planner and then writer in
 * the foreground, then reviewer and tester in the background at once (a pi-subagents workflow; each
 * child in its own runner process, on pi 0.85.1, where that runner works). Every question must open
 * as the terminal form in the main TUI, headed with who asks, the two background ones strictly one
 * after the other, and every answer given here must come back in what that sub-agent reported.
 * The screen of each form is written under .tmp/tui-demo/ (the path is printed).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ScreenCaptures, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("tui-demo.test.ts: skipped because tmux is not installed (CI installs it)");
/** Without it the launcher installs it first (CI runs `npm run setup:compat` before the tests). */
const compatInstalled = fs.existsSync(path.join(root, "test/compat/pi-0.85/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"));

// The answers the "user" gives; the project name is one the demo never prints by itself.
const CHOSEN_CONVENTION = "snake_case";
const PROJECT_NAME = "Orbit Lab 7";
/**
 * Each background child's question, its rows, the keys that pick the answer, the row they put the
 * cursor on, and the answer it must report. A confirm starts with neither Yes nor No under the cursor.
 */
const BACKGROUND = {
	reviewer: { question: "Does the missing test block the merge?", options: ["Yes", "No"], confirm: true, keys: ["Down", "Down"], cursorOn: "No", answer: "no" },
	tester: {
		question: "Which test suite should run first?",
		options: ["unit", "integration", "end-to-end"],
		confirm: false,
		keys: ["Down", "Down"],
		cursorOn: "end-to-end",
		answer: "end-to-end",
	},
} as const;
type BackgroundAgent = keyof typeof BACKGROUND;
const EXIT_MARKER = "demo-exited-with-";
/**
 * After any of these the form or line being waited for will not come: fail at once. pi keeps the
 * editor's text and shows "Startup is still in progress" when Enter comes before its startup is done.
 */
const DEAD_END = /No answer reached|received no answer|Demo stopped:|Startup is still in progress/;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The form's header and its question: `[<asker>] · 2:59 left · 1 question`, then the question two lines below. */
const formOf = (asker: string, question: string) => `\\[${asker}\\] · [^\\n]* left · 1 question\\s*\\n\\s*\\n ${escape(question)}`;
/** A remote asker's form: headed `[subagent-<agent>... (pid N)]`. */
const remoteTitle = (agent: string, question: string) => new RegExp(formOf(`(subagent-${agent}(?:#\\d+)?) \\(pid (\\d+)\\)`, question));
const row = (text: string, cursor = false) => new RegExp(`^${cursor ? "→" : " "} ○ ${escape(text)}\\s*$`, "m");
const captures = new ScreenCaptures(path.join(root, ".tmp", "tui-demo"));
const anyBackgroundTitle = new RegExp(
	Object.entries(BACKGROUND)
		.map(([agent, { question }]) => remoteTitle(agent, question).source)
		.join("|"),
);
const summaryLine = (agent: string, where: string, answer: string) => new RegExp(`^\\s*- ${agent} \\(${where}\\) received: ${escape(answer)}\\s*$`, "m");

/** Starts `npm run demo -- <args>` in tmux with its temp dir under `runDir`; the shell prints the exit code at the end. */
async function startDemo(session: TmuxSession, runDir: string, args: string[] = []): Promise<void> {
	const stderrFile = path.join(runDir, "stderr.log");
	// TMPDIR here makes the launcher put its own temp dir where this test can check its cleanup.
	const command = [
		`env TMPDIR=${JSON.stringify(runDir)} TERM=xterm-256color npm run --silent demo${args.length ? ` -- ${args.join(" ")}` : ""} 2>${JSON.stringify(stderrFile)}`,
		`echo "${EXIT_MARKER}$?"`,
		"sleep 30",
	].join("; ");
	await session.start({ command, cwd: root, width: 120, height: 40 });
}

/** The opening screen: the explanation as header, the first message waiting in the editor; Enter sends it. */
async function start(session: TmuxSession, timeoutMs: number): Promise<string> {
	// pi sets the editor's text from session_start, after its startup has enabled sending.
	const opening = await session.waitFor(/^─+\n\s*Run the checkpoint-bridge demo/m, timeoutMs, "the prepared first message in the editor");
	expect(opening).toContain("Press Enter to send the prepared message and start.");
	expect(opening).not.toContain("Which naming convention should the project use?");
	await session.keys("Enter");
	return opening;
}

/** planner's choice, then writer's free text: forms headed with the asking session's name. */
async function answerForeground(session: TmuxSession): Promise<void> {
	const selectScreen = await session.waitFor(
		new RegExp(formOf("subagent-planner", "Which naming convention should the project use?")),
		45_000,
		"the planner's form",
		DEAD_END,
	);
	captures.save("planner-form", selectScreen);
	expect(selectScreen).toMatch(row("camelCase", true));
	expect(selectScreen).toMatch(row("snake_case"));
	expect(selectScreen).toMatch(row("kebab-case"));
	expect(selectScreen, "a foreground child asks from pi's own process").not.toMatch(/\(pid \d+\)\] · /);
	await session.formTakesKeys();
	await session.keys("Down");
	await session.waitFor(row(CHOSEN_CONVENTION, true), 5_000, "the cursor on the second option");
	await session.keys("Enter");

	// The writer's question comes only after the planner has finished.
	const inputScreen = await session.waitFor(new RegExp(formOf("subagent-writer", "What should the project be called?")), 30_000, "the writer's form", DEAD_END);
	expect(inputScreen).toContain(`Answer received by planner: ${CHOSEN_CONVENTION}`);
	await session.formTakesKeys();
	await session.type(PROJECT_NAME);
	captures.save("writer-form", await session.waitFor(` > ${PROJECT_NAME}`, 5_000, "the typed project name in the form"));
	await session.keys("Enter");
}

/**
 * The summary streams in: waits for its last line to be complete (then the whole summary is on
 * screen), whatever it says, and then for the expected text, so a wrong answer fails fast.
 */
async function summary(session: TmuxSession, last: { agent: string; where: string; answer: string }): Promise<string> {
	await session.waitFor(new RegExp(`^\\s*- ${last.agent} \\(${last.where}\\) .+$`, "m"), 60_000, `the summary's ${last.agent} line`, DEAD_END);
	return session.waitFor(summaryLine(last.agent, last.where, last.answer), 5_000, `"- ${last.agent} (${last.where}) received: ${last.answer}"`);
}

/** Ctrl+D on the empty editor quits pi; the launcher then removes its temp dir. */
async function quit(session: TmuxSession, runDir: string): Promise<void> {
	await session.keys("C-d");
	await session.waitFor(`${EXIT_MARKER}0`, 20_000, "a clean exit of the demo");
	expect(fs.readdirSync(runDir).filter((name) => name.startsWith("checkpoint-bridge-demo-"))).toEqual([]);
}

describe.skipIf(!hasTmux)(`npm run demo in the real TUI${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let runDir: string | undefined;

	afterAll(() => {
		if (captures.files.length) console.log(captures.report("tui-demo.test.ts"));
	});

	afterEach(async () => {
		await tmux?.dispose();
		// A background runner may still be writing its run files for a moment after pi exits.
		if (runDir) fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
	});

	/** Runs `body` against a fresh demo; a failure message ends with the demo's stderr. */
	async function withDemo(args: string[], body: (session: TmuxSession, runDir: string) => Promise<void>): Promise<void> {
		runDir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-tui-demo-"));
		tmux = new TmuxSession();
		const stderrFile = path.join(runDir, "stderr.log");
		try {
			await startDemo(tmux, runDir, args);
			await body(tmux, runDir);
		} catch (error) {
			const stderr = fs.existsSync(stderrFile) ? fs.readFileSync(stderrFile, "utf8") : "";
			if (error instanceof Error) error.message += `\n--- stderr of the demo:\n${stderr || "(empty)"}`;
			throw error;
		}
	}

	const otherThan = (agent: BackgroundAgent) => (Object.keys(BACKGROUND) as BackgroundAgent[]).find((name) => name !== agent)!;

	it("shows each sub-agent's question as the form headed with who asks, the two background ones one after the other, and gets each answer back into its sub-agent", async () => {
		await withDemo([], async (session, dir) => {
			const opening = await start(session, compatInstalled ? 60_000 : 120_000);
			expect(opening).toContain("checkpoint-bridge demo (pi 0.85.1)");
			await answerForeground(session);

			// Background: both children ask at once from their runner processes; the host shows one
			// form while the other question waits (its status line counts both), then the other.
			const shown: { agent: BackgroundAgent; label: string; pid: number }[] = [];
			for (let turn = 0; turn < 2; turn++) {
				// The second form is the other child's: waiting for any title could read the first one
				// again before the screen is redrawn.
				const waitingFor = turn === 0 ? anyBackgroundTitle : remoteTitle(otherThan(shown[0]!.agent), BACKGROUND[otherThan(shown[0]!.agent)].question);
				const screen = await session.waitFor(waitingFor, turn === 0 ? 90_000 : 30_000, `background form ${turn + 1}`, DEAD_END);
				const agent = (Object.keys(BACKGROUND) as BackgroundAgent[]).find(
					(name) => remoteTitle(name, BACKGROUND[name].question).test(screen) && !shown.some((s) => s.agent === name),
				)!;
				expect(agent, `a background form not shown before: ${screen}`).toBeDefined();
				const [, label, pid] = remoteTitle(agent, BACKGROUND[agent].question).exec(screen)!;
				expect(
					shown.map((s) => s.agent),
					`a second form for ${agent}`,
				).not.toContain(agent);
				shown.push({ agent, label: label!, pid: Number(pid) });
				const other = otherThan(agent);
				if (turn === 0) {
					// Both wait at the host now, yet only this one's form is open.
					const queued = await session.waitFor(/checkpoint-bridge: 2 waiting: /, 30_000, "both background questions waiting at the host", DEAD_END);
					expect(queued).toMatch(remoteTitle(agent, BACKGROUND[agent].question));
					expect(queued, `${other}'s form must wait until ${agent}'s is answered`).not.toMatch(remoteTitle(other, BACKGROUND[other].question));
				} else {
					expect(screen, `${shown[0]!.agent}'s form is gone`).not.toMatch(remoteTitle(shown[0]!.agent, BACKGROUND[shown[0]!.agent].question));
				}
				captures.save(`${agent}-form`, screen);
				const { options, confirm, keys, cursorOn } = BACKGROUND[agent];
				// A choice starts on its first option; a confirm on neither Yes nor No.
				options.forEach((option, i) => expect(screen).toMatch(row(option, i === 0 && !confirm)));
				await session.formTakesKeys();
				await session.keys(...keys);
				await session.waitFor(row(cursorOn, true), 5_000, `the cursor on ${agent}'s answer`);
				await session.keys("Enter");
			}
			// Two askers, each in a runner process of its own.
			expect(shown.map((s) => s.agent).sort()).toEqual(["reviewer", "tester"]);
			expect(shown[0]!.pid).not.toBe(shown[1]!.pid);

			// Each sub-agent reports what its ask_user_via_host call returned; the main agent's summary is
			// built only from those reports (the background ones arrive with the workflow's result, a later
			// message), so a right pairing proves each answer reached its asker.
			const screen = await summary(session, { agent: "tester", where: "background", answer: BACKGROUND.tester.answer });
			expect(screen).toContain("Demo summary (each line is what that sub-agent reported back):");
			expect(screen).toMatch(summaryLine("planner", "foreground", CHOSEN_CONVENTION));
			expect(screen).toMatch(summaryLine("writer", "foreground", PROJECT_NAME));
			expect(screen).toMatch(summaryLine("reviewer", "background", BACKGROUND.reviewer.answer));
			await quit(session, dir);
		});
	});

	it("--pi 1.6 runs the foreground sub-agents on the dev pi and says the background step is skipped", async () => {
		await withDemo(["--pi", "1.6"], async (session, dir) => {
			const opening = await start(session, 60_000);
			expect(opening).toContain("checkpoint-bridge demo (pi 1.6.");
			expect(opening).toMatch(/skipped: background sub-agents need pi 0\.85/);
			await answerForeground(session);
			const screen = await summary(session, { agent: "writer", where: "foreground", answer: PROJECT_NAME });
			expect(screen).toMatch(summaryLine("planner", "foreground", CHOSEN_CONVENTION));
			expect(screen).not.toMatch(/\((pid \d+|background)\)/);
			await quit(session, dir);
		});
	});
});
