/**
 * The page's `/mcp` under load, in this process: a real web page whose host has a programmatic UI
 * that leaves every question open, and the official SDK clients (v2 in both eras, v1). Waiting calls
 * never take the connections the human's own ways in need, each client keeps to its share, a flood of
 * new sessions never closes one whose call is in flight, and a client that never reads costs the host
 * a bounded number of unsent bytes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { MAX_HTTP_SESSIONS, mcpOverHttp } from "../../../extensions/checkpoint-bridge/mcp/http.ts";
import { askInputSchema } from "../../../extensions/checkpoint-bridge/mcp/schema.ts";
import { createAskService, MAX_PROGRESS_TOKEN_LENGTH, MCP_SESSION_PREFIX } from "../../../extensions/checkpoint-bridge/mcp/server.ts";
import { MCP_REQUESTS_PER_CLIENT, Shares } from "../../../extensions/checkpoint-bridge/mcp/shares.ts";
import { httpEndpoint } from "../../../extensions/checkpoint-bridge/mcp.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { MAX_CONNECTIONS } from "../../../extensions/checkpoint-bridge/surfaces/web/http/connections.ts";
import {
	MAX_MCP_REQUESTS,
	MCP_STREAM_BUFFER_BYTES,
	MCP_STREAM_END_BYTES,
	mcpLoad,
	offerMcpRoute,
	sendResponse,
} from "../../../extensions/checkpoint-bridge/surfaces/web/http/mcp-route.ts";
import { progressText } from "../../../extensions/checkpoint-bridge/tool/progress.ts";
import { AskParamsSchema } from "../../../extensions/checkpoint-bridge/tool/schema.ts";
import { until } from "../../support/until.ts";
import { openConnections, unsentBytes } from "../support/server-sockets.ts";
import { pagePath, pageWithRelay, raw, readEvents } from "../surfaces/web/support.ts";

const ASK = "ask_user_via_host";
/** Progress every millisecond: a client that never reads falls behind within a second. */
const PROGRESS_EVERY_MS = 1;

let s: Awaited<ReturnType<typeof pageWithRelay>>;
let endpoint: string;
let token: string;

beforeAll(async () => {
	s = await pageWithRelay();
	// The first offer in a process stands: this file's host is the one served.
	const slot = (globalThis as Record<symbol, { load?: unknown; loaded?: unknown } | undefined>)[Symbol.for("checkpoint-bridge.web.mcp")];
	if (slot) slot.load = slot.loaded = undefined;
	offerMcpRoute(async () => httpEndpoint(s.handle, {}, { progressEveryMs: PROGRESS_EVERY_MS }));
	const url = new URL(s.page.url);
	token = url.pathname.split("/")[2]!;
	endpoint = `${url.origin}/mcp`;
});
afterAll(() => s?.page.close());

const headers = () => ({ authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" });

type Era = "v1" | "v2-2025" | "v2-2026";
interface AnyClient {
	callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
	close(): Promise<void>;
}

async function connect(name: string, era: Era): Promise<AnyClient> {
	const requestInit = { headers: { authorization: `Bearer ${token}` } };
	if (era === "v1") {
		const client = new ClientV1({ name, version: "1" });
		await client.connect(new HttpV1(new URL(endpoint), { requestInit }));
		// A refused stream of its own is reported to onerror, not to a call.
		client.onerror = () => {};
		return client as unknown as AnyClient;
	}
	const client = new ClientV2({ name, version: "1" }, { versionNegotiation: { mode: era === "v2-2025" ? "legacy" : { pin: "2026-07-28" } } });
	client.onerror = () => {};
	await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit }));
	return client as unknown as AnyClient;
}

interface Tracked {
	client: number;
	state: "pending" | "fulfilled" | "rejected";
	error?: string;
}

/** A call, its outcome recorded as it settles. */
function track(client: number, call: Promise<unknown>): Tracked {
	const t: Tracked = { client, state: "pending" };
	call.then(
		() => (t.state = "fulfilled"),
		(error: unknown) => {
			t.state = "rejected";
			t.error = error instanceof Error ? error.message : String(error);
		},
	);
	return t;
}

/** Waits until `/mcp` takes requests again: the calls of a test that ended have let go of the quota. */
const drained = () =>
	until(async () => {
		const response = await fetch(endpoint, { method: "POST", headers: headers(), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
		await response.body?.cancel();
		return response.status !== 429;
	}, "/mcp to take requests again");

const hold = (label: string) => ({ questions: [{ question: `Hold ${label}?`, kind: "confirm" }] });

/** Opens a 2025 session by plain fetch: the status, and the body read to its end. */
async function initialize(name: string): Promise<number> {
	const response = await fetch(endpoint, {
		method: "POST",
		headers: headers(),
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } },
		}),
	});
	await response.text();
	return response.status;
}

describe("a flood of new sessions", () => {
	it("80 initializes in 1.4 s while genuine 2025 clients (v2 and v1) have their questions at the host: no session with a call in flight is closed, and each call gets its answer", async () => {
		expect(MAX_HTTP_SESSIONS).toBe(64);
		const genuine = [await connect("genuine-v2", "v2-2025"), await connect("genuine-v1", "v1")];
		try {
			const calls = genuine.map((client, i) => client.callTool({ name: ASK, arguments: { questions: [{ question: `Keep ${i}?`, kind: "confirm" }] } }));
			for (const call of calls) call.catch(() => {});
			await until(() => s.fake.open.some((d) => d.title.includes("] Keep ")), "a question on screen");
			const statuses: number[] = [];
			for (let batch = 0; batch < 8; batch++) {
				statuses.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => initialize(`flood-session-${batch}.${j}`)))));
				await new Promise((resolve) => setTimeout(resolve, 175));
			}
			// Each newcomer found room: an idle session made it, never one with a call in flight.
			expect(statuses.filter((status) => status !== 200)).toEqual([]);
			// The host shows one question at a time: each is answered on screen in turn.
			for (let i = 0; i < 2; i++) {
				const dialog = await until(() => s.fake.open.find((d) => d.title.includes("] Keep ")), "a question on screen");
				dialog.answer(dialog.options!.find((o) => o.includes("Yes")));
				await until(() => dialog.closedBy, "the answer taken");
			}
			for (const call of calls)
				expect(((await call) as { structuredContent: Envelope }).structuredContent).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		} finally {
			await Promise.all(genuine.map((c) => c.close().catch(() => {})));
		}
	}, 60_000);

	it("when every session has a call in flight, a new one is refused with 429 and a JSON-RPC error; the calls settle, and a session frees room once its call ended", async () => {
		const asked: ((envelope: Envelope) => void)[] = [];
		const service = createAskService({
			askInputSchema: askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, 300_000),
			// Each call waits until the test ends it.
			ask: (call) =>
				new Promise<Envelope>((resolve) => {
					asked.push(resolve);
					call.signal?.addEventListener("abort", () => resolve({ status: "cancelled", answers: [], asker: "unit", waitedMs: 0 }));
				}),
			askerFor: (name) => ({ label: name, sessionId: `${MCP_SESSION_PREFIX}${name}` }),
			progressText,
			version: "test",
			env: {},
		});
		const http = mcpOverHttp(service, { sessions: 2 });
		const authInfo = { token: "page", clientId: "127.0.0.1", scopes: [] };
		const viaHttp = (url: string | URL, init?: RequestInit) => http.fetch(new Request(url, init), authInfo);
		const open = async (name: string) => {
			const client = new ClientV2({ name, version: "1" }, { versionNegotiation: { mode: "legacy" } });
			client.onerror = () => {};
			await client.connect(new StreamableHTTPClientTransport(new URL("http://page.invalid/mcp"), { fetch: viaHttp }));
			return client;
		};
		const busy = [await open("first"), await open("second")];
		const calls = busy.map((client, i) => track(i, client.callTool({ name: ASK, arguments: hold(`busy ${i}`) })));
		await until(() => asked.length === 2, "both calls at the host");
		const refused = await viaHttp("http://page.invalid/mcp", {
			method: "POST",
			headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 0,
				method: "initialize",
				params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "third", version: "1" } },
			}),
		});
		expect(refused.status).toBe(429);
		expect(await refused.json()).toMatchObject({ error: { message: expect.stringContaining("all 2 MCP sessions have a call in flight") } });
		expect(http.sessionCount).toBe(2);
		expect(calls.map((c) => c.state)).toEqual(["pending", "pending"]);
		// Once a call ended, its session is idle: the newcomer takes its place, and the other call goes on.
		asked[0]!({ status: "ok", answers: [{ question: "Hold busy 0?", answer: "yes", kind: "confirm" }], asker: "first", waitedMs: 1 } as unknown as Envelope);
		await until(() => calls[0]!.state === "fulfilled", "the first call to end");
		// A request without a session that is not an initialize opens nothing, and makes no room.
		const stray = await viaHttp("http://page.invalid/mcp", {
			method: "POST",
			headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
			body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
		});
		expect(stray.status).toBe(400);
		await stray.body?.cancel();
		expect((await busy[0]!.listTools()).tools.length).toBe(2);
		const newcomer = await open("newcomer");
		expect(http.sessionCount).toBe(2);
		expect(calls[1]!.state).toBe("pending");
		asked[1]!({ status: "ok", answers: [{ question: "Hold busy 1?", answer: "no", kind: "confirm" }], asker: "second", waitedMs: 1 } as unknown as Envelope);
		await until(() => calls[1]!.state === "fulfilled", "the second call to end");
		for (const client of [...busy, newcomer]) await client.close().catch(() => {});
		await http.close();
	}, 20_000);
});

describe("/mcp's quota and each client's share", () => {
	it("8 client names × 16 waiting calls: at most 8 open per client and 32 in all, the rest refused 429 naming the limit (no reset); the page, its stream, a request's link and its one-tap POST are served meanwhile", async () => {
		expect([MAX_CONNECTIONS, MAX_MCP_REQUESTS, MCP_REQUESTS_PER_CLIENT]).toEqual([128, 32, 8]);
		const human = await s.ask([{ question: "Deploy now?", options: ["yes", "no"], recommended: "yes" }], { label: "planner" });
		const eras: Era[] = ["v1", "v2-2025", "v2-2026", "v2-2026"];
		const clients = await Promise.all(Array.from({ length: 8 }, (_, i) => connect(`flood-${i}`, eras[i % eras.length]!)));
		try {
			const calls = clients.flatMap((client, i) =>
				Array.from({ length: 16 }, (_, j) => track(i, client.callTool({ name: ASK, arguments: hold(`${i}.${j}`) }))),
			);
			await until(() => calls.filter((c) => c.state === "rejected").length >= calls.length - MAX_MCP_REQUESTS, "the calls past the quota to be refused");
			await new Promise((resolve) => setTimeout(resolve, 300));
			const pending = calls.filter((c) => c.state === "pending");
			expect(pending.length).toBeLessThanOrEqual(MAX_MCP_REQUESTS);
			for (let i = 0; i < 8; i++) expect(pending.filter((c) => c.client === i).length).toBeLessThanOrEqual(MCP_REQUESTS_PER_CLIENT);
			// Refused, each with a clear HTTP error: never a reset connection, never a call left without an answer.
			for (const refused of calls.filter((c) => c.state === "rejected")) {
				expect(refused.error).toMatch(/Too Many Requests/);
				expect(refused.error).toMatch(/its share|requests open, its limit/);
				expect(refused.error).not.toMatch(/ECONNRESET|fetch failed|socket/i);
			}
			// The human's own ways in: the page, its live stream, the request's link and its stream, a one-tap POST.
			expect((await raw(s.page, { path: pagePath(s.page) })).status).toBe(200);
			const state = await readEvents(s.page, `${pagePath(s.page)}events`, (events) => events.some((e) => e.event === "state"));
			expect(state[0]!.data.cards.map((c: { requestId: string }) => c.requestId)).toContain(human.requestId);
			const link = new URL(s.page.linkFor(human.requestId)!).pathname;
			expect((await raw(s.page, { path: link })).status).toBe(200);
			expect((await readEvents(s.page, `${link}events`, (events) => events.length > 0))[0]!.event).toBe("state");
			const tap = s.page.actionsFor(human.requestId)!.buttons[0]!;
			expect(tap.label).toMatch(/yes/);
			expect((await raw(s.page, { method: "POST", path: new URL(tap.answer).pathname })).status).toBe(200);
			expect(await human.call).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
			// What the quota refused never reached the host: only the calls it let in wait there.
			const atHost = s.handle.snapshot()!.open.filter((o) => o.asker.label.startsWith("flood-")).length;
			expect(atHost).toBe(calls.filter((c) => c.state === "pending").length);
		} finally {
			await Promise.all(clients.map((c) => c.close().catch(() => {})));
		}
		// Once the waiting calls are gone, /mcp serves again; the flood's idle keep-alive connections time out, so the next test starts without them.
		await drained();
		await until(() => openConnections(s.page.address.port) < 16, "the flood's connections to close", 20_000, 100);
	}, 60_000);

	it("a request past the quota is refused by the page itself with 429, Retry-After and a JSON-RPC error naming the limit", async () => {
		const clients = await Promise.all(Array.from({ length: MAX_MCP_REQUESTS / MCP_REQUESTS_PER_CLIENT }, (_, i) => connect(`full-${i}`, "v2-2026")));
		try {
			const calls = clients.flatMap((client, i) =>
				Array.from({ length: MCP_REQUESTS_PER_CLIENT }, (_, j) => track(i, client.callTool({ name: ASK, arguments: hold(`full ${i}.${j}`) }))),
			);
			await until(async () => {
				const response = await fetch(endpoint, { method: "POST", headers: headers(), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
				if (response.status !== 429) return void (await response.body?.cancel());
				return response;
			}, "the quota to be full")
				.catch((e) => {
					throw new Error(`${e} ${JSON.stringify(calls)}`.slice(0, 2500));
				})
				.then(async (response) => {
					expect(response.headers.get("retry-after")).toBe("5");
					expect(response.headers.get("content-type")).toBe("application/json");
					expect(await response.json()).toEqual({
						jsonrpc: "2.0",
						error: { code: -32000, message: expect.stringContaining(`/mcp has ${MAX_MCP_REQUESTS} requests open, its limit for every client together`) },
						id: null,
					});
				});
			expect(calls.filter((c) => c.state !== "pending")).toEqual([]);
		} finally {
			await Promise.all(clients.map((c) => c.close().catch(() => {})));
		}
		await drained();
	}, 30_000);

	it("a client over its share is refused with 429 and a JSON-RPC error naming its share; another client is served meanwhile", async () => {
		const greedy = await connect("greedy", "v2-2025");
		const other = await connect("modest", "v2-2026");
		try {
			const calls = Array.from({ length: MCP_REQUESTS_PER_CLIENT + 4 }, (_, j) => track(0, greedy.callTool({ name: ASK, arguments: hold(`greedy ${j}`) })));
			await until(() => calls.filter((c) => c.state === "rejected").length >= 4, "the calls past the share to be refused");
			for (const refused of calls.filter((c) => c.state === "rejected"))
				expect(refused.error).toMatch(new RegExp(`the client \\W*greedy\\W* already has ${MCP_REQUESTS_PER_CLIENT} requests open at /mcp, its share`));
			const served = track(1, other.callTool({ name: ASK, arguments: hold("modest") }));
			await until(() => s.handle.snapshot()!.open.some((o) => o.asker.label.startsWith("modest")), "the other client's call at the host");
			expect(served.state).toBe("pending");
		} finally {
			await Promise.all([greedy.close(), other.close()]);
		}
		await drained();
	}, 30_000);
});

/** Raw bytes of one HTTP request over a socket of its own that is never read. */
function neverReading(request: string): net.Socket {
	const socket = net.connect({ host: s.page.address.host, port: s.page.address.port });
	socket.on("error", () => {});
	socket.pause();
	socket.write(request);
	return socket;
}

/** A 2025 session opened by plain fetch: its id. */
async function session(name: string): Promise<string> {
	const init = await fetch(endpoint, {
		method: "POST",
		headers: headers(),
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } },
		}),
	});
	await init.body?.cancel();
	const id = init.headers.get("mcp-session-id")!;
	const ready = await fetch(endpoint, {
		method: "POST",
		headers: { ...headers(), "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
		body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
	});
	await ready.body?.cancel();
	return id;
}

const callWithToken = (sessionId: string, progressToken: string, label: string) => {
	const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: ASK, arguments: hold(label), _meta: { progressToken } } });
	const lines = [
		"POST /mcp HTTP/1.1",
		`host: ${s.page.address.host}:${s.page.address.port}`,
		`authorization: Bearer ${token}`,
		"content-type: application/json",
		"accept: application/json, text/event-stream",
		`mcp-session-id: ${sessionId}`,
		"mcp-protocol-version: 2025-11-25",
		`content-length: ${Buffer.byteLength(body)}`,
	];
	return `${lines.join("\r\n")}\r\n\r\n${body}`;
};

describe("a session's own stream", () => {
	it("gives way to a call: a 2025 client at its share with its stream open gets its 8th call in, the stream ends, and the 9th call is refused", async () => {
		const id = await session("streaming");
		const inSession = { ...headers(), "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" };
		const stream = await fetch(endpoint, { method: "GET", headers: { ...inSession, accept: "text/event-stream" } });
		expect(stream.status).toBe(200);
		const call = (j: number) =>
			fetch(endpoint, {
				method: "POST",
				headers: inSession,
				body: JSON.stringify({ jsonrpc: "2.0", id: 100 + j, method: "tools/call", params: { name: ASK, arguments: hold(`streaming ${j}`) } }),
			});
		const calls: Response[] = [];
		try {
			for (let j = 0; j < MCP_REQUESTS_PER_CLIENT; j++) calls.push(await call(j));
			expect(calls.map((c) => c.status)).toEqual(Array(MCP_REQUESTS_PER_CLIENT).fill(200));
			// The stream gave way: it ended, with nothing lost (it carries no call).
			const reader = stream.body!.getReader();
			for (;;) if ((await reader.read()).done) break;
			const ninth = await call(MCP_REQUESTS_PER_CLIENT);
			expect(ninth.status).toBe(429);
			expect(await ninth.text()).toContain("its share");
		} finally {
			for (const c of calls) await c.body?.cancel();
		}
		await drained();
	}, 30_000);
});

describe("the sessions' own streams filling /mcp", () => {
	it("32 clients' own streams fill the quota: a call still gets in, the oldest stream giving way, and every other stream stays open", async () => {
		const streams: Response[] = [];
		try {
			for (let i = 0; i < MAX_MCP_REQUESTS; i++) {
				const id = await session(`listener-${i}`);
				const stream = await fetch(endpoint, {
					method: "GET",
					headers: { ...headers(), accept: "text/event-stream", "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
				});
				expect(stream.status).toBe(200);
				streams.push(stream);
			}
			const id = await session("caller");
			const call = await fetch(endpoint, {
				method: "POST",
				headers: { ...headers(), "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
				body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: ASK, arguments: hold("caller") } }),
			});
			expect(call.status).toBe(200);
			const oldest = streams[0]!.body!.getReader();
			for (;;) if ((await oldest.read()).done) break;
			const second = streams[1]!.body!.getReader();
			const ended = await Promise.race([second.read().then((r) => r.done), new Promise((resolve) => setTimeout(() => resolve(false), 300))]);
			expect(ended).toBe(false);
			await second.cancel();
			await call.body?.cancel();
		} finally {
			for (const stream of streams) await stream.body?.cancel().catch(() => {});
		}
		await drained();
	}, 30_000);
});

describe("a client that never reads", () => {
	it("4 calls with the longest progress token taken, never read: once the kernel's buffers are full, each stream's unsent bytes stay within 64 KiB and one event", async () => {
		expect([MAX_PROGRESS_TOKEN_LENGTH, MCP_STREAM_BUFFER_BYTES]).toEqual([256, 64 * 1024]);
		const sockets: net.Socket[] = [];
		try {
			for (let i = 0; i < 2; i++) {
				const id = await session(`silent-${i}`);
				for (let j = 0; j < 2; j++) sockets.push(neverReading(callWithToken(id, "t".repeat(MAX_PROGRESS_TOKEN_LENGTH), `silent ${i}.${j}`)));
			}
			// One progress notification: the token, its message and the SSE framing.
			const event = MAX_PROGRESS_TOKEN_LENGTH + 400;
			const bound = sockets.length * (MCP_STREAM_BUFFER_BYTES + event);
			// Until the kernel holds no more and the host holds bytes back: at least one stream is past its bound.
			await until(() => unsentBytes(s.page.address.port) > MCP_STREAM_BUFFER_BYTES, "the clients to fall behind", 40_000);
			let most = 0;
			for (let sample = 0; sample < 40; sample++) {
				most = Math.max(most, unsentBytes(s.page.address.port));
				await new Promise((resolve) => setTimeout(resolve, 25));
			}
			expect(most).toBeGreaterThan(MCP_STREAM_BUFFER_BYTES);
			expect(most).toBeLessThanOrEqual(bound);
		} finally {
			for (const socket of sockets) socket.destroy();
		}
		await drained();
	}, 60_000);

	it("a progress token longer than 256 characters is refused with an error naming the bound, and nothing is asked", async () => {
		const id = await session("long-token");
		const before = s.handle.snapshot()!.open.length;
		const response = await fetch(endpoint, {
			method: "POST",
			headers: { ...headers(), "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 3,
				method: "tools/call",
				params: { name: ASK, arguments: hold("long token"), _meta: { progressToken: "t".repeat(MAX_PROGRESS_TOKEN_LENGTH + 1) } },
			}),
		});
		const text = await response.text();
		expect(text).toContain("_meta.progressToken is 257 characters long: at most 256 are taken");
		expect(s.handle.snapshot()!.open.length).toBe(before);
	});
});

describe("each client's share (property)", () => {
	it("any sequence of requests opened and ended by any clients: none has more than its share open, and a request is refused only when its client has its share open", () => {
		const step = fc.oneof(
			fc.record({ op: fc.constant("take" as const), client: fc.integer({ min: 0, max: 5 }) }),
			fc.record({ op: fc.constant("release" as const), index: fc.nat() }),
		);
		fc.assert(
			fc.property(fc.integer({ min: 1, max: 10 }), fc.array(step, { maxLength: 300 }), (perClient, steps) => {
				const shares = new Shares(perClient);
				const held: { client: number; release: () => void }[] = [];
				for (const s of steps) {
					if (s.op === "take") {
						const open = held.filter((h) => h.client === s.client).length;
						const release = shares.take(`c${s.client}`);
						expect(release === undefined).toBe(open >= perClient);
						if (release) held.push({ client: s.client, release });
					} else if (held.length > 0) {
						const [h] = held.splice(s.index % held.length, 1);
						h!.release();
						// Releasing twice frees one place only.
						h!.release();
					}
				}
			}),
			{ numRuns: 300 },
		);
	});
});

describe("an /mcp response to a client that never reads", () => {
	it("is read from the MCP server as it comes, so nothing queues there; past 64 KiB unsent its notifications are dropped and its responses still written; past 256 KiB unsent it is ended", async () => {
		expect(MCP_STREAM_END_BYTES).toBe(256 * 1024);
		const load = mcpLoad();
		const encoder = new TextEncoder();
		const event = (message: object) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
		const progress = event({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t".repeat(MAX_PROGRESS_TOKEN_LENGTH), progress: 1 } });
		const result = event({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "r".repeat(8_000) }] } });
		let source!: ReadableStreamDefaultController<Uint8Array>;
		const body = new ReadableStream<Uint8Array>({ start: (controller) => void (source = controller) });
		let served!: http.ServerResponse;
		const server = http.createServer((req, res) => {
			served = res;
			void sendResponse(new Response(body, { headers: { "content-type": "text/event-stream" } }), req, res, load);
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		const socket = net.connect({ host: "127.0.0.1", port: (server.address() as AddressInfo).port });
		socket.on("error", () => {});
		socket.pause();
		socket.write("GET /mcp HTTP/1.1\r\nhost: x\r\n\r\n");
		try {
			await until(() => served, "the request");
			// What the MCP server enqueues, as it does, without waiting for room: 32 MiB of progress.
			let deepest = 0;
			for (let sent = 0; sent < 32 * 1024 * 1024; sent += progress.byteLength * 64) {
				for (let i = 0; i < 64; i++) source.enqueue(progress);
				await new Promise((resolve) => setImmediate(resolve));
				deepest = Math.min(deepest, source.desiredSize ?? 0);
				expect(served.writableLength).toBeLessThanOrEqual(MCP_STREAM_BUFFER_BYTES + progress.byteLength);
			}
			expect(served.writableLength).toBeGreaterThan(MCP_STREAM_BUFFER_BYTES - progress.byteLength);
			// Read within a turn: never more queued at the MCP server than one turn's events.
			expect(deepest).toBeGreaterThanOrEqual(-64);
			const before = served.writableLength;
			source.enqueue(result);
			await until(() => served.writableLength > before || undefined, "the result to be written");
			// The event, and its chunk's framing.
			expect(served.writableLength - before).toBeGreaterThanOrEqual(result.byteLength);
			expect(served.writableLength - before).toBeLessThanOrEqual(result.byteLength + 16);
			for (let i = 0; i < 40 && !served.destroyed; i++) {
				source.enqueue(result);
				await new Promise((resolve) => setImmediate(resolve));
			}
			expect(served.destroyed).toBe(true);
		} finally {
			socket.destroy();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});

describe("an /mcp response to a client that reads (property)", () => {
	it("any events in any chunking, split anywhere (inside a character too): the client gets every event whole and in order, nothing dropped", async () => {
		let next: ReadableStream<Uint8Array> | undefined;
		const server = http.createServer((req, res) => {
			void sendResponse(new Response(next!, { headers: { "content-type": "text/event-stream" } }), req, res, mcpLoad());
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
		const message = fc.oneof(
			fc.record({
				jsonrpc: fc.constant("2.0"),
				method: fc.constant("notifications/progress"),
				params: fc.record({ message: fc.string({ unit: "grapheme" }) }),
			}),
			fc.record({ jsonrpc: fc.constant("2.0"), id: fc.nat(), result: fc.record({ text: fc.string({ unit: "grapheme" }) }) }),
		);
		const event = fc.oneof(
			message.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`),
			fc.constant(": keepalive\n\n"),
			fc.nat().map((id) => `id: ${id}\nretry: 500\ndata: \n\n`),
		);
		try {
			await fc.assert(
				fc.asyncProperty(fc.array(event, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), async (events, cuts) => {
					const bytes = new TextEncoder().encode(events.join(""));
					const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
					const chunks = [...points, bytes.length].map((end, i, all) => bytes.slice(i === 0 ? 0 : all[i - 1]!, end)).filter((c) => c.length > 0);
					next = new ReadableStream<Uint8Array>({
						start(controller) {
							for (const chunk of chunks) controller.enqueue(chunk);
							controller.close();
						},
					});
					const response = await fetch(url);
					expect(await response.text()).toBe(events.join(""));
				}),
				{ numRuns: 100 },
			);
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});
