/**
 * Characters whose width pi-tui and the terminal disagree on would make a row of the terminal form
 * wider (or narrower) than pi-tui measured it: the terminal wraps a wider row, breaking the TUI's
 * line bookkeeping. The sanitiser neutralises every one of them (model/terminal-widths.ts); these
 * tests hold it to what tmux really draws: every Unicode scalar value, sanitised, measured in tmux
 * against pi-tui's width, then the form in a real tmux pane 40 columns wide (a fixture that prints
 * it, and the real pi TUI), counting the rows the terminal shows.
 */

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { visibleWidth } from "@earendil-works/pi-tui";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sanitiseText } from "../../extensions/checkpoint-bridge/model/sanitise.ts";
import { validateAskParams } from "../../extensions/checkpoint-bridge/model/validate.ts";
import { FormModel } from "../../extensions/checkpoint-bridge/surfaces/terminal-form/model.ts";
import { renderForm } from "../../extensions/checkpoint-bridge/surfaces/terminal-form/render.ts";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { baseArgs, createPiEnv, NODE_BIN, NOT_ON_OLDEST_PI, onDevPiOnly, PI_CLI, PI_VERSION, type PiEnv, REPO_ROOT } from "./harness/pi-cli.ts";
import { terminalWidths } from "./harness/terminal-widths.ts";
import { EXIT_MARKER, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("format-characters-tui.test.ts: skipped because tmux is not installed (CI installs it)");

const WIDTH = 40;
/** A description that fits 40 columns once its nine soft hyphens are gone, and does not with them. */
const HYPHENATED = "con\u00adfig\u00adu\u00adra\u00adtion man\u00adage\u00adment sys\u00adtems";
/** 34 columns to pi-tui with its Hangul fillers counted 0; the terminal draws them 2, 2, 2, 2, 2 and 1 more. */
const FILLED = "abcdefghijklmnopqrstuvwxyz\u3164\u3164\u3164\u115f\u115f\uffa0";
const FILLER_QUESTION = { question: "Pick\u3164one\u115f of\uffa0these", options: [{ label: "A", description: FILLED }, "B"] };

/** pi 0.85's pi-tui, when its compat tree is installed: the sanitiser must suit both. */
const OLD_TUI = join(REPO_ROOT, "test/compat/pi-0.85/node_modules/@earendil-works/pi-tui/dist/index.js");

const sessions: TmuxSession[] = [];
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.dispose()));
});

/** The rows tmux shows between the fixture's BEGIN and END markers, and how many the form drew. */
async function drawn(question: object): Promise<{ counted: number; rows: string[] }> {
	const tmux = new TmuxSession();
	sessions.push(tmux);
	const json = JSON.stringify(question).replaceAll("'", "'\\''");
	await tmux.start({ command: `${NODE_BIN} test/integration/fixtures/print-form.ts ${WIDTH} '${json}'`, cwd: REPO_ROOT, width: WIDTH, height: 30 });
	await tmux.waitFor(/^END$/m, 20_000, "the form printed");
	const rows = await tmux.rows();
	const begin = rows.findIndex((row) => row.startsWith("BEGIN "));
	const end = rows.indexOf("END");
	return { counted: Number(rows[begin]!.slice("BEGIN ".length)), rows: rows.slice(begin + 1, end) };
}

/** Runs of consecutive code points, as "first-last" in hex: what a failure prints, ready for terminal-widths.ts. */
function ranges(codePoints: readonly number[]): string {
	const runs: [number, number][] = [];
	for (const cp of codePoints) {
		const last = runs.at(-1);
		if (last && last[1] === cp - 1) last[1] = cp;
		else runs.push([cp, cp]);
	}
	return runs.map(([a, b]) => (a === b ? a.toString(16) : `${a.toString(16)}-${b.toString(16)}`)).join(" ");
}

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

describe.skipIf(!hasTmux)(`characters of disputed width in a real terminal${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("every Unicode scalar value, sanitised, is as wide to pi-tui (1.6 and 0.85) as tmux draws it (property over all 1,112,064)"),
		async () => {
			const widthOf = [visibleWidth];
			if (existsSync(OLD_TUI)) widthOf.push(((await import(OLD_TUI)) as { visibleWidth: (text: string) => number }).visibleWidth);
			const sanitised = new Map<string, number[]>();
			for (let cp = 0; cp <= 0x10ffff; cp++) {
				if (cp >= 0xd800 && cp <= 0xdfff) continue;
				const text = sanitiseText(String.fromCodePoint(cp));
				const list = sanitised.get(text);
				if (list) list.push(cp);
				else sanitised.set(text, [cp]);
			}
			const texts = [...sanitised.keys()].filter((text) => text !== "");
			const drawnWidths = await terminalWidths(texts, 120_000);
			const disputed: number[] = [];
			texts.forEach((text, i) => {
				if (widthOf.some((width) => width(text) !== drawnWidths[i])) disputed.push(...sanitised.get(text)!);
			});
			disputed.sort((a, b) => a - b);
			expect(disputed, `code points pi-tui and tmux still disagree on: ${ranges(disputed)}`).toEqual([]);
			// Hangul fillers, the issue's three: gone, not drawn.
			for (const filler of ["\u3164", "\u115f", "\uffa0"]) expect(sanitiseText(`a${filler}b`)).toBe("ab");
		},
		180_000,
	);

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("a description full of soft hyphens takes exactly the rows the form counted, none wider than the terminal"),
		async () => {
			const { counted, rows } = await drawn({ question: "Which tool?", options: [{ label: "A", description: HYPHENATED }, "B"] });
			expect(rows).toHaveLength(counted);
			expect(rows.some((row) => row.includes("configuration management systems"))).toBe(true);
			expect(rows.every((row) => [...row].length <= WIDTH)).toBe(true);
		},
	);
});

describe.skipIf(!hasTmux)(`Hangul fillers in the real pi TUI, pi ${PI_VERSION}, 40 columns${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	let tmux: TmuxSession | undefined;
	let piEnv: PiEnv | undefined;
	afterAll(async () => {
		await tmux?.dispose();
		piEnv?.cleanup();
	});

	it("a form whose question and option hold U+3164, U+115F and U+FFA0 shows exactly the rows it counted, each as pi-tui measured it", async () => {
		piEnv = createPiEnv({ script: { prompts: { "ask hangul": { ask: { questions: [FILLER_QUESTION] } as unknown as ScriptAsk } } } });
		const stderrFile = join(piEnv.root, "stderr.log");
		const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color", LC_ALL: "C.UTF-8" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>${quote(stderrFile)}`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		tmux = new TmuxSession();
		await tmux.start({ command, cwd: piEnv.cwd, width: WIDTH, height: 50 });
		await tmux.waitFor("tui-host", 30_000, "pi's editor and footer", new RegExp(EXIT_MARKER));
		await tmux.prompt("ask hangul", /\[tui-host\]/, { what: "the form" });
		// At 40 columns the key help wraps: the form takes keys once its first row lost the "…".
		await tmux.waitFor(/^ ↑↓ move/m, 5_000, "the form taking keys");
		const rows = await tmux.rows();
		const stderr = existsSync(stderrFile) ? readFileSync(stderrFile, "utf8") : "";
		const header = rows.findIndex((row) => row.startsWith(" [tui-host] ·"));
		const border = "─".repeat(WIDTH);
		const bottom = rows.findIndex((row, i) => i > header && row === border);
		expect(header, `the form's header; stderr: ${stderr}\n${rows.join("\n")}`).toBeGreaterThan(0);
		expect(rows[header - 1]).toBe(border);
		// The rows the form counted: the same question rendered at the same width (the header's text differs, not its row count).
		const checked = validateAskParams({ questions: [FILLER_QUESTION] });
		if (!checked.ok) throw new Error(checked.problems.join("; "));
		const plainTheme = { fg: (_color: string, text: string) => text, bold: (text: string) => text };
		const counted = renderForm(
			new FormModel(checked.questions),
			{ asker: "tui-host", remainingMs: 300_000, timeLeft: "question 5:00 left", field: () => "" },
			plainTheme,
			WIDTH,
		);
		const form = rows.slice(header - 1, bottom + 1);
		expect(form, rows.join("\n")).toHaveLength(counted.length);
		// Row by row what pi-tui counted is what the terminal shows (the header's clock aside): no character lost past the edge or wrapped.
		const trimmed = (lines: string[]) => lines.map((line, i) => (i === 1 ? "header" : line.trimEnd()));
		expect(trimmed(form)).toEqual(trimmed(counted));
		expect(form).toContain("→ ○ A — abcdefghijklmnopqrstuvwxyz");
		expect(rows.every((row) => visibleWidth(row) <= WIDTH)).toBe(true);
		await tmux.keys("Escape");
	});
});
