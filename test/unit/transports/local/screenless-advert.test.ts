/**
 * A host with no screen in the directory's advertisement (ADR-0035): the terminal's host takes the
 * directory while it runs and hands it back when it ends, in both orders; a fallback picks a host with
 * a screen before a newer one without; a dead host with a screen holds nothing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { advertDir, advertiseEndpoint, advertPath, findHostEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/advertisement.ts";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A private runtime dir and a working directory. */
async function place() {
	const root = await mkdtemp(path.join(os.tmpdir(), "cpb-screenless-"));
	cleanups.push(() => rm(root, { recursive: true, force: true }));
	const runtime = path.join(root, "runtime");
	await mkdir(runtime, { mode: 0o700 });
	const cwd = path.join(root, "project");
	await mkdir(cwd);
	return { cwd, env: { XDG_RUNTIME_DIR: runtime } as NodeJS.ProcessEnv, runtime };
}

/** A live process to stand for a host: its pid is what the advertisement checks. */
function liveHost(): ChildProcess {
	const child = spawn("sleep", ["60"], { stdio: "ignore" });
	cleanups.push(() => child.kill("SIGKILL"));
	return child;
}

describe("a host with no screen in the directory's advertisement", () => {
	it("the bin first: it takes the empty directory; a terminal's host takes it over; when that one quits, it falls back to the bin", async () => {
		const { cwd, env } = await place();
		const bin = await advertiseEndpoint("/run/bin/socket", { cwd, env, screenless: true, pid: liveHost().pid! });
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/bin/socket");
		const terminal = await advertiseEndpoint("/run/tui/socket", { cwd, env, pid: liveHost().pid! });
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/tui/socket");
		terminal.withdraw();
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/bin/socket");
		bin.withdraw();
		expect(findHostEndpoint({ cwd, env })).toBeUndefined();
	});

	it("the terminal first: the bin stands by, the directory still names the terminal's host; when it quits, the bin", async () => {
		const { cwd, env, runtime } = await place();
		const terminal = await advertiseEndpoint("/run/tui/socket", { cwd, env, pid: liveHost().pid! });
		const bin = await advertiseEndpoint("/run/bin/socket", { cwd, env, screenless: true, pid: liveHost().pid! });
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/tui/socket");
		expect(JSON.parse(await readFile(advertPath(advertDir(runtime), cwd), "utf8"))).toMatchObject({ endpoint: "/run/tui/socket" });
		terminal.withdraw();
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/bin/socket");
		expect(JSON.parse(await readFile(advertPath(advertDir(runtime), cwd), "utf8"))).toMatchObject({ endpoint: "/run/bin/socket", screenless: true });
		bin.withdraw();
	});

	it("a terminal's host that died holds nothing: the bin takes the directory", async () => {
		const { cwd, env } = await place();
		const dead = liveHost();
		await advertiseEndpoint("/run/tui/socket", { cwd, env, pid: dead.pid! });
		dead.kill("SIGKILL");
		await new Promise((resolve) => dead.once("exit", resolve));
		await advertiseEndpoint("/run/bin/socket", { cwd, env, screenless: true, pid: liveHost().pid! });
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/bin/socket");
	});

	it("a fallback picks a host with a screen before a newer one without", async () => {
		const { cwd, env } = await place();
		await advertiseEndpoint("/run/tui-1/socket", { cwd, env, pid: liveHost().pid! });
		await new Promise((resolve) => setTimeout(resolve, 5));
		await advertiseEndpoint("/run/bin/socket", { cwd, env, screenless: true, pid: liveHost().pid! });
		await new Promise((resolve) => setTimeout(resolve, 5));
		const second = await advertiseEndpoint("/run/tui-2/socket", { cwd, env, pid: liveHost().pid! });
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/tui-2/socket");
		second.withdraw();
		expect(findHostEndpoint({ cwd, env })?.socketPath).toBe("/run/tui-1/socket");
	});
});
