/**
 * An MCP client that asked with `wait: false` and ended (ADR-0033, docs/tool.md resume): the official
 * MCP SDK client over stdio (the package's bin) asks, and its process ends; a later client, another
 * process, waits on the id and gets the envelope, whether the host (`pi --mode rpc`) was SIGKILLed
 * and started again in the same directory and state directory between, or not.
 */
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { type McpSession, startMcpClient } from "./harness/mcp-client.ts";
import { createPiEnv, hostEndpoint, isAnswerMessage, isDialog, type PiEnv, PiRpc } from "./harness/pi-cli.ts";

const ASK = "ask_user_via_host";
const COLLECT = "wait_for_host_answers";
const DIALOG_MS = 90_000;

function envelopeOf(result: CallToolResult | Record<string, unknown>): Record<string, any> {
	const text = ((result as CallToolResult).content?.[0] as { text?: string } | undefined)?.text;
	return JSON.parse(text ?? "{}");
}

describe("an MCP client's wait: false question outlives the client, and the host", () => {
	let piEnv: PiEnv | undefined;
	const hosts: PiRpc[] = [];
	const sessions: McpSession[] = [];
	afterEach(async () => {
		for (const session of sessions.splice(0)) await session.close().catch(() => {});
		for (const host of hosts.splice(0)) await host.close();
		piEnv?.cleanup();
		piEnv = undefined;
	});

	const startHost = (name: string) => {
		const host = PiRpc.start(piEnv!, { args: ["--name", name] });
		hosts.push(host);
		return host;
	};
	const client = async (name: string) => {
		const env = piEnv!.env;
		const session = await startMcpClient({
			cwd: piEnv!.cwd,
			env: { PATH: env.PATH!, HOME: env.HOME!, TMPDIR: env.TMPDIR!, CHECKPOINT_BRIDGE_STATE_DIR: env.CHECKPOINT_BRIDGE_STATE_DIR! },
			name,
		});
		sessions.push(session);
		return session;
	};
	/** A client asks with wait: false and its process ends once the host shows the question; the receipt's id. */
	async function askAndEnd(host: PiRpc): Promise<string> {
		const first = await client("codex");
		const start = host.mark();
		const receipt = envelopeOf(
			await first.client.callTool({ name: ASK, arguments: { questions: [{ question: "Which cache?", options: ["redis", "memcached"] }], wait: false } }),
		);
		expect(receipt).toMatchObject({ status: "queued", requestId: expect.any(String) });
		await host.waitForDialog({ from: start, timeoutMs: DIALOG_MS });
		await first.close();
		return receipt.requestId as string;
	}
	/** A new client process's wait on `requestId`. */
	async function laterWait(requestId: string) {
		const second = await client("codex");
		return envelopeOf(await second.client.callTool({ name: COLLECT, arguments: { requestIds: [requestId], timeoutMs: 10_000 } }));
	}
	const fresh = () => {
		piEnv = createPiEnv();
		piEnv.env.CHECKPOINT_BRIDGE_STATE_DIR = join(piEnv.root, "state");
	};

	it("client 1 asks with wait: false and ends; the host is SIGKILLed and started again in the same directory: the question comes back under its id, is answered once, and client 2 (a new process) waits on the id and gets the envelope", async () => {
		fresh();
		const first = startHost("host");
		await hostEndpoint(piEnv!);
		const requestId = await askAndEnd(first);
		first.kill("SIGKILL");
		await first.exited;

		const second = startHost("host-again");
		const dialog = await second.waitForDialog({ timeoutMs: DIALOG_MS });
		expect(String(dialog.title)).toMatch(/asked before the restart\] Which cache\?$/);
		second.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("redis"))!);
		await second.waitFor(isAnswerMessage, { what: "the answer forwarded to the host's session" });

		const waited = await laterWait(requestId);
		expect(waited).toMatchObject({ status: "ok", open: [], ended: [{ requestId, status: "ok", answers: [{ question: "Which cache?", answer: "redis" }] }] });
		expect(second.frames.filter(isDialog)).toHaveLength(1);
		// Kept until it expires: a wait after that gets it again.
		expect((await laterWait(requestId)).ended).toMatchObject([{ requestId, status: "ok" }]);
	});

	it("client 1 asks with wait: false and ends; the same host answers it: client 2 (a new process) waits on the id and gets the envelope", async () => {
		fresh();
		const host = startHost("host");
		await hostEndpoint(piEnv!);
		const requestId = await askAndEnd(host);
		const dialog = host.frames.filter(isDialog).at(-1)!;
		// The client is gone and its question is still open: answering it is not refused.
		host.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("memcached"))!);
		await host.waitFor(isAnswerMessage, { what: "the answer forwarded to the host's session" });
		const waited = await laterWait(requestId);
		expect(waited).toMatchObject({
			status: "ok",
			open: [],
			ended: [{ requestId, status: "ok", answers: [{ question: "Which cache?", answer: "memcached" }] }],
		});
	});
});
