/**
 * pi's own example permission gate (examples/extensions/permission-gate.ts in pi's package) in a
 * pi-subagents foreground child with CHECKPOINT_BRIDGE_RELAY_DIALOGS=1, answered in the host's real
 * TUI (tmux) and on the web page in a real Chromium at phone width (390 px), on the pi under test.
 * The child runs `rm -rf doomed` through pi's bash tool; the gate asks `select("⚠️ Dangerous
 * command:\n\n  rm -rf doomed …\n\nAllow?", ["Yes", "No"])` first.
 *
 * 1. In the terminal: the form opens with nothing chosen, the command on a line of its own and no
 *    note offered; an Enter 0.8 s after it appeared chooses nothing (the directory stays); Down to
 *    "Yes" and Enter runs the command. The main session's own question offers a note.
 * 2. On the page at 390 px: the question is the first thing in its card after who asks, with its
 *    line breaks, no note field and the QR code behind "show code" below the form; "No" there
 *    blocks the command. The own question's card has a note field, and the note typed there
 *    reaches the main session's tool result.
 *
 * The screen of every step is written under .tmp/permission-gate-tui/pi-<version>/ (the path is printed).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { closedAfterAll, installRelayAgent, promptUntil, startTuiHost } from "./fixtures/relay-agent.ts";
import { cardOf, fill, HAS_CHROMIUM, openBrowser, openTab, screenshot, submit } from "./harness/browser.ts";
import { createPiEnv, PI_PACKAGE, PI_VERSION, REPO_ROOT } from "./harness/pi-cli.ts";
import { ScreenCaptures, tmuxAvailable, waitForSqueezed } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
/** pi's own example, from the pi under test. */
const PI_GATE = join(PI_PACKAGE, "examples", "extensions", "permission-gate.ts");
const ASKER = "subagent-janitor";
const COMMAND = "rm -rf doomed && echo removed";
/** When the stray Enter comes: past the form's 500 ms key guard, as in the report that found it. */
const STRAY_ENTER_MS = 800;

const captures = new ScreenCaptures(join(REPO_ROOT, ".tmp", "permission-gate-tui", `pi-${PI_VERSION}`));
afterAll(() => {
	if (captures.files.length) console.log(captures.report(`permission-gate-tui.test.ts (pi ${PI_VERSION})`));
});

if (!hasTmux || !HAS_CHROMIUM) console.warn("permission-gate-tui.test.ts: skipped: tmux or Chromium is not installed");
describe.skipIf(!hasTmux || !HAS_CHROMIUM)(
	`pi's permission gate in a child: nothing is approved by accident, pi ${PI_VERSION}${hasTmux && HAS_CHROMIUM ? "" : " (skipped: tmux or Chromium is not installed)"}`,
	() => {
		const held = closedAfterAll();

		it("a stray Enter chooses nothing and the command does not run; Down to Yes, Enter runs it; on a 390 px page the question comes first and a note reaches the asker", async () => {
			const piEnv = (held.piEnv = createPiEnv({
				script: {
					prompts: {
						gate: { subagent: { agent: "janitor", task: "Clean up the doomed folder." } },
						mine: { ask: { questions: [{ question: "Which database?", options: ["Postgres", "SQLite"] }] } },
					},
					childCalls: { janitor: { tool: "bash", arguments: { command: COMMAND } } },
				},
				env: { CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1", CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
			}));
			installRelayAgent(piEnv.agentDir, "janitor", PI_GATE);
			const doomed = join(piEnv.cwd, "doomed");
			mkdirSync(doomed);
			const launching = openBrowser();
			const { session, url } = await startTuiHost(piEnv, { width: 120, height: 50 });
			held.tmux = session;
			let screen: string;
			const prompt = (text: string, started: string) => promptUntil(session, text, started);

			// 1. The terminal: the form as it first appears.
			screen = await prompt("gate", "Dangerous command:");
			const appeared = Date.now();
			captures.save("gate-opened", screen);
			expect(screen).toContain(`[${ASKER}] · `);
			// The title's lines kept: the command alone on its line, the question after it.
			expect(screen).toMatch(/^\s*⚠️ Dangerous command:\s*\n\s*\n\s*rm -rf doomed && echo removed\s*\n\s*\n\s*Allow\?\s*$/m);
			expect(screen).toMatch(/^\s*○ Yes\s*$/m);
			expect(screen).not.toMatch(/→ ○/);
			expect(screen).not.toContain("ctrl+n");

			// A stray Enter, past the key guard: nothing is chosen, the form stays, the command does not run.
			await new Promise((resolve) => setTimeout(resolve, Math.max(0, appeared + STRAY_ENTER_MS - Date.now())));
			await session.keys("Enter");
			screen = await session.waitFor("Choose one (↑/↓), then Enter.", 5_000, "the form saying to pick one");
			captures.save("stray-enter", screen);
			expect(screen).toContain("Dangerous command:");
			await new Promise((resolve) => setTimeout(resolve, 1_000));
			expect(existsSync(doomed), "the command did not run").toBe(true);

			// Down to "Yes", Enter: the command runs.
			await session.keys("Down");
			screen = await session.waitFor(/→ ○ Yes/, 5_000, "Yes under the cursor");
			captures.save("down-to-yes", screen);
			await session.keys("Enter");
			await until(() => !existsSync(doomed), "the command to remove the folder", 60_000, 100);
			screen = await session.waitFor(/removed/, 30_000, "the child's output");
			captures.save("command-ran", screen);

			// The main session's own question offers a note, and the answer carries it.
			screen = await prompt("mine", "Which database?");
			screen = await session.formTakesKeys();
			captures.save("own-question", screen);
			expect(screen).toContain("ctrl+n note");
			await session.keys("C-n");
			await session.type("ops run it");
			await session.keys("Enter", "Enter");
			// pi wraps the result wherever it likes: compared without whitespace.
			captures.save(
				"own-question-answered",
				await waitForSqueezed(session, /"answer":"Postgres","kind":"option","note":"opsrunit"/, 30_000, "the note in the tool result"),
			);

			// 2. The page, at phone width.
			const browser = (held.browser = await launching);
			const tab = await openTab(browser.browser, url, { width: 390, height: 844 });
			mkdirSync(doomed);
			await session.type("gate");
			await session.keys("Enter");
			const gateCard = await cardOf(tab.page, ASKER);
			const layout = await gateCard.evaluate((card) => {
				const form = card.querySelector("form")!;
				const legend = card.querySelector("legend")!;
				const qr = card.querySelector("details.qr-box") as HTMLDetailsElement | null;
				return {
					order: [...card.children].map((c) => c.tagName.toLowerCase() + (c.className ? `.${c.className}` : "")),
					firstInForm: form.firstElementChild?.tagName.toLowerCase(),
					// biome-ignore lint/performance/useDomNodeTextContent: the text as rendered, its line breaks as the page shows them
					legend: legend.innerText,
					legendTop: legend.getBoundingClientRect().top,
					notes: card.querySelectorAll("input.note").length,
					qrOpen: qr?.open,
					qrAfterForm: qr ? (form.compareDocumentPosition(qr) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0 : undefined,
				};
			});
			await screenshot(tab.page, `permission-gate-390px-pi-${PI_VERSION}`);
			// Who asks heads the card; the question comes next, with its lines, on the first screen.
			expect(layout.order.slice(0, 2)).toEqual(["h2.asker", "form"]);
			expect(layout.firstInForm).toBe("fieldset");
			expect(layout.legend.split("\n").map((line) => line.trimEnd())).toEqual(["⚠️ Dangerous command:", "", `  ${COMMAND}`, "", "Allow?"]);
			expect(layout.legendTop).toBeLessThan(300);
			expect(layout.notes).toBe(0);
			expect(layout.qrOpen).toBe(false);
			expect(layout.qrAfterForm).toBe(true);
			await fill(tab.page, gateCard, 0, { pick: ["No"] });
			await submit(gateCard);
			await session.waitFor(/Blocked by user/, 60_000, "the gate's refusal in the child's output");
			expect(existsSync(doomed), "No on the page: the command did not run").toBe(true);

			// The own question's card on the page: a note field, and the note reaches the asker.
			await session.type("mine");
			await session.keys("Enter");
			const ownCard = await cardOf(tab.page, "tui-host");
			expect(await ownCard.evaluate((card) => card.querySelectorAll("input.note").length)).toBe(1);
			await fill(tab.page, ownCard, 0, { pick: ["SQLite"], note: "from the phone" });
			await screenshot(tab.page, `own-question-note-390px-pi-${PI_VERSION}`);
			await submit(ownCard);
			captures.save(
				"page-note",
				await waitForSqueezed(session, /"answer":"SQLite","kind":"option","note":"fromthephone","source":"web"/, 30_000, "the page's note in the tool result"),
			);
			expect(tab.errors).toEqual([]);
		});
	},
);
