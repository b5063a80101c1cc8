/**
 * The host with no screen (`checkpoint-bridge-host`, ADR-0035): what an idle one costs, and what a
 * question through it costs on top of one through a pi host.
 *
 * Idle: the bin with the page on, nothing asked, sampled from /proc over BENCH_IDLE_MS (default
 * 60000): its RSS, and its CPU time extrapolated to an hour.
 * A question: the same asker (askRemote from this process, as a `pi -p` or a background child asks)
 * asks the bin and a `pi --mode rpc` host, each with the page and a notify command that writes the
 * one-tap actions to a file; as soon as the file is there the bench POSTs the first button. Timed:
 * ask to notification, POST to the asker's result, and the whole; the blocks interleave.
 * Run: `node bench/headless-host.mjs` (Node >= 22.19; npm puts Node 22 first on PATH).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findHostEndpoint } from "../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { askRemote } from "../extensions/checkpoint-bridge/transports/local/client.ts";
import { closePooledConnections } from "../extensions/checkpoint-bridge/transports/local/pool.ts";
import { summary } from "./stats.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 60_000);
const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 15);
const work = mkdtempSync(join(os.tmpdir(), "cb-bench-headless-"));
const { XDG_RUNTIME_DIR: _runtime, ...inherited } = process.env;
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** A host process in a directory of its own, with the page and a notify command writing each request's actions. */
function startHost(name, argv) {
	const cwd = join(work, name);
	const notified = join(work, `${name}-notified`);
	mkdirSync(cwd, { recursive: true });
	mkdirSync(notified, { recursive: true });
	const env = {
		...inherited,
		HOME: work,
		XDG_STATE_HOME: join(work, "state"),
		CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0",
		CHECKPOINT_BRIDGE_NOTIFY_COMMAND: `[ "$CHECKPOINT_BRIDGE_EVENT" = asked ] && printf %s "$CHECKPOINT_BRIDGE_ACTIONS" > ${JSON.stringify(notified)}/"$CHECKPOINT_BRIDGE_REQUEST_ID".tmp && mv ${JSON.stringify(notified)}/"$CHECKPOINT_BRIDGE_REQUEST_ID".tmp ${JSON.stringify(notified)}/"$CHECKPOINT_BRIDGE_REQUEST_ID".json; exit 0`,
		SCRIPTED_MODEL_CONFIG: join(work, "script.json"),
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
	};
	const child = spawn(process.execPath, argv, { cwd, env, stdio: ["pipe", "ignore", "ignore"] });
	return { name, cwd, notified, env, child };
}

/** Waits until the directory's advertisement names a live endpoint. */
async function endpointOf(host) {
	for (let i = 0; i < 1_200; i++) {
		const endpoint = findHostEndpoint({ env: host.env, cwd: host.cwd });
		if (endpoint && existsSync(endpoint.socketPath)) return endpoint;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error(`${host.name}: no endpoint advertised for ${host.cwd}`);
}

/** CPU seconds (user + system) and RSS (KiB) of `pid`, from /proc. */
function sample(pid) {
	const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
	const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	const cpu = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
	const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
	return { cpu, rss };
}

/** One question through `host`: ask, wait for its notification, POST its first button; the three times. */
async function oneQuestion(host, endpoint, n) {
	const started = performance.now();
	const result = askRemote(endpoint, {
		asker: { label: "bench", sessionId: "bench-session" },
		questions: [{ question: `Question ${n}?`, options: ["yes", "no"] }],
		budgetMs: 60_000,
		dialogTimeoutMs: 60_000,
	});
	const requestIdFile = await Promise.race([nextActionsAny(host.notified), result.then((e) => ({ ended: e }))]);
	if (requestIdFile.ended) throw new Error(`${host.name}: the question ended before its notification: ${JSON.stringify(requestIdFile.ended)}`);
	const notifiedAt = performance.now();
	const tapped = await fetch(requestIdFile.buttons[0].answer, { method: "POST" });
	if (tapped.status !== 200) throw new Error(`${host.name}: the tap answered ${tapped.status}`);
	const tappedAt = performance.now();
	const envelope = await result;
	const endedAt = performance.now();
	if (envelope.status !== "ok") throw new Error(`${host.name}: ${JSON.stringify(envelope)}`);
	return { toNotified: notifiedAt - started, tapToResult: endedAt - tappedAt, whole: endedAt - started };
}

/** The first actions file that appears in `dir` and was not read before. */
const read = new Set();
function nextActionsAny(dir) {
	return new Promise((resolve) => {
		const take = () => {
			for (const name of readdirSync(dir))
				if (name.endsWith(".json") && !read.has(join(dir, name))) {
					read.add(join(dir, name));
					return JSON.parse(readFileSync(join(dir, name), "utf8"));
				}
			return undefined;
		};
		const now = take();
		if (now) return resolve(now);
		const watcher = watch(dir, () => {
			const found = take();
			if (found) {
				watcher.close();
				resolve(found);
			}
		});
	});
}

writeFileSync(join(work, "script.json"), "{}");
const bin = startHost("bin", [join(root, "bin/checkpoint-bridge-host.mjs")]);
const pi = startHost("pi-host", [
	join(root, "node_modules/@earendil-works/pi-coding-agent/dist/cli.js"),
	"--mode",
	"rpc",
	"--no-session",
	"--no-skills",
	"--no-prompt-templates",
	"--no-context-files",
	"--extension",
	join(root, "extensions/checkpoint-bridge/index.ts"),
	"--extension",
	join(root, "test/integration/fixtures/scripted-model.ts"),
	"--model",
	"faux/faux-1",
]);
try {
	const endpoints = { bin: await endpointOf(bin), "pi-host": await endpointOf(pi) };

	// Idle: nothing asked, the page on.
	await new Promise((resolve) => setTimeout(resolve, 2_000));
	const before = sample(bin.child.pid);
	const beforePi = sample(pi.child.pid);
	process.stderr.write(`headless-host bench: idle for ${IDLE_MS} ms …\n`);
	await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
	const after = sample(bin.child.pid);
	const afterPi = sample(pi.child.pid);
	const perHour = (b, a) => ((a.cpu - b.cpu) * 3_600_000) / IDLE_MS;
	const idle = {
		windowMs: IDLE_MS,
		bin: { rssMiB: after.rss / 1024, cpuSecondsPerHour: perHour(before, after) },
		piHost: { rssMiB: afterPi.rss / 1024, cpuSecondsPerHour: perHour(beforePi, afterPi) },
	};

	// A question through each, interleaved; the first of each is a warm-up.
	const times = { bin: [], "pi-host": [] };
	for (let n = 0; n <= QUESTIONS; n++)
		for (const host of n % 2 === 0 ? [bin, pi] : [pi, bin]) {
			const t = await oneQuestion(host, endpoints[host.name], n);
			if (n > 0) times[host.name].push(t);
		}
	const figure = (list, key) => summary(list.map((t) => t[key]));
	const question = Object.fromEntries(
		Object.entries(times).map(([name, list]) => [
			name,
			{ toNotified: figure(list, "toNotified"), tapToResult: figure(list, "tapToResult"), whole: figure(list, "whole") },
		]),
	);
	const ms = (x) => `${x.toFixed(1)} ms`;
	console.log("Host with no screen (checkpoint-bridge-host) against a pi host (pi --mode rpc), both with the page and a notify command");
	console.log(`idle over ${IDLE_MS / 1000} s, extrapolated to an hour:`);
	console.log(`  bin:     RSS ${idle.bin.rssMiB.toFixed(1)} MiB, CPU ${idle.bin.cpuSecondsPerHour.toFixed(2)} s per hour`);
	console.log(`  pi host: RSS ${idle.piHost.rssMiB.toFixed(1)} MiB, CPU ${idle.piHost.cpuSecondsPerHour.toFixed(2)} s per hour`);
	console.log(`a question (median of ${QUESTIONS}; ask → notification → one-tap POST → the asker's result):`);
	for (const [name, q] of Object.entries(question))
		console.log(`  ${name.padEnd(8)} to notification ${ms(q.toNotified.p50)}, tap to result ${ms(q.tapToResult.p50)}, whole ${ms(q.whole.p50)}`);
	console.log(`  added by the bin: ${ms(question.bin.whole.p50 - question["pi-host"].whole.p50)} (median of the whole)`);
	console.log(JSON.stringify({ figure: "headless-host", node: process.versions.node, cpus: os.cpus().length, loadAverage1m: os.loadavg()[0], idle, question }));
} finally {
	closePooledConnections();
	bin.child.kill("SIGTERM");
	pi.child.kill("SIGTERM");
	await new Promise((resolve) => setTimeout(resolve, 500));
	rmSync(work, { recursive: true, force: true });
}
