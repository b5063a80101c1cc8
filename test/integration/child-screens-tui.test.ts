/**
 * A foreground child's own screens (`ctx.ui.custom`) drawn in the host's real TUI (tmux), with the
 * real pi-subagents and CHECKPOINT_BRIDGE_RELAY_DIALOGS=1 (ADR-0015), on the pi under test: pi's
 * example `question.ts` and `questionnaire.ts`, and rpiv-ask-user-question's tabbed form, each in a
 * child whose agent file loads it, answered with the keys a person would press. The screen of every
 * step is written under .tmp/child-screens-tui/pi-<version>/ (the path is printed).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { installRelayAgent } from "./fixtures/relay-agent.ts";
import { RPIV_DB_QUESTION, RPIV_EXT } from "./fixtures/rpiv.ts";
import { cardGone, cardOf, HAS_CHROMIUM, openBrowser, openTab, screenshot } from "./harness/browser.ts";
import { baseArgs, childTranscripts, createPiEnv, NODE_BIN, PI_CLI, PI_PACKAGE, PI_VERSION, type PiEnv, REPO_ROOT, toolResultsIn } from "./harness/pi-cli.ts";
import { ScreenCaptures, squeezed, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
/** pi's own example extensions, of the pi under test. */
const EXAMPLES = join(PI_PACKAGE, "examples/extensions");
const QUESTION_EXT = join(EXAMPLES, "question.ts");
const QUESTIONNAIRE_EXT = join(EXAMPLES, "questionnaire.ts");
/** A child's screen that keeps every key for itself (fixtures/stubborn-screen.ts). */
const STUBBORN_EXT = join(REPO_ROOT, "test/integration/fixtures/stubborn-screen.ts");
/** pi and pi-subagents load slowly on a busy machine (they compile their TypeScript on start). */
const BOOT_MS = 90_000;
/** The line the host draws above a child's screen while keys do not reach it yet. */
const GUARDED = "keys reach it in a moment";
/** How long a prompt's child takes to show its screen, and how many Enters pi may drop meanwhile. */
const SCREEN_SHOWS = { attempts: 4, timeoutMs: 20_000, what: "the child's screen" };
const PAGE_URL = /http:\/\/127\.0\.0\.1:\d+\/t\/[A-Za-z0-9_-]{43}\//;

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
const captures = new ScreenCaptures(join(REPO_ROOT, ".tmp", "child-screens-tui", `pi-${PI_VERSION}`));
afterAll(() => {
	if (captures.files.length) console.log(captures.report(`child-screens-tui.test.ts (pi ${PI_VERSION})`));
});

/** Every result of `tool` in the children's transcripts. */
const childResults = (piEnv: PiEnv, tool: string) => childTranscripts(piEnv).flatMap((t) => toolResultsIn(t.records, tool));

/** The questionnaire of questionnaire.ts: two questions, so it shows tabs. */
const SURVEY = {
	questions: [
		{
			id: "scope",
			label: "Scope",
			prompt: "How big is the change?",
			options: [
				{ value: "small", label: "Small" },
				{ value: "large", label: "Large" },
			],
		},
		{
			id: "when",
			label: "When",
			prompt: "When does it ship?",
			options: [
				{ value: "now", label: "Now" },
				{ value: "later", label: "Later" },
			],
		},
	],
};

/** rpiv-ask-user-question's form: two questions, so it shows its tabs. */
const RPIV_QUESTIONS = {
	questions: [
		RPIV_DB_QUESTION,
		{
			question: "Which cache?",
			header: "Cache",
			options: [
				{ label: "none", description: "no cache" },
				{ label: "redis", description: "a server" },
			],
		},
	],
};

const COLOURS = { question: "Which colour?", options: [{ label: "Red" }, { label: "Green" }, { label: "Blue" }] };

describe.skipIf(!hasTmux)(
	`a foreground child's own screens in the host's real TUI, pi ${PI_VERSION}${hasTmux ? "" : " (skipped: tmux is not installed)"}`,
	() => {
		let session: TmuxSession | undefined;
		let piEnv: PiEnv | undefined;
		/** The web page's address, as the host announced it at start. */
		let pageUrl = "";
		let browser: Awaited<ReturnType<typeof openBrowser>> | undefined;
		afterAll(async () => {
			await session?.dispose();
			await browser?.close();
			piEnv?.cleanup();
		});

		/** The host pi with pi-subagents in tmux, started by the first test that needs it, ready for a prompt. */
		async function host(): Promise<{ session: TmuxSession; piEnv: PiEnv }> {
			if (session && piEnv) return { session, piEnv };
			piEnv = createPiEnv({
				script: {
					prompts: {
						pick: { subagent: { agent: "picker", task: "Ask which colour." } },
						survey: { subagent: { agent: "surveyor", task: "Ask about the change." } },
						rpiv: { subagent: { agent: "rpiv-child", task: "Ask which database." } },
						both: { subagent: { agent: "picker", task: "Ask which colour." }, ask: { questions: [{ question: "Deploy today?", options: ["yes", "no"] }] } },
						stubborn: { subagent: { agent: "stubborn-child", task: "Show the screen." } },
					},
					childCalls: {
						picker: { tool: "question", arguments: COLOURS },
						surveyor: { tool: "questionnaire", arguments: SURVEY },
						"rpiv-child": { tool: "ask_user_question", arguments: RPIV_QUESTIONS },
						"stubborn-child": { tool: "stubborn", arguments: {} },
					},
				},
				env: { CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1", CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
			});
			installRelayAgent(piEnv.agentDir, "picker", QUESTION_EXT);
			installRelayAgent(piEnv.agentDir, "surveyor", QUESTIONNAIRE_EXT);
			installRelayAgent(piEnv.agentDir, "rpiv-child", RPIV_EXT);
			installRelayAgent(piEnv.agentDir, "stubborn-child", STUBBORN_EXT);
			const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
			const piPart = [NODE_BIN, PI_CLI, ...baseArgs({ subagents: true }), "--name", "tui-host"].map(quote);
			session = new TmuxSession();
			await session.start({ command: `env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>/dev/null; sleep 30`, cwd: piEnv.cwd, width: 150, height: 50 });
			const booted = await session.waitFor(PAGE_URL, BOOT_MS, "the page's announcement");
			pageUrl = PAGE_URL.exec(booted)![0];
			await session.waitFor(/faux-1/, BOOT_MS, "pi's footer");
			return { session, piEnv };
		}

		/** Waits until the child's screen takes keys (the host's key guard is over). */
		async function takesKeys(tmux: TmuxSession): Promise<string> {
			return until(
				async () => {
					const screen = await tmux.screen();
					return !screen.includes(GUARDED) && screen;
				},
				"the child's screen to take keys",
				5_000,
				50,
			);
		}

		it("pi's question.ts in a child: drawn in the host's terminal under who asks; Down and Enter reach it as its second option; Esc as its own cancel, and it leaves the screen", async () => {
			const { session: tmux, piEnv: env } = await host();
			let screen = await tmux.prompt("pick", "question.ts's own screen", SCREEN_SHOWS);
			captures.save("question-guarded", screen);
			expect(screen).toContain("[subagent-picker] · question.ts's own screen");
			screen = await takesKeys(tmux);
			captures.save("question", screen);
			expect(screen).toContain("Which colour?");
			expect(screen).toMatch(/> 1\. Red/);
			await tmux.keys("Down");
			await tmux.waitFor(/> 2\. Green/, 5_000, "the cursor on Green");
			await tmux.keys("Enter");
			await until(() => childResults(env, "question").length === 1, "the child's question result", 60_000, 100);
			expect(childResults(env, "question")).toEqual(["User selected: 2. Green"]);
			screen = await tmux.waitFor(/User selected: 2\. Green/, 30_000, "the subagent's output");
			captures.save("question-answered", screen);
			expect(screen).not.toContain("question.ts's own screen");

			// The same question again, cancelled with Esc: the child's own cancel, and its screen is gone.
			await tmux.prompt("pick", "question.ts's own screen", SCREEN_SHOWS);
			await takesKeys(tmux);
			await tmux.keys("Escape");
			await until(() => childResults(env, "question").length === 2, "the second question result", 60_000, 100);
			expect(childResults(env, "question")).toContain("User cancelled the selection");
			screen = await tmux.waitFor(/User cancelled the selection/, 30_000, "the cancelled result");
			captures.save("question-cancelled", screen);
			expect(screen).not.toContain("question.ts's own screen");
			expect(squeezed(screen)).not.toContain(squeezed("UI not available"));
		});

		it("a child's screen that keeps Esc, q and Ctrl+C for itself: ctrl+], the key the host keeps, ends it as dismissed and the child's custom() gives undefined", async () => {
			const { session: tmux, piEnv: env } = await host();
			await tmux.prompt("stubborn", "stubborn-screen.ts's own screen", SCREEN_SHOWS);
			let screen = await takesKeys(tmux);
			captures.save("stubborn", screen);
			expect(screen).toContain("[subagent-stubborn-child] · stubborn-screen.ts's own screen · ctrl+] leaves");
			// Each key on its own: Esc and q sent together would read as alt+q.
			for (const [i, key] of ["Escape", "q", "C-c"].entries()) {
				await tmux.keys(key);
				await tmux.waitFor(`keys taken: ${i + 1}`, 5_000, `key ${key} taken by the child's screen`);
			}
			await tmux.keys("C-]");
			await until(() => childResults(env, "stubborn").length === 1, "the child's stubborn result", 60_000, 100);
			expect(childResults(env, "stubborn")).toEqual(["stubborn screen gave: undefined after 3 keys"]);
			screen = await tmux.waitFor(/stubborn screen gave: undefined/, 30_000, "the subagent's output");
			captures.save("stubborn-left", screen);
			expect(screen).not.toContain("stubborn-screen.ts's own screen");
		});

		it("pi's questionnaire.ts in a child: its tabs answered in the host's terminal", async () => {
			const { session: tmux, piEnv: env } = await host();
			await tmux.prompt("survey", "questionnaire.ts's own screen", SCREEN_SHOWS);
			let screen = await takesKeys(tmux);
			captures.save("questionnaire", screen);
			expect(screen).toContain("[subagent-surveyor] · questionnaire.ts's own screen");
			expect(screen).toMatch(/Scope .*When .*Submit/);
			// Small (Enter) moves to the next tab; Later (Down, Enter) to Submit; Enter submits.
			await tmux.keys("Enter");
			await tmux.waitFor("When does it ship?", 5_000, "the second tab");
			await tmux.keys("Down");
			await tmux.waitFor(/> 2\. Later/, 5_000, "the cursor on Later");
			await tmux.keys("Enter");
			screen = await tmux.waitFor("Ready to submit", 5_000, "the submit tab");
			captures.save("questionnaire-submit", screen);
			await tmux.keys("Enter");
			await until(() => childResults(env, "questionnaire").length === 1, "the child's questionnaire result", 60_000, 100);
			expect(childResults(env, "questionnaire")).toEqual(["Scope: user selected: 1. Small\nWhen: user selected: 2. Later"]);
			screen = await tmux.waitFor(/When: user selected: 2\. Later/, 30_000, "the subagent's output");
			expect(screen).not.toContain("questionnaire.ts's own screen");
		});

		it("rpiv-ask-user-question's tabbed form in a child: answered in the host's terminal", async () => {
			const { session: tmux, piEnv: env } = await host();
			await tmux.prompt("rpiv", "@juicesharp/rpiv-ask-user-question's own screen", SCREEN_SHOWS);
			let screen = await takesKeys(tmux);
			captures.save("rpiv", screen);
			expect(screen).toContain("[subagent-rpiv-child] · @juicesharp/rpiv-ask-user-question's own screen");
			expect(screen).toMatch(/DB .*Cache .*Submit/);
			await tmux.keys("Down");
			await tmux.waitFor(/❯ 2\. postgres/, 5_000, "the cursor on postgres");
			await tmux.keys("Enter");
			await tmux.waitFor("Which cache?", 5_000, "the second tab");
			await tmux.keys("Down");
			await tmux.waitFor(/❯ 2\. redis/, 5_000, "the cursor on redis");
			await tmux.keys("Enter");
			screen = await tmux.waitFor("Ready to submit your answers?", 5_000, "the review");
			captures.save("rpiv-review", screen);
			await tmux.keys("Enter");
			await until(() => childResults(env, "ask_user_question").length === 1, "the child's rpiv result", 60_000, 100);
			const [result] = childResults(env, "ask_user_question");
			expect(result).toContain('"Which database?"="postgres"');
			expect(result).toContain('"Which cache?"="redis"');
			screen = await tmux.waitFor(/Tool ask_user_question returned/, 30_000, "the subagent's output");
			expect(screen).not.toContain("rpiv-ask-user-question's own screen");
		});

		it("the host's own ask_user_via_host form and a child's screen asked at once: one after the other, never on the screen together", async () => {
			const { session: tmux, piEnv: env } = await host();
			const greens = () => childResults(env, "question").filter((r) => r === "User selected: 2. Green").length;
			const before = greens();
			const FORM = "Deploy today?";
			const SCREEN = "question.ts's own screen";
			await tmux.prompt("both", /Deploy today\?|question\.ts's own screen/, SCREEN_SHOWS);
			const seen: string[] = [];
			/** Answers what is on screen now; records which of the two it was, and that the other was not there. */
			const answerShown = async () => {
				for (const deadline = Date.now() + 30_000; ; ) {
					const screen = await tmux.screen();
					const form = /→ ○ yes/.test(screen);
					const own = screen.includes(SCREEN);
					expect(form && own, screen).toBe(false);
					if (form && !seen.includes("form")) {
						seen.push("form");
						const shown = await tmux.formTakesKeys();
						captures.save("both-form", shown);
						expect(shown).toContain(FORM);
						expect(shown).not.toContain(SCREEN);
						return tmux.keys("Enter");
					}
					if (own && !seen.includes("screen")) {
						seen.push("screen");
						const shown = await takesKeys(tmux);
						captures.save("both-screen", shown);
						expect(shown).not.toMatch(/→ ○ yes/);
						await tmux.keys("Down");
						await tmux.waitFor(/> 2\. Green/, 5_000, "the cursor on Green");
						return tmux.keys("Enter");
					}
					if (Date.now() > deadline) throw new Error(`neither the form nor the child's screen showed:\n${screen}`);
					await new Promise((resolve) => setTimeout(resolve, 50));
				}
			};
			await answerShown();
			await answerShown();
			expect([...seen].sort()).toEqual(["form", "screen"]);
			// Transcripts are not listed in run order: the child's answer is one more Green.
			await until(() => greens() === before + 1, "the child's question result", 60_000, 100);
		});

		it("the page (Chromium) shows a read-only card naming who asks while the child's screen is open, gone once it closes; a child's rpiv form shows as the host's own does", async (test) => {
			if (!HAS_CHROMIUM) test.skip("Chromium is not installed");
			const { session: tmux, piEnv: env } = await host();
			browser = await openBrowser();
			const tab = await openTab(browser.browser, pageUrl);
			await tmux.prompt("pick", "question.ts's own screen", SCREEN_SHOWS);
			const card = await cardOf(tab.page, "subagent-picker");
			const shown = await card.evaluate((c) => ({
				legend: c.querySelector(".legend")?.textContent,
				details: c.querySelector(".details")?.textContent,
				where: c.querySelector(".where")?.textContent,
				forms: c.querySelectorAll("form").length,
				inputs: c.querySelectorAll("input, textarea, button").length,
			}));
			expect(shown).toEqual({
				legend: "question.ts shows its own screen in the terminal",
				details: "Answer in the terminal: this is the asker's own screen there.",
				where: "on screen in the terminal",
				forms: 0,
				inputs: 0,
			});
			await screenshot(tab.page, `child-screen-card-pi-${PI_VERSION}`);
			const before = childResults(env, "question").length;
			await takesKeys(tmux);
			await tmux.keys("Enter");
			await until(() => childResults(env, "question").length === before + 1, "the child's question result", 60_000, 100);
			await cardGone(tab.page, "subagent-picker");
			expect(childResults(env, "question")).toContain("User selected: 1. Red");

			// rpiv's form drawn in the host's terminal by a child: on the page as the host's own is (from the child's event bus).
			const rpivBefore = childResults(env, "ask_user_question").length;
			await tmux.prompt("rpiv", "@juicesharp/rpiv-ask-user-question's own screen", SCREEN_SHOWS);
			const rpiv = await cardOf(tab.page, "rpiv-ask-user-question");
			expect(await rpiv.evaluate((c) => c.querySelector("legend")?.textContent)).toBe("(1/2) DB: Which database?");
			expect(await rpiv.$("button[type=submit]")).toBeNull();
			await screenshot(tab.page, `child-rpiv-card-pi-${PI_VERSION}`);
			await takesKeys(tmux);
			await tmux.keys("Enter");
			await tmux.waitFor("Which cache?", 5_000, "the second tab");
			await tmux.keys("Enter");
			await tmux.waitFor("Ready to submit your answers?", 5_000, "the review");
			await tmux.keys("Enter");
			await until(() => childResults(env, "ask_user_question").length === rpivBefore + 1, "the child's rpiv result", 60_000, 100);
			await cardGone(tab.page, "rpiv-ask-user-question", 15_000);
			expect(tab.errors).toEqual([]);
		});
	},
);
