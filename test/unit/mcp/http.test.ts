/**
 * The page's `/mcp` in this process: a real web page with a host on a programmatic UI. Each refusal
 * of the page's rules, and random requests (fast-check): never a crash, never a 5xx, never a
 * question that reached the host from a request that was refused; the endpoint serves on.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { httpEndpoint } from "../../../extensions/checkpoint-bridge/mcp.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { offerMcpRoute } from "../../../extensions/checkpoint-bridge/surfaces/web/http/mcp-route.ts";
import { startWebPage, type WebPage } from "../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { type FakeDialog, fakeUI } from "../support/fake-ui.ts";

let page: WebPage;
let endpoint: string;
let token: string;
let dialogs: FakeDialog[] = [];

beforeAll(async () => {
	const handle = createHandle();
	// Held questions stay open until the test ends them; every other is answered at once.
	const fake = fakeUI({ respond: (d) => (d.title.includes("Hold") ? undefined : d.answer("Yes")) });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
	// The first offer in a process stands: a file before this one in the same process (the mutation run's) may have offered the process handle's.
	const slot = (globalThis as Record<symbol, { load?: unknown } | undefined>)[Symbol.for("checkpoint-bridge.web.mcp")];
	if (slot) slot.load = undefined;
	offerMcpRoute(async () => httpEndpoint(handle, {}));
	page = await startWebPage({ handle, address: { host: "127.0.0.1", port: 0, loopback: true } });
	const url = new URL(page.url);
	token = url.pathname.split("/")[2]!;
	endpoint = `${url.origin}/mcp`;
	dialogs = fake.dialogs;
});
afterAll(() => page?.close());

const asked = () => dialogs.length;

describe("/mcp", () => {
	it("a client with the token asks, and the host's dialog names it and its address", async () => {
		const client = new Client({ name: "unit-http", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
		await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
		const result = await client.callTool({ name: "ask_user_via_host", arguments: { questions: [{ question: "Go?", kind: "confirm" }] } });
		expect(result.structuredContent).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		expect(dialogs.at(-1)!.title).toBe("[unit-http from 127.0.0.1] Go?");
		await client.close();
	});

	it.each([
		["2026-07-28", { pin: "2026-07-28" }],
		["the 2025 era", "legacy"],
	] as const)("a call the client cancels (%s) closes the host's dialog", async (_era, mode) => {
		const client = new Client({ name: "unit-cancel", version: "1" }, { versionNegotiation: { mode } });
		await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
		const abort = new AbortController();
		const call = client.callTool(
			{ name: "ask_user_via_host", arguments: { questions: [{ question: "Hold on?", kind: "confirm" }] } },
			{ signal: abort.signal },
		);
		for (let i = 0; i < 200 && !dialogs.at(-1)?.title.includes("Hold on?"); i++) await new Promise((resolve) => setTimeout(resolve, 10));
		const held = dialogs.at(-1)!;
		expect(held.title).toBe("[unit-cancel from 127.0.0.1] Hold on?");
		abort.abort();
		await expect(call).rejects.toThrow();
		for (let i = 0; i < 200 && held.closedBy === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10));
		expect(held.closedBy).toBe("signal");
		await client.close();
	});

	it("each refusal past the page's checks: a body over 1 MiB 413, an unknown 2025 session 404, a 2025 request without a session 400; none asks the host", async () => {
		const before = asked();
		const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
		const call = JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "tools/call",
			params: { name: "ask_user_via_host", arguments: { questions: [{ question: "x".repeat(2 * 1024 * 1024), kind: "confirm" }] } },
		});
		const big = await fetch(endpoint, { method: "POST", headers, body: call });
		expect(big.status).toBe(413);
		const small = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
		const unknown = await fetch(endpoint, { method: "POST", headers: { ...headers, "mcp-session-id": "no-such-session" }, body: small });
		expect(unknown.status).toBe(404);
		const sessionless = await fetch(endpoint, { method: "GET", headers });
		expect(sessionless.status).toBe(400);
		for (const response of [big, unknown, sessionless]) await response.body?.cancel();
		expect(asked()).toBe(before);
	});

	it("random requests (property): never a 5xx, never a question asked without the token, and the endpoint serves on", async () => {
		const body = fc.oneof(
			fc.string({ maxLength: 200 }),
			fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
			fc.constant(
				JSON.stringify({
					jsonrpc: "2.0",
					id: 1,
					method: "tools/call",
					params: { name: "ask_user_via_host", arguments: { questions: [{ question: "Forged?", kind: "confirm" }] } },
				}),
			),
		);
		const request = fc.record({
			method: fc.constantFrom("GET", "POST", "DELETE", "PUT", "OPTIONS"),
			auth: fc.oneof(
				fc.constant(undefined),
				fc.constant("valid"),
				fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
			),
			origin: fc.oneof(fc.constant(undefined), fc.constant("https://evil.example"), fc.webUrl()),
			contentType: fc.constantFrom("application/json", "text/plain", undefined),
			accept: fc.constantFrom("application/json, text/event-stream", "text/html", undefined),
			session: fc.oneof(fc.constant(undefined), fc.uuid()),
			body,
		});
		await fc.assert(
			fc.asyncProperty(request, async (r) => {
				const before = asked();
				const headers: Record<string, string> = {};
				if (r.auth) headers.authorization = r.auth === "valid" ? `Bearer ${token}` : r.auth;
				if (r.origin) headers.origin = r.origin;
				if (r.contentType) headers["content-type"] = r.contentType;
				if (r.accept) headers.accept = r.accept;
				if (r.session) headers["mcp-session-id"] = r.session;
				const response = await fetch(endpoint, {
					method: r.method,
					headers,
					...(r.method === "GET" ? {} : { body: r.body }),
					signal: AbortSignal.timeout(10_000),
				});
				await response.body?.cancel();
				expect(response.status, JSON.stringify(r).slice(0, 300)).toBeLessThan(500);
				if (r.auth !== "valid" || (r.origin !== undefined && !r.origin.startsWith(new URL(endpoint).origin))) {
					expect([401, 403]).toContain(response.status);
					expect(asked()).toBe(before);
				}
			}),
			{ numRuns: 150 },
		);
		const ping = await fetch(endpoint, {
			method: "POST",
			headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 1,
				method: "initialize",
				params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "after", version: "1" } },
			}),
		});
		expect(ping.status).toBe(200);
		await ping.body?.cancel();
	}, 120_000);
});
