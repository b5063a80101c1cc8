/**
 * `npm run demo` in a real terminal (tmux). The scripted main agent runs planner and then writer in
 * the foreground, then reviewer and tester in the background at once (a pi-subagents workflow; each
 * child in its own runner process, on pi 0.85.1, where that runner works). Every question must open
 * as the terminal form in the main TUI, headed with who asks, the two background ones strictly one
 * after the other, and every answer given here must come back in what that sub-agent reported.
 * The planner's request is a form of two questions (tabs, previews, a multi-select, a note, Review).
 * The explanation is on screen once; without a terminal the launcher refuses with one line.
 * The screen of each form is written under .tmp/tui-demo/ (the path is printed).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ScreenCaptures, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("tui-demo.test.ts: skipped because tmux is not installed (CI installs it)");
/** Without it the launcher installs it first (CI runs `npm run setup:compat` before the tests). */
const compatInstalled = fs.existsSync(path.join(root, "test/compat/pi-0.85/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"));

// The answers the "user" gives; the project name and the note are ones the demo never prints by itself.
const CHOSEN_CONVENTION = "snake_case";
const NOTE = "matches the API";
const CHECKS = "lint, integration tests";
/** What the planner reports for its form: every answer, the note with its own. */
const PLANNER_REPORT = `naming: ${CHOSEN_CONVENTION} (note: ${NOTE}); checks: ${CHECKS}`;
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
const NODE_BIN = path.join(root, "node_modules", ".bin", "node");
/** The launcher's whole output without a terminal: one line, saying it needs one and what is not a TTY. */
const NO_TERMINAL = (what: string) => new RegExp(`^npm run demo needs a terminal \\(${what} not a TTY\\): [^\\n]+\\n$`);
/**
 * After any of these the form or line being waited for will not come: fail at once. pi keeps the
 * editor's text and shows "Startup is still in progress" when Enter comes before its startup is done.
 */
const DEAD_END = /No answer reached|received no answer|Demo stopped:|Startup is still in progress/;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The form's header and its question: `[<asker>] · question 2:59 left · call 4:59 · 1 question`, then the question two lines below. */
const formOf = (asker: string, question: string) => `\\[${asker}\\] · question [^\\n]* left[^\\n]* · 1 question\\s*\\n\\s*\\n ${escape(question)}`;
/** A remote asker's form: headed `[subagent-<agent>... (pid N)]`. */
const remoteTitle = (agent: string, question: string) => new RegExp(formOf(`(subagent-${agent}(?:#\\d+)?) \\(pid (\\d+)\\)`, question));
/** The planner's form: two questions, a tab each and Review, the first one open. */
const PLANNER_FORM =
	/\[subagent-planner\] · [^\n]* left · 2 questions\s*\n \[☐ Naming\]│ ☐ Checks │ Review\s*\n\s*\n Which naming convention should the project use\?/;
/** The title every launch's explanation starts with; it must be on screen once. */
const INTRO_TITLE = "checkpoint-bridge demo (pi ";
const PAGE_LINK = /answer in a browser at (http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{43}\/)/;
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

/**
 * The opening screen: the explanation as header (once in all the pane printed), the first message
 * waiting in the editor; Enter sends it.
 */
async function start(session: TmuxSession, timeoutMs: number): Promise<string> {
	// pi sets the editor's text from session_start, after its startup has enabled sending.
	const opening = await session.waitFor(/^─+\n\s*Run the checkpoint-bridge demo/m, timeoutMs, "the prepared first message in the editor");
	captures.save("opening", opening);
	expect(opening).toContain("Press Enter to send the prepared message and start.");
	// Ctrl+D quits only an empty editor, and the prepared message is in it.
	expect(opening).toContain("Quit: Ctrl+C twice quickly (the first press");
	expect(opening).not.toContain("Quit with Ctrl+D");
	expect(opening).not.toContain("Which naming convention should the project use?");
	const printed = await session.history();
	expect(printed.split(INTRO_TITLE).length - 1, `the explanation once in all the pane printed:\n${printed}`).toBe(1);
	await session.keys("Enter");
	return opening;
}

/** Reads the page's live stream until it carries every one of `texts`; gives up after `timeoutMs`. */
async function pageStreamCarries(pageUrl: string, texts: string[], timeoutMs = 10_000): Promise<void> {
	const controller = new AbortController();
	const timer = setTimeout(() => controller.abort(), timeoutMs);
	let seen = "";
	try {
		const response = await fetch(`${pageUrl}events`, { signal: controller.signal });
		expect(response.status).toBe(200);
		const decoder = new TextDecoder();
		for await (const chunk of response.body!) {
			seen += decoder.decode(chunk, { stream: true });
			if (texts.every((text) => seen.includes(text))) return;
		}
	} catch (error) {
		if (!controller.signal.aborted) throw error;
	} finally {
		clearTimeout(timer);
		controller.abort();
	}
	throw new Error(`the page's stream did not carry ${JSON.stringify(texts)}; it sent:\n${seen}`);
}

/**
 * planner's form of two questions (a tab each: a choice with previews and a note, a multi-select;
 * then Review), then writer's free text: forms headed with the asking session's name. With the
 * page on (`pageUrl`), the page's stream carries the planner's request while its form is open.
 */
async function answerForeground(session: TmuxSession, pageUrl?: string): Promise<void> {
	let screen = await session.waitFor(PLANNER_FORM, 45_000, "the planner's form", DEAD_END);
	captures.save("planner-form", screen);
	// The first option under the cursor, its preview beside the list (the terminal is 120 columns wide).
	expect(screen).toMatch(/^→ ○ camelCase\s+│ preview: camelCase\s*$/m);
	expect(screen).toMatch(/^ {2}○ snake_case\s+│ const userName = getUserName\(\);\s*$/m);
	expect(screen).toMatch(/^ {2}○ kebab-case\s+│ function parseConfigFile\(\) \{\}\s*$/m);
	expect(screen, "a foreground child asks from pi's own process").not.toMatch(/\(pid \d+\)\] · /);
	if (pageUrl) await pageStreamCarries(pageUrl, ["Which naming convention should the project use?", "Which checks must pass before a merge?"]);
	await session.formTakesKeys();
	await session.keys("Down");
	screen = await session.waitFor(/^→ ○ snake_case\s+│ user_name = get_user_name\(\)\s*$/m, 5_000, "the cursor on snake_case, its preview beside", DEAD_END);
	expect(screen).toMatch(/^ {2}○ camelCase\s+│ preview: snake_case\s*$/m);
	// A note on the question: Ctrl+N opens its field, Enter keeps it; Enter then picks and moves on.
	await session.keys("C-n");
	await session.waitFor(/^ note: /m, 5_000, "the note field", DEAD_END);
	await session.type(NOTE);
	await session.keys("Enter");
	captures.save("planner-note", await session.waitFor(new RegExp(`^ note: ${escape(NOTE)}\\s*$`, "m"), 5_000, "the note kept", DEAD_END));
	await session.keys("Enter");

	// The multi-select: Space ticks lint and integration tests; Enter goes on to Review.
	await session.waitFor(/\[☐ Checks\]/, 5_000, "the checks tab", DEAD_END);
	await session.keys("Space", "Down", "Down", "Space");
	screen = await session.waitFor(/^→ ☑ integration tests\s*$/m, 5_000, "two checks ticked", DEAD_END);
	captures.save("planner-multi-select", screen);
	expect(screen).toMatch(/^ {2}☑ lint — Biome\s*$/m);
	expect(screen).toMatch(/^ {2}☐ unit tests\s*$/m);
	await session.keys("Enter");
	screen = await session.waitFor(/\[Review\]/, 5_000, "the Review tab", DEAD_END);
	// Shift+Tab goes back a tab, Tab forward again.
	await session.keys("BTab");
	await session.waitFor(/\[✓ Checks\]/, 5_000, "back on the answered checks tab", DEAD_END);
	await session.keys("Tab");
	screen = await session.waitFor(/\[Review\]/, 5_000, "the Review tab again", DEAD_END);
	captures.save("planner-review", screen);
	expect(screen).toMatch(new RegExp(`^ 1\\. Naming → ${CHOSEN_CONVENTION}\\s*$`, "m"));
	expect(screen).toMatch(new RegExp(`^ {6}note: ${escape(NOTE)}\\s*$`, "m"));
	expect(screen).toMatch(new RegExp(`^ 2\\. Checks → ${escape(CHECKS)}\\s*$`, "m"));
	await session.keys("Enter");

	// The writer's question comes only after the planner has finished; the planner's result carries every answer and the note.
	const inputScreen = await session.waitFor(new RegExp(formOf("subagent-writer", "What should the project be called?")), 30_000, "the writer's form", DEAD_END);
	expect(inputScreen).toContain(`Answer received by planner: ${PLANNER_REPORT}`);
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

/**
 * Quits pi as the explanation says: Ctrl+D on the empty editor, or, with text in the editor, Ctrl+C
 * twice quickly (the first clears it). The launcher then removes its temp dir.
 */
async function quit(session: TmuxSession, runDir: string, how: "ctrl+d" | "ctrl+c twice with text"): Promise<void> {
	if (how === "ctrl+d") await session.keys("C-d");
	else {
		await session.type("text left in the editor");
		await session.waitFor(/^text left in the editor\s*$/m, 5_000, "the text in the editor");
		await session.keys("C-c", "C-c");
	}
	await session.waitFor(`${EXIT_MARKER}0`, 20_000, "a clean exit of the demo");
	expect(fs.readdirSync(runDir).filter((name) => name.startsWith("checkpoint-bridge-demo-"))).toEqual([]);
}

if (!hasTmux) console.warn("tui-demo.test.ts: skipped: tmux is not installed");
// Each test has a terminal and a temp dir of its own, and the demo keeps its host, store and runners
// under that dir: the demos run at once, overlapping their waits on pi and its children.
describe.skipIf(!hasTmux).concurrent(`npm run demo in the real TUI${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	afterAll(() => {
		if (captures.files.length) console.log(captures.report("tui-demo.test.ts"));
	});

	/** Runs `body` in a fresh terminal with a fresh temp dir, both gone once it is done. */
	async function inTerminal(body: (session: TmuxSession, runDir: string) => Promise<void>): Promise<void> {
		const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-tui-demo-"));
		const session = new TmuxSession();
		try {
			await body(session, runDir);
		} finally {
			await session.dispose();
			// A background runner may still be writing its run files for a moment after pi exits.
			fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
		}
	}

	/** Runs `body` against a fresh demo; a failure message ends with the demo's stderr. */
	async function withDemo(args: string[], body: (session: TmuxSession, runDir: string) => Promise<void>): Promise<void> {
		await inTerminal(async (session, runDir) => {
			const stderrFile = path.join(runDir, "stderr.log");
			try {
				await startDemo(session, runDir, args);
				await body(session, runDir);
			} catch (error) {
				const stderr = fs.existsSync(stderrFile) ? fs.readFileSync(stderrFile, "utf8") : "";
				if (error instanceof Error) error.message += `\n--- stderr of the demo:\n${stderr || "(empty)"}`;
				throw error;
			}
		});
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
					const queued = await session.waitFor(/checkpoint-bridge: shown: .+ · 1 queued: /, 30_000, "both background questions waiting at the host", DEAD_END);
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
			expect(screen).toMatch(summaryLine("planner", "foreground", PLANNER_REPORT));
			expect(screen).toMatch(summaryLine("writer", "foreground", PROJECT_NAME));
			expect(screen).toMatch(summaryLine("reviewer", "background", BACKGROUND.reviewer.answer));
			await quit(session, dir, "ctrl+d");
		});
	});

	it("--pi 1.6 --web runs the foreground sub-agents on the dev pi, says the background step is skipped, and serves the page whose link the host shows", async () => {
		await withDemo(["--pi", "1.6", "--web"], async (session, dir) => {
			const opening = await start(session, 60_000);
			expect(opening).toContain("checkpoint-bridge demo (pi 1.6.");
			expect(opening).toMatch(/skipped: background sub-agents need pi 0\.85/);
			expect(opening).toContain('Web page on: open the link of the line "answer in a browser at" below');
			const pageUrl = PAGE_LINK.exec(await session.waitFor(PAGE_LINK, 10_000, "the page's link"))![1]!;
			await answerForeground(session, pageUrl);
			const screen = await summary(session, { agent: "writer", where: "foreground", answer: PROJECT_NAME });
			expect(screen).toMatch(summaryLine("planner", "foreground", PLANNER_REPORT));
			expect(screen).not.toMatch(/\((pid \d+|background)\)/);
			await quit(session, dir, "ctrl+c twice with text");
		});
	});

	it("without a terminal for stdin, refuses at once with its one line and exit code 1", async () => {
		await inTerminal(async (tmux, runDir) => {
			const stderrFile = path.join(runDir, "stderr.log");
			await tmux.start({
				command: `env TMPDIR=${JSON.stringify(runDir)} ${JSON.stringify(NODE_BIN)} demo/run.mjs </dev/null 2>${JSON.stringify(stderrFile)}; echo "${EXIT_MARKER}$?"; sleep 30`,
				cwd: root,
			});
			await tmux.waitFor(EXIT_MARKER, 10_000, "the launcher's exit");
			expect(await tmux.screen()).toMatch(new RegExp(`^${EXIT_MARKER}1\\s*$`, "m"));
			expect(fs.readFileSync(stderrFile, "utf8")).toMatch(NO_TERMINAL("stdin is"));
			expect(fs.readdirSync(runDir), "nothing started").toEqual(["stderr.log"]);
		});
	});
});

describe("npm run demo without a terminal", () => {
	it("refuses at once with one line on stderr and exit code 1 when stdin and stdout are pipes, starting nothing", () => {
		const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cb-demo-no-tty-"));
		try {
			const run = spawnSync(NODE_BIN, ["demo/run.mjs"], { cwd: root, env: { ...process.env, TMPDIR: tmp }, stdio: "pipe", encoding: "utf8", timeout: 10_000 });
			expect(run.status).toBe(1);
			expect(run.stdout).toBe("");
			expect(run.stderr).toMatch(NO_TERMINAL("stdin and stdout are"));
			expect(fs.readdirSync(tmp), "no run dir, no pi").toEqual([]);
		} finally {
			fs.rmSync(tmp, { recursive: true, force: true });
		}
	});
});
