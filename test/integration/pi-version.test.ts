/**
 * The suite runs against every supported pi (see PI_INSTALLS in the harness): this checks that the
 * pi CLI and pi-subagents the harness starts are the ones the project under test names, so a run
 * meant for pi 0.85 can never quietly test pi 1.6.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPiEnv, PI_CLI, PI_PACKAGE_VERSION, PI_VERSION, runPi, SUBAGENTS_EXT } from "./harness/pi-cli.ts";

describe(`pi under test (${PI_VERSION})`, () => {
	it("the CLI the harness starts reports the selected version, next to pi-subagents 0.67", async () => {
		expect(PI_PACKAGE_VERSION.startsWith(`${PI_VERSION}.`), `${PI_PACKAGE_VERSION} is a ${PI_VERSION}.x`).toBe(true);
		const piEnv = createPiEnv();
		try {
			const run = await runPi(piEnv, ["--version"], 30_000);
			expect(run.code, run.stderr).toBe(0);
			expect(`${run.stdout}${run.stderr}`.trim()).toContain(PI_PACKAGE_VERSION);
		} finally {
			piEnv.cleanup();
		}
		const subagents = JSON.parse(readFileSync(join(dirname(SUBAGENTS_EXT), "package.json"), "utf8")) as { version: string };
		expect(subagents.version).toMatch(/^0\.67\./);
		// Both come from the same install: pi-subagents resolves pi's packages from the pi that runs it.
		expect(dirname(dirname(dirname(dirname(PI_CLI))))).toBe(dirname(dirname(SUBAGENTS_EXT)));
	});
});
