import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { OWN_PROCESS } from "./test/support/own-process.ts";

/**
 * Real pi processes and sessions: generous per-test budget, files run in parallel forks, each in a
 * process of its own (sharing one saved no time here, ADR-0043).
 */
const integration = {
	testTimeout: 180_000,
	hookTimeout: 120_000,
	pool: "forks",
	setupFiles: ["test/support/private-runtime-dir.ts"],
	globalSetup: ["test/integration/harness/run-scratch.ts", "test/integration/harness/shared-browser.ts"],
};

const INTEGRATION_DIR = "test/integration";
/**
 * The integration files that run again on the oldest supported pi (ADR-0038, ADR-0044): one end to
 * end per surface and per part of pi that changed between its releases (the terminal form, a
 * child's own screen, relayed dialogs, the tools line and pi-tui's widths; RPC dialogs; the
 * sub-agent children and pi 0.85's background runner; a session's lifecycle, its entries and
 * messages, print mode, the host built on pi's SDK, install and version; each away channel and pi's
 * own MCP client). What those surfaces do with a request is pinned once, on the dev pi and in the
 * unit files. Each listed file goes through harness/pi-cli.ts, which picks the pi under test.
 */
const ON_EVERY_PI = [
	// The terminal: the form, pi-tui's widths, the tools line, a child's own screen, relayed dialogs.
	"questions-tui",
	"format-characters-tui",
	"tools-line-tui",
	"child-screens-tui",
	"dialog-relay-tui",
	// RPC dialogs as pi's client sees them, a child's mode under an RPC host, relayed dialogs with a background child.
	"questions-rpc",
	"child-screens-rpc",
	"dialog-relay-rpc",
	// pi-subagents' children, foreground and (pi 0.85 only) background.
	"rpc-subagents",
	"ask-later-subagents",
	"cross-process",
	// A session's lifecycle, its entries and messages; print mode; the host built on pi's SDK.
	"faults-rpc",
	"own-questions-restart",
	"headless",
	"headless-host",
	"pi-version",
	"install",
	// One end to end per away channel (the example channel of docs/extending.md too), and pi's own MCP client.
	"web-page-rpc",
	"away-one-tap",
	"away-ntfy",
	"away-mail",
	"webhook-channel",
	"mcp-http",
].map((name) => `${INTEGRATION_DIR}/${name}.test.ts`);
const integrationDir = join(dirname(fileURLToPath(import.meta.url)), INTEGRATION_DIR);
for (const file of ON_EVERY_PI) {
	const path = join(dirname(integrationDir), "..", file);
	if (!existsSync(path) || !readFileSync(path, "utf8").includes('from "./harness/pi-cli.ts"'))
		throw new Error(`vitest.config.ts: ${file} is listed to run on every pi but does not exist or does not start pi through harness/pi-cli.ts`);
}

export default defineConfig({
	test: {
		// Four test files at a time whatever the core count (vitest's default on 2 cores is one):
		// integration files wait on pi processes, browsers, servers and budgets; with three the cores
		// still sat idle a tenth of the run (ADR-0049). VITEST_MAX_WORKERS overrides it.
		maxWorkers: 4,
		projects: [
			{
				// The unit files share one process per worker; a few need their own (test/support/own-process.ts).
				test: {
					name: "unit",
					include: ["test/unit/**/*.test.ts"],
					exclude: [...OWN_PROCESS],
					isolate: false,
					setupFiles: ["test/support/private-runtime-dir.ts"],
				},
			},
			{
				test: {
					name: "unit-own-process",
					include: [...OWN_PROCESS],
					setupFiles: ["test/support/private-runtime-dir.ts"],
				},
			},
			{
				test: {
					name: "integration",
					include: [`${INTEGRATION_DIR}/**/*.test.ts`],
					...integration,
				},
			},
			{
				// pi 0.85.x and pi-subagents 0.67 from test/compat/pi-0.85 (`npm run setup:compat`).
				test: {
					name: "integration-pi-0.85",
					include: ON_EVERY_PI,
					env: { PI_VERSION_UNDER_TEST: "0.85" },
					...integration,
				},
			},
		],
	},
});
