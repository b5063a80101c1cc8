/**
 * One order and one id, on a real `pi --mode rpc` host that serves the page and runs a notify
 * command: four kinds of asker (a `pi -p` run finding the host by itself, the MCP server over stdio
 * driven by the official SDK client, an MCP client at the page's `/mcp`, and a pi-subagents child in
 * the host's own process) each ask a question whose recommended option is the asker's last. The RPC
 * client's dialog lists the options in the order the page's card shows them (the recommended one
 * first), and the requestId in each tool result is the id the page's card, the notify command's
 * environment and the host use.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_ANNOUNCEMENT } from "../support/page-link.ts";
import { browserForFile, HAS_CHROMIUM, openTab } from "./harness/browser.ts";
import { type McpSession, startMcpClient } from "./harness/mcp-client.ts";
import {
	baseArgs,
	childAskResults,
	createPiEnv,
	envelopesIn,
	type Frame,
	hostEndpoint,
	isNotify,
	onlyEnvelope,
	type PiEnv,
	PiRpc,
	runPi,
} from "./harness/pi-cli.ts";

const ASK = "ask_user_via_host";
/** pi-subagents compiles on a cold start: allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;
const RECOMMENDED = " (recommended)";

/** A question of its own per asker; the recommended option is the asker's last. */
const question = (text: string) => ({ question: text, options: ["Postgres", "MySQL", "SQLite"], recommended: "SQLite", allowOther: false });
const SHOWN = ["SQLite", "Postgres", "MySQL"];
const ASKED = {
	piP: question("Which store for the pi -p job?"),
	stdio: question("Which store for the stdio client?"),
	http: question("Which store for the HTTP client?"),
	child: question("Which store for the child?"),
};

const browser = browserForFile("one-order-one-id.test.ts");

let piEnv: PiEnv;
let pi: PiRpc;
let page: Page;
let endpoint: URL;
let token: string;
const notified = () => join(piEnv.root, "notified.tsv");

beforeAll(async () => {
	piEnv = createPiEnv({
		agents: ["checkpoint-planner"],
		script: {
			main: { call: { tool: ASK, arguments: { questions: [ASKED.piP] } } },
			prompts: { delegate: { subagent: { agent: "checkpoint-planner", task: "Choose the store." } } },
			childCalls: { "checkpoint-planner": { tool: ASK, arguments: { questions: [ASKED.child] } } },
		},
		env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
	});
	// Every run of the notify command, as its environment names the request.
	piEnv.env.CHECKPOINT_BRIDGE_NOTIFY_COMMAND = `printf '%s\\t%s\\t%s\\n' "$CHECKPOINT_BRIDGE_EVENT" "$CHECKPOINT_BRIDGE_REQUEST_ID" "$CHECKPOINT_BRIDGE_QUESTION" >> '${notified()}'`;
	pi = PiRpc.start(piEnv, { subagents: true, args: ["--name", "one-id-host"] });
	await hostEndpoint(piEnv);
	await pi.command("get_state", {}, FIRST_DIALOG_MS);
	const mark = pi.mark();
	await pi.prompt("/checkpoints");
	const report = await pi.waitFor((f) => isNotify(f) && PAGE_ANNOUNCEMENT.test(String(f.message)), { from: mark, what: "the page's link" });
	const url = new URL(PAGE_ANNOUNCEMENT.exec(String(report.message))![1]!);
	token = url.pathname.split("/")[2]!;
	endpoint = new URL(`${url.origin}/mcp`);
	if (HAS_CHROMIUM) page = (await openTab(browser.browser, url.href)).page;
}, 180_000);

afterAll(async () => {
	await pi?.close();
	piEnv?.cleanup();
});

/** The page's card of the request asking `text`: its request id and its options as listed. */
async function cardAsking(text: string): Promise<{ requestId: string; labels: string[] }> {
	await page.waitForFunction(
		(q) => [...document.querySelectorAll("article.card")].some((c) => c.querySelector("legend")?.textContent?.includes(q)),
		{ timeout: 30_000, polling: 25 },
		text,
	);
	return page.evaluate((q) => {
		const card = [...document.querySelectorAll<HTMLElement>("article.card")].find((c) => c.querySelector("legend")?.textContent?.includes(q))!;
		return { requestId: card.dataset.requestId!, labels: [...card.querySelectorAll("label.choice .label")].map((l) => l.textContent ?? "") };
	}, text);
}

/** The ids the notify command was run with for the request asking `text`. */
function notifiedIds(text: string): string[] {
	const lines = readFileSync(notified(), "utf8").trim().split("\n");
	return [
		...new Set(
			lines
				.map((l) => l.split("\t"))
				.filter((cols) => cols[2]?.includes(text))
				.map((cols) => cols[1]!),
		),
	];
}

/**
 * Waits for the RPC dialog of the question asked after `from`, checks its order against the page's
 * card, answers it with the recommended option, and returns the ids the page and the notify command
 * gave the request.
 */
async function answerAtHost(from: number, text: string, timeoutMs = 30_000): Promise<{ card: string; notify: string[] }> {
	const dialog: Frame = await pi.waitForDialog({ from, timeoutMs, what: `the dialog of ${text}` });
	expect(String(dialog.title)).toContain(text);
	const listed = (dialog.options as string[]).map((o) => o.replace(RECOMMENDED, ""));
	expect(listed, "the RPC dialog lists the recommended option first, the rest in the asker's order").toEqual(SHOWN);
	const card = await cardAsking(text);
	expect(card.labels, "the page's card lists the options in the RPC dialog's order").toEqual(listed);
	await expect.poll(() => notifiedIds(text).length, { timeout: 10_000 }).toBeGreaterThan(0);
	pi.answer(dialog, dialog.options[0]);
	return { card: card.requestId, notify: notifiedIds(text) };
}

describe.skipIf(!HAS_CHROMIUM)("one order and one id, a pi --mode rpc host with the page and a notify command", () => {
	it("a pi -p run that finds the host by itself gets the request id the page and the notify command use", async () => {
		const from = pi.mark();
		const running = runPi(piEnv, [...baseArgs(), "-p", "Ask the user."], 90_000);
		const ids = await answerAtHost(from, ASKED.piP.question, 60_000);
		const run = await running;
		expect(run.code, run.stderr.slice(-2_000)).toBe(0);
		const [envelope] = envelopesIn(run.stdout);
		expect(envelope, run.stdout.slice(0, 2_000)).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }] });
		expect(ids.notify).toEqual([ids.card]);
		expect(envelope!.requestId).toBe(ids.card);
	});

	it("the MCP server over stdio (the official SDK client) gets the request id the page and the notify command use", async () => {
		const session: McpSession = await startMcpClient({
			cwd: piEnv.cwd,
			env: { PATH: piEnv.env.PATH!, HOME: piEnv.env.HOME!, TMPDIR: piEnv.env.TMPDIR! },
			name: "claude-code",
		});
		try {
			const from = pi.mark();
			const call = session.client.callTool({ name: ASK, arguments: { questions: [ASKED.stdio] } });
			const ids = await answerAtHost(from, ASKED.stdio.question);
			const envelope = (await call).structuredContent as Record<string, unknown>;
			expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }] });
			expect(ids.notify).toEqual([ids.card]);
			expect(envelope.requestId).toBe(ids.card);
		} finally {
			await session.close();
		}
	});

	it("an MCP client at the page's /mcp gets the request id the page and the notify command use", async () => {
		const client = new ClientV2({ name: "codex", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
		await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
		try {
			const from = pi.mark();
			const call = client.callTool({ name: ASK, arguments: { questions: [ASKED.http] } });
			const ids = await answerAtHost(from, ASKED.http.question);
			const envelope = (await call).structuredContent as Record<string, unknown>;
			expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }] });
			expect(ids.notify).toEqual([ids.card]);
			expect(envelope.requestId).toBe(ids.card);
		} finally {
			await client.close();
		}
	});

	it("a pi-subagents child in the host's process gets the request id the page and the notify command use", async () => {
		const from = pi.mark();
		await pi.prompt("delegate");
		const ids = await answerAtHost(from, ASKED.child.question, FIRST_DIALOG_MS);
		const end = await pi.waitForToolEnd("subagent", { from, timeoutMs: 60_000 });
		const envelope = onlyEnvelope(childAskResults(end)[0]!);
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "SQLite" }] });
		expect(ids.notify).toEqual([ids.card]);
		expect(envelope.requestId).toBe(ids.card);
	});
});
