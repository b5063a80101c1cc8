/**
 * What a real terminal draws: the width in columns tmux gives each text, measured by the cursor
 * position it reports after drawing the text (fixtures/measure-widths.ts). The reference the
 * sanitiser's width checks are held to: tmux, as the integration tests and most users run pi in it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../../support/until.ts";
import { NODE_BIN, REPO_ROOT } from "./pi-cli.ts";
import { TmuxSession } from "./tmux.ts";

/** The widths tmux draws `texts` with, in order. Each text must be free of control characters and fit one row of 200 columns. */
export async function terminalWidths(texts: readonly string[], timeoutMs = 60_000): Promise<number[]> {
	const dir = mkdtempSync(join(tmpdir(), "cb-widths-"));
	const input = join(dir, "in.json");
	const output = join(dir, "out.json");
	writeFileSync(input, JSON.stringify(texts));
	const tmux = new TmuxSession();
	try {
		// A UTF-8 locale: tmux reads the program's output as UTF-8 only under one.
		await tmux.start({
			command: `LC_ALL=C.UTF-8 ${NODE_BIN} test/integration/fixtures/measure-widths.ts ${input} ${output}`,
			cwd: REPO_ROOT,
			width: 200,
			height: 5,
		});
		await until(() => existsSync(output) || undefined, "the terminal's widths", timeoutMs, 50);
		const widths = JSON.parse(readFileSync(output, "utf8")) as number[];
		if (widths.length !== texts.length) throw new Error(`measured ${widths.length} widths for ${texts.length} texts`);
		return widths;
	} finally {
		await tmux.dispose();
		rmSync(dir, { recursive: true, force: true });
	}
}
