/**
 * The suite runs against every supported pi (see PI_INSTALLS in the harness): this checks that the
 * pi CLI and pi-subagents the harness starts are the ones the project under test names, so a run
 * meant for pi 0.85 can never quietly test pi 1.6; and that the extension reads the version of the
 * pi that loads it (the check of extensions/checkpoint-bridge/supported-pi.ts).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROBE_FILE_ENV } from "./fixtures/pi-version-probe.ts";
import { baseArgs, createPiEnv, PI_PACKAGE, PI_PACKAGE_VERSION, PI_VERSION, REPO_ROOT, runPi, SUBAGENTS_EXT } from "./harness/pi-cli.ts";

const PROBE_EXT = join(REPO_ROOT, "test/integration/fixtures/pi-version-probe.ts");

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
		expect(dirname(dirname(PI_PACKAGE))).toBe(dirname(dirname(SUBAGENTS_EXT)));
	});

	it("checkpoint-bridge reads the version of this pi from the loader that runs its factory", async () => {
		const piEnv = createPiEnv();
		const probeFile = join(piEnv.root, "probe.json");
		piEnv.env[PROBE_FILE_ENV] = probeFile;
		try {
			const run = await runPi(piEnv, [...baseArgs({ bridge: false }), "--extension", PROBE_EXT, "-p", "hello"], 60_000);
			expect(run.code, run.stderr).toBe(0);
			expect(JSON.parse(readFileSync(probeFile, "utf8"))).toEqual({ version: PI_PACKAGE_VERSION });
		} finally {
			piEnv.cleanup();
		}
	});
});
