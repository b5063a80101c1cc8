/**
 * The page's port flooded (issue 19, item 2), against a host in its own process with a low
 * descriptor limit (`ulimit -n 256`) that serves both the local endpoint and the page: a flood
 * process opens hundreds of connections to the page that send half a request line and never read,
 * and keeps opening more. Meanwhile a legitimate asker asks through the local endpoint and a
 * browser (raw HTTP, as a browser sends it) loads the page, follows its live stream and answers
 * there. Every round must be served; the host's page connections stay within their bound.
 */
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { MAX_CONNECTIONS } from "../../../../extensions/checkpoint-bridge/surfaces/web/http/connections.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { hostProcessScript, killStarted, startLimitedHost, startScript } from "../../support/host-process.ts";
import { OPEN_CONNECTIONS_SCRIPT } from "../../support/server-sockets.ts";
import { takeEvents } from "./support.ts";

const FD_LIMIT = 256;
const FIRST_WAVE = 300;
const ROUNDS = 8;

/** A host whose dialogs never answer (the page does), serving the page too; prints its page connections every 50 ms. */
const HOST = hostProcessScript(
	'{ select: (_t, _o, opts) => new Promise((resolve) => opts?.signal?.addEventListener("abort", () => resolve(undefined))), input: (_t, _p, opts) => new Promise((resolve) => opts?.signal?.addEventListener("abort", () => resolve(undefined))), notify() {} }',
	`${OPEN_CONNECTIONS_SCRIPT}
const { startWebPage } = await load("surfaces/web/server.ts");
const page = await startWebPage({ handle, address: { host: "127.0.0.1", port: 0, loopback: true }, notifyCommand: () => undefined });
process.stdout.write("PAGE " + page.url + "\\n");
setInterval(() => process.stdout.write("CONN " + openConnections(page.address.port) + "\\n"), 50);`,
);

/** The flood: a first wave of half request lines that are never read, then one more every 2 ms, until stdin closes. */
const FLOOD = `
const net = await import("node:net");
const [host, port, first] = process.argv.slice(1);
let opened = 0;
let stopped = false;
const open = () => {
	if (stopped) return;
	opened++;
	const socket = net.createConnection({ host, port: Number(port) });
	socket.on("error", () => {});
	socket.pause();
	socket.on("connect", () => socket.write("GET /t/"));
	if (opened % 100 === 0) process.stdout.write("OPENED " + opened + "\\n");
};
for (let i = 0; i < Number(first); i++) open();
const more = setInterval(open, 2);
process.stdin.on("data", () => {});
process.stdin.on("end", () => { stopped = true; clearInterval(more); process.stdout.write("TOTAL " + opened + "\\n"); process.exit(0); });
`;

afterEach(killStarted);

function get(url: URL): Promise<number> {
	return new Promise((resolve, reject) => {
		const req = http.get(url, { agent: false, timeout: 10_000 }, (res) => {
			res.resume();
			res.on("end", () => resolve(res.statusCode ?? 0));
		});
		req.on("timeout", () => req.destroy(new Error(`GET ${url.pathname}: no answer within 10 s`)));
		req.on("error", reject);
	});
}

/** Opens the page's live stream; `next(event)` resolves with the data of the next event of that name. */
function stream(url: URL) {
	const events: { event: string; data: any }[] = [];
	const waiting: (() => void)[] = [];
	const req = http.get(new URL("events", url), { agent: false }, (res) => {
		let buffer = "";
		res.setEncoding("utf8");
		res.on("data", (chunk: string) => {
			buffer = takeEvents(buffer + chunk, events);
			for (const wake of waiting.splice(0)) wake();
		});
	});
	req.on("error", () => {});
	const next = (name: string, timeoutMs = 10_000) =>
		new Promise<any>((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`no ${name} event within ${timeoutMs} ms`)), timeoutMs);
			const check = () => {
				const i = events.findIndex((e) => e.event === name);
				if (i < 0) return void waiting.push(check);
				clearTimeout(timer);
				resolve(events.splice(i, 1)[0]!.data);
			};
			check();
		});
	return { next, close: () => req.destroy() };
}

function postAnswer(url: URL, body: unknown): Promise<number> {
	const text = JSON.stringify(body);
	return new Promise((resolve, reject) => {
		const req = http.request(
			new URL("answer", url),
			{ method: "POST", agent: false, headers: { origin: url.origin, "content-type": "application/json", "content-length": Buffer.byteLength(text) } },
			(res) => {
				res.resume();
				res.on("end", () => resolve(res.statusCode ?? 0));
			},
		);
		req.on("error", reject);
		req.end(text);
	});
}

it("with ulimit -n 256, a flood of half request lines that never read leaves the local endpoint and the page serving an asker and a browser", {
	timeout: 120_000,
}, async () => {
	const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "cpb-web-flood-")), "endpoint");
	const host = startLimitedHost(HOST, dir, FD_LIMIT);
	try {
		const socketPath = (await host.waitFor(/^READY (.+)$/m))[1]!;
		const pageUrl = new URL((await host.waitFor(/^PAGE (.+)$/m))[1]!);
		const flood = startScript(FLOOD, [pageUrl.hostname, pageUrl.port, String(FIRST_WAVE)]);
		// Past the first wave and well into the steady flood before the legitimate traffic starts.
		await flood.waitFor(new RegExp(`^OPENED ${FIRST_WAVE + 200}$`, "m"));
		const rounds: { page: number; answer: number; status: string; source?: string; ms: number }[] = [];
		for (let i = 0; i < ROUNDS; i++) {
			const startedAt = performance.now();
			const page = await get(pageUrl);
			const tab = stream(pageUrl);
			await tab.next("state");
			const call = askRemote(socketPath, {
				asker: { label: "legit", sessionId: "legit" },
				questions: [{ question: `Round ${i}: still served?` }],
				budgetMs: 30_000,
				dialogTimeoutMs: 30_000,
			});
			const { card } = await tab.next("added");
			const answer = await postAnswer(pageUrl, { requestId: card.requestId, answers: [`round ${i}`] });
			const envelope = await call;
			tab.close();
			rounds.push({
				page,
				answer,
				status: envelope.status,
				...(envelope.answers[0]?.source ? { source: envelope.answers[0].source } : {}),
				ms: performance.now() - startedAt,
			});
		}
		flood.child.stdin!.end();
		const opened = Number((await flood.waitFor(/^TOTAL (\d+)$/m))[1]);
		const most = Math.max(...[...host.stdout().matchAll(/^CONN (\d+)$/gm)].map((m) => Number(m[1])));
		const ms = rounds.map((r) => r.ms).sort((a, b) => a - b);
		console.log(
			`page flood (ulimit -n ${FD_LIMIT}, ${opened} connections opened, half a request line each, never read): ` +
				`${ROUNDS} rounds of page + stream + asker + answer, median ${ms[ms.length >> 1]!.toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms; page connections at most ${most}`,
		);
		expect(rounds.map(({ ms: _, ...r }) => r)).toEqual(Array(ROUNDS).fill({ page: 200, answer: 200, status: "ok", source: "web" }));
		expect(most).toBeLessThanOrEqual(MAX_CONNECTIONS);
	} finally {
		await rm(path.dirname(dir), { recursive: true, force: true });
	}
});
