/**
 * Floods before the handshake (issue 13, finding 3), against a host in its own process with a low
 * descriptor limit (`ulimit -n 256`): a flood process keeps hundreds of connections open that never
 * say hello, and a hundred more that each send 1 MiB without a newline, re-opening each as the host
 * drops it. Meanwhile this process asks the host again and again through askRemote, as a legitimate
 * asker does. Every call must be served (`ok`), and the host's RSS must stay bounded. The asker's
 * latency and the host's RSS are printed, not asserted: they depend on the machine.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { hostProcessScript, killStarted, startLimitedHost, startScript } from "../../support/host-process.ts";
import { OPEN_CONNECTIONS_SCRIPT } from "../../support/server-sockets.ts";

const FD_LIMIT = 256;
const IDLE_CONNECTIONS = 600;
const MEBIBYTE_SENDERS = 100;
const ASKS = 40;
/** A host that buffered every 1 MiB sender whole would grow by far more than this. */
const RSS_GROWTH_LIMIT = 96 * 1024 * 1024;

/** The host: a UI that answers at once, and its RSS and the connections its endpoint holds on stdout every 50 ms. */
const HOST = hostProcessScript(
	'{ select: async (_title, options) => options[0], input: async () => "ok", notify() {} }',
	`${OPEN_CONNECTIONS_SCRIPT}
setInterval(() => process.stdout.write("RSS " + process.memoryUsage().rss + " " + openConnections(endpoint.endpoint) + "\\n"), 50);`,
);

/** The flood: idle connections and 1 MiB senders, each re-opened as soon as it closes, until stdin closes. */
const FLOOD = `
const net = await import("node:net");
const [socketPath, idle, senders] = process.argv.slice(1).map((v, i) => (i === 0 ? v : Number(v)));
const mebibyte = Buffer.alloc(1024 * 1024, 0x61);
let opened = 0;
let stopped = false;
function open(send) {
	if (stopped) return;
	if (++opened % 100 === 0) process.stdout.write("OPENED " + opened + "\\n");
	const socket = net.createConnection(socketPath);
	socket.on("error", () => {});
	// Read, so that the host closing the connection is noticed and it is re-opened.
	socket.resume();
	if (send) socket.on("connect", () => socket.write(mebibyte));
	socket.on("close", () => setImmediate(() => open(send)));
}
for (let i = 0; i < idle; i++) open(false);
for (let i = 0; i < senders; i++) open(true);
process.stdin.on("data", () => {});
process.stdin.on("end", () => { stopped = true; process.stdout.write("TOTAL " + opened + "\\n"); process.exit(0); });
`;

afterEach(killStarted);

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

it("a legitimate asker is served during a flood of idle and 1 MiB connections, and the host's memory stays bounded", { timeout: 120_000 }, async () => {
	const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "cpb-flood-")), "endpoint");
	const host = startLimitedHost(HOST, dir, FD_LIMIT);
	try {
		const socketPath = (await host.waitFor(/^READY (.+)$/m))[1]!;
		const rssSamples = () => [...host.stdout().matchAll(/^RSS (\d+) (\d+)$/gm)].map((m) => ({ rss: Number(m[1]), connections: Number(m[2]) }));
		const ask = () =>
			askRemote(socketPath, {
				asker: { label: "legit", sessionId: "l" },
				questions: [{ question: "Still served?" }],
				budgetMs: 30_000,
				dialogTimeoutMs: 30_000,
			});
		// Warm up, then take the host's resting RSS.
		for (let i = 0; i < 5; i++) expect((await ask()).status).toBe("ok");
		await new Promise((resolve) => setTimeout(resolve, 200));
		const resting = Math.max(
			...rssSamples()
				.slice(-3)
				.map((s) => s.rss),
		);

		const flood = startScript(FLOOD, [socketPath, String(IDLE_CONNECTIONS), String(MEBIBYTE_SENDERS)]);
		// The host is already dropping flood connections and the flood re-opening them when the asking starts.
		const reopened = IDLE_CONNECTIONS + MEBIBYTE_SENDERS + 200;
		await flood.waitFor(new RegExp(`^OPENED ${reopened}$`, "m"));
		const floodFrom = rssSamples().length;
		const latencies: number[] = [];
		const statuses: string[] = [];
		const notes: string[] = [];
		for (let i = 0; i < ASKS; i++) {
			const startedAt = performance.now();
			const envelope = await ask();
			latencies.push(performance.now() - startedAt);
			statuses.push(envelope.status);
			if (envelope.status !== "ok") notes.push(envelope.note ?? "");
		}
		flood.child.stdin!.end();
		const opened = Number((await flood.waitFor(/^TOTAL (\d+)$/m))[1]);
		const during = rssSamples().slice(floodFrom);
		const peak = Math.max(...during.map((s) => s.rss));
		const sorted = [...latencies].sort((a, b) => a - b);
		const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
		console.log(
			`flood (ulimit -n ${FD_LIMIT}, ${IDLE_CONNECTIONS} idle + ${MEBIBYTE_SENDERS} x 1 MiB connections, ${opened} opened in all): ` +
				`legitimate asker ${ASKS} calls, p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms; ` +
				`host RSS resting ${mib(resting)} MiB, peak ${mib(peak)} MiB; host connections at most ${Math.max(...during.map((s) => s.connections))}`,
		);
		expect(notes).toEqual([]);
		expect(statuses).toEqual(Array(ASKS).fill("ok"));
		expect(peak - resting).toBeLessThan(RSS_GROWTH_LIMIT);
	} finally {
		await rm(path.dirname(dir), { recursive: true, force: true });
	}
});
