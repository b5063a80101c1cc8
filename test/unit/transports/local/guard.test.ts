/**
 * What the local endpoint refuses, and that a refusal harms nothing else: a good asker whose
 * dialog is open while a bad connection is refused still gets its answer, and new askers are served.
 * Also what it bounds: connections awaiting the handshake, and open requests per connection.
 */
import { lstat, mkdir, mkdtemp, rename, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FRAME_VERSION, MAX_FRAME_BYTES } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { MAX_TIMEOUT_MS } from "../../../../extensions/checkpoint-bridge/core/shared/config.ts";
import type { RelayRequest } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { encodeFrame, HANDSHAKE_MAX_FRAME_BYTES } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import type { EndpointOptions } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { hostWithEndpoint as hostServing } from "../../support/endpoint-host.ts";
import type { FakeDialog } from "../../support/fake-ui.ts";
import { type RawFrame, rawConnection, requestLine, tokenAt } from "../../support/raw-endpoint.ts";
import { openConnections } from "../../support/server-sockets.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "cpb-test-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	return dir;
}

async function hostWithEndpoint(extra: Partial<Omit<EndpointOptions, "handle">> = {}) {
	const { handle, fake, feed, endpoint } = await hostServing(cleanups, { sessionId: "host", ...extra });
	/** The n-th dialog (1-based), once it has opened. */
	const dialog = feed.nth;
	const ask = (label: string) =>
		askRemote(endpoint.endpoint, { asker: { label, sessionId: label }, questions: [{ question: `${label}?` }], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
	const raw = () => {
		const connection = rawConnection(endpoint.endpoint);
		cleanups.push(async () => void connection.socket.destroy());
		return connection;
	};
	const token = () => tokenAt(endpoint.address.tokenPath);
	return { handle, fake, endpoint, dialog, ask, raw, token };
}

type Raw = ReturnType<typeof rawConnection>;
const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))));

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

	/** Each case drives a raw connection (handshake and all, where it needs one) into one refusal. */
	const cases: [string, (raw: Raw, token: string) => Promise<unknown> | unknown, string][] = [
		// before the hello
		["garbage", (raw) => raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "malformed"],
		["a frame that is not an object", (raw) => raw.send("[1, 2, 3]\n"), "malformed"],
		["bytes that are not UTF-8", (raw) => raw.socket.write(bytes('{"type":"hello","v":2,"nonce":"', [0xff, 0xfe], '"}\n')), "malformed"],
		["a hello in another version", (raw) => raw.send(raw.helloLine(99, FRAME_VERSION.endpoint + 1)), "bad-version"],
		["a v1 hello carrying the token itself", (raw, token) => raw.send(encodeFrame({ type: "hello", v: 1, token, pid: 99 } as never)), "bad-version"],
		["a hello without a nonce", (raw, token) => raw.send(`${JSON.stringify({ type: "hello", v: FRAME_VERSION.endpoint, token, pid: 99 })}\n`), "malformed"],
		["a request before the hello", (raw) => raw.send(requestLine("r1")), "unexpected"],
		["an auth before the hello", (raw) => raw.send(encodeFrame({ type: "auth", v: FRAME_VERSION.endpoint, proof: "p".repeat(43) })), "unexpected"],
		["a hello one byte over the handshake limit, without its newline", (raw) => raw.send("x".repeat(HANDSHAKE_MAX_FRAME_BYTES + 1)), "too-large"],
		["deep JSON before the hello", (raw) => raw.send(`${deep(100_000)}\n`), "too-large"],
		// after the welcome
		["a proof made with another token (wrong token)", async (raw) => raw.send(await raw.welcome("not-the-token")), "bad-token"],
		[
			"an empty proof",
			async (raw, token) => (await raw.welcome(token), raw.send(encodeFrame({ type: "auth", v: FRAME_VERSION.endpoint, proof: "" }))),
			"malformed",
		],
		["a request instead of the proof", async (raw, token) => (await raw.welcome(token), raw.send(requestLine("r1"))), "unexpected"],
		["a second hello instead of the proof", async (raw, token) => (await raw.welcome(token), raw.send(raw.helloLine())), "unexpected"],
		// after the handshake
		[
			"a request in another version",
			async (raw, token) => (await raw.handshake(token), raw.send(requestLine("r1", { v: FRAME_VERSION.endpoint + 1 }))),
			"bad-version",
		],
		["a second hello", async (raw, token) => (await raw.handshake(token), raw.send(raw.helloLine())), "unexpected"],
		[
			"a second auth",
			async (raw, token) => (await raw.handshake(token), raw.send(encodeFrame({ type: "auth", v: FRAME_VERSION.endpoint, proof: "p".repeat(43) }))),
			"unexpected",
		],
		["a reused request id", async (raw, token) => (await raw.handshake(token), raw.send(requestLine("r1") + requestLine("r1"))), "unexpected"],
		[
			"a result sent by a client",
			async (raw, token) => (
				await raw.handshake(token), raw.send(encodeFrame({ type: "result", v: FRAME_VERSION.endpoint, id: "r1", kind: "result", status: "ok", answers: [] }))
			),
			"unexpected",
		],
		[
			"a progress sent by a client",
			async (raw, token) => (
				await raw.handshake(token),
				raw.send(encodeFrame({ type: "progress", v: FRAME_VERSION.endpoint, id: "r1", kind: "progress", stage: "shown", answers: [] }))
			),
			"unexpected",
		],
		[
			"a non-finite deadline",
			async (raw, token) => (await raw.handshake(token), raw.send(requestLine("r1").replace(/"deadline":\d+/, '"deadline":1e999'))),
			"malformed",
		],
		[
			"bytes that are not UTF-8 after the handshake",
			async (raw, token) => (await raw.handshake(token), raw.socket.write(bytes(requestLine("r1").slice(0, 40), [0xc3, 0x28], '"}\n'))),
			"malformed",
		],
		[
			"an oversized request",
			async (raw, token) => (await raw.handshake(token), raw.send(requestLine("r1", { question: "y".repeat(MAX_FRAME_BYTES) }))),
			"too-large",
		],
	];

	it.each(cases)("refuses %s with an error frame and closes only that connection", async (_what, drive, code) => {
		const raw = host.raw();
		await drive(raw, await host.token());
		await raw.closed;
		expect(raw.frames.at(-1)).toMatchObject({ type: "error", v: FRAME_VERSION.endpoint, code });
		expect(String(raw.frames.at(-1)?.message)).not.toBe("");
		await stillServing();
	});

	it.each([
		["never says hello", (_raw: Raw) => {}],
		[
			"sends its hello a byte at a time, too slowly",
			(raw: Raw) => {
				const line = raw.helloLine();
				let at = 0;
				const timer = setInterval(() => (at < line.length - 1 ? raw.send(line[at++]!) : clearInterval(timer)), 20);
				raw.socket.once("close", () => clearInterval(timer));
			},
		],
		["gets the welcome and never proves itself", (raw: Raw) => void raw.welcome("whatever").catch(() => {})],
	])("closes a connection that %s, at the handshake's deadline", async (_what, drive) => {
		await host.endpoint.close();
		host = await hostWithEndpoint({ helloTimeoutMs: 200 });
		good = host.ask("good");
		goodDialog = await host.dialog(1);
		const raw = host.raw();
		drive(raw);
		await raw.closed;
		expect(raw.frames.at(-1)).toMatchObject({ type: "error", code: "hello-timeout" });
		await stillServing();
	});

	it("a proof already waiting when a stalled host reaches the handshake's deadline is read, not refused", async () => {
		await host.endpoint.close();
		host = await hostWithEndpoint({ helloTimeoutMs: 100 });
		const raw = host.raw();
		const auth = await raw.welcome(await host.token());
		raw.send(auth + requestLine("in-time", { question: "In time?" }));
		// The event loop stalls past the deadline with the proof and the request in the socket.
		const until = Date.now() + 300;
		while (Date.now() < until);
		const dialog = await host.dialog(1);
		expect(dialog.title).toBe("[intruder (pid 99)] In time?");
		dialog.answer("yes");
		expect(await raw.frame((f) => f.type === "result")).toMatchObject({ id: "in-time", status: "ok" });
		expect(raw.frames.filter((f) => f.type === "error")).toEqual([]);
	});

	it("a refused connection's request that got in before the refusal is dropped with it", async () => {
		const raw = host.raw();
		await raw.handshake(await host.token());
		raw.send(requestLine("r1"));
		// The intruder's request queues behind the good one; then its connection sends garbage.
		await raw.frame((f) => f.stage === "queued");
		raw.send("}{\n");
		await raw.closed;
		expect(raw.frames.at(-1)).toMatchObject({ type: "error", code: "malformed" });
		goodDialog.answer("still here");
		expect((await good).status).toBe("ok");
		// Had the dropped request stayed queued, its dialog would open before this one.
		const next = host.ask("next");
		expect((await host.dialog(2)).title).toBe(`[next (pid ${process.pid})] next?`);
		host.fake.current()!.answer("x");
		await next;
	});
});

describe("what a request may carry", () => {
	it("deep JSON in a question is refused by the host's check of the question, not by a crash", async () => {
		const host = await hostWithEndpoint();
		const raw = host.raw();
		await raw.handshake(await host.token());
		raw.send(`${requestLine("deep").replace('"questions":[{', `"questions":[{"options":${deep(400_000)},`)}`);
		const result = await raw.frame((f) => f.type === "result");
		expect(result).toMatchObject({ id: "deep", status: "error" });
		expect(host.fake.dialogs).toEqual([]);
		const next = host.ask("next");
		(await host.dialog(1)).answer("served");
		expect((await next).status).toBe("ok");
	});

	it("__proto__ keys stay plain data: nothing is polluted and the request is served as sent", async () => {
		const host = await hostWithEndpoint();
		const raw = host.raw();
		await raw.handshake(await host.token());
		const line = requestLine("proto", { question: "Proto?" })
			.replace('"type":"request"', '"__proto__":{"polluted":"yes"},"type":"request"')
			.replace('"asker":{', '"asker":{"__proto__":{"label":"forged"},')
			.replace('{"question":"Proto?"', '{"__proto__":{"options":["forged"]},"question":"Proto?"');
		raw.send(line);
		const dialog = await host.dialog(1);
		expect([dialog.method, dialog.title]).toEqual(["input", "[intruder (pid 99)] Proto?"]);
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
		dialog.answer("fine");
		expect(await raw.frame((f) => f.type === "result")).toMatchObject({ id: "proto", status: "ok", answers: [expect.objectContaining({ answer: "fine" })] });
	});

	it("budgets beyond the one-hour ceiling are clamped on the bus, as a local call's are", async () => {
		const host = await hostWithEndpoint();
		const seen: RelayRequest[] = [];
		host.handle.bus.on("request", (request) => void seen.push(request));
		const raw = host.raw();
		await raw.handshake(await host.token());
		const sentAt = Date.now();
		raw.send(
			requestLine("long")
				.replace(/"deadline":\d+/, `"deadline":${sentAt + 100 * MAX_TIMEOUT_MS}`)
				.replace(/"dialogTimeoutMs":\d+/, `"dialogTimeoutMs":${100 * MAX_TIMEOUT_MS}`),
		);
		await host.dialog(1);
		expect(seen).toHaveLength(1);
		expect(seen[0]!.deadline).toBeLessThanOrEqual(Date.now() + MAX_TIMEOUT_MS);
		expect(seen[0]!.deadline).toBeGreaterThanOrEqual(sentAt + MAX_TIMEOUT_MS - 1_000);
		expect(seen[0]!.dialogTimeoutMs).toBe(MAX_TIMEOUT_MS);
	});

	it("two clients using the same request id reach only their own request: a cancel from one leaves the other's dialog open", async () => {
		const host = await hostWithEndpoint();
		const [a, b] = [host.raw(), host.raw()];
		const token = await host.token();
		await a.handshake(token, 1001);
		await b.handshake(token, 1002);
		a.send(requestLine("same", { label: "a", question: "From a?" }));
		const first = await host.dialog(1);
		b.send(requestLine("same", { label: "b", question: "From b?" }));
		expect(await b.frame((f) => f.stage === "queued")).toMatchObject({ position: 2 });
		// b cancels "same": its own request leaves the queue; a's open dialog is untouched. Frames on one
		// connection are read in order, so once b's probe is queued the cancel has been handled.
		a.send(encodeFrame({ type: "cancel", v: FRAME_VERSION.endpoint, id: "other", reason: "cancelled" }));
		b.send(
			encodeFrame({ type: "cancel", v: FRAME_VERSION.endpoint, id: "same", reason: "cancelled" }) + requestLine("probe", { label: "b", question: "Probe?" }),
		);
		// Position 2: behind a's open dialog only, so b's "same" is gone.
		expect(await b.frame((f) => f.id === "probe" && f.stage === "queued")).toMatchObject({ position: 2 });
		expect(first.closedBy).toBeUndefined();
		expect(first.title).toBe("[a (pid 1001)] From a?");
		first.answer("for a");
		expect(await a.frame((f) => f.type === "result")).toMatchObject({ id: "same", status: "ok", answers: [expect.objectContaining({ answer: "for a" })] });
		// b's cancelled request never opened a dialog, and b got no reply carrying a's answer.
		const second = await host.dialog(2);
		expect(second.title).toBe("[b (pid 1002)] Probe?");
		second.answer("for b");
		expect(await b.frame((f) => f.type === "result")).toMatchObject({ id: "probe", status: "ok" });
		expect(b.frames.filter((f: RawFrame) => JSON.stringify(f).includes("for a"))).toEqual([]);
	});
});

describe("limits per connection and before the handshake", () => {
	it("one connection flooding requests: those beyond the cap get an error naming it, the connection and its other requests live on", async () => {
		const host = await hostWithEndpoint({ maxOpenRequests: 5 });
		const raw = host.raw();
		await raw.handshake(await host.token());
		raw.send(Array.from({ length: 50 }, (_, i) => requestLine(`flood-${i}`, { question: `Flood ${i}?` })).join(""));
		const refused = await new Promise<RawFrame[]>((resolve) => {
			const check = () => {
				const errors = raw.frames.filter((f) => f.type === "result" && f.status === "error");
				if (errors.length >= 45) resolve(errors);
				else raw.socket.once("data", () => setImmediate(check));
			};
			check();
		});
		expect(refused.map((f) => f.id)).toEqual(Array.from({ length: 45 }, (_, i) => `flood-${i + 5}`));
		for (const frame of refused) expect(frame.note).toMatch(/already has 5 open requests, the most one connection may have \(maxOpenRequests\)/);
		// The five within the cap are served, one dialog at a time; then the connection takes new requests again.
		for (let n = 1; n <= 5; n++) (await host.dialog(n)).answer(`answer ${n}`);
		await raw.frame((f) => f.type === "result" && f.id === "flood-4");
		raw.send(requestLine("after", { question: "After?" }));
		(await host.dialog(6)).answer("again");
		expect(await raw.frame((f) => f.type === "result" && f.id === "after")).toMatchObject({ status: "ok" });
		expect(raw.socket.destroyed).toBe(false);
		expect(raw.frames.filter((f) => f.type === "result" && f.status === "ok")).toHaveLength(6);
	});

	it("holds at most maxUnprovenConnections awaiting the handshake, closing the oldest silent ones with busy, and still serves an asker", async () => {
		const host = await hostWithEndpoint({ maxUnprovenConnections: 4 });
		const idle = Array.from({ length: 10 }, () => host.raw());
		await Promise.all(idle.map((raw) => new Promise((resolve) => raw.socket.once("connect", resolve))));
		// The six oldest were closed to make room, each told why.
		await Promise.all(idle.slice(0, 6).map((raw) => raw.closed));
		for (const raw of idle.slice(0, 6)) expect(raw.frames).toEqual([expect.objectContaining({ type: "error", code: "busy" })]);
		// The four newest are all the host holds.
		await vi.waitFor(() => expect(openConnections(host.endpoint.endpoint)).toBe(4));
		for (const raw of idle.slice(6)) expect(raw.socket.destroyed).toBe(false);
		const served = host.ask("legit");
		(await host.dialog(1)).answer("served");
		expect((await served).status).toBe("ok");
		// At most four silent ones beside the asker's proven connection.
		expect(openConnections(host.endpoint.endpoint)).toBeLessThanOrEqual(4 + 1);
	});

	it("more legitimate askers at once than connections may await the handshake: each dropped one tries again, and all are served", async () => {
		const host = await hostWithEndpoint({ maxUnprovenConnections: 4 });
		const calls = Array.from({ length: 40 }, (_, i) => host.ask(`asker-${i}`));
		for (let n = 1; n <= calls.length; n++) (await host.dialog(n)).answer(`answer ${n}`);
		const envelopes = await Promise.all(calls);
		expect(envelopes.filter((e) => e.status !== "ok").map((e) => e.note)).toEqual([]);
		expect(host.fake.maxOpen).toBe(1);
	});

	it("a proven connection no longer counts as awaiting the handshake: silent newcomers never push it out", async () => {
		const host = await hostWithEndpoint({ maxUnprovenConnections: 2 });
		const proven = [host.raw(), host.raw()];
		for (const raw of proven) await raw.handshake(await host.token());
		// Both are proven once the host takes a frame only a proven connection may send: a notice each.
		const notices = new Promise<void>((resolve) => {
			let heard = 0;
			host.handle.bus.on("relay:notice", () => void (++heard === proven.length && resolve()));
		});
		for (const raw of proven)
			raw.send(encodeFrame({ type: "notice", v: FRAME_VERSION.endpoint, asker: { label: "proven", sessionId: "proven" }, message: "Here.", level: "info" }));
		await notices;
		const silent = [host.raw(), host.raw(), host.raw()];
		await silent[0]!.closed;
		expect(silent[0]!.frames).toEqual([expect.objectContaining({ code: "busy" })]);
		for (const raw of proven) expect(raw.socket.destroyed).toBe(false);
		proven[1]!.send(requestLine("still-here", { question: "Still here?" }));
		(await host.dialog(1)).answer("yes");
		expect(await proven[1]!.frame((f) => f.type === "result")).toMatchObject({ id: "still-here", status: "ok" });
	});

	it("a connection mid-handshake outlives newer silent ones", async () => {
		const host = await hostWithEndpoint({ maxUnprovenConnections: 2 });
		const midway = host.raw();
		await midway.welcome(await host.token());
		const silent = [host.raw(), host.raw()];
		await silent[0]!.closed;
		expect(midway.socket.destroyed).toBe(false);
		expect(silent[0]!.frames).toEqual([expect.objectContaining({ code: "busy" })]);
	});
});

describe("only this user can reach the endpoint", () => {
	it("serves from a fresh 0700 directory with a 0600 token file of 32 random bytes beside the socket", async () => {
		const { endpoint, token } = await hostWithEndpoint();
		const dir = path.dirname(endpoint.endpoint);
		expect([os.tmpdir(), process.env.XDG_RUNTIME_DIR]).toContain(path.dirname(dir));
		expect((await stat(dir)).mode & 0o777).toBe(0o700);
		expect((await stat(endpoint.address.tokenPath)).mode & 0o777).toBe(0o600);
		expect((await lstat(endpoint.endpoint)).mode & 0o777).toBe(0o600);
		expect(path.dirname(endpoint.address.tokenPath)).toBe(dir);
		expect((await lstat(endpoint.endpoint)).isSocket()).toBe(true);
		expect(await token()).toMatch(/^[\w-]{43}$/);
		const other = await hostWithEndpoint();
		expect(await other.token()).not.toBe(await token());
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
		expect(openConnections(live.endpoint.endpoint)).toBe(0);
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

	it("an asker whose token file does not match the host's gets no-host: the host cannot prove itself with that token, so nothing is asked", async () => {
		const { endpoint, fake } = await hostWithEndpoint();
		await writeFile(endpoint.address.tokenPath, "A".repeat(43), { mode: 0o600 });
		const envelope = await askRemote(endpoint.endpoint, {
			asker: { label: "p", sessionId: "p" },
			questions: [{ question: "x?" }],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/is not trusted: it could not prove it holds the token in .*token\. Nothing was asked there/);
		expect(fake.dialogs).toHaveLength(0);
		expect(fake.notices).toEqual([]);
	});
});
