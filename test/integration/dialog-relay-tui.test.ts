/**
 * Dialogs of other extensions in a pi-subagents child (CHECKPOINT_BRIDGE_RELAY_DIALOGS=1), answered
 * by the human in the host's real TUI (tmux) and on the web answer page in a real Chromium, on the
 * pi under test (1.6, and 0.85 in the integration-pi-0.85 project). One pi process, the real
 * pi-subagents, two runs of a foreground child whose agent file loads checkpoint-bridge and a small
 * third-party extension (test/integration/fixtures/permission-gate.ts: a notice, then confirm,
 * select, input):
 *
 * 1. in the terminal: the notice shows prefixed with who asks; each dialog is a form titled with who
 *    asks (the confirm with its message); the answers typed there are what the child's tool returns,
 *    and the child reports mode "tui" (a foreground child of a terminal host, ADR-0016);
 * 2. on the web page: the confirm's card names who asks and shows the message; "No" there reaches
 *    the child as `false`, and the terminal form it was also shown in closes.
 *
 * The screen of every step is written under .tmp/dialog-relay-tui/pi-<version>/ (the path is printed).
 */
import { join } from "node:path";
import type { ElementHandle, Page } from "puppeteer-core";
import { afterAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { NOTICE, TARGETS } from "./fixtures/permission-gate.ts";
import { closedAfterAll, installRelayAgent, startTuiHost } from "./fixtures/relay-agent.ts";
import { fill, HAS_CHROMIUM, openBrowser, openTab, POLL_MS, screenshot, submit } from "./harness/browser.ts";
import { childTranscripts, createPiEnv, PI_VERSION, type PiEnv, REPO_ROOT, toolResultsIn } from "./harness/pi-cli.ts";
import { ScreenCaptures, squeezed, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
const GATE_EXT = join(REPO_ROOT, "test/integration/fixtures/permission-gate.ts");
const ASKER = "subagent-gatekeeper";

/** The screen without whitespace: pi wraps long lines wherever it likes. */
const captures = new ScreenCaptures(join(REPO_ROOT, ".tmp", "dialog-relay-tui", `pi-${PI_VERSION}`));
afterAll(() => {
	if (captures.files.length) console.log(captures.report(`dialog-relay-tui.test.ts (pi ${PI_VERSION})`));
});

/** What guarded_step reported in the children's transcripts. */
const gateReports = (piEnv: PiEnv) =>
	childTranscripts(piEnv)
		.flatMap((t) => toolResultsIn(t.records, "guarded_step"))
		.map((text) => JSON.parse(/guarded_step: (\{.*\})/.exec(text)?.[1] ?? "null") as Record<string, unknown> | null);

/** The card on the page whose text holds `text`, once it is there. */
async function cardWith(page: Page, text: string): Promise<ElementHandle<Element>> {
	await page.waitForFunction(
		(t) => [...document.querySelectorAll("article.card")].some((c) => c.textContent?.includes(t)),
		{ timeout: 20_000, polling: POLL_MS },
		text,
	);
	return (
		await page.evaluateHandle((t) => [...document.querySelectorAll("article.card")].find((c) => c.textContent?.includes(t)), text)
	).asElement() as ElementHandle<Element>;
}

if (!hasTmux || !HAS_CHROMIUM) console.warn("dialog-relay-tui.test.ts: skipped: tmux or Chromium is not installed");
describe.skipIf(!hasTmux || !HAS_CHROMIUM)(
	`dialogs of other extensions in a child, answered in the real TUI and on the web page, pi ${PI_VERSION}${hasTmux && HAS_CHROMIUM ? "" : " (skipped: tmux or Chromium is not installed)"}`,
	() => {
		const held = closedAfterAll();

		it("a foreground child's notice, confirm, select and input reach the host's terminal; a confirm answered on the page reaches it as false", async () => {
			const piEnv = (held.piEnv = createPiEnv({
				script: {
					prompts: { gate: { subagent: { agent: "gatekeeper", task: "Run the guarded step." } } },
					childCalls: { gatekeeper: { tool: "guarded_step", arguments: {} } },
				},
				env: { CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1", CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
			}));
			installRelayAgent(piEnv.agentDir, "gatekeeper", GATE_EXT);
			const launching = HAS_CHROMIUM ? openBrowser() : undefined;
			const host = await startTuiHost(piEnv, { width: 160, height: 50 });
			const { session, url } = host;
			held.tmux = session;
			let screen = host.screen;
			captures.save("booted", screen);

			// 1. Everything typed in the terminal.
			screen = await session.prompt("gate", /Run rm -rf build\/\?/, { what: "the child's first dialog" });
			screen = await session.formTakesKeys();
			captures.save("confirm", screen);
			expect(screen).toContain(`[${ASKER}] · `);
			expect(screen).toMatch(/Run rm -rf build\/\?\n\s*The build folder is deleted\./);
			expect(squeezed(screen)).toContain(squeezed(`Warning: [${ASKER}] ${NOTICE}`));
			await session.keys("Down", "Enter");
			await session.waitFor("Which target?", 20_000, "the select");
			screen = await session.formTakesKeys();
			captures.save("select", screen);
			// Another extension's select opens with nothing chosen: the first Down reaches its first option.
			expect(screen).toMatch(/^ {2}○ target-1\n/m);
			expect(screen).not.toContain("→ ○");
			// The last of sixteen options, longer than ask_user_via_host allows a label: scrolled to, shown whole.
			for (let i = 0; i < TARGETS.length; i++) await session.keys("Down");
			screen = await session.waitFor(`→ ○ ${TARGETS.at(-1)}`, 5_000, "the long last option under the cursor");
			captures.save("select-last", screen);
			await session.keys("Enter");
			await session.waitFor("Release note?", 20_000, "the input");
			screen = await session.formTakesKeys();
			captures.save("input", screen);
			expect(screen).toContain("one line");
			await session.type("ship it");
			await session.keys("Enter");
			await until(() => gateReports(piEnv!).length === 1, "the child's tool result", 60_000, 100);
			expect(gateReports(piEnv)).toEqual([{ hasUI: true, mode: "tui", confirmed: true, target: TARGETS.at(-1), note: "ship it" }]);
			// The child's tool result, as the host's terminal shows the subagent's output.
			screen = await session.waitFor(/Tool guarded_step returned/, 30_000, "the subagent's output");
			captures.save("child-result", screen);
			expect(squeezed(screen)).toContain(squeezed(`"confirmed":true,"target":"${TARGETS.at(-1)}","note":"ship it"}`));

			// 2. The confirm answered on the web page; the rest there too.
			const browser = (held.browser = await launching!);
			const tab = await openTab(browser.browser, url);
			// pi's startup is long over: one Enter starts the run.
			await session.type("gate");
			await session.keys("Enter");
			const confirmCard = await cardWith(tab.page, "Run rm -rf build/?");
			captures.save("web-confirm", await session.waitFor(/Run rm -rf build\/\?/, 10_000, "the confirm in the terminal too"));
			const shown = await confirmCard.evaluate((c) => ({
				asker: c.querySelector("h2")?.textContent,
				legends: [...c.querySelectorAll("legend")].map((l) => l.textContent),
				details: c.querySelector(".details")?.textContent,
				choices: [...c.querySelectorAll(".choice .label")].map((l) => l.textContent),
				texts: c.querySelectorAll("input[type=text]").length,
			}));
			// Who asks and the message; exactly Yes and No, nothing to type.
			expect(shown).toEqual({
				asker: `[${ASKER}]`,
				legends: ["Run rm -rf build/?"],
				details: "The build folder is deleted.",
				choices: ["Yes", "No"],
				texts: 0,
			});
			await screenshot(tab.page, `relayed-confirm-pi-${PI_VERSION}`);
			await fill(tab.page, confirmCard, 0, { pick: ["No"] });
			await submit(confirmCard);
			// The terminal's form for the confirm closed: the select is next, in both places.
			screen = await session.waitFor("Which target?", 20_000, "the second select in the terminal");
			captures.save("after-web-confirm", screen);
			expect(screen).not.toContain("The build folder is deleted.");
			const selectCard = await cardWith(tab.page, "Which target?");
			await fill(tab.page, selectCard, 0, { pick: ["target-2"] });
			await submit(selectCard);
			const inputCard = await cardWith(tab.page, "Release note?");
			await fill(tab.page, inputCard, 0, { type: "from the page" });
			await submit(inputCard);
			await until(() => gateReports(piEnv!).length === 2, "the second run's tool result", 60_000, 100);
			// Transcripts are not listed in run order.
			expect(gateReports(piEnv)).toContainEqual({ hasUI: true, mode: "tui", confirmed: false, target: "target-2", note: "from the page" });
			expect(tab.errors).toEqual([]);
		});
	},
);
