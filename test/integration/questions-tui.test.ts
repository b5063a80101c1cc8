/**
 * The terminal form in the real interactive TUI (tmux), on the pi under test (1.6, and 0.85 in the
 * integration-pi-0.85 project). One pi process, three prompts of the scripted main model:
 *
 * 1. a single choice with previews (beside the list at 120 columns, below it at 80) and a note, a
 *    multi-select with two boxes ticked, and an "Other" typed in place: the envelope carries exactly
 *    those values, kinds and the note;
 * 2. Esc on the second question: `timeout-or-cancelled` with the first answer;
 * 3. a call whose budget (3 s) runs out while its form is open: `timeout`, and the form is gone; the
 *    question stays open, late: `/checkpoints` lists it, `/checkpoints answer 1` shows the form again,
 *    and the answer reaches the session as one message;
 * 4. an Enter sent the moment a form appears is ignored (the key guard), a pick once it takes keys answers.
 *
 * A second pi process, at 80 columns, with the page on and no budget: `/checkpoints web qr` prints a
 * code jsqr reads back as the page's link, the form says "no time limit", and `a` on Review accepts
 * the recommendations (naming the question without one) and submits.
 *
 * The screen of every step is written under .tmp/tui-form/pi-<version>/ (the path is printed).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { decodeHalfBlocks } from "../unit/support/qr-decode.ts";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { baseArgs, createPiEnv, NODE_BIN, PI_CLI, PI_VERSION, type PiEnv, REPO_ROOT } from "./harness/pi-cli.ts";
import { EXIT_MARKER, FORM_NOT_TAKING_KEYS, ScreenCaptures, squeezed, TmuxSession, tmuxAvailable, waitForSqueezed } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("questions-tui.test.ts: skipped because tmux is not installed (CI installs it)");

/**
 * The envelope of the last `status` result on screen, parsed: the TUI wraps the JSON anywhere, so it
 * is read with all whitespace removed (strings lose their spaces, keys keep any order).
 */
async function envelopeOnScreen(
	session: TmuxSession,
	status: string,
	timeoutMs: number,
): Promise<{ screen: string; envelope: { answers: Record<string, unknown>[]; asker?: string } }> {
	const start = `returned:{"status":"${status}"`;
	const screen = await waitForSqueezed(
		session,
		new RegExp(`${escapeRe(start)}.*"waitedMs":\\d+(,"reason":"[a-z-]+")?\\}`),
		timeoutMs,
		`the ${status} envelope`,
	);
	const flat = squeezed(screen);
	const from = flat.lastIndexOf(start) + "returned:".length;
	const end = flat.indexOf("}", flat.indexOf('"waitedMs":', from)) + 1;
	return { screen, envelope: JSON.parse(flat.slice(from, end)) };
}
const unspaced = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replace(/\s+/g, ""));

/** The envelope on screen that answers the question `id`, parsed once it is drawn whole. */
async function envelopeAnswering(session: TmuxSession, id: string, timeoutMs: number): Promise<{ answers: Record<string, unknown>[] }> {
	return until(
		async () => {
			const flat = squeezed(await session.screen());
			const at = flat.lastIndexOf(`"id":"${id}"`);
			const waited = at < 0 ? -1 : flat.indexOf('"waitedMs":', at);
			if (waited < 0) return undefined;
			const from = flat.lastIndexOf("returned:{", at) + "returned:".length;
			try {
				return JSON.parse(flat.slice(from, flat.indexOf("}", waited) + 1)) as { answers: Record<string, unknown>[] };
			} catch {
				return undefined;
			}
		},
		`the envelope answering ${id}`,
		timeoutMs,
		100,
	);
}

/** How often step 4 asks for a form whose key guard it catches. */
const KEY_GUARD_TRIES = 4;

const captures = new ScreenCaptures(join(REPO_ROOT, ".tmp", "tui-form", `pi-${PI_VERSION}`));
const PREVIEW_SQL = "CREATE TABLE users (\n  id serial primary key\n);";

const ask = (questions: unknown[], timeoutMs?: number) => ({ ask: { questions, ...(timeoutMs ? { timeoutMs } : {}) } as unknown as ScriptAsk });
const PROMPTS = {
	"ask me": ask([
		{
			id: "db",
			header: "Storage",
			question: "Which database?",
			options: [
				{ label: "Postgres", description: "relational", preview: PREVIEW_SQL },
				{ label: "SQLite", preview: "sqlite3 app.db" },
			],
			recommended: "SQLite",
		},
		{
			id: "areas",
			header: "Areas",
			question: "Which areas go into the release notes?",
			options: [{ label: "api", description: "public API changes" }, "cli", "docs"],
			multiSelect: true,
		},
		{ id: "codename", header: "Codename", question: "Codename of the release?", options: ["aurora", "borealis"] },
	]),
	"ask twice": ask([
		{ id: "ship", question: "Ship it now?", kind: "confirm" },
		{ id: "why", question: "Why not?" },
	]),
	"ask briefly": ask([{ id: "target", question: "Deploy target?", options: ["staging", "prod"] }], 3_000),
	// One prompt per try of the key guard (step 4), its question's id telling its envelope from an earlier try's.
	...Object.fromEntries(
		Array.from({ length: KEY_GUARD_TRIES }, (_, i) => [
			`ask while typing ${i + 1}`,
			ask([{ id: `region-${i + 1}`, question: "Which region?", options: ["eu-west", "us-east"] }]),
		]),
	),
	"ask with advice": ask([
		{ id: "db", header: "Storage", question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" },
		{ id: "areas", header: "Areas", question: "Which areas?", options: ["api", "cli", "docs"], multiSelect: true, recommended: "docs" },
		{ id: "codename", header: "Codename", question: "Codename of the release?", options: ["aurora", "borealis"] },
	]),
};

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
/** The screen without any whitespace: the TUI wraps long JSON lines wherever it likes. */
const escapeRe = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The form's header: who asks, the time left (the form's, and the call's when it differs), how many questions; a form of several says "form". */
const header = (questions: number) =>
	new RegExp(`\\[tui-host\\] · ${questions > 1 ? "form" : "question"} \\d+:\\d\\d left( · call (\\d+:\\d\\d|no limit))? · ${questions} question`);

const capture = (name: string, screen: string) => captures.save(name, screen);
afterAll(() => {
	if (captures.files.length) console.log(captures.report(`questions-tui.test.ts (pi ${PI_VERSION})`));
});

if (!hasTmux) console.warn("questions-tui.test.ts: skipped: tmux is not installed");
describe.skipIf(!hasTmux)(`the terminal form in the real TUI, pi ${PI_VERSION}${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let piEnv: PiEnv | undefined;

	afterAll(async () => {
		await tmux?.dispose();
		piEnv?.cleanup();
	});

	it("answers, Esc, the budget and the key guard: each envelope carries exactly what the form gave", async () => {
		piEnv = createPiEnv({ script: { prompts: PROMPTS } });
		const stderrFile = join(piEnv.root, "stderr.log");
		const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
		// The extension's stderr would draw over the screen: keep it in a file for failure messages.
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>${quote(stderrFile)}`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		tmux = new TmuxSession();
		const session = tmux;
		const stderr = () => (existsSync(stderrFile) ? readFileSync(stderrFile, "utf8") : "");
		const deadEnd = new RegExp(`${EXIT_MARKER}|"status":"error"`);

		/**
		 * Sends a prompt; pi 0.85 drops an Enter pressed while its startup is still in progress, so Enter is
		 * pressed again until the form opens. Returns once the form takes keys, unless `guarded` (at once).
		 */
		const prompt = async (text: string, form: RegExp, guarded = false) => {
			await session.type(text);
			for (let attempt = 0; ; attempt++) {
				await session.keys("Enter");
				try {
					// A form whose key guard is to be seen is looked for often: its guard lasts 500 ms from its first drawing.
					const shown = await session.waitFor(form, 5_000, `the form for "${text}"`, deadEnd, guarded ? 20 : 100);
					return guarded ? shown : await session.formTakesKeys();
				} catch (error) {
					const screen = session.lastScreen;
					if (attempt >= 5 || !screen.includes(text) || form.test(screen)) throw error;
				}
			}
		};

		try {
			await session.start({ command, cwd: piEnv.cwd, width: 120, height: 48 });
			await session.waitFor("tui-host", 30_000, "pi's editor and footer", deadEnd);

			// 1. One form for the whole request; the recommended option under the cursor, its preview beside the list.
			let screen = await prompt("ask me", header(3));
			capture("form-120-columns", screen);
			expect(screen).toMatch(/\[☐ Storage\]│ ☐ Areas │ ☐ Codename │ Review/);
			expect(screen).toMatch(/^ Which database\?\s*$/m);
			expect(screen).toMatch(/^→ ○ SQLite \(recommended\)\s+│ preview: SQLite\s*$/m);
			expect(screen).toMatch(/^ {2}○ Postgres — relational\s+│ sqlite3 app\.db\s*$/m);
			expect(screen).toContain("checkpoint-bridge: shown: tui-host (0 min)");
			await session.keys("Down");
			screen = await session.waitFor(/│ preview: Postgres/, 5_000, "Postgres's preview beside the list", deadEnd);
			capture("preview-beside-120", screen);
			expect(screen).toMatch(/^ {2}○ SQLite \(recommended\)\s+│ preview: Postgres\s*$/m);
			expect(screen).toMatch(/^→ ○ Postgres — relational\s+│ CREATE TABLE users \(\s*$/m);
			expect(screen).toMatch(/│ {3}id serial primary key\s*$/m);

			// At 80 columns the preview moves below the list.
			await session.resize(80, 48);
			screen = await session.waitFor(/^─ preview: Postgres ─+\s*$/m, 5_000, "the preview below the list at 80 columns", deadEnd);
			capture("preview-below-80", screen);
			expect(screen).not.toContain("│ preview:");
			expect(screen).toMatch(/^ {2}CREATE TABLE users \(\s*$/m);

			// A note: ctrl+n opens the field, Enter keeps it; Enter then picks Postgres and moves on.
			await session.keys("C-n");
			await session.waitFor(/^ note: /m, 5_000, "the note field", deadEnd);
			await session.type("ops run it");
			await session.keys("Enter");
			screen = await session.waitFor(/^ note: ops run it\s*$/m, 5_000, "the note kept", deadEnd);
			capture("note", screen);
			await session.keys("Enter");

			// Multi-select: Space ticks api and docs.
			await session.waitFor(/\[☐ Areas\]/, 5_000, "the multi-select", deadEnd);
			await session.keys("Space", "Down", "Down", "Space");
			screen = await session.waitFor(/^→ ☑ docs\s*$/m, 5_000, "two boxes ticked", deadEnd);
			capture("multi-select", screen);
			expect(screen).toMatch(/^ {2}☑ api — public API changes\s*$/m);
			expect(screen).toMatch(/^ {2}☐ cli\s*$/m);
			await session.keys("Enter");

			// Other typed in place, on the Other row.
			await session.waitFor(/\[☐ Codename\]/, 5_000, "the codename question", deadEnd);
			await session.keys("Down", "Down");
			await session.type("nimbus");
			screen = await session.waitFor(/^→ ○ Other: nimbus/m, 5_000, "nimbus typed on the Other row", deadEnd);
			capture("other-typed-in-place", screen);
			await session.keys("Enter");

			// Review lists every answer; Enter submits.
			screen = await session.waitFor(/\[Review\]/, 5_000, "the Review tab", deadEnd);
			capture("review", screen);
			expect(screen).toMatch(/^ 1\. Storage → Postgres\s*$/m);
			expect(screen).toMatch(/^ {6}note: ops run it\s*$/m);
			expect(screen).toMatch(/^ 2\. Areas → api, docs\s*$/m);
			expect(screen).toMatch(/^ 3\. Codename → nimbus\s*$/m);
			await session.keys("Enter");

			const ok = await envelopeOnScreen(session, "ok", 20_000);
			capture("envelope-ok", ok.screen);
			expect(ok.envelope.answers, "exactly those values, kinds and the note").toEqual(
				unspaced([
					{ question: "Which database?", answer: "Postgres", kind: "option", id: "db", note: "ops run it", source: "dialog" },
					{ question: "Which areas go into the release notes?", answer: "api, docs", kind: "option", id: "areas", values: ["api", "docs"], source: "dialog" },
					{ question: "Codename of the release?", answer: "nimbus", kind: "other", id: "codename", source: "dialog" },
				]),
			);
			expect(ok.envelope.asker).toBe("tui-host");
			expect(ok.screen).not.toMatch(header(3));

			// 2. Esc on the second question: the first answer comes back with timeout-or-cancelled.
			await session.resize(120, 48);
			screen = await prompt("ask twice", header(2));
			expect(screen, "neither Yes nor No is under the cursor").not.toMatch(/→ ○ (Yes|No)/);
			await session.keys("Down", "Enter");
			screen = await session.waitFor(/\[☐ Why not\?\]/, 5_000, "the second question", deadEnd);
			capture("esc-on-second-question", screen);
			await session.keys("Escape");
			const dismissed = await envelopeOnScreen(session, "timeout-or-cancelled", 20_000);
			capture("envelope-esc", dismissed.screen);
			expect(dismissed.envelope.answers, "the first answer only").toEqual(
				unspaced([{ question: "Ship it now?", answer: "yes", kind: "confirm", id: "ship", source: "dialog" }]),
			);
			expect((dismissed.envelope as { reason?: string }).reason, "Esc is the human's dismissal").toBe("dismissed");

			// 3. The call's budget closes the open form.
			screen = await prompt("ask briefly", header(1));
			capture("budget-form-open", screen);
			const timedOut = await envelopeOnScreen(session, "timeout", 20_000);
			screen = timedOut.screen;
			capture("envelope-budget", screen);
			expect(timedOut.envelope.answers).toEqual([]);
			expect(screen, "the form is gone").not.toMatch(header(1));
			expect(screen).not.toContain("Deploy target?\n");
			expect(squeezed(screen), "the note says the question stays open").toContain("staysopenonthehost,markedlate");

			// 3b. The question stays open, late: /checkpoints lists it, `answer 1` shows it again, the answer reaches this session once.
			await session.type("/checkpoints");
			await session.keys("Enter");
			screen = await waitForSqueezed(session, /1late.*Deploytarget\?/, 10_000, "the late question in /checkpoints");
			capture("checkpoints-late", screen);
			screen = await prompt("/checkpoints answer 1", header(1));
			capture("late-form-again", screen);
			await session.keys("Down", "Enter");
			screen = await waitForSqueezed(session, /answeredyourquestion\(request[\w-]+\)late/, 20_000, "the late answer as a message");
			// Its turn ends (the model's reply), and nothing comes twice.
			await session.waitFor(/main: no script/, 20_000, "the model's reply to the late answer", deadEnd);
			screen = await session.screen();
			capture("late-answer-message", screen);
			// The message's header, once (the model's reply quotes the message's text).
			expect(squeezed(screen).split("[checkpoint-bridge:answer]").length - 1, "one message").toBe(1);
			expect(squeezed(screen)).toContain('"answer":"prod"');

			// 4. A form opening under the human's typing: an Enter the moment it appears is not an answer; a pick once it takes keys is.
			// Whether the screen is read, and that Enter reaches pi, within the form's 500 ms guard is up to the machine's load (the
			// guard's timing is pinned with fake timers in component.test.ts). A try that missed the guard is asked again: one whose
			// first screen of the form takes keys already (no stray Enter is sent), or whose stray Enter came after the guard and
			// picked. A guard that does not hold, or a key help that never says so, fails every try.
			const tries: string[] = [];
			const region = (id: string, answer: string) => unspaced([{ question: "Which region?", answer, kind: "option", id, source: "dialog" }]);
			for (let attempt = 1; ; attempt++) {
				const id = `region-${attempt}`;
				screen = await prompt(`ask while typing ${attempt}`, header(1), true);
				capture(`key-guard-form-just-open-${attempt}`, screen);
				const guarded = FORM_NOT_TAKING_KEYS.test(screen);
				if (guarded) await session.keys("Enter");
				await session.formTakesKeys();
				// pi reads keys in order: the cursor moving down shows the stray Enter was read first, and ignored.
				await session.keys("Down");
				screen = await until(
					async () => {
						const now = await session.screen();
						return (!header(1).test(now) || /→ ○ us-east/.test(now)) && now;
					},
					"the cursor on us-east, or the form closed",
					10_000,
					50,
				);
				capture(`key-guard-after-the-guard-${attempt}`, screen);
				if (!header(1).test(screen)) {
					const taken = await envelopeAnswering(session, id, 20_000);
					expect(taken.answers, "only the stray Enter answered: the option under the cursor").toEqual(region(id, "eu-west"));
					tries.push(`try ${attempt}: the key help said "…" but the Enter sent then came after the guard`);
				} else {
					expect(screen).not.toMatch(FORM_NOT_TAKING_KEYS);
					await session.keys("Enter");
					const picked = await envelopeAnswering(session, id, 20_000);
					capture(`envelope-key-guard-${attempt}`, await session.screen());
					expect(picked.answers, "the early Enter left the form open; Down and Enter picked").toEqual(region(id, "us-east"));
					if (guarded) break;
					tries.push(`try ${attempt}: the first screen of the form took keys already`);
				}
				if (attempt >= KEY_GUARD_TRIES) throw new Error(`no try caught the form's key guard:\n${tries.join("\n")}`);
			}
			if (tries.length > 0) console.log(`questions-tui.test.ts: the key guard caught on try ${tries.length + 1}; ${tries.join("; ")}`);

			// Ctrl+D on the empty editor quits pi.
			await session.keys("C-d");
			await session.waitFor(`${EXIT_MARKER}0`, 15_000, "a clean exit");
		} catch (error) {
			if (error instanceof Error) error.message += `\n--- stderr of pi:\n${stderr() || "(empty)"}`;
			throw error;
		}
	});
	it("Review: a accepts the recommendations and submits; /checkpoints web qr prints the page's link as a QR code that reads back", async () => {
		const env = createPiEnv({
			script: { prompts: PROMPTS },
			env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0", CHECKPOINT_BRIDGE_TIMEOUT_MS: "0", CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "0" },
		});
		const stderrFile = join(env.root, "stderr.log");
		const envPart = Object.entries({ ...env.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>${quote(stderrFile)}`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		const session = new TmuxSession();
		const deadEnd = new RegExp(`${EXIT_MARKER}|"status":"error"`);
		try {
			await session.start({ command, cwd: env.cwd, width: 80, height: 60 });
			const started = await waitForSqueezed(session, /answerinabrowserathttp:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{43}\//, 30_000, "the page's announcement");
			const url = /answerinabrowserat(http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]{43}\/)/.exec(squeezed(started))![1]!;

			// The page's link as a QR code, read back from what tmux captured of the 80-column screen.
			await session.type("/checkpoints web qr");
			await session.keys("Enter");
			let screen = await session.waitFor(/for your phone/, 10_000, "the QR code", deadEnd);
			// The code may still be drawing: read captures until one decodes (or give up and show the last).
			for (let tries = 0; decodeHalfBlocks(screen) === undefined && tries < 20; tries++) {
				await new Promise((resolve) => setTimeout(resolve, 100));
				screen = await session.screen();
			}
			capture("qr-80-columns", screen);
			expect(screen.split("\n").every((line) => [...line].length <= 80)).toBe(true);
			expect(decodeHalfBlocks(screen), "jsqr reads the captured code as the page's link").toBe(url);

			// No budget: the form says so instead of counting down; `a` on Review fills what has a recommendation and names the rest.
			await session.type("ask with advice");
			await session.keys("Enter");
			await session.waitFor(/\[tui-host\] · no time limit · 3 questions/, 15_000, "the form without a time limit", deadEnd);
			await session.formTakesKeys();
			await session.keys("Tab", "Tab", "Tab");
			screen = await session.waitFor(/a accept recommended & submit/, 5_000, "Review naming the accept key", deadEnd);
			capture("accept-review", screen);
			await session.keys("a");
			screen = await waitForSqueezed(session, /Norecommendationtoacceptfor:3\.Codename/, 5_000, "the question without a recommendation named");
			capture("accept-named", screen);
			expect(screen).toMatch(/^ 1\. Storage → SQLite\s*$/m);
			expect(screen).toMatch(/^ 2\. Areas → docs\s*$/m);
			expect(screen).toMatch(/^ 3\. Codename → not answered\s*$/m);
			await session.keys("BTab");
			await session.waitFor(/\[☐ Codename\]/, 5_000, "the codename question", deadEnd);
			await session.keys("Enter");
			await session.waitFor(/\[Review\]/, 5_000, "back on Review", deadEnd);
			await session.keys("a");
			const ok = await envelopeOnScreen(session, "ok", 20_000);
			capture("envelope-accepted", ok.screen);
			expect(ok.envelope.answers).toEqual(
				unspaced([
					{ question: "Which database?", answer: "SQLite", kind: "option", id: "db", recommended: true, source: "dialog" },
					{ question: "Which areas?", answer: "docs", kind: "option", id: "areas", values: ["docs"], recommended: true, source: "dialog" },
					{ question: "Codename of the release?", answer: "aurora", kind: "option", id: "codename", source: "dialog" },
				]),
			);
			await session.keys("C-d");
			await session.waitFor(`${EXIT_MARKER}0`, 15_000, "a clean exit");
		} catch (error) {
			if (error instanceof Error) error.message += `\n--- stderr of pi:\n${existsSync(stderrFile) ? readFileSync(stderrFile, "utf8") : "(empty)"}`;
			throw error;
		} finally {
			await session.dispose();
			env.cleanup();
		}
	});
});
