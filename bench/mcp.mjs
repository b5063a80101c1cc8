/**
 * Figure 10: a question's round trip from an MCP client to an answer given in the host's process.
 * This process holds the host role with a UI that answers at once and serves the process endpoint
 * (the local Unix socket); the official SDK client starts the package's bin `checkpoint-bridge-mcp`
 * over stdio with the endpoint in its environment and times `tools/call` of ask_user_via_host from
 * the call to its result, one call at a time. The same questions asked in this process through
 * askViaHost are the baseline. Prints one JSON document on stdout.
 */
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asker.ts";
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

const transport = new StdioClientTransport({
	command: process.execPath,
	args: [join(here, "../bin/checkpoint-bridge-mcp.mjs")],
	env: childEnv,
	stderr: "inherit",
});
const client = new Client({ name: "bench-client", version: "1" });
await client.connect(transport);
host.tag = "[bench-client";

/** One MCP call of step `step`; its answer checked as ask-loop checks every call. */
async function viaMcp(step) {
	const started = performance.now();
	const result = await client.callTool({ name: "ask_user_via_host", arguments: { questions: [{ question: `Proceed with step ${step}?`, options: OPTIONS }] } });
	const micros = (performance.now() - started) * 1000;
	const envelope = result.structuredContent;
	if (envelope?.status !== "ok" || envelope.answers[0]?.answer !== OPTIONS[step & 1])
		throw new Error(`step ${step}: settled as ${envelope?.status} with ${JSON.stringify(envelope?.answers)} (${envelope?.note ?? "no note"})`);
	return micros;
}

for (let step = 0; step < WARMUP; step++) await viaMcp(step);
await sequential((options) => askViaHost({ handle, ...options }), WARMUP);
const mcpUs = [];
for (let step = 0; step < CALLS; step++) mcpUs.push(await viaMcp(step));
const inProcess = await sequential((options) => askViaHost({ handle, ...options }), CALLS);

const mcp = summary(mcpUs);
const local = summary(inProcess.latenciesUs);
if (host.tagged !== WARMUP + CALLS) throw new Error(`${host.tagged} dialogs named the MCP client, ${WARMUP + CALLS} expected`);
await client.close();
await closeProcessEndpoint();
role.release("quit");
console.log(JSON.stringify({ calls: CALLS, mcpUs: mcp, inProcessUs: local, addedP50Us: mcp.p50 - local.p50 }));
