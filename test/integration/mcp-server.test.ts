/**
 * The MCP server (bin `checkpoint-bridge-mcp`) driven by the official MCP SDK client over stdio, the
 * way an agent outside pi starts it: in the working directory of a real `pi --mode rpc` host of the
 * same user, with no checkpoint-bridge variable in its environment. It finds the host through the
 * host's advertisement for that directory; the host's dialog names the client. Without a host: the
 * client's own form (elicitation), else `no-host` at once.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MCP_BIN, type McpSession, startMcpClient } from "./harness/mcp-client.ts";
import { NATS_SERVER_MISSING, roomServedAt, startNatsServer } from "./harness/nats-server.ts";
import { createPiEnv, type Frame, hostEndpoint, isNotify, NODE_BIN, type PiEnv, PiRpc, REPO_ROOT } from "./harness/pi-cli.ts";

const ASK = "ask_user_via_host";
const COLLECT = "wait_for_host_answers";

/** A remote asker's dialog title: `[<label> (pid N)] <question>`. */
const REMOTE_TITLE = /^\[(.+) \(pid (\d+)\)\] (.+)$/;

/** What a user's own shell passes any program: nothing of checkpoint-bridge. */
const userEnv = (piEnv: PiEnv): Record<string, string> => ({ PATH: piEnv.env.PATH!, HOME: piEnv.env.HOME!, TMPDIR: piEnv.env.TMPDIR! });

/** The envelope a tool result carries, checked to be the same as structured content and as text. */
function envelopeOf(result: CallToolResult | Record<string, unknown>): Record<string, any> {
	const r = result as CallToolResult;
	const text = (r.content?.[0] as { text?: string } | undefined)?.text;
	expect(JSON.parse(text ?? "null")).toEqual(r.structuredContent);
	return r.structuredContent as Record<string, any>;
}

/** Who an MCP client over stdio is to the host: its name, and the project (directory) it asks from. */
const inProject = (name: string, cwd: string) => `${name} in ${basename(cwd).length > 16 ? `${basename(cwd).slice(0, 15)}…` : basename(cwd)}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The socket inodes a process listens on (TCP, TCP6, UDP, Unix), from /proc. */
function listeningSockets(pid: number): string[] {
	const inodes = new Set<string>();
	for (const fd of readdirSync(`/proc/${pid}/fd`)) {
		try {
			const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
			if (match) inodes.add(match[1]!);
		} catch {
			// closed meanwhile
		}
	}
	const listening: string[] = [];
	for (const table of ["tcp", "tcp6"]) {
		for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
			const cols = line.trim().split(/\s+/);
			if (cols[3] === "0A" && inodes.has(cols[9]!)) listening.push(`${table} ${cols[1]}`);
		}
	}
	for (const line of readFileSync(`/proc/${pid}/net/unix`, "utf8").split("\n").slice(1)) {
		const cols = line.trim().split(/\s+/);
		// Flags 00010000: __SO_ACCEPTON, a listening socket.
		if (cols[3] === "00010000" && inodes.has(cols[6]!)) listening.push(`unix ${cols[7] ?? ""}`);
	}
	return listening;
}

describe("the MCP server with a real pi host of the same user and directory", () => {
	// One host for every test: each leaves it with no dialog open, and waits only for frames after its own mark.
	let piEnv: PiEnv | undefined;
	let pi: PiRpc | undefined;
	const sessions: McpSession[] = [];

	beforeAll(async () => {
		piEnv = createPiEnv();
		pi = PiRpc.start(piEnv, { args: ["--name", "rpc-host"] });
		await hostEndpoint(piEnv);
	});
	afterEach(async () => {
		await Promise.all(sessions.splice(0).map((s) => s.close().catch(() => {})));
	});
	afterAll(async () => {
		await pi?.close();
		piEnv?.cleanup();
	});

	async function hostAndClient(name: string, options: { elicit?: Parameters<typeof startMcpClient>[0]["elicit"] } = {}) {
		const session = await client(name, options);
		return { pi: pi!, session };
	}

	async function client(name: string, options: { elicit?: Parameters<typeof startMcpClient>[0]["elicit"] } = {}) {
		const session = await startMcpClient({ cwd: piEnv!.cwd, env: userEnv(piEnv!), name, ...options });
		sessions.push(session);
		return session;
	}

	/** The next dialog of a remote asker, its title parsed. */
	async function remoteDialog(from: number, what = "the MCP client's dialog"): Promise<{ dialog: Frame; label: string; pid: number; question: string }> {
		const dialog = await pi!.waitForDialog({ from, timeoutMs: 30_000, what });
		const match = REMOTE_TITLE.exec(String(dialog.title));
		expect(match, `a remote asker's title: ${dialog.title}`).not.toBeNull();
		return { dialog, label: match![1]!, pid: Number(match![2]), question: match![3]! };
	}

	/**
	 * Another client's question, asked after `from`: shown next and answered there. The host shows one
	 * dialog at a time, so it being shown means no earlier dialog is still open.
	 */
	async function nextClientShownAfter(from: number): Promise<void> {
		const other = await client("opencode");
		const next = other.client.callTool({ name: ASK, arguments: { questions: [{ question: "Notify the team?", options: ["yes", "no"] }] } });
		const shown = await remoteDialog(from, "the next client's dialog");
		expect(shown).toMatchObject({ label: inProject("opencode", piEnv!.cwd), question: "Notify the team?" });
		pi!.answer(shown.dialog, "no");
		expect(envelopeOf(await next)).toMatchObject({ status: "ok", answers: [{ answer: "no" }] });
	}

	it("a question from the SDK client over stdio is answered at the host, whose dialog names the client; the envelope comes as structured content and as text, the recommended option picked there marked recommended: true", async () => {
		const { pi, session } = await hostAndClient("claude-code");
		const start = pi.mark();
		const call = session.client.callTool({
			name: ASK,
			arguments: { questions: [{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }] },
		});
		const { dialog, label, pid, question } = await remoteDialog(start);
		expect(label).toBe(inProject("claude-code", piEnv!.cwd));
		expect(pid).toBe(session.pid);
		expect(question).toBe("Which database?");
		pi.answer(dialog, (dialog.options as string[]).find((o) => o.includes("SQLite"))!);
		const envelope = envelopeOf(await call);
		expect(envelope).toMatchObject({
			status: "ok",
			asker: inProject("claude-code", piEnv!.cwd),
			answers: [{ question: "Which database?", answer: "SQLite", id: "db", kind: "option", source: "dialog", recommended: true }],
		});
		expect(typeof envelope.requestId).toBe("string");
		// No listener of its own: stdio is the client's.
		expect(listeningSockets(session.pid)).toEqual([]);
	});

	it("a server started elsewhere with --cwd <the host's directory> reaches that host", async () => {
		const session = await startMcpClient({ cwd: piEnv!.root, env: userEnv(piEnv!), name: "cursor", args: ["--cwd", piEnv!.cwd] });
		sessions.push(session);
		const start = pi!.mark();
		const call = session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Which port?", options: ["80", "443"] }] } });
		const { dialog, label } = await remoteDialog(start);
		expect(label).toBe(inProject("cursor", piEnv!.cwd));
		pi!.answer(dialog, "443");
		expect(envelopeOf(await call)).toMatchObject({ status: "ok", answers: [{ answer: "443" }] });
	});

	it("progress keeps a client with an 8 s request timeout (resetTimeoutOnProgress) alive through a 17 s wait", async () => {
		const { pi, session } = await hostAndClient("codex");
		const start = pi.mark();
		const progress: { at: number; message?: string }[] = [];
		const askedAt = Date.now();
		const call = session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Ship it?", kind: "confirm" }] } }, undefined, {
			timeout: 8_000,
			resetTimeoutOnProgress: true,
			onprogress: (p) => progress.push({ at: Date.now(), ...(p.message ? { message: p.message } : {}) }),
		});
		const { dialog } = await remoteDialog(start);
		await sleep(17_000 - (Date.now() - askedAt));
		pi.answer(dialog, "Yes");
		const envelope = envelopeOf(await call);
		expect(Date.now() - askedAt).toBeGreaterThanOrEqual(17_000);
		expect(envelope.status).toBe("ok");
		expect(envelope.answers[0]).toMatchObject({ answer: "yes", kind: "confirm" });
		// A notification within every 8 s (the host sends one at least every 5 s); the host's stages among them.
		const gaps = [askedAt, ...progress.map((p) => p.at)].map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!));
		expect(Math.max(...gaps), JSON.stringify(progress)).toBeLessThan(8_000);
		expect(progress.some((p) => /shown to the human/.test(p.message ?? ""))).toBe(true);
	});

	it("a client that cancels its call closes the host's dialog: the next question is shown while the first was never answered", async () => {
		const { pi, session } = await hostAndClient("cursor");
		const start = pi.mark();
		const abort = new AbortController();
		const call = session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Deploy now?", options: ["yes", "no"] }] } }, undefined, {
			signal: abort.signal,
		});
		const first = await remoteDialog(start);
		expect(first.question).toBe("Deploy now?");
		const afterCancel = pi.mark();
		abort.abort("the user pressed Esc");
		await expect(call).rejects.toThrow();
		await nextClientShownAfter(afterCancel);
		// The cancelled dialog was never asked again.
		expect(pi.frames.slice(start).filter((f) => f.type === "extension_ui_request" && /Deploy now\?/.test(String(f.title)))).toHaveLength(1);
	});

	it("a client that disconnects (its server's stdin closes) closes its waiting call's dialog; its wait: false question stays open at the host for a later wait", async () => {
		const { pi, session } = await hostAndClient("goose");
		const start = pi.mark();
		void session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Now: merge?", kind: "confirm" }] } }).catch(() => {});
		expect((await remoteDialog(start)).question).toBe("Now: merge?");
		const receipt = envelopeOf(
			await session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Later: rename?", kind: "confirm" }], wait: false } }),
		);
		expect(receipt.status).toBe("queued");
		const afterClose = pi.mark();
		await session.close();
		// The waiting call's dialog closed and is not shown again; the queued question is shown next.
		const queued = await remoteDialog(afterClose, "the queued question");
		expect(queued.question).toBe("Later: rename?");
		expect(pi.frames.slice(start).filter((f) => f.type === "extension_ui_request" && /Now: merge\?/.test(String(f.title)))).toHaveLength(1);
		// Answered, so the host shared by the next tests has no dialog open.
		pi.answer(queued.dialog, "Yes");
	});

	it("a server killed outright (SIGKILL) leaves nothing open at the host: its connection closes, and so does its dialog", async () => {
		const { pi, session } = await hostAndClient("killed-client");
		const start = pi.mark();
		void session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Drop the table?", kind: "confirm" }] } }).catch(() => {});
		await remoteDialog(start);
		const afterKill = pi.mark();
		process.kill(session.pid, "SIGKILL");
		await nextClientShownAfter(afterKill);
	});

	it("wait: false returns the requestId the host shows at once; wait_for_host_answers (pi's requestIds, timeoutMs) returns the envelope once it is answered", async () => {
		const { pi, session } = await hostAndClient("copilot");
		const start = pi.mark();
		const t0 = Date.now();
		const queued = envelopeOf(
			await session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Which region?", options: ["eu", "us"] }], wait: false } }),
		);
		expect(Date.now() - t0).toBeLessThan(1_000);
		expect(queued).toMatchObject({ status: "queued", answers: [], asker: inProject("copilot", piEnv!.cwd) });
		expect(typeof queued.requestId).toBe("string");
		expect(queued.note).toMatch(/not an answer/);
		// Nothing answered yet: a short wait lists it as open.
		const early = envelopeOf(await session.client.callTool({ name: COLLECT, arguments: { timeoutMs: 200 } }));
		expect(early).toMatchObject({ status: "timeout", ended: [], open: [queued.requestId] });
		const { dialog, label } = await remoteDialog(start);
		expect(label).toBe(inProject("copilot", piEnv!.cwd));
		const waiting = session.client.callTool({ name: COLLECT, arguments: { requestIds: [queued.requestId] } });
		pi.answer(dialog, "eu");
		const waited = envelopeOf(await waiting);
		expect(waited).toMatchObject({
			status: "ok",
			open: [],
			ended: [{ requestId: queued.requestId, status: "ok", answers: [{ question: "Which region?", answer: "eu" }] }],
		});
		// Handed back once: a later wait says so.
		const again = envelopeOf(await session.client.callTool({ name: COLLECT, arguments: { requestIds: [queued.requestId] } }));
		expect(again).toMatchObject({ status: "ok", ended: [], delivered: [queued.requestId] });
	});

	it("a flood of calls from one client meets the host's per-asker cap: the 17th ends isError naming it; the rest stay asked", async () => {
		const { pi, session } = await hostAndClient("flooder");
		const start = pi.mark();
		const calls = Array.from({ length: 17 }, (_, i) =>
			session.client.callTool({ name: ASK, arguments: { questions: [{ question: `Question ${i + 1}?`, kind: "confirm" }] } }),
		);
		const refusedOne = (await Promise.race(calls.map((c) => c.then((r) => r)))) as CallToolResult;
		expect(refusedOne.isError).toBe(true);
		expect(envelopeOf(refusedOne).note).toMatch(/16/);
		const { dialog } = await remoteDialog(start);
		pi.answer(dialog, "Yes");
		expect(listeningSockets(session.pid)).toEqual([]);
	});
});

describe("the MCP server with no host", () => {
	let cwd: string;
	const sessions: McpSession[] = [];
	afterEach(async () => {
		await Promise.all(sessions.splice(0).map((s) => s.close().catch(() => {})));
		rmSync(cwd, { recursive: true, force: true });
	});

	async function lone(name: string, elicit?: Parameters<typeof startMcpClient>[0]["elicit"]) {
		cwd = mkdtempSync(join(tmpdir(), "cb-mcp-"));
		const session = await startMcpClient({ cwd, env: { PATH: process.env.PATH!, HOME: cwd, TMPDIR: cwd }, name, ...(elicit ? { elicit } : {}) });
		sessions.push(session);
		return session;
	}

	const QUESTIONS = [
		{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
		{ id: "langs", question: "Which languages?", options: ["TS", "Go", "Rust"], multiSelect: true, allowOther: false },
		{ id: "name", question: "Name of the release?" },
		{ id: "go", question: "Ship it?", kind: "confirm" },
	];

	it("no elicitation and no host: no-host in under 1 s, with the note to ask in the chat and not call again", async () => {
		const session = await lone("gemini-cli");
		const t0 = Date.now();
		const envelope = envelopeOf(await session.client.callTool({ name: ASK, arguments: { questions: QUESTIONS } }));
		expect(Date.now() - t0).toBeLessThan(1_000);
		expect(envelope).toMatchObject({ status: "no-host", answers: [], asker: inProject("gemini-cli", cwd) });
		expect(envelope.note).toMatch(/do not call this tool again/);
		expect(envelope.note).toMatch(/ask the human in your chat/);
	});

	it("a client that declared elicitation gets the questions as one flat form; what it accepts is the answers", async () => {
		const forms: any[] = [];
		const session = await lone("claude-code", (request) => {
			forms.push(request.params);
			return { action: "accept", content: { q1: "SQLite", q2: ["TS", "Rust"], q3: "1.4", q4: true } };
		});
		const envelope = envelopeOf(await session.client.callTool({ name: ASK, arguments: { questions: QUESTIONS } }));
		expect(forms).toHaveLength(1);
		expect(forms[0].requestedSchema.properties).toEqual({
			q1: { type: "string", title: "Which database?", enum: ["Postgres", "SQLite"] },
			q2: { type: "array", title: "Which languages?", items: { type: "string", enum: ["TS", "Go", "Rust"] }, minItems: 1 },
			q3: { type: "string", title: "Name of the release?" },
			q4: { type: "boolean", title: "Ship it?" },
		});
		expect(envelope).toMatchObject({
			status: "ok",
			asker: inProject("claude-code", cwd),
			answers: [
				{ id: "db", answer: "SQLite", kind: "option" },
				{ id: "langs", answer: "TS, Rust", values: ["TS", "Rust"], kind: "option" },
				{ id: "name", answer: "1.4", kind: "text" },
				{ id: "go", answer: "yes", kind: "confirm" },
			],
		});
	});

	it("a client that declines its form: timeout-or-cancelled, the note saying the client declined", async () => {
		const session = await lone("claude-code", () => ({ action: "decline" }));
		const envelope = envelopeOf(await session.client.callTool({ name: ASK, arguments: { questions: QUESTIONS } }));
		expect(envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [] });
		expect(envelope.note).toMatch(/client declined its form/);
		expect(envelope.note).toMatch(/do not call this tool again/);
	});

	it("a client that cancels its form: cancelled, the note saying the client cancelled", async () => {
		const session = await lone("claude-code", () => ({ action: "cancel" }));
		const envelope = envelopeOf(await session.client.callTool({ name: ASK, arguments: { questions: QUESTIONS } }));
		expect(envelope).toMatchObject({ status: "cancelled", answers: [] });
		expect(envelope.note).toMatch(/client cancelled its form/);
	});

	it("a wrong command line ends the bin at once with its usage on stderr, stdout untouched", async () => {
		cwd = mkdtempSync(join(tmpdir(), "cb-mcp-"));
		const run = promisify(execFile);
		const failed = await run(NODE_BIN, [MCP_BIN, "--cwd", join(cwd, "missing")], { cwd }).catch(
			(error: { code: number; stdout: string; stderr: string }) => error,
		);
		expect(failed).toMatchObject({ code: 2, stdout: "" });
		expect((failed as { stderr: string }).stderr).toMatch(/no such file or directory[\s\S]*usage: checkpoint-bridge-mcp \[--cwd <directory>\]/);
		const unknown = await run(NODE_BIN, [MCP_BIN, "--port", "80"], { cwd }).catch((error: { code: number; stderr: string }) => error);
		expect(unknown).toMatchObject({ code: 2 });
		expect((unknown as { stderr: string }).stderr).toMatch(/Unknown option '--port'/);
	});

	it("the configuration docs/mcp-server.md opens with runs as written: the clone's Node 22 and the bin, from another directory", async () => {
		cwd = mkdtempSync(join(tmpdir(), "cb-mcp-"));
		const page = readFileSync(join(REPO_ROOT, "docs/mcp-server.md"), "utf8");
		const block = /```json\n([\s\S]*?)\n```/.exec(page)?.[1];
		expect(block, "the page's first JSON block").toBeDefined();
		const written = block!.replaceAll("/path/to/checkpoint-bridge", REPO_ROOT).replaceAll("/path/to/project", cwd);
		const server = (JSON.parse(written) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers["checkpoint-bridge"]!;
		expect(server.command).toBe(join(REPO_ROOT, "node_modules/.bin/node"));
		// Started from elsewhere, with a PATH whose first node is not the clone's: the command line alone must do.
		const client = new ClientV2({ name: "cursor", version: "1" }, { versionNegotiation: { mode: "auto" } });
		await client.connect(new StdioV2({ command: server.command, args: server.args, cwd: tmpdir(), env: { PATH: "/usr/bin:/bin", HOME: cwd } }));
		try {
			expect((await client.listTools()).tools.map((t) => t.name)).toEqual([ASK, COLLECT]);
			const envelope = envelopeOf(await client.callTool({ name: ASK, arguments: { questions: [{ question: "Still there?", kind: "confirm" }] } }));
			expect(envelope).toMatchObject({ status: "no-host", asker: inProject("cursor", cwd) });
		} finally {
			await client.close();
		}
	});

	it("a client pinned to 2026-07-28 with no host: the fallback form comes as input_required, and what it accepts is the answers", async () => {
		cwd = mkdtempSync(join(tmpdir(), "cb-mcp-"));
		const forms: any[] = [];
		const client = new ClientV2(
			{ name: "claude-code", version: "1" },
			{ capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
		);
		client.setRequestHandler("elicitation/create", async (request) => {
			forms.push(request.params);
			return { action: "accept", content: { q1: "SQLite", q2: ["TS", "Rust"], q3: "1.4", q4: true } };
		});
		await client.connect(new StdioV2({ command: NODE_BIN, args: [MCP_BIN], cwd, env: { PATH: process.env.PATH!, HOME: cwd, TMPDIR: cwd } }));
		try {
			expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
			const envelope = envelopeOf(await client.callTool({ name: ASK, arguments: { questions: QUESTIONS } }));
			expect(forms).toHaveLength(1);
			expect(forms[0].requestedSchema.required).toEqual(["q1", "q2", "q3", "q4"]);
			expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }, { answer: "TS, Rust" }, { answer: "1.4" }, { answer: "yes" }] });
		} finally {
			await client.close();
		}
	});

	it("a JSON-RPC line over 10 MiB is refused with a message on stderr and an error for its id; the server serves on (it used to exit 0 and cancel every call)", async () => {
		cwd = mkdtempSync(join(tmpdir(), "cb-mcp-"));
		const bin = spawn(NODE_BIN, [MCP_BIN], { cwd, env: { PATH: process.env.PATH!, HOME: cwd, TMPDIR: cwd }, stdio: ["pipe", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		bin.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
		bin.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
		const replies = () =>
			stdout
				.split("\n")
				.filter(Boolean)
				.map((l) => JSON.parse(l) as { id?: number });
		const until = async (check: () => boolean) => {
			for (let i = 0; i < 400 && !check(); i++) await sleep(25);
		};
		try {
			const send = (message: object) => bin.stdin.write(`${JSON.stringify(message)}\n`);
			send({
				jsonrpc: "2.0",
				id: 1,
				method: "initialize",
				params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
			});
			await until(() => replies().some((r) => r.id === 1));
			send({ jsonrpc: "2.0", method: "notifications/initialized" });
			bin.stdin.write(
				`{"method":"tools/call","params":{"name":"ask_user_via_host","arguments":{"x":"${"a".repeat(11 * 1024 * 1024)}"}},"jsonrpc":"2.0","id":2}\n`,
			);
			send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
			await until(() => replies().some((r) => r.id === 3));
			expect(replies().find((r) => r.id === 2)).toMatchObject({
				error: { code: -32600, message: expect.stringMatching(/over the limit of 10485760 bytes/) },
			});
			expect(replies().find((r) => r.id === 3)).toMatchObject({ result: { tools: [{ name: ASK }, { name: COLLECT }] } });
			expect(stderr).toMatch(/a JSON-RPC message of \d+ bytes is over the limit of 10485760 bytes and was not read \(request id 2\); serving on/);
			expect(bin.exitCode).toBeNull();
		} finally {
			bin.kill();
		}
	});

	it("bad arguments are refused as isError results naming each problem; the server serves on", async () => {
		const session = await lone("claude-code");
		const bad = await session.client.callTool({ name: ASK, arguments: { questions: [{ question: "" }], timeoutMs: "soon", wait: "no", extra: 1 } });
		expect(bad.isError).toBe(true);
		const note = envelopeOf(bad).note as string;
		// Each problem named once, as the pi tool names it.
		for (const part of ["questions[0].question: is empty", "timeoutMs: must be a finite number", "wait: must be true or false", '"extra" is not a parameter'])
			expect(note.split(part).length - 1, `${part} in ${note}`).toBe(1);
		const fine = envelopeOf(await session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Still there?", kind: "confirm" }] } }));
		expect(fine.status).toBe("no-host");
	});
});

describe.skipIf(NATS_SERVER_MISSING)("the MCP server over a real nats-server", () => {
	const cleanups: (() => Promise<unknown> | unknown)[] = [];
	afterEach(async () => {
		for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
	});

	it("with CHECKPOINT_BRIDGE_NATS and no host of its directory, the question goes to the room's host, whose dialog names the client and its machine", async () => {
		const nats = await startNatsServer();
		cleanups.push(() => nats.cleanup());
		const piEnv = createPiEnv({ env: { CHECKPOINT_BRIDGE_NATS: nats.url } });
		const pi = PiRpc.start(piEnv);
		cleanups.push(async () => {
			await pi.close(5_000);
			piEnv.cleanup();
		});
		await pi.waitFor((f) => isNotify(f) && String(f.message).includes("serving room"), { timeoutMs: 90_000, what: 'the "serving room" notice' });
		await roomServedAt(nats.url);
		// "Another machine": a directory, HOME and TMPDIR of its own, only the room's variable shared.
		const elsewhere = mkdtempSync(join(tmpdir(), "cb-mcp-nats-"));
		cleanups.push(() => rmSync(elsewhere, { recursive: true, force: true }));
		const session = await startMcpClient({
			cwd: elsewhere,
			env: { PATH: process.env.PATH!, HOME: elsewhere, TMPDIR: elsewhere, CHECKPOINT_BRIDGE_NATS: nats.url },
			name: "codex",
		});
		cleanups.push(() => session.close());
		const start = pi.mark();
		const call = session.client.callTool({ name: ASK, arguments: { questions: [{ question: "Which region?", options: ["eu", "us"] }] } });
		const dialog = await pi.waitForDialog({ from: start, timeoutMs: 30_000, what: "the MCP client's dialog over NATS" });
		expect(String(dialog.title)).toMatch(new RegExp(`^\\[${inProject("codex", elsewhere)} \\([^():]+:${session.pid}\\)\\] Which region\\?$`));
		pi.answer(dialog, "us");
		expect(envelopeOf(await call)).toMatchObject({
			status: "ok",
			asker: inProject("codex", elsewhere),
			answers: [{ question: "Which region?", answer: "us" }],
		});
	});
});
