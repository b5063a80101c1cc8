/**
 * Figure 10: a question's round trip from an MCP client to an answer given in the host's process,
 * over both transports. This process holds the host role with a UI that answers at once, serves the
 * process endpoint (the local Unix socket) and the web page with its `/mcp`. Over stdio the SDK
 * clients start the package's bin `checkpoint-bridge-mcp` with the endpoint in its environment (the
 * v1 client, 2025 revisions; the v2 client pinned to 2026-07-28); over HTTP the v2 client calls the
 * page's `/mcp` with its token (2026-07-28, and the 2025 era). Each times `tools/call` of
 * ask_user_via_host from the call to its result, one call at a time. The same questions asked in
 * this process through askViaHost are the baseline. Prints one JSON document on stdout.
 */
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asking/asker.ts";
import { httpEndpoint } from "../extensions/checkpoint-bridge/mcp.ts";
import { offerMcpRoute } from "../extensions/checkpoint-bridge/surfaces/web/http/mcp-route.ts";
import { startWebPage } from "../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { closeProcessEndpoint, ensureProcessEndpoint } from "../extensions/checkpoint-bridge/transports/local/index.ts";
import { OPTIONS, sequential } from "./ask-loop.mjs";
import { answeringHost } from "./asker-process.mjs";
import { summary } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const WARMUP = 100;
const CALLS = 500;

const host = answeringHost();
const { handle, role } = host;
const childEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TMPDIR: process.env.TMPDIR ?? "/tmp" };
await ensureProcessEndpoint(handle, { env: childEnv });

const bin = { command: process.execPath, args: [join(here, "../bin/checkpoint-bridge-mcp.mjs")], env: childEnv, stderr: "inherit" };
offerMcpRoute(async () => httpEndpoint(handle));
const page = await startWebPage({ handle, address: { host: "127.0.0.1", port: 0, loopback: true } });
const url = new URL(page.url);
const token = url.pathname.split("/")[2];
const http = () => new StreamableHTTPClientTransport(new URL(`${url.origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
const v2 = (mode) => new ClientV2({ name: "bench-client", version: "1" }, { versionNegotiation: { mode } });

/** Each way an MCP client asks: its client, connected. */
const ways = {
	stdio2025: [new Client({ name: "bench-client", version: "1" }), new StdioClientTransport(bin)],
	stdio2026: [v2({ pin: "2026-07-28" }), new StdioV2(bin)],
	http2025: [v2("legacy"), http()],
	http2026: [v2({ pin: "2026-07-28" }), http()],
};
for (const [client, transport] of Object.values(ways)) await client.connect(transport);
host.tag = "[bench-client";

/** One MCP call of step `step` by `client`; its answer checked as ask-loop checks every call. */
async function viaMcp(client, step) {
	const started = performance.now();
	const result = await client.callTool({ name: "ask_user_via_host", arguments: { questions: [{ question: `Proceed with step ${step}?`, options: OPTIONS }] } });
	const micros = (performance.now() - started) * 1000;
	const envelope = result.structuredContent;
	if (envelope?.status !== "ok" || envelope.answers[0]?.answer !== OPTIONS[step & 1])
		throw new Error(`step ${step}: settled as ${envelope?.status} with ${JSON.stringify(envelope?.answers)} (${envelope?.note ?? "no note"})`);
	return micros;
}

const latencies = {};
for (const [name, [client]] of Object.entries(ways)) {
	for (let step = 0; step < WARMUP; step++) await viaMcp(client, step);
	latencies[name] = [];
}
await sequential((options) => askViaHost({ handle, ...options }), WARMUP);
// Interleaved in blocks, so a busy stretch of the machine falls on every way alike.
for (let block = 0; block < 5; block++)
	for (const [name, [client]] of Object.entries(ways)) for (let step = 0; step < CALLS / 5; step++) latencies[name].push(await viaMcp(client, step));
const inProcess = await sequential((options) => askViaHost({ handle, ...options }), CALLS);

const local = summary(inProcess.latenciesUs);
const byWay = Object.fromEntries(Object.entries(latencies).map(([name, us]) => [name, summary(us)]));
const expected = (WARMUP + CALLS) * Object.keys(ways).length;
if (host.tagged !== expected) throw new Error(`${host.tagged} dialogs named the MCP client, ${expected} expected`);
for (const [client] of Object.values(ways)) await client.close();
await page.close();
await closeProcessEndpoint();
role.release("quit");
console.log(
	JSON.stringify({
		calls: CALLS,
		mcpUs: byWay.stdio2025,
		ways: byWay,
		inProcessUs: local,
		addedP50Us: byWay.stdio2025.p50 - local.p50,
	}),
);
