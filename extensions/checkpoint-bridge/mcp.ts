/**
 * The MCP server: agents outside pi (Claude Code, Codex, Cursor, pi's own MCP client, …) ask the
 * same human over stdio (the package's bin `checkpoint-bridge-mcp`) or over streamable HTTP at the
 * web page's `/mcp` (mcpOverHttp, mounted by index.ts through surfaces/web/http/mcp-route.ts). This
 * file only wires: the questions' schema is the pi tool's, a stdio call goes the way route.ts sends
 * any asker's (the host's local endpoint, else a NATS room), an HTTP call to the host of this
 * process, and the tools themselves are mcp/server.ts's.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { McpRequestContext } from "@modelcontextprotocol/server";
import { serveStdio as serveMcpStdio } from "@modelcontextprotocol/server/stdio";
import { nanoid } from "nanoid";
import { askViaHost } from "./core/asking/asker.ts";
import type { CallOptions } from "./core/asking/call.ts";
import { DEFAULT_CALL_TIMEOUT_MS, MAX_TIMEOUT_MS } from "./core/shared/config.ts";
import { type AskerIdentity, MAX_LABEL_LENGTH } from "./core/shared/identity.ts";
import { type SharedHandle, sharedHandle } from "./core/shared/shared-handle.ts";
import { currentStore, processStore } from "./core/store/open.ts";
import { mcpOverHttp } from "./mcp/http.ts";
import { askInputSchema } from "./mcp/schema.ts";
import { type AskService, createAskService, MCP_SESSION_PREFIX } from "./mcp/server.ts";
import { BoundedStdioTransport } from "./mcp/stdio.ts";
import type { Envelope } from "./model/result.ts";
import { capLength, sanitiseText } from "./model/sanitise.ts";
import { askAlong, chooseRoute } from "./route.ts";
import type { McpFetch } from "./surfaces/web/http/mcp-route.ts";
import { progressText } from "./tool/progress.ts";
import { AskParamsSchema } from "./tool/schema.ts";

/** The package's version, told to the client. */
const version = (): string => {
	try {
		return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }).version ?? "0.0.0";
	} catch {
		return "0.0.0";
	}
};

/**
 * Sends one call the way it goes now (transports.ts): this process is never a host, so the endpoint of
 * the pi host of this user and working directory (advertised, or named by CHECKPOINT_BRIDGE_ENDPOINT),
 * a NATS room, or none. Read per call: a host that starts later serves the next one.
 */
function askNow(options: CallOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<Envelope> {
	const handle = sharedHandle();
	return askAlong(chooseRoute({ handle, env, cwd }), options, handle);
}

/** The command line's usage, told on stderr when it is wrong. */
const USAGE = "usage: checkpoint-bridge-mcp [--cwd <directory>]  (the directory whose pi host is asked; default: the working directory)";

/** The working directory whose host is asked: `--cwd`, else the process's; undefined (told on stderr) when the command line is wrong. */
function workingDirectory(argv: string[]): string | undefined {
	try {
		const { values } = parseArgs({ args: argv, options: { cwd: { type: "string" } }, strict: true, allowPositionals: false });
		const cwd = path.resolve(values.cwd ?? process.cwd());
		if (!statSync(cwd).isDirectory()) throw new Error(`${cwd} is not a directory`);
		return cwd;
	} catch (error) {
		process.stderr.write(`checkpoint-bridge-mcp: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
		return undefined;
	}
}

/** The mark of an MCP client at the host (core/shared/identity.ts, AskerKind): its late answer never starts a turn of the host's model. */
const MCP_KIND = { kind: "mcp" } as const;

/** The client's own name as the host shows it: neutralised, one line, cut; "MCP client" when it gave none. */
export function clientName(name: string): string {
	const tidy = sanitiseText(name).replace(/\s+/g, " ").trim();
	return capLength(tidy || "MCP client", MAX_LABEL_LENGTH - 16);
}

/** The tools over stdio for one process: one asker session, labelled with the client's name and the project it asks from. */
function stdioService(env: NodeJS.ProcessEnv, cwd: string): AskService {
	const sessionId = `${MCP_SESSION_PREFIX}${nanoid()}`;
	const project = capLength(sanitiseText(path.basename(cwd)).replace(/\s+/g, " ").trim(), 16);
	return createAskService({
		askInputSchema: askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, DEFAULT_CALL_TIMEOUT_MS),
		ask: (options) => askNow(options, env, cwd),
		askerFor: (name) => ({ label: project ? `${clientName(name)} in ${project}` : clientName(name), sessionId, ...MCP_KIND }),
		progressText,
		version: version(),
		env,
		// The host is in another process: a queued call outlives this one, and a wait finds another process's in the store.
		queuedOutlives: true,
		stored: () => {
			const opened = processStore(cwd, env);
			return opened.ok ? opened.store : undefined;
		},
	});
}

/** Longest a server that ends waits for the host to take its queued calls. @default 10000 */
const QUEUED_TAKEN_MS = 10_000;

/**
 * Serves MCP on stdin/stdout, either era, until the client goes away (stdin ends, or a signal):
 * then every waiting call is cancelled at the host, so its dialog closes, and the process ends once
 * the host has taken its queued calls (wait: false), which stay open there for a later process's wait.
 */
export async function serveStdio(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
	const cwd = workingDirectory(argv);
	if (cwd === undefined) process.exit(2);
	const service = stdioService(env, cwd);
	const transport = new BoundedStdioTransport();
	const served = serveMcpStdio((unit) => service.factory(unit), { transport, onerror: () => {} });
	let closing = false;
	const goAway = () => {
		if (closing) return;
		closing = true;
		// The waiting calls' cancels are on their way to the host's socket: let them be written, then end.
		void Promise.all([served.close(), service.queuedTaken(QUEUED_TAKEN_MS)]).finally(() => setTimeout(() => process.exit(0), 100));
	};
	process.stdin.on("end", goAway);
	process.stdin.on("close", goAway);
	for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, goAway);
}

/** Who an HTTP caller is: the client's name and the address it connects from (through the page's proxy, when it says so). */
function httpAsker(name: string, unit: McpRequestContext): AskerIdentity {
	const from = String(unit.authInfo?.clientId ?? "unknown");
	const where = unit.authInfo?.extra?.proxied ? `${from} via the page's proxy` : from;
	const label = `${clientName(name)} from ${capLength(sanitiseText(where), 40)}`;
	// One asker session per client name and address: its calls count together at the host, and its queued requests are its own.
	const digest = createHash("sha256").update(`${name}\0${from}`).digest("base64url").slice(0, 16);
	return { label, sessionId: `${MCP_SESSION_PREFIX}http-${digest}`, ...MCP_KIND };
}

/**
 * The MCP endpoint of the web page's `/mcp` (surfaces/web/http/mcp-route.ts), in the host's own process:
 * a call goes to the host of this process over the bus, like the host's own model's.
 */
export function httpEndpoint(handle: SharedHandle, env: NodeJS.ProcessEnv = process.env, options: { progressEveryMs?: number } = {}): McpFetch {
	const service = createAskService({
		...options,
		askInputSchema: askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, DEFAULT_CALL_TIMEOUT_MS),
		ask: (options) => askViaHost({ handle, ...options }),
		askerFor: httpAsker,
		progressText,
		version: version(),
		env,
		stored: currentStore,
	});
	// Queued questions outlive a connection over HTTP (a 2026 client has none): each ends by its budget, or is waited for again.
	const http = mcpOverHttp(service);
	return (request, caller) => http.fetch(request, { token: "page", clientId: caller.address, scopes: [], extra: { proxied: caller.proxied } });
}
