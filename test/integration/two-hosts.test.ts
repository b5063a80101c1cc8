/**
 * Two real pi hosts (`pi --mode rpc`) in one working directory: the later is advertised; when it
 * quits, the directory's advertisement falls back to the first, still running, and the MCP server
 * (the official SDK client over stdio, no checkpoint-bridge variable) finds it: its question is
 * answered there, not `no-host`.
 */
import { existsSync, readFileSync } from "node:fs";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { advertDir, advertPath } from "../../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { until } from "../support/until.ts";
import { type McpSession, startMcpClient } from "./harness/mcp-client.ts";
import { createPiEnv, type PiEnv, PiRpc } from "./harness/pi-cli.ts";

describe("two hosts in one directory", () => {
	let piEnv: PiEnv | undefined;
	const hosts: PiRpc[] = [];
	let session: McpSession | undefined;
	afterAll(async () => {
		await session?.close().catch(() => {});
		await Promise.all(hosts.map((h) => h.close()));
		piEnv?.cleanup();
	});

	it("the later quits: the advertisement falls back to the first, still running, and the MCP server's question is answered there", async () => {
		piEnv = createPiEnv();
		const env = piEnv;
		const advertised = () => {
			const file = advertPath(advertDir(env.env.TMPDIR!), env.cwd);
			return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { pid: number }).pid : undefined;
		};
		const first = PiRpc.start(env, { args: ["--name", "first-host"] });
		hosts.push(first);
		await until(() => advertised() === first.pid, "the first host's advertisement", 90_000, 50);
		const second = PiRpc.start(env, { args: ["--name", "second-host"] });
		hosts.push(second);
		await until(() => advertised() === second.pid, "the second host's advertisement", 90_000, 50);
		await second.close();
		expect(advertised()).toBe(first.pid);

		session = await startMcpClient({ cwd: env.cwd, env: { PATH: env.env.PATH!, HOME: env.env.HOME!, TMPDIR: env.env.TMPDIR! }, name: "claude-code" });
		const start = first.mark();
		const call = session.client.callTool({ name: "ask_user_via_host", arguments: { questions: [{ question: "Ship it?", options: ["yes", "no"] }] } });
		const dialog = await first.waitForDialog({ from: start, timeoutMs: 30_000, what: "the MCP client's question at the first host" });
		first.answer(dialog, "yes");
		const result = (await call) as CallToolResult;
		expect(result.structuredContent).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
	});
});
