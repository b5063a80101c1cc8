/**
 * The advertisement of a host's endpoint for its working directory: a process of the same user in
 * the same directory finds the host without the environment variable; one in another directory
 * does not; an advertisement that is not this user's alone (a group- or world-writable file or
 * directory, a link, another user's) is ignored, and a dead host's is skipped and cleaned, the
 * endpoint directory it left behind with it.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { ENDPOINT_ENV } from "../../../../extensions/checkpoint-bridge/transports/local/address.ts";
import {
	advertDir,
	advertiseEndpoint,
	advertisementsDir,
	advertPath,
	findHostEndpoint,
} from "../../../../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { closePooledConnections } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { dialogFeed } from "../../support/dialog-feed.ts";
import { loadExtensionCopy, playSession } from "../../support/fake-pi.ts";
import { fakeUI } from "../../support/fake-ui.ts";

const AS_ROOT: (name: string, test: () => Promise<void>) => void =
	process.getuid?.() === 0 ? (name, test) => it(name, test) : (name, test) => it.skip(`${name} (skipped: changing an owner needs root, which CI has)`, test);
const NOBODY = 65534;
const NOT_ROOT = process.getuid?.() !== 0;
/** The advertisements' directory's name in a temp dir: what another user can take first there. */
const advertDirIn = (tmp: string) => advertDir(tmp);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	closePooledConnections();
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A private runtime dir (as $XDG_RUNTIME_DIR) and a working directory of its own. */
async function place() {
	const root = await mkdtemp(path.join(os.tmpdir(), "cpb-advert-"));
	cleanups.push(() => rm(root, { recursive: true, force: true }));
	const runtime = path.join(root, "runtime");
	await mkdir(runtime, { mode: 0o700 });
	const cwd = path.join(root, "project");
	await mkdir(cwd);
	const env = { XDG_RUNTIME_DIR: runtime } as NodeJS.ProcessEnv;
	return { root, runtime, cwd, env };
}

async function hostIn(cwd: string, env: NodeJS.ProcessEnv) {
	const handle = createHandle();
	const feed = dialogFeed();
	const fake = fakeUI({ respond: feed.respond });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
	const endpoint = await startEndpoint({ handle, env, advertiseFor: cwd });
	cleanups.push(() => endpoint.close());
	return { endpoint, feed };
}

/** A process that lives until killed: a pid that is alive, then dead. */
function sleeper(): ChildProcess {
	const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)"], { stdio: "ignore" });
	cleanups.push(async () => void child.kill("SIGKILL"));
	return child;
}
const exited = (child: ChildProcess) =>
	new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

describe("a host is found through its advertisement", () => {
	it("a process of the same user in the same directory finds the host without the variable, and asks it", async () => {
		const { cwd, env } = await place();
		const { endpoint, feed } = await hostIn(cwd, { ...env });
		const found = findHostEndpoint({ env, cwd });
		expect(found?.socketPath).toBe(endpoint.endpoint);
		const call = askRemote(found!, {
			asker: { label: "outside", sessionId: "o" },
			questions: [{ question: "Go?" }],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		(await feed.next()).answer("yes");
		expect((await call).answers.map((a) => a.answer)).toEqual(["yes"]);
	});

	it("another directory finds nothing; the variable comes first while its socket is there", async () => {
		const { root, cwd, env } = await place();
		const { endpoint } = await hostIn(cwd, { ...env });
		const elsewhere = path.join(root, "elsewhere");
		await mkdir(elsewhere);
		expect(findHostEndpoint({ env, cwd: elsewhere })).toBeUndefined();
		const other = await hostIn(elsewhere, { ...env, XDG_RUNTIME_DIR: `${env.XDG_RUNTIME_DIR}` });
		expect(findHostEndpoint({ env: { ...env, [ENDPOINT_ENV]: other.endpoint.endpoint }, cwd })?.socketPath).toBe(other.endpoint.endpoint);
		// The variable's socket gone: the advertisement for the directory.
		expect(findHostEndpoint({ env: { ...env, [ENDPOINT_ENV]: path.join(root, "gone", "socket") }, cwd })?.socketPath).toBe(endpoint.endpoint);
	});

	it("while waiting for the next host, the advertisement comes before the variable naming the host just lost", async () => {
		const { root, cwd, env } = await place();
		const lost = await hostIn(path.join(root, "elsewhere-cwd"), { ...env });
		const { endpoint } = await hostIn(cwd, { ...env });
		const withVariable = { ...env, [ENDPOINT_ENV]: lost.endpoint.endpoint };
		expect(findHostEndpoint({ env: withVariable, cwd })?.socketPath).toBe(lost.endpoint.endpoint);
		expect(findHostEndpoint({ env: withVariable, cwd, gone: lost.endpoint.address })?.socketPath).toBe(endpoint.endpoint);
		// No other host advertised: the variable's, which may come back at the same path.
		expect(findHostEndpoint({ env: withVariable, cwd: path.join(root, "elsewhere-cwd"), gone: lost.endpoint.address })?.socketPath).toBe(
			lost.endpoint.endpoint,
		);
	});

	it("is withdrawn when the endpoint closes; a newer host's is left alone", async () => {
		const { cwd, env } = await place();
		const first = await hostIn(cwd, { ...env });
		const second = await hostIn(cwd, { ...env });
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(second.endpoint.endpoint);
		await first.endpoint.close();
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(second.endpoint.endpoint);
		await second.endpoint.close();
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
	});

	it("two hosts in one directory: the later wins; when it quits, the advertisement falls back to the host still running, which askers reach", async () => {
		const { cwd, env, runtime } = await place();
		const first = await hostIn(cwd, { ...env });
		const second = await hostIn(cwd, { ...env });
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(second.endpoint.endpoint);
		await second.endpoint.close();
		const found = findHostEndpoint({ env, cwd });
		expect(found?.socketPath).toBe(first.endpoint.endpoint);
		// The directory's advertisement itself names the first again: whatever reads only it (the MCP server at its start) finds it too.
		expect(JSON.parse(await readFile(advertPath(advertDir(runtime), cwd), "utf8")).endpoint).toBe(first.endpoint.endpoint);
		const call = askRemote(found!, {
			asker: { label: "outside", sessionId: "o" },
			questions: [{ question: "Go?" }],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		(await first.feed.next()).answer("yes");
		expect((await call).answers.map((a) => a.answer)).toEqual(["yes"]);
	});

	it("two hosts in one directory: the later killed (no withdrawal), askers find the first still running", async () => {
		const { cwd, env, runtime } = await place();
		const first = await hostIn(cwd, { ...env });
		const child = sleeper();
		const leftover = path.join(runtime, "checkpoint-bridge-killed");
		await mkdir(leftover, { mode: 0o700 });
		await advertiseEndpoint(path.join(leftover, "socket"), { cwd, env, pid: child.pid! });
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(path.join(leftover, "socket"));
		child.kill("SIGKILL");
		await exited(child);
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(first.endpoint.endpoint);
		// The killed host's files are gone once read: the first host's own is what is left.
		expect(await readdir(advertDir(runtime))).toHaveLength(1);
	});

	// A real second local user (nobody) creates the directory: running a command as another user needs root, which CI has.
	it.skipIf(NOT_ROOT)(
		"another local user who creates the advertisements' directory first in a shared 1777 temp dir: hosts advertise in the user's state directory, askers find them",
		async () => {
			const { root, cwd } = await place();
			// A temp dir every user may write in, as /tmp is; the other user (nobody) takes this user's name in it first.
			await chmod(root, 0o755);
			const shared = path.join(root, "shared-tmp");
			await mkdir(shared);
			await chmod(shared, 0o1777);
			const taken = advertDirIn(shared);
			const made = spawnSync("mkdir", ["-m", "0777", taken], { uid: NOBODY, gid: NOBODY });
			expect(made.status, String(made.stderr)).toBe(0);
			expect((await stat(taken)).uid).toBe(NOBODY);
			const before = process.env.TMPDIR;
			process.env.TMPDIR = shared;
			cleanups.push(async () => {
				if (before === undefined) delete process.env.TMPDIR;
				else process.env.TMPDIR = before;
			});
			const env = { XDG_STATE_HOME: path.join(root, "state") } as NodeJS.ProcessEnv;
			const { endpoint, feed } = await hostIn(cwd, { ...env });
			expect(advertisementsDir(env).dir).toBe(path.join(root, "state", "checkpoint-bridge", "hosts"));
			expect((await stat(advertisementsDir(env).dir)).mode & 0o777).toBe(0o700);
			const found = findHostEndpoint({ env, cwd });
			expect(found?.socketPath).toBe(endpoint.endpoint);
			const call = askRemote(found!, {
				asker: { label: "outside", sessionId: "o" },
				questions: [{ question: "Go?" }],
				budgetMs: 10_000,
				dialogTimeoutMs: 10_000,
			});
			(await feed.next()).answer("yes");
			expect((await call).answers.map((a) => a.answer)).toEqual(["yes"]);
			// Nothing was written into the other user's directory.
			expect(await readdir(taken)).toEqual([]);
		},
	);

	it("falls back to the temp dir when $XDG_RUNTIME_DIR is not private to the user", async () => {
		const { runtime, cwd, env } = await place();
		await chmod(runtime, 0o755);
		const { endpoint } = await hostIn(cwd, { ...env });
		expect(path.dirname(path.dirname(endpoint.endpoint))).not.toBe(runtime);
		expect(existsSync(advertPath(advertDir(os.tmpdir()), cwd))).toBe(true);
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(endpoint.endpoint);
	});
});

/** An advertisement of a host that is alive until its `child` is killed, naming an endpoint directory as a host leaves it. */
async function deadHostAdvertised() {
	const found = await place();
	const child = sleeper();
	const leftover = path.join(found.runtime, "checkpoint-bridge-dead");
	await mkdir(leftover, { mode: 0o700 });
	await writeFile(path.join(leftover, "token"), "t".repeat(43), { mode: 0o600 });
	const advert = await advertiseEndpoint(path.join(leftover, "socket"), { cwd: found.cwd, env: found.env, pid: child.pid! });
	return { ...found, child, leftover, advert };
}

describe("an advertisement that is not to be trusted is ignored", () => {
	it("a group- or world-writable file, an open directory, a link: each ignored", async () => {
		const { runtime, cwd, env } = await place();
		const { endpoint } = await hostIn(cwd, { ...env });
		// The directory's advertisement and the host's own beside it: each is held to the same checks.
		const files = (await readdir(advertDir(runtime))).map((name) => path.join(advertDir(runtime), name));
		expect(files).toHaveLength(2);
		for (const mode of [0o666, 0o620, 0o640, 0o604]) {
			for (const file of files) await chmod(file, mode);
			expect(findHostEndpoint({ env, cwd }), `mode ${mode.toString(8)}`).toBeUndefined();
		}
		for (const file of files) await chmod(file, 0o600);
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(endpoint.endpoint);
		await chmod(advertDir(runtime), 0o777);
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
		await chmod(advertDir(runtime), 0o700);
		for (const file of files) {
			const real = path.join(runtime, `${path.basename(file)}.real`);
			await writeFile(real, await readFile(file), { mode: 0o600 });
			await rm(file);
			await symlink(real, file);
		}
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
	});

	it("a dead host's advertisement is skipped and removed, with the endpoint directory it left behind", async () => {
		const { cwd, env, child, leftover, advert } = await deadHostAdvertised();
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(path.join(leftover, "socket"));
		child.kill("SIGKILL");
		await exited(child);
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
		expect(existsSync(advert.file)).toBe(false);
		expect(existsSync(leftover)).toBe(false);
	});

	it("a new host in the directory cleans a dead host's left-over endpoint directory", async () => {
		const { runtime, cwd, env, child, leftover } = await deadHostAdvertised();
		child.kill("SIGKILL");
		await exited(child);
		const { endpoint } = await hostIn(cwd, { ...env });
		expect(existsSync(leftover)).toBe(false);
		expect(findHostEndpoint({ env, cwd })?.socketPath).toBe(endpoint.endpoint);
		// Only the advertisements' own directory is left.
		expect((await readdir(runtime)).filter((n) => n.startsWith("checkpoint-bridge-"))).toEqual([path.basename(advertDir(runtime))]);
	});

	it("a directory that is not the endpoint's is never removed as a dead host's leftover", async () => {
		const { root, cwd, env } = await place();
		const child = sleeper();
		const precious = path.join(root, "precious");
		await mkdir(precious, { mode: 0o700 });
		await writeFile(path.join(precious, "token"), "keep", { mode: 0o600 });
		await advertiseEndpoint(path.join(precious, "socket"), { cwd, env, pid: child.pid! });
		child.kill("SIGKILL");
		await exited(child);
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
		expect(existsSync(path.join(precious, "token"))).toBe(true);
	});

	AS_ROOT("another user's advertisement directory or file is ignored, and the host does not write into it", async () => {
		const { runtime, cwd, env } = await place();
		const { endpoint } = await hostIn(cwd, { ...env });
		const files = (await readdir(advertDir(runtime))).map((name) => path.join(advertDir(runtime), name));
		for (const file of files) await chown(file, NOBODY, NOBODY);
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
		for (const file of files) await chown(file, 0, 0);
		await chown(advertDir(runtime), NOBODY, NOBODY);
		expect(findHostEndpoint({ env, cwd })).toBeUndefined();
		await expect(advertiseEndpoint(endpoint.endpoint, { cwd, env })).rejects.toThrow(/belongs to another user/);
		await chown(advertDir(runtime), 0, 0);
	});
});

describe("a host that cannot advertise", () => {
	it("tells its human that other processes in the directory cannot find it, and serves what it spawns through the variable", async () => {
		const { runtime } = await place();
		await mkdir(advertDir(runtime), { mode: 0o700 });
		await chmod(advertDir(runtime), 0o777);
		const before = process.env.XDG_RUNTIME_DIR;
		process.env.XDG_RUNTIME_DIR = runtime;
		cleanups.push(async () => {
			if (before === undefined) delete process.env.XDG_RUNTIME_DIR;
			else process.env.XDG_RUNTIME_DIR = before;
		});
		const fake = fakeUI();
		const session = playSession(await loadExtensionCopy(), { sessionId: "host", ui: fake.ui });
		cleanups.push(() => session.shutdown("quit"));
		await session.start();
		expect(process.env[ENDPOINT_ENV]).toBeTruthy();
		expect(fake.notices).toContainEqual({
			message: expect.stringMatching(/^checkpoint-bridge: other processes in this directory cannot find this host: .*is open to other users/),
			type: "warning",
		});
	});
});
