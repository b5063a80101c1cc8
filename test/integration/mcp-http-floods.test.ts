/**
 * Floods at the page's `/mcp` against one real `pi --mode rpc` host that serves the page, with the
 * official SDK clients: a flood of new sessions while a genuine 2025 client's question is on the
 * host's screen, and 8 client names × 12 waiting calls while the human opens the page, its stream and
 * a request's link. The human's ways in stay open; every call settles or waits, none is cut off.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_ANNOUNCEMENT } from "../support/page-link.ts";
import { until } from "../support/until.ts";
import { createPiEnv, isNotify, type PiEnv, PiRpc } from "./harness/pi-cli.ts";

const ASK = "ask_user_via_host";

let piEnv: PiEnv;
let pi: PiRpc;
let page: URL;
let token: string;
let endpoint: string;

beforeAll(async () => {
	piEnv = createPiEnv({ env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" } });
	pi = PiRpc.start(piEnv, { args: ["--name", "flood-host"] });
	await pi.command("get_state", {}, 90_000);
	const mark = pi.mark();
	await pi.prompt("/checkpoints");
	const report = await pi.waitFor((f) => isNotify(f) && PAGE_ANNOUNCEMENT.test(String(f.message)), { from: mark, what: "the page's link" });
	page = new URL(PAGE_ANNOUNCEMENT.exec(String(report.message))![1]!);
	token = page.pathname.split("/")[2]!;
	endpoint = `${page.origin}/mcp`;
}, 120_000);

afterAll(async () => {
	await pi?.close();
	piEnv?.cleanup();
});

const requestInit = () => ({ headers: { authorization: `Bearer ${token}` } });
const structured = (result: unknown) => (result as { structuredContent: Record<string, any> }).structuredContent;

async function legacyV2(name: string) {
	const client = new ClientV2({ name, version: "1" }, { versionNegotiation: { mode: "legacy" } });
	client.onerror = () => {};
	await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: requestInit() }));
	return client;
}

/** Opens a 2025 session by plain fetch; its status. */
async function initialize(name: string): Promise<number> {
	const response = await fetch(endpoint, {
		method: "POST",
		headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
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

/**
 * Calls per client: 96 at once, three times /mcp's quota of 32. Each is a connection of its own, and
 * with the clients' earlier ones they stay within the page's 128 TCP connections: past those, the
 * oldest idle connection is destroyed by design (docs/web-page.md, "Under load"), a keep-alive one
 * the client may be sending a call on at that moment.
 */
const CALLS_PER_CLIENT = 12;

describe("floods at /mcp, a real pi host", () => {
	it("64 initializes in 1.4 s while a genuine 2025 client's question is on the host's screen: its session is kept, and its call gets the answer given there", async () => {
		const client = await legacyV2("codex");
		try {
			const start = pi.mark();
			const call = client.callTool({ name: ASK, arguments: { questions: [{ question: "Keep my session?", kind: "confirm" }] } });
			const dialog = await pi.waitForDialog({ from: start, timeoutMs: 30_000, what: "the genuine client's dialog" });
			expect(String(dialog.title)).toContain("Keep my session?");
			const statuses: number[] = [];
			for (let batch = 0; batch < 8; batch++) {
				statuses.push(...(await Promise.all(Array.from({ length: 8 }, (_, j) => initialize(`flood-${batch}.${j}`)))));
				await new Promise((resolve) => setTimeout(resolve, 175));
			}
			expect(statuses.filter((status) => status !== 200)).toEqual([]);
			pi.answer(dialog, "Yes");
			expect(structured(await call)).toMatchObject({ status: "ok", answers: [{ answer: "yes", kind: "confirm" }] });
		} finally {
			await client.close();
		}
	}, 90_000);

	it("8 client names × 12 waiting calls: the page, its live stream and a request's link are served; every call past the quota is refused 429 naming its limit, none reset", async () => {
		const clients = await Promise.all(
			Array.from({ length: 8 }, async (_, i) => {
				if (i % 2 === 0) return legacyV2(`crowd-${i}`);
				const v1 = new ClientV1({ name: `crowd-${i}`, version: "1" });
				await v1.connect(new HttpV1(new URL(endpoint), { requestInit: requestInit() }));
				v1.onerror = () => {};
				return v1;
			}),
		);
		const refused: string[] = [];
		let settledOk = 0;
		try {
			clients.forEach((client, i) => {
				for (let j = 0; j < CALLS_PER_CLIENT; j++)
					(client as ClientV2).callTool({ name: ASK, arguments: { questions: [{ question: `Wait ${i}.${j}?`, kind: "confirm" }] } }).then(
						() => settledOk++,
						(error: unknown) => refused.push(error instanceof Error ? error.message : String(error)),
					);
			});
			await until(() => refused.length >= 8 * CALLS_PER_CLIENT - 32, "the calls past the quota to be refused", 30_000);
			for (const message of refused) {
				expect(message).toMatch(/Too Many Requests/);
				expect(message).not.toMatch(/ECONNRESET|fetch failed|socket/i);
			}
			const html = await fetch(page);
			expect(html.status).toBe(200);
			await html.text();
			// The page's stream: its first state names the waiting requests, each with its own link.
			const events = await fetch(new URL("events", page), { signal: AbortSignal.timeout(10_000) });
			expect(events.status).toBe(200);
			const reader = events.body!.getReader();
			let text = "";
			while (!text.includes("\n\n")) text += new TextDecoder().decode((await reader.read()).value);
			await reader.cancel();
			const state = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as { cards: { link?: string }[] };
			expect(state.cards.length).toBeGreaterThan(0);
			const link = state.cards.find((c) => c.link)!.link!;
			const linked = await fetch(new URL(link, page.origin));
			expect(linked.status).toBe(200);
			await linked.text();
			expect(settledOk).toBe(0);
		} finally {
			await Promise.all(clients.map((c) => c.close().catch(() => {})));
		}
	}, 120_000);
});
