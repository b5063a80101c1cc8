/**
 * MCP over streamable HTTP at the web page's `/mcp`, against one real `pi --mode rpc` host that
 * serves the page: the SDK v2 client pinned to 2026-07-28 and in the 2025 era, the v1 client, and
 * pi 1.6's own MCP client (`pi mcp add --url … --bearer-token-env-var …`) as the outside agent. The
 * host's dialog names the client and where it connects from. The page's rules hold: no token 401,
 * a foreign Origin 403, a foreign Host 403.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_ANNOUNCEMENT } from "../support/page-link.ts";
import { baseArgs, createPiEnv, type Frame, isNotify, NODE_BIN, NOT_ON_OLDEST_PI, type PiEnv, PiRpc, REPO_ROOT, runPi } from "./harness/pi-cli.ts";

const ASK = "ask_user_via_host";
const COLLECT = "wait_for_host_answers";
const CONFIRM = { questions: [{ question: "Ship it over HTTP?", kind: "confirm" }] };
/** A dialog title of an HTTP asker: `[<client> from <address>] <question>`. */
const HTTP_TITLE = /^\[(.+) from (127\.0\.0\.1|::ffff:127\.0\.0\.1)\] (.+)$/;

let piEnv: PiEnv;
let pi: PiRpc;
let page: URL;
let token: string;
let endpoint: string;

beforeAll(async () => {
	piEnv = createPiEnv({ env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" } });
	pi = PiRpc.start(piEnv, { args: ["--name", "http-host"] });
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

const structured = (result: unknown) => (result as { structuredContent: Record<string, any> }).structuredContent;
const auth = () => ({ headers: { authorization: `Bearer ${token}` } });

/** The next dialog of an HTTP asker after `from`, its title parsed. */
async function httpDialog(from: number): Promise<{ dialog: Frame; client: string; question: string }> {
	const dialog = await pi.waitForDialog({ from, timeoutMs: 30_000, what: "the HTTP client's dialog" });
	const match = HTTP_TITLE.exec(String(dialog.title));
	expect(match, `an HTTP asker's title: ${dialog.title}`).not.toBeNull();
	return { dialog, client: match![1]!, question: match![3]! };
}

async function v2(name: string, mode: "legacy" | { pin: string }) {
	const client = new ClientV2({ name, version: "1" }, { versionNegotiation: { mode } });
	await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: auth() }));
	return client;
}

describe("MCP at the page's /mcp, a real pi host", () => {
	it.each([
		["v2 pinned to 2026-07-28", "claude-code", { pin: "2026-07-28" }],
		["v2 in the 2025 era", "codex", "legacy"],
	] as const)(
		"%s: a question answered at the host, whose dialog names the client and where it connects from; a queued one waited for",
		async (_era, name, mode) => {
			const client = await v2(name, mode);
			try {
				const start = pi.mark();
				const call = client.callTool({ name: ASK, arguments: CONFIRM });
				const shown = await httpDialog(start);
				expect(shown).toMatchObject({ client: name, question: "Ship it over HTTP?" });
				pi.answer(shown.dialog, "Yes");
				expect(structured(await call)).toMatchObject({ status: "ok", answers: [{ answer: "yes", kind: "confirm" }] });
				const later = pi.mark();
				const queued = structured(await client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } }));
				expect(queued.status).toBe("queued");
				const next = await httpDialog(later);
				pi.answer(next.dialog, "No");
				const waited = structured(await client.callTool({ name: COLLECT, arguments: { requestIds: [queued.requestId], timeoutMs: 20_000 } }));
				expect(waited).toMatchObject({ status: "ok", ended: [{ requestId: queued.requestId, answers: [{ answer: "no" }] }], open: [] });
			} finally {
				await client.close();
			}
		},
	);

	it("the v1 SDK client (2025 revisions) is served too; the recommended option picked at the host comes back recommended: true", async () => {
		const client = new ClientV1({ name: "cursor", version: "1" });
		await client.connect(new HttpV1(new URL(endpoint), { requestInit: auth() }));
		try {
			expect((await client.listTools()).tools.map((t) => t.name)).toEqual([ASK, COLLECT]);
			const start = pi.mark();
			const call = client.callTool({ name: ASK, arguments: CONFIRM });
			const shown = await httpDialog(start);
			expect(shown.client).toBe("cursor");
			pi.answer(shown.dialog, "Yes");
			expect(structured(await call).status).toBe("ok");
			const later = pi.mark();
			const pick = client.callTool({ name: ASK, arguments: { questions: [{ question: "Which logger?", options: ["winston", "pino"], recommended: "pino" }] } });
			const offered = await httpDialog(later);
			pi.answer(offered.dialog, (offered.dialog.options as string[]).find((o) => o.includes("pino"))!);
			expect(structured(await pick).answers).toMatchObject([
				{ question: "Which logger?", answer: "pino", kind: "option", source: "dialog", recommended: true },
			]);
		} finally {
			await client.close();
		}
	});

	it("the page's rules: no token 401 (naming the bearer token), a wrong token 401, a foreign Origin 403, a foreign Host 403; the page's Origin is served", async () => {
		const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
		const post = (headers: Record<string, string>) =>
			fetch(endpoint, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body });
		const none = await post({});
		expect(none.status).toBe(401);
		expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
		expect(await none.text()).toMatch(/bearer token/);
		expect((await post({ authorization: "Bearer nottheone" })).status).toBe(401);
		const foreign = await post({ ...auth().headers, origin: "https://evil.example" });
		expect(foreign.status).toBe(403);
		expect(await foreign.text()).toMatch(/evil\.example/);
		const rebound = await new Promise<number>((resolve, reject) => {
			import("node:http").then(({ request }) => {
				const req = request(endpoint, { method: "POST", headers: { host: "evil.example", ...auth().headers, "content-type": "application/json" } }, (res) => {
					res.resume();
					resolve(res.statusCode ?? 0);
				});
				req.on("error", reject);
				req.end(body);
			}, reject);
		});
		expect(rebound).toBe(403);
		const own = await post({ ...auth().headers, origin: page.origin });
		expect(own.status).not.toBe(403);
	});
});

describe.skipIf(NOT_ON_OLDEST_PI)("pi 1.6's own MCP client as the outside agent", () => {
	it("`pi mcp add bridge --url …/mcp --bearer-token-env-var …` then `pi -p`: its call reaches the host, whose dialog names pi's client", async () => {
		const agent = createPiEnv({
			env: { CB_PAGE_TOKEN: token },
			script: {
				main: { call: { tool: "mcp__bridge__ask_user_via_host", arguments: { questions: [{ question: "Deploy from the container?", kind: "confirm" }] } } },
			},
		});
		try {
			const added = await runPi(agent, ["mcp", "add", "bridge", "--url", endpoint, "--bearer-token-env-var", "CB_PAGE_TOKEN", "--exposure", "direct"]);
			expect(added.code, added.stderr).toBe(0);
			const listed = await runPi(agent, ["mcp", "list"]);
			expect(listed.code, listed.stdout + listed.stderr).toBe(0);
			expect(listed.stdout).toContain(ASK);
			const start = pi.mark();
			const run = runPi(agent, [...baseArgs({ bridge: false }), "-p", "deploy"], 90_000);
			const shown = await httpDialog(start);
			expect(shown.question).toBe("Deploy from the container?");
			expect(shown.client).not.toBe("MCP client");
			pi.answer(shown.dialog, "Yes");
			const result = await run;
			expect(result.code, result.stderr).toBe(0);
		} finally {
			agent.cleanup();
		}
	}, 180_000);
});

/** The conformance suite's bin, and the scenarios that do not apply here, each with why (a YAML file the suite reads). */
const CONFORMANCE_BIN = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")), "dist/index.js");
const EXPECTED_FAILURES = join(REPO_ROOT, "test/integration/mcp-conformance-expected-failures.yml");

/**
 * What an agent's side puts in front of `/mcp` for a client that cannot send a header of its own
 * (the suite sends none): it adds the bearer token and names the page as Host and Origin where the
 * request named this proxy; any other Host or Origin goes on as sent, for `/mcp` to judge.
 */
async function tokenProxy(): Promise<{ url: string; close(): Promise<void> }> {
	const server = http.createServer((req, res) => {
		const own = `127.0.0.1:${(server.address() as AddressInfo).port}`;
		const headers = { ...req.headers, authorization: `Bearer ${token}` };
		if (headers.host === own) headers.host = page.host;
		if (headers.origin === `http://${own}`) headers.origin = page.origin;
		const upstream = http.request(`${page.origin}${req.url}`, { method: req.method, headers }, (answer) => {
			res.writeHead(answer.statusCode ?? 502, answer.headers);
			answer.pipe(res);
		});
		upstream.on("error", () => res.destroy());
		// A client that goes away ends its request upstream too, as a proxy does: its streams do not stay open at /mcp.
		res.on("close", () => upstream.destroy());
		req.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
	};
}

describe.skipIf(NOT_ON_OLDEST_PI)("the MCP conformance suite against /mcp", () => {
	it("every server scenario passes or is listed in mcp-conformance-expected-failures.yml with why (server-initialize, ping, tools-list, dns-rebinding-protection pass)", async () => {
		const proxy = await tokenProxy();
		const out = mkdtempSync(join(tmpdir(), "cb-conformance-"));
		try {
			const run = await promisify(execFile)(NODE_BIN, [CONFORMANCE_BIN, "server", "--url", proxy.url, "--expected-failures", EXPECTED_FAILURES, "-o", out], {
				cwd: out,
				timeout: 240_000,
				maxBuffer: 16 * 1024 * 1024,
			}).catch((error: { code: number; stdout: string; stderr: string }) => error);
			const stdout = (run as { stdout: string }).stdout;
			expect((run as { code?: number }).code ?? 0, stdout.slice(-4_000)).toBe(0);
			for (const scenario of ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"])
				expect(stdout, stdout.slice(-4_000)).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
		} finally {
			await proxy.close();
			rmSync(out, { recursive: true, force: true });
		}
	}, 300_000);
});
