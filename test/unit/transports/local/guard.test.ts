/**
 * What the local endpoint refuses, and that a refusal harms nothing else: a good asker whose
 * dialog is open while a bad connection is refused still gets its answer, and new askers are served.
 */
import { lstat, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host-role.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { startEndpoint, type LocalEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { encodeFrame, MAX_FRAME_BYTES, WIRE_VERSION } from "../../../../extensions/checkpoint-bridge/transports/wire.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared-handle.ts";
import { fakeUI, type FakeDialog } from "../../support/fake-ui.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "cpb-test-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	return dir;
}

async function hostWithEndpoint(extra: { dir?: string; helloTimeoutMs?: number } = {}) {
	const handle = createHandle();
	const opened: FakeDialog[] = [];
	let onOpen: (() => void) | undefined;
	const fake = fakeUI({
		respond: (dialog) => {
			opened.push(dialog);
			onOpen?.();
		},
	});
	if (!claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" })) throw new Error("a fresh handle must accept the claim");
	const endpoint = await startEndpoint({ handle, ...extra });
	cleanups.push(() => endpoint.close());
	/** The n-th dialog (1-based), once it has opened. */
	const dialog = (n: number) =>
		new Promise<FakeDialog>((resolve) => {
			const check = () => opened.length >= n && resolve(opened[n - 1]!);
			onOpen = check;
			check();
		});
	const ask = (label: string) =>
		askRemote(endpoint.endpoint, { asker: { label, sessionId: label }, questions: [{ question: `${label}?` }], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
	return { fake, endpoint, dialog, ask };
}

/** A hand-driven connection: sends raw bytes, collects the frames it gets back and waits for the close. */
function rawConnection(endpoint: LocalEndpoint) {
	const socket = net.createConnection(endpoint.endpoint);
	const frames: Record<string, unknown>[] = [];
	let buffered = "";
	socket.setEncoding("utf8");
	socket.on("data", (text: string) => {
		buffered += text;
		for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
			frames.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
			buffered = buffered.slice(newline + 1);
		}
	});
	// The server may close while this side is still writing (EPIPE): that is the point.
	socket.on("error", () => {});
	const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
	return { socket, frames, closed, send: (text: string) => socket.write(text) };
}

const tokenOf = (endpoint: LocalEndpoint) => readFile(endpoint.address.tokenPath, "utf8");
const hello = (token: string, v = WIRE_VERSION) => encodeFrame({ type: "hello", v, token, pid: 99 });
const request = (id: string, v = WIRE_VERSION) => {
	const now = Date.now();
	return `${JSON.stringify({ type: "request", v, id, asker: { label: "intruder", sessionId: "i" }, questions: [{ question: "Let me in?" }], deadline: now + 10_000, dialogTimeoutMs: 10_000, createdAt: now })}\n`;
};

describe("refused connections harm nothing else", () => {
	let host: Awaited<ReturnType<typeof hostWithEndpoint>>;
	let good: Promise<Awaited<ReturnType<typeof askRemote>>>;
	let goodDialog: FakeDialog;

	beforeEach(async () => {
		host = await hostWithEndpoint();
		good = host.ask("good");
		goodDialog = await host.dialog(1);
	});

	/** After the refusal: the good dialog is still open, gets its answer, and a new asker is served too. */
	async function stillServing() {
		expect(goodDialog.closedBy).toBeUndefined();
		expect(host.fake.dialogs).toHaveLength(1);
		goodDialog.answer("still here");
		const envelope = await good;
		expect([envelope.status, envelope.answers[0]?.answer]).toEqual(["ok", "still here"]);
		const next = host.ask("next");
		(await host.dialog(2)).answer("served");
		expect((await next).status).toBe("ok");
	}

	const cases: [string, (token: string) => string, string][] = [
		["a bad token", () => hello("not-the-token") + request("r1"), "bad-token"],
		["a hello in another version", (token) => hello(token, WIRE_VERSION + 1) + request("r1"), "bad-version"],
		["a request in another version", (token) => hello(token) + request("r1", WIRE_VERSION + 1), "bad-version"],
		["garbage", () => "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "malformed"],
		["a frame that is not an object", () => "[1, 2, 3]\n", "malformed"],
		["a request before the hello", () => request("r1"), "unexpected"],
		["a second hello", (token) => hello(token) + hello(token), "unexpected"],
		["a reused request id", (token) => hello(token) + request("r1") + request("r1"), "unexpected"],
		["a frame one byte over the limit, without its newline", () => "x".repeat(MAX_FRAME_BYTES + 1), "too-large"],
		["an oversized request", (token) => hello(token) + request("r1").replace("Let me in?", "y".repeat(MAX_FRAME_BYTES)), "too-large"],
	];

	it.each(cases)("refuses %s with an error frame and closes only that connection", async (_what, bytes, code) => {
		const raw = rawConnection(host.endpoint);
		raw.send(bytes(await tokenOf(host.endpoint)));
		await raw.closed;
		expect(raw.frames.at(-1)).toMatchObject({ type: "error", v: WIRE_VERSION, code });
		expect(String(raw.frames.at(-1)?.message)).not.toBe("");
		await stillServing();
	});

	it("closes a connection that never says hello", async () => {
		await host.endpoint.close();
		host = await hostWithEndpoint({ helloTimeoutMs: 100 });
		good = host.ask("good");
		goodDialog = await host.dialog(1);
		const raw = rawConnection(host.endpoint);
		await raw.closed;
		expect(raw.frames).toEqual([expect.objectContaining({ type: "error", code: "hello-timeout" })]);
		await stillServing();
	});

	it("a refused connection's request that got in before the refusal is dropped with it", async () => {
		const raw = rawConnection(host.endpoint);
		const token = await tokenOf(host.endpoint);
		raw.send(hello(token) + request("r1"));
		// The intruder's request queues behind the good one; then its connection sends garbage.
		await new Promise<void>((resolve) => raw.socket.on("data", () => raw.frames.some((f) => f.stage === "queued") && resolve()));
		raw.send("}{\n");
		await raw.closed;
		expect(raw.frames.at(-1)).toMatchObject({ type: "error", code: "malformed" });
		goodDialog.answer("still here");
		expect((await good).status).toBe("ok");
		// Had the dropped request stayed queued, its dialog would open before this one.
		const next = host.ask("next");
		expect((await host.dialog(2)).title).toBe("[next (pid " + process.pid + ")] next?");
		host.fake.current()!.answer("x");
		await next;
	});
});

describe("the asker's view of a refusal", () => {
	it("reports a token mismatch as an error naming it", async () => {
		const { endpoint, fake } = await hostWithEndpoint();
		await writeFile(endpoint.address.tokenPath, "stale-token");
		const envelope = await askRemote(endpoint.endpoint, { asker: { label: "p", sessionId: "p" }, questions: [{ question: "x?" }], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
		expect(envelope.status).toBe("error");
		expect(envelope.note).toMatch(/^The host refused the connection \(bad-token\)/);
		expect(fake.dialogs).toHaveLength(0);
	});
});

describe("only this user can reach the endpoint", () => {
	it("serves from a fresh 0700 directory with a 0600 token file of 32 random bytes beside the socket", async () => {
		const { endpoint } = await hostWithEndpoint();
		const dir = path.dirname(endpoint.endpoint);
		expect(path.dirname(dir)).toBe(os.tmpdir());
		expect((await stat(dir)).mode & 0o777).toBe(0o700);
		expect((await stat(endpoint.address.tokenPath)).mode & 0o777).toBe(0o600);
		expect(path.dirname(endpoint.address.tokenPath)).toBe(dir);
		expect((await lstat(endpoint.endpoint)).isSocket()).toBe(true);
		expect(await tokenOf(endpoint)).toMatch(/^[\w-]{43}$/);
		const other = await hostWithEndpoint();
		expect(await tokenOf(other.endpoint)).not.toBe(await tokenOf(endpoint));
	});

	it("creates a given directory 0700, and refuses one that others can enter", async () => {
		const parent = await tempDir();
		const fresh = path.join(parent, "fresh");
		await hostWithEndpoint({ dir: fresh });
		expect((await stat(fresh)).mode & 0o777).toBe(0o700);
		const open = path.join(parent, "open");
		await mkdir(open, { mode: 0o755 });
		await expect(hostWithEndpoint({ dir: open })).rejects.toThrow(/open to other users/);
	});

	it("refuses a directory another endpoint is serving from, and takes over one a dead host left behind", async () => {
		const dir = path.join(await tempDir(), "endpoint");
		const live = await hostWithEndpoint({ dir });
		await expect(hostWithEndpoint({ dir })).rejects.toThrow(/Another checkpoint-bridge endpoint is serving/);
		expect(live.endpoint.connectionCount).toBe(0);
		// What a killed host leaves: a socket file nobody listens on.
		await live.endpoint.close();
		await mkdir(dir, { mode: 0o700 });
		const stale = net.createServer();
		await new Promise<void>((resolve) => stale.listen(path.join(dir, "socket"), resolve));
		// A killed host leaves its socket file behind; a server closed here would remove it, so it is moved aside meanwhile.
		await rename(path.join(dir, "socket"), path.join(dir, "socket.kept"));
		await new Promise<void>((resolve) => stale.close(() => resolve()));
		await rename(path.join(dir, "socket.kept"), path.join(dir, "socket"));
		expect((await lstat(path.join(dir, "socket"))).isSocket()).toBe(true);
		const next = await hostWithEndpoint({ dir });
		expect(next.endpoint.endpoint).toBe(path.join(dir, "socket"));
	});
});
