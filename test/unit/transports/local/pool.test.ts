/**
 * The asker's pooled connections (pool.ts, ADR-0010): one proven connection per endpoint and
 * asker session carries that asker's calls; a connection that closes ends its calls `no-host`
 * and the next call opens a fresh one with fresh checks; an idle one neither keeps the process
 * alive nor stays open past its idle time; a request the host would refuse is refused for its
 * own call only, before anything is sent.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FRAME_VERSION, MAX_FRAME_BYTES } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { ENDPOINT_ENV } from "../../../../extensions/checkpoint-bridge/transports/local/address.ts";
import { askRemote, type RemoteAskOptions } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { encodeFrame } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { closePooledConnections, DEFAULT_POOL_IDLE_MS, pooledConnectionCount } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { proofOf } from "../../../../extensions/checkpoint-bridge/transports/local/proof.ts";
import type { EndpointOptions } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { hostWithEndpoint as hostServing } from "../../support/endpoint-host.ts";
import { EXTENSION, NODE } from "../../support/host-process.ts";
import { openConnections } from "../../support/server-sockets.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
	vi.useRealTimers();
	closePooledConnections();
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const hostWithEndpoint = (options: Partial<Omit<EndpointOptions, "handle">> = {}) => hostServing(cleanups, options);

const ask = (endpoint: string, session: string, question: string, extra: Partial<RemoteAskOptions> = {}): Promise<Envelope> =>
	askRemote(endpoint, { asker: { label: session, sessionId: session }, questions: [{ question }], budgetMs: 10_000, dialogTimeoutMs: 10_000, ...extra });

describe("calls of one asker share one proven connection", () => {
	it("calls one after another reuse one connection", async () => {
		const { endpoint, feed } = await hostWithEndpoint();
		for (const text of ["First?", "Second?", "Third?"]) {
			const call = ask(endpoint.endpoint, "worker", text);
			const dialog = await feed.next();
			expect(dialog.title).toContain(text);
			expect(openConnections(endpoint.endpoint)).toBe(1);
			dialog.answer("yes");
			expect((await call).status).toBe("ok");
		}
		// Kept open for the next call.
		expect(openConnections(endpoint.endpoint)).toBe(1);
		expect(pooledConnectionCount()).toBe(1);
	});

	it("calls at once of one session share a connection; two sessions get two", async () => {
		const { endpoint, feed } = await hostWithEndpoint();
		const calls = [ask(endpoint.endpoint, "one", "A?"), ask(endpoint.endpoint, "one", "B?"), ask(endpoint.endpoint, "two", "C?")];
		for (let i = 0; i < 3; i++) (await feed.next()).answer("yes");
		for (const call of calls) expect((await call).status).toBe("ok");
		expect(openConnections(endpoint.endpoint)).toBe(2);
		expect(pooledConnectionCount()).toBe(2);
	});

	it("a cancel reaches the host over the pooled connection: its dialog is dismissed, and the connection carries on", async () => {
		const { endpoint, feed } = await hostWithEndpoint();
		const abort = new AbortController();
		const cancelled = ask(endpoint.endpoint, "worker", "Cancel me?", { signal: abort.signal });
		const dialog = await feed.next();
		const dismissed = new Promise<void>((resolve) => dialog.signal?.addEventListener("abort", () => resolve(), { once: true }));
		abort.abort();
		expect((await cancelled).status).toBe("cancelled");
		await dismissed;
		expect(openConnections(endpoint.endpoint)).toBe(1);
		const next = ask(endpoint.endpoint, "worker", "Still there?");
		(await feed.next()).answer("yes");
		expect((await next).status).toBe("ok");
		expect(openConnections(endpoint.endpoint)).toBe(1);
	});
});

describe("a request too large for the host is refused on this side", () => {
	it("gets error for that call only, with nothing sent, while another call on the same connection completes", async () => {
		const { endpoint, feed } = await hostWithEndpoint();
		const other = ask(endpoint.endpoint, "worker", "Small?");
		const dialog = await feed.next();
		// Questions are capped far below the frame limit; an asker's label is not, on this side.
		const huge = await ask(endpoint.endpoint, "worker", "Huge?", { asker: { label: "x".repeat(MAX_FRAME_BYTES), sessionId: "worker" } });
		expect(huge.status).toBe("error");
		expect(huge.note).toMatch(/the host takes at most 1048576 bytes in one frame\. Nothing was sent\./);
		dialog.answer("fine");
		const envelope = await other;
		expect([envelope.status, envelope.answers[0]?.answer]).toEqual(["ok", "fine"]);
		expect(openConnections(endpoint.endpoint)).toBe(1);
	});

	it("a request whose fields the host would refuse (a budget that is not a number) gets error without touching the connection", async () => {
		const { endpoint, feed } = await hostWithEndpoint();
		const other = ask(endpoint.endpoint, "worker", "Small?");
		const dialog = await feed.next();
		const bad = await ask(endpoint.endpoint, "worker", "Odd?", { budgetMs: Number.NaN });
		expect(bad.status).toBe("error");
		expect(bad.note).toMatch(/would be refused by the host \(malformed\).*deadline/);
		dialog.answer("fine");
		expect((await other).status).toBe("ok");
	});
});

/** A host that proves itself with `token` and records requests; `drop()` closes its end of every connection. */
async function provenFakeHost(dir: string, token: string) {
	const socketPath = path.join(dir, "socket");
	await writeFile(path.join(dir, "token"), token, { mode: 0o600 });
	const sockets = new Set<net.Socket>();
	const requests: string[] = [];
	let connections = 0;
	const server = net.createServer((socket) => {
		connections++;
		sockets.add(socket);
		socket.on("close", () => sockets.delete(socket));
		socket.on("error", () => {});
		let buffered = "";
		socket.on("data", (chunk: Buffer) => {
			buffered += chunk.toString();
			const lines = buffered.split("\n");
			buffered = lines.pop()!;
			for (const line of lines) {
				const frame = JSON.parse(line) as { type: string; nonce?: string; id?: string };
				if (frame.type === "hello")
					socket.write(
						encodeFrame({ type: "welcome", v: FRAME_VERSION.endpoint, proof: proofOf(token, "server", frame.nonce!, "s".repeat(43)), nonce: "s".repeat(43) }),
					);
				if (frame.type === "request") requests.push(frame.id!);
			}
		});
	});
	await new Promise<void>((resolve) => server.listen(socketPath, resolve));
	return {
		socketPath,
		requests,
		connections: () => connections,
		drop: () => {
			for (const socket of sockets) socket.destroy();
		},
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

describe("a connection that closes", () => {
	it("ends every call in flight on it with no-host at once, and the next call opens a fresh connection", async () => {
		const dir = await mkdtemp(path.join(os.tmpdir(), "cpb-pool-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const host = await provenFakeHost(dir, "t".repeat(43));
		cleanups.push(() => host.close());
		const calls = [ask(host.socketPath, "worker", "A?"), ask(host.socketPath, "worker", "B?")];
		await vi.waitFor(() => expect(host.requests).toHaveLength(2));
		expect(host.connections()).toBe(1);
		host.drop();
		for (const call of calls) {
			const envelope = await call;
			expect(envelope.status).toBe("no-host");
			expect(envelope.note).toMatch(/closed the connection/);
		}
		expect(pooledConnectionCount()).toBe(0);
		const next = ask(host.socketPath, "worker", "C?");
		await vi.waitFor(() => expect(host.requests).toHaveLength(3));
		expect(host.connections()).toBe(2);
		host.drop();
		expect((await next).status).toBe("no-host");
	});

	it("a host replaced at the same path serves the next call, proven with its new token", async () => {
		const parent = await mkdtemp(path.join(os.tmpdir(), "cpb-pool-"));
		cleanups.push(() => rm(parent, { recursive: true, force: true }));
		const dir = path.join(parent, "endpoint");
		const first = await hostWithEndpoint({ dir });
		const socketPath = first.endpoint.endpoint;
		const before = ask(socketPath, "worker", "Before?");
		(await first.feed.next()).answer("first");
		expect((await before).answers[0]?.answer).toBe("first");
		const pending = ask(socketPath, "worker", "Pending?");
		await first.feed.next();
		await first.endpoint.close();
		expect((await pending).status).toBe("no-host");

		const second = await hostWithEndpoint({ dir });
		expect(second.endpoint.endpoint).toBe(socketPath);
		const after = ask(socketPath, "worker", "After?");
		(await second.feed.next()).answer("second");
		expect((await after).answers[0]?.answer).toBe("second");
		expect(openConnections(second.endpoint.endpoint)).toBe(1);
	});
});

describe("an idle pooled connection", () => {
	it(`is closed after DEFAULT_POOL_IDLE_MS (${DEFAULT_POOL_IDLE_MS} ms) without a call, and the next call opens a fresh one`, async () => {
		vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
		const { endpoint, feed } = await hostWithEndpoint();
		const first = ask(endpoint.endpoint, "worker", "First?");
		(await feed.next()).answer("yes");
		expect((await first).status).toBe("ok");
		vi.advanceTimersByTime(DEFAULT_POOL_IDLE_MS - 1);
		expect(pooledConnectionCount()).toBe(1);
		vi.advanceTimersByTime(1);
		expect(pooledConnectionCount()).toBe(0);
		await vi.waitFor(() => expect(openConnections(endpoint.endpoint)).toBe(0));
		const second = ask(endpoint.endpoint, "worker", "Second?");
		(await feed.next()).answer("yes");
		expect((await second).status).toBe("ok");
		expect(openConnections(endpoint.endpoint)).toBe(1);
	});

	it("a call in between keeps it open: the idle time starts again when the last call ends", async () => {
		vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
		const { endpoint, feed } = await hostWithEndpoint();
		const first = ask(endpoint.endpoint, "worker", "First?", { poolIdleMs: 1_000 });
		(await feed.next()).answer("yes");
		await first;
		vi.advanceTimersByTime(900);
		const second = ask(endpoint.endpoint, "worker", "Second?");
		(await feed.next()).answer("yes");
		await second;
		vi.advanceTimersByTime(900);
		expect(pooledConnectionCount()).toBe(1);
		vi.advanceTimersByTime(100);
		expect(pooledConnectionCount()).toBe(0);
	});

	it("does not keep a child process alive once its call is done", { timeout: 30_000 }, async () => {
		const { endpoint, feed } = await hostWithEndpoint();
		const script = `
const { pathToFileURL } = await import("node:url");
const { askRemote, endpointFromEnv } = await import(pathToFileURL(process.argv[1] + "transports/local/index.ts").href);
const envelope = await askRemote(endpointFromEnv(), { asker: { label: "child", sessionId: "c" }, questions: [{ question: "Exit after?" }], budgetMs: 20000, dialogTimeoutMs: 20000 });
process.stdout.write(JSON.stringify(envelope) + "\\n");
`;
		const child = spawn(NODE, ["--input-type=module", "--no-warnings", "-e", script, EXTENSION], {
			env: { ...process.env, [ENDPOINT_ENV]: endpoint.endpoint },
			stdio: ["ignore", "pipe", "inherit"],
		});
		cleanups.push(() => void child.kill("SIGKILL"));
		let out = "";
		child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
		const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
		(await feed.next()).answer("bye");
		// Exiting on its own, well before the pooled connection's idle time, is the point: nothing is killed here.
		const code = await Promise.race([exited, new Promise<"alive">((resolve) => setTimeout(() => resolve("alive"), DEFAULT_POOL_IDLE_MS - 1_000))]);
		expect(code).toBe(0);
		expect(JSON.parse(out.trim())).toMatchObject({ status: "ok", answers: [{ answer: "bye" }] });
	});
});
