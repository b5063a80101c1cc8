/**
 * The official MCP SDK client driving the package's bin `checkpoint-bridge-mcp` over stdio, the way
 * Claude Code, Codex or Cursor start it: a process in a working directory, on Node 22.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { NODE_BIN, REPO_ROOT } from "./pi-cli.ts";

/** The bin as package.json names it. */
export const MCP_BIN = join(REPO_ROOT, "bin/checkpoint-bridge-mcp.mjs");

export interface McpClientOptions {
	/** The working directory the client starts the server in. */
	cwd: string;
	/** The server's whole environment (nothing of the test process's leaks in). */
	env: Record<string, string>;
	/** The client's name (clientInfo.name): who asks, as the host shows it. @default "mcp-test-client" */
	name?: string;
	/** The bin's command-line arguments. @default none */
	args?: string[];
	/** Declares form elicitation and answers every form with this. @default none declared */
	elicit?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;
}

export interface McpSession {
	client: Client;
	transport: StdioClientTransport;
	/** The server process's id. */
	pid: number;
	/** What the server wrote to stderr. */
	stderr(): string;
	close(): Promise<void>;
}

/** Starts the bin and connects the SDK client to it. */
export async function startMcpClient(options: McpClientOptions): Promise<McpSession> {
	const transport = new StdioClientTransport({
		command: NODE_BIN,
		args: [MCP_BIN, ...(options.args ?? [])],
		cwd: options.cwd,
		env: options.env,
		stderr: "pipe",
	});
	let stderr = "";
	transport.stderr?.on("data", (chunk: Buffer) => {
		stderr += chunk.toString("utf8");
	});
	const client = new Client(
		{ name: options.name ?? "mcp-test-client", version: "1.0.0" },
		{ capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
	);
	if (options.elicit) {
		const answer = options.elicit;
		client.setRequestHandler(ElicitRequestSchema, (request) => answer(request));
	}
	await client.connect(transport);
	return { client, transport, pid: transport.pid!, stderr: () => stderr, close: () => client.close() };
}
