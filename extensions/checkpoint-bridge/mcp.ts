/**
 * The MCP server of the package's bin `checkpoint-bridge-mcp`: agents outside pi (Claude Code,
 * Codex, Cursor, …) ask the same human over stdio. This file only wires: the questions' schema is
 * the pi tool's, a call goes the way route.ts sends any asker's (the host's local endpoint, else a
 * NATS room), and the tools themselves are mcp/server.ts's.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallOptions } from "./core/call.ts";
import { DEFAULT_CALL_TIMEOUT_MS, MAX_TIMEOUT_MS } from "./core/config.ts";
import { sharedHandle } from "./core/shared-handle.ts";
import { askInputSchema } from "./mcp/schema.ts";
import { createAskServer } from "./mcp/server.ts";
import type { Envelope } from "./model/result.ts";
import { askAlong, chooseRoute } from "./route.ts";
import { progressText } from "./tool/progress.ts";
import { AskParamsSchema } from "./tool/schema.ts";
import { findHostEndpoint } from "./transports/local/index.ts";
import { readNatsConfig } from "./transports/nats/config.ts";

/** The NATS transport, loaded only when CHECKPOINT_BRIDGE_NATS is set. */
const loadNats = () => import("./transports/nats/index.ts");

/** The package's version, told to the client. */
const version = (): string => {
	try {
		return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }).version ?? "0.0.0";
	} catch {
		return "0.0.0";
	}
};

/**
 * Sends one call the way it goes now: this process is never a host, so the endpoint of the pi host
 * of this user and working directory (advertised, or named by CHECKPOINT_BRIDGE_ENDPOINT), a NATS
 * room, or none. Read per call: a host that starts later serves the next one.
 */
function askNow(options: CallOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<Envelope> {
	const route = chooseRoute({ hostHere: false, endpoint: findHostEndpoint({ env, cwd }), nats: readNatsConfig(env) });
	return askAlong(route, options, { handle: sharedHandle(), loadNats });
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

/**
 * Serves MCP on stdin/stdout until the client goes away (stdin ends, or a signal): then every call
 * still open is cancelled at the host, so its dialog closes, and the process ends.
 */
export async function serveStdio(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
	const cwd = workingDirectory(argv);
	if (cwd === undefined) process.exit(2);
	const server = createAskServer({
		askInputSchema: askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, DEFAULT_CALL_TIMEOUT_MS),
		ask: (options) => askNow(options, env, cwd),
		progressText,
		version: version(),
		env,
		// The cancels are on their way to the host's socket: let them be written, then end.
		onClosed: () => setTimeout(() => process.exit(0), 100),
	});
	const goAway = () => void server.close();
	process.stdin.on("end", goAway);
	process.stdin.on("close", goAway);
	for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, goAway);
	await server.connect(new StdioServerTransport());
}
