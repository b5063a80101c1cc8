/**
 * A notice owed at the end of its window (cancels, arrivals) never keeps a process alive that has
 * nothing else to do: a process that owes one exits at once, in a real Node process.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CORE = join(import.meta.dirname, "../../../extensions/checkpoint-bridge/core");

/** Runs `script` as an ES module in a fresh Node process; how long it took to exit, and its output. */
function run(script: string) {
	const started = Date.now();
	const ran = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
	return { ms: Date.now() - started, status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe("a notice owed at the end of its window", () => {
	it("of cancels does not keep the process alive", { timeout: 60_000 }, () => {
		const ran = run(`
			import { CancelNotices } from ${JSON.stringify(join(CORE, "shared/notice-window.ts"))};
			const notices = new CancelNotices((message) => console.log(message), 20_000);
			notices.cancelled("a", ["first?"]);
			notices.cancelled("a", ["second?"]);
		`);
		expect(ran.stderr).not.toMatch(/Error/);
		expect(ran.stdout).toMatch(/cancelled its question "first\?"/);
		expect(ran.stdout).not.toMatch(/more question/);
		expect(ran.status).toBe(0);
		expect(ran.ms).toBeLessThan(15_000);
	});

	it("of arrivals does not keep the process alive", { timeout: 60_000 }, () => {
		const ran = run(`
			import { ArrivalNotices } from ${JSON.stringify(join(CORE, "host/arrival-notices.ts"))};
			const notices = new ArrivalNotices((message) => console.log(message), 20_000);
			notices.arrived("r1", "a", 1, 0);
			notices.arrived("r2", "a", 1, 1);
		`);
		expect(ran.stderr).not.toMatch(/Error/);
		expect(ran.stdout).toMatch(/\[a\] asks 1 question/);
		expect(ran.stdout.trim().split("\n")).toHaveLength(1);
		expect(ran.status).toBe(0);
		expect(ran.ms).toBeLessThan(15_000);
	});
});
