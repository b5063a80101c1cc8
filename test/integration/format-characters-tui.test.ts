/**
 * Invisible format characters that pi-tui counts as 0 columns but the terminal as 1 (a soft hyphen,
 * U+00AD, above all) would make a row of the terminal form wider than pi-tui measured it, and the
 * terminal would wrap it, breaking the TUI's line bookkeeping. The sanitiser removes them; this test
 * draws the form in a real tmux pane 40 columns wide and counts the rows the terminal shows.
 */

import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const NODE_BIN = join(REPO_ROOT, "node_modules/.bin/node");
const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("format-characters-tui.test.ts: skipped because tmux is not installed (CI installs it)");

const WIDTH = 40;
/** A description that fits 40 columns once its nine soft hyphens are gone, and does not with them. */
const HYPHENATED = "con\u00adfig\u00adu\u00adra\u00adtion man\u00adage\u00adment sys\u00adtems";

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

if (!hasTmux) console.warn("format-characters-tui.test.ts: skipped: tmux is not installed");
describe.skipIf(!hasTmux)(`invisible format characters in a real terminal${hasTmux ? "" : " (skipped: tmux is not installed)"}`, () => {
	it("a description full of soft hyphens takes exactly the rows the form counted, none wider than the terminal", async () => {
		const { counted, rows } = await drawn({ question: "Which tool?", options: [{ label: "A", description: HYPHENATED }, "B"] });
		expect(rows).toHaveLength(counted);
		expect(rows.some((row) => row.includes("configuration management systems"))).toBe(true);
		expect(rows.every((row) => [...row].length <= WIDTH)).toBe(true);
	});
});
