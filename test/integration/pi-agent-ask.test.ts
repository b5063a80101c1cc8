/**
 * checkpoint-bridge as pi-agent-ask's external UI, on the real pi (the dev pi: ADR-0038 says which
 * files run on pi 0.85 too): a stand-in for pi-agent-ask's `ask_user`, written from its contract
 * alone (fixtures/pi-agent-ask-standin.ts), loaded beside the bridge.
 *
 * 1. The main session of `pi --mode rpc` (one process, several prompts): the form reaches the RPC
 *    client as dialogs; single, multi and a typed Other come back as option values and customText;
 *    a dismiss is `cancel`; another local submitter's answer aborts the signal and the host's request
 *    leaves at once; a call whose budget runs out rejects (the tool reports the error).
 * 2. A pi-subagents child (no UI of its own) of the same process: its form reaches the RPC client, its
 *    answer the child.
 * 3. No host (`--mode json`): the bridge does not connect, the stand-in's own fallback stands.
 * 4. The TUI in tmux as host: a child's form is the terminal form; a note comes back as `note`; another
 *    submitter's answer closes the form on screen at once.
 * 5. The TUI in tmux with the web page, in Chromium: a form open in the TUI itself is a card too, answered
 *    through `:submit` (a refused submit's reason shown), gone at `:completed`; the real rpiv's
 *    questionnaire is a read-only card while it waits.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { checks, stack } from "../support/pi-agent-ask-questions.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import { cardGone, cardOf, fill, HAS_CHROMIUM, openBrowser, openTab, POLL_MS, screenshot, submit } from "./harness/browser.ts";
import {
	BRIDGE_EXT,
	baseArgs,
	childTranscripts,
	createPiEnv,
	type Frame,
	isDialog,
	isNotify,
	NODE_BIN,
	PI_CLI,
	PI_VERSION,
	type PiEnv,
	type PiRpc,
	PiRpcFixture,
	parseJsonLines,
	REPO_ROOT,
	readTranscript,
	resultText,
	runPi,
	toolResultsIn,
} from "./harness/pi-cli.ts";
import { EXIT_MARKER, squeezed, TmuxSession, tmuxAvailable, waitForSqueezed } from "./harness/tmux.ts";

const STANDIN_EXT = join(REPO_ROOT, "test/integration/fixtures/pi-agent-ask-standin.ts");
const SCRIPTED_MODEL_EXT = join(REPO_ROOT, "test/integration/fixtures/scripted-model.ts");
const ASK_USER = "ask_user";
/** pi-subagents compiles on start: the first dialog of a run with children may take a while. */
const FIRST_DIALOG_MS = 90_000;
/** The budget of every bridge call in the RPC run: long enough for a client that answers at once, short enough to wait out once. */
const BUDGET_MS = 8_000;

const call = (args: Record<string, unknown>) => ({ call: { tool: ASK_USER, arguments: args } });

/** The stand-in's result (its `details`) and whether pi reported the call as an error. */
function standInResult(end: Frame): { isError: boolean; details: any; text: string } {
	return { isError: end.isError === true, details: end.result?.details, text: resultText(end.result) };
}

/** What the RPC run's main session asks of the child agent. */
const FILL_IN = "Fill in the form with the form filler.";

/**
 * One `pi --mode rpc` (pi-subagents and the stand-in loaded) serves both RPC tests, the main session's and
 * the child's: each prompts and reads frames after its own mark, and neither leaves a question open.
 */
const rpc = new PiRpcFixture();
let rpcUp: Promise<PiRpc> | undefined;
afterAll(() => rpc.stop());
function sharedRpc(): Promise<PiRpc> {
	rpcUp ??= (async () => {
		const script: ScriptConfig = {
			prompts: {
				single: call({ title: "Project setup", questions: [stack] }),
				multi: call({ questions: [checks, { ...stack, id: "lang", label: "Language", prompt: "Which language?" }] }),
				dismiss: call({ questions: [stack] }),
				elsewhere: call({
					questions: [stack],
					standIn: { localAnswerAfterMs: 1_500, localAnswer: { kind: "answer", answers: { stack: { values: ["go"] } } } },
				}),
				wait: call({ questions: [stack] }),
				[FILL_IN]: childScript.main!,
			},
			childCalls: childScript.childCalls!,
		};
		installFormFiller(rpc.createEnv({ script, env: { CHECKPOINT_BRIDGE_TIMEOUT_MS: String(BUDGET_MS) } }));
		const pi = rpc.startPi({ subagents: true, args: ["--extension", STANDIN_EXT] });
		// pi-subagents compiles on start: pi answers its first command once it is up.
		await pi.command("get_state", {}, FIRST_DIALOG_MS);
		return pi;
	})();
	return rpcUp;
}

describe("pi-agent-ask's ask_user in the main session of pi --mode rpc", () => {
	it("the form reaches the RPC client; answers, Other, dismiss, another submitter's answer and a timeout come back as the contract says", async () => {
		const pi = await sharedRpc();
		const before = pi.mark();
		const prompt = async (text: string) => {
			const from = pi.mark();
			await pi.prompt(text);
			return from;
		};
		const end = async (from: number) => {
			const frame = await pi.waitForToolEnd(ASK_USER, { from, timeoutMs: BUDGET_MS + 20_000 });
			await pi.waitForSettled({ from });
			return standInResult(frame);
		};

		// Single choice: the title, label, prompt, description, preview and the recommended option all shown.
		let from = await prompt("single");
		const single = await pi.waitForDialog({ from, timeoutMs: 60_000 });
		expect(single.method).toBe("select");
		expect(single.title).toMatch(/^\[[^\]]+\] Stack: Which stack\?\nProject setup\n── preview: Go ──\npackage main$/);
		expect(single.options).toEqual(["Go (recommended)", "TypeScript — typed", "Other (type your own)"]);
		pi.answer(single, "TypeScript — typed");
		const answered = await end(from);
		expect(answered.isError).toBe(false);
		expect(answered.details).toEqual({ status: "answered", by: "provider", answers: [{ id: "stack", values: ["ts"], labels: ["TypeScript"] }] });

		// Multi-select (two boxes ticked), then a typed Other: option values and customText.
		from = await prompt("multi");
		let dialog = await pi.waitForDialog({ from });
		expect(dialog.title).toMatch(/\(1\/2\) Checks: Which checks run\?$/);
		dialog = await pi.answerThenNextDialog(dialog, "Lint");
		dialog = await pi.answerThenNextDialog(dialog, "E2E");
		dialog = await pi.answerThenNextDialog(dialog, "Done (2 selected)");
		expect(dialog.title).toMatch(/\(2\/2\) Language: Which language\?/);
		dialog = await pi.answerThenNextDialog(dialog, "Other (type your own)");
		expect(dialog.method).toBe("input");
		pi.answer(dialog, "Rust");
		expect((await end(from)).details).toEqual({
			status: "answered",
			by: "provider",
			answers: [
				{ id: "checks", values: ["lint", "e2e"], labels: ["Lint", "E2E"] },
				{ id: "lang", values: [], labels: [], customText: "Rust" },
			],
		});

		// The human dismisses the dialog: cancel, not an error.
		from = await prompt("dismiss");
		pi.cancel(await pi.waitForDialog({ from }));
		expect(await end(from)).toMatchObject({ isError: false, details: { status: "cancelled", reason: "user" } });

		// Another local submitter answers while the dialog is open: the signal aborts, the request leaves the host at once.
		from = await prompt("elsewhere");
		const open = await pi.waitForDialog({ from });
		const elsewhere = await end(from);
		expect(elsewhere.details).toEqual({ status: "answered", by: "local", answers: [{ id: "stack", values: ["go"], labels: ["Go"] }] });
		const reportFrom = await prompt("/checkpoints");
		const report = await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith("checkpoint-bridge:"), { from: reportFrom, what: "the report" });
		expect(report.message).toMatch(/^checkpoint-bridge: no questions open\./);
		expect(report.message).toMatch(/\] cancelled, 0\/1 answered/);
		pi.answer(open, "TypeScript — typed");

		// Nobody answers: the budget runs out, the open rejects, and the stand-in reports a UI failure (a tool error).
		from = await prompt("wait");
		await pi.waitForDialog({ from });
		const timedOut = await end(from);
		expect(timedOut.isError).toBe(true);
		expect(timedOut.text).toMatch(/ask_user: the external UI failed: checkpoint-bridge: timeout: .*budget/);

		// Every dialog of the run was the bridge's: one per question shown.
		expect(pi.frames.slice(before).filter(isDialog)).toHaveLength(9);
	});
});

/** A child agent that loads the bridge, the scripted model and the stand-in. */
function installFormFiller(piEnv: PiEnv, name = "form-filler"): void {
	writeFileSync(
		join(piEnv.agentDir, "agents", `${name}.md`),
		[
			"---",
			`name: ${name}`,
			"description: Fills in a form with the user through ask_user",
			"model: faux/faux-1",
			`extensions: ${BRIDGE_EXT}, ${SCRIPTED_MODEL_EXT}, ${STANDIN_EXT}`,
			"systemPromptMode: replace",
			"inheritProjectContext: false",
			"inheritSkills: false",
			"completionGuard: false",
			"acceptanceRole: read-only",
			'acceptance: {"level":"none","reason":"a test agent"}',
			"---",
			"You fill in forms with the user.",
			"",
		].join("\n"),
	);
}

const childScript: ScriptConfig = {
	main: { subagent: { agent: "form-filler", task: "Fill in the form." } },
	childCalls: { "form-filler": { tool: ASK_USER, arguments: { title: "Release", questions: [checks] } } },
};

describe("pi-agent-ask's ask_user in a pi-subagents child", () => {
	it("a child without UI connects the bridge: its form reaches the RPC client and the answer the child", async () => {
		const pi = await sharedRpc();
		const from = pi.mark();
		await pi.prompt(FILL_IN);
		let dialog = await pi.waitForDialog({ from, timeoutMs: FIRST_DIALOG_MS });
		expect(dialog.title).toMatch(/^\[subagent-form-filler\] Checks: Which checks run\?\nRelease$/);
		dialog = await pi.answerThenNextDialog(dialog, "Unit tests");
		pi.answer(dialog, "Done (1 selected)");
		const subagentEnd = await pi.waitForToolEnd("subagent", { from, timeoutMs: 60_000 });
		const transcript = subagentEnd.result?.details?.results?.[0]?.transcriptPath as string;
		const results = toolResultsIn(readTranscript(transcript), ASK_USER).map((text) => JSON.parse(text));
		expect(results).toEqual([{ status: "answered", by: "provider", answers: [{ id: "checks", values: ["unit"], labels: ["Unit tests"] }] }]);
		await pi.waitForSettled({ from });
	});
});

describe("pi-agent-ask's ask_user with no host", () => {
	let piEnv: PiEnv | undefined;
	afterEach(() => piEnv?.cleanup());

	it("pi --mode json: the bridge does not connect, in the main session nor in a child; the stand-in's fallback stands", async () => {
		piEnv = createPiEnv({ script: { ...childScript, main: { ...childScript.main, ...call({ questions: [stack] }) } } });
		installFormFiller(piEnv);
		const run = await runPi(piEnv, [...baseArgs({ subagents: true }), "--extension", STANDIN_EXT, "--mode", "json", "Fill in the form."], 120_000);
		expect(run.code, run.stderr.slice(-2_000)).toBe(0);
		const events = parseJsonLines(run.stdout);
		const fallback = { status: "cancelled", reason: "no_ui", message: "ask_user needs the terminal UI: no external UI is connected." };
		const mainEnd = events.find((e) => e.type === "tool_execution_end" && e.toolName === ASK_USER);
		expect(mainEnd?.result?.details).toEqual(fallback);
		const subagentEnd = events.find((e) => e.type === "tool_execution_end" && e.toolName === "subagent");
		const transcript = subagentEnd?.result?.details?.results?.[0]?.transcriptPath as string;
		expect(toolResultsIn(readTranscript(transcript), ASK_USER).map((text) => JSON.parse(text))).toEqual([fallback]);
	});
});

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** Every ask_user result in the child transcripts written so far, parsed. */
const childResults = (piEnv: PiEnv) => childTranscripts(piEnv).flatMap(({ records }) => toolResultsIn(records, ASK_USER).map((text) => JSON.parse(text)));

/** The child transcripts' ask_user results once there are `count` of them (pi-subagents writes a transcript as its child ends). */
async function resultsOnceThere(piEnv: PiEnv, count: number, timeoutMs = 60_000): Promise<unknown[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const results = childResults(piEnv);
		if (results.length >= count || Date.now() > deadline) return results;
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}

if (!tmuxAvailable()) console.warn("pi-agent-ask.test.ts: the TUI (tmux) tests are skipped: tmux is not installed");
describe.skipIf(!tmuxAvailable())("pi-agent-ask's ask_user in a child of the TUI (tmux)", () => {
	let tmux: TmuxSession | undefined;
	let piEnv: PiEnv | undefined;
	afterEach(async () => {
		await tmux?.dispose();
		piEnv?.cleanup();
	});

	it("the child's form is the host's terminal form: the title shown, a note comes back as note; another submitter's answer closes it at once", async () => {
		piEnv = createPiEnv({
			script: {
				prompts: {
					fill: { subagent: { agent: "form-filler", task: "Fill in the form." } },
					elsewhere: { subagent: { agent: "form-elsewhere", task: "Fill in the form." } },
				},
				childCalls: {
					"form-filler": { tool: ASK_USER, arguments: { title: "Release plan", questions: [stack] } },
					"form-elsewhere": {
						tool: ASK_USER,
						arguments: {
							questions: [checks],
							standIn: { localAnswerAfterMs: 4_000, localAnswer: { kind: "answer", answers: { checks: { values: ["e2e"] } } } },
						},
					},
				},
			},
		});
		installFormFiller(piEnv);
		installFormFiller(piEnv, "form-elsewhere");
		const env = piEnv;
		const stderrFile = join(env.root, "stderr.log");
		const envPart = Object.entries({ ...env.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs({ subagents: true }), "--extension", STANDIN_EXT, "--name", "tui-host"].map(quote);
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>${quote(stderrFile)}`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		tmux = new TmuxSession();
		const session = tmux;
		const deadEnd = new RegExp(EXIT_MARKER);
		const form = (agent: string) => new RegExp(`\\[subagent-${agent}\\] · question \\d+:\\d\\d left( · call (\\d+:\\d\\d|no limit))? · 1 question`);
		// pi 0.85 drops an Enter pressed while its startup is still in progress: press it again (an empty editor ignores it) until the form opens.
		const prompt = async (text: string, shown: RegExp) => {
			await session.type(text);
			for (let attempt = 0; ; attempt++) {
				await session.keys("Enter");
				try {
					return await session.waitFor(shown, 8_000, `the form for "${text}"`, deadEnd);
				} catch (error) {
					if (attempt >= FIRST_DIALOG_MS / 8_000) throw error;
				}
			}
		};
		try {
			await session.start({ command, cwd: env.cwd, width: 120, height: 48 });
			await session.waitFor("tui-host", 60_000, "pi's editor and footer", deadEnd);

			let screen = await prompt("fill", form("form-filler"));
			expect(screen).toContain("Release plan");
			expect(screen).toMatch(/^→ ○ Go \(recommended\)/m);
			await session.formTakesKeys();
			await session.keys("Down");
			await session.keys("C-n");
			await session.waitFor(/^ note: /m, 5_000, "the note field", deadEnd);
			await session.type("we know it");
			await session.keys("Enter");
			await session.waitFor(/^ note: we know it\s*$/m, 5_000, "the note kept", deadEnd);
			await session.keys("Enter");
			expect(await resultsOnceThere(env, 1)).toEqual([
				{ status: "answered", by: "provider", answers: [{ id: "stack", values: ["ts"], labels: ["TypeScript"], note: "we know it" }] },
			]);

			// Nobody touches the form; another local submitter answers and the form leaves the screen at once.
			screen = await prompt("elsewhere", form("form-elsewhere"));
			const shownAt = Date.now();
			expect(screen).toContain("Which checks run?");
			for (;;) {
				screen = await session.screen();
				if (!form("form-elsewhere").test(screen)) break;
				expect(Date.now() - shownAt, "the form closes once the signal aborts").toBeLessThan(20_000);
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
			expect(screen).not.toContain("Which checks run?\n");
			expect(await resultsOnceThere(env, 2)).toContainEqual({ status: "answered", by: "local", answers: [{ id: "checks", values: ["e2e"], labels: ["E2E"] }] });
		} catch (error) {
			if (error instanceof Error) error.message += `\n--- stderr of pi:\n${existsSync(stderrFile) ? readFileSync(stderrFile, "utf8") : "(empty)"}`;
			throw error;
		}
	});
});

const RPIV_EXT = join(REPO_ROOT, "node_modules/@juicesharp/rpiv-ask-user-question/index.ts");
const REFUSAL = "the release needs a second reviewer";

// The run's summary only counts skipped tests: say which and why where the run prints it.
if (!tmuxAvailable() || !HAS_CHROMIUM || PI_VERSION !== "1.6")
	console.warn(
		`pi-agent-ask.test.ts: "other ask tools' forms open in the TUI, on the web page" is skipped: ${PI_VERSION !== "1.6" ? "on pi 0.85 the page and pi.events are the same and the run is costly" : "tmux or Chromium is not installed"}`,
	);
describe.skipIf(!tmuxAvailable() || !HAS_CHROMIUM || PI_VERSION !== "1.6")(
	`other ask tools' forms open in the TUI, on the web page (tmux, Chromium)${PI_VERSION === "1.6" ? "" : ": skipped on pi 0.85, the page and pi.events are the same there and the run is costly"}`,
	() => {
		let tmux: TmuxSession | undefined;
		let piEnv: PiEnv | undefined;
		let browser: Awaited<ReturnType<typeof openBrowser>> | undefined;
		afterEach(async () => {
			await browser?.close();
			await tmux?.dispose();
			piEnv?.cleanup();
		});

		it("the page answers a pi-agent-ask form open in the TUI through :submit, shows a refused submit's reason, drops the card on :completed (the page's answer or the terminal's); rpiv's questionnaire is a read-only card while it waits", async () => {
			piEnv = createPiEnv({
				script: {
					prompts: {
						form: call({ title: "Release plan", questions: [stack, checks], standIn: { refuseFirstSubmit: REFUSAL } }),
						hotfix: call({ title: "Hotfix", questions: [stack] }),
						rpiv: {
							call: {
								tool: "ask_user_question",
								arguments: {
									questions: [
										{
											question: "Which database?",
											header: "DB",
											options: [
												{ label: "Postgres", description: "relational" },
												{ label: "SQLite", description: "embedded" },
											],
										},
									],
								},
							},
						},
					},
				},
				env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
			});
			const env = piEnv;
			const stderrFile = join(env.root, "stderr.log");
			const envPart = Object.entries({ ...env.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
			const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--extension", STANDIN_EXT, "--extension", RPIV_EXT, "--name", "tui-host"].map(quote);
			const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>${quote(stderrFile)}`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
			tmux = new TmuxSession();
			const session = tmux;
			const deadEnd = new RegExp(EXIT_MARKER);
			try {
				const [, launched] = await Promise.all([session.start({ command, cwd: env.cwd, width: 120, height: 48 }), openBrowser()]);
				browser = launched;
				let screen = await session.waitFor(/answer in a browser at/, 60_000, "the page's announcement", deadEnd);
				// The link may wrap: read it from the screen without whitespace.
				for (let i = 0; !/\/t\/[\w-]{43}\//.test(squeezed(screen)) && i < 50; i++) screen = await session.screen();
				const url = /answerinabrowserat(http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{43}\/)/.exec(squeezed(screen))![1]!;
				const tab = await openTab(browser.browser, url);

				// pi-agent-ask's form in the terminal (its own select), and on the page as a card.
				await session.type("form");
				await session.keys("Enter");
				screen = await session.waitFor("Release plan: Which stack?", 30_000, "the stand-in's form in the terminal", deadEnd);
				const card = await cardOf(tab.page, "pi-agent-ask");
				expect(await card.evaluate((c) => c.querySelector(".meta")?.textContent)).toContain("Release plan");
				await fill(tab.page, card, 0, { pick: ["Go"] });
				await fill(tab.page, card, 1, { pick: ["Lint", "E2E"] });
				await submit(card);
				// The first submit is refused: its reason on the card, which stays open and answerable.
				await tab.page.waitForFunction(
					(reason) => document.querySelector("article.elsewhere .message")?.textContent?.includes(reason),
					{ timeout: 10_000, polling: POLL_MS },
					REFUSAL,
				);
				expect(await card.evaluate((c) => c.querySelector(".message")?.textContent)).toBe(
					`Not applied: pi-agent-ask refused the answer: invalid_answer: ${REFUSAL}`,
				);
				await screenshot(tab.page, "pi-agent-ask form refused");
				expect(await card.evaluate((c) => (c.querySelector("button[type=submit]") as HTMLButtonElement).disabled)).toBe(false);
				expect(await session.screen()).toContain("Release plan: Which stack?");
				await submit(card);
				// Taken: pi-agent-ask completes the form, the terminal's select closes and the card leaves.
				await cardGone(tab.page, "pi-agent-ask", 10_000);
				screen = await session.waitFor(/"status":\s*"answered"/, 20_000, "the stand-in's result", deadEnd);
				const flat = squeezed(screen);
				expect(flat).toContain('{"id":"stack","values":["go"],"labels":["Go"]}');
				expect(flat).toContain('{"id":"checks","values":["lint","e2e"],"labels":["Lint","E2E"]}');
				expect(screen).not.toContain("Release plan: Which stack?");

				// A form answered in the terminal leaves the page too.
				await session.type("hotfix");
				await session.keys("Enter");
				await session.waitFor("Hotfix: Which stack?", 30_000, "the second form in the terminal", deadEnd);
				await cardOf(tab.page, "pi-agent-ask");
				await session.keys("Enter");
				await cardGone(tab.page, "pi-agent-ask", 10_000);
				await waitForSqueezed(session, /\{"id":"stack","values":\["ts"\],"labels":\["TypeScript"\]\}\]\}/, 20_000, "the terminal's answer");

				// rpiv's questionnaire: a read-only card while it waits in the terminal, gone once it ends.
				await session.type("rpiv");
				await session.keys("Enter");
				await session.waitFor("Which database?", 30_000, "rpiv's questionnaire in the terminal", deadEnd);
				const rpiv = await cardOf(tab.page, "rpiv-ask-user-question");
				expect(await rpiv.evaluate((c) => c.querySelector(".where")?.textContent)).toBe("waiting in the terminal");
				expect(await rpiv.evaluate((c) => c.querySelector("legend")?.textContent)).toBe("DB: Which database?");
				expect(await rpiv.$("button[type=submit]")).toBeNull();
				expect(await rpiv.evaluate((c) => [...c.querySelectorAll("input")].every((i) => (i as HTMLInputElement).disabled))).toBe(true);
				await screenshot(tab.page, "rpiv questionnaire read-only");
				await session.keys("Escape");
				await cardGone(tab.page, "rpiv-ask-user-question", 15_000);
				expect(tab.errors).toEqual([]);
				expect(tab.dialogs).toEqual([]);
			} catch (error) {
				if (error instanceof Error) error.message += `\n--- stderr of pi:\n${existsSync(stderrFile) ? readFileSync(stderrFile, "utf8") : "(empty)"}`;
				throw error;
			}
		});
	},
);
