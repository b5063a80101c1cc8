import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** Real pi processes and sessions: generous per-test budget, files run in parallel forks. */
const integration = { testTimeout: 180_000, hookTimeout: 120_000, pool: "forks", setupFiles: ["test/support/private-runtime-dir.ts"] };

const INTEGRATION_DIR = "test/integration";
/**
 * Every integration file that drives the pi CLI (through harness/pi-cli.ts, which picks the pi under
 * test from PI_VERSION_UNDER_TEST) runs again on the oldest supported pi. In-process SDK and terminal
 * files load the dev dependency's pi into the test process and run once.
 */
const integrationDir = join(dirname(fileURLToPath(import.meta.url)), INTEGRATION_DIR);
const cliFiles = readdirSync(integrationDir)
	.filter((name) => name.endsWith(".test.ts"))
	.filter((name) => readFileSync(join(integrationDir, name), "utf8").includes('from "./harness/pi-cli.ts"'))
	.map((name) => `${INTEGRATION_DIR}/${name}`);
/** CLI files that assert on something pi 0.85 does differently; each runs on pi 0.85 once it allows for that. */
const notYetOnPi085: Record<string, string> = {
	// questions-tui.test.ts runs on pi 0.85 too: it presses Enter again while pi 0.85's startup drops it.
};

export default defineConfig({
	test: {
		// Two test files at a time whatever the core count (vitest's default on 2 cores is one):
		// integration files mostly wait on pi processes, browsers and servers, so a second file
		// roughly halves the run on a 2-core machine. VITEST_MAX_WORKERS overrides it.
		maxWorkers: 2,
		projects: [
			{
				test: {
					name: "unit",
					include: ["test/unit/**/*.test.ts"],
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
					include: cliFiles,
					exclude: Object.keys(notYetOnPi085).map((name) => `${INTEGRATION_DIR}/${name}`),
					env: { PI_VERSION_UNDER_TEST: "0.85" },
					...integration,
				},
			},
		],
	},
});
