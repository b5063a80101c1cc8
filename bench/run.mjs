/**
 * `npm run bench`: runs every figure in its own fresh process, prints them as tables and writes
 * them to bench/results/latest.json. See bench/README.md for what each figure means.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { natsFloodSection, natsSection } from "./nats-report.mjs";
import { median } from "./stats.mjs";
import { webReport } from "./web-report.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..");
const RESULTS = join(here, "results/latest.json");
const LOAD_SAMPLES = 5;
const LOAD_WARM_RELOADS = 5;
const NO_DISK_CACHE_SAMPLES = 3;
const MEMORY_N = 10_000;

if (Number(process.versions.node.split(".")[0]) < 22)
	throw new Error(`Node ${process.versions.node}: the bench needs Node 22 (run it as \`npm run bench\`, which uses node_modules/.bin/node)`);

const agentDir = mkdtempSync(join(tmpdir(), "cb-bench-agent-"));
process.on("exit", () => rmSync(agentDir, { recursive: true, force: true }));
// Keeps pi away from ~/.pi/agent and the network.
const piEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };

/** Runs a bench script in a fresh Node process and returns the JSON it prints last. */
function child(script, args = [], { nodeFlags = [], env = piEnv } = {}) {
	const out = execFileSync(process.execPath, [...nodeFlags, join(here, script), ...args.map(String)], {
		cwd: repo,
		env,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "inherit"],
		maxBuffer: 64 * 1024 * 1024,
	});
	return JSON.parse(out.trim().split("\n").at(-1));
}

const git = (...args) => {
	try {
		return execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
	} catch {
		return undefined;
	}
};

const started = performance.now();
const loadBefore = loadavg()[0];
// Read before the runs: what was measured is the tree as it was when they started.
const commit = git("rev-parse", "HEAD");
const extensionDirty = (git("status", "--porcelain", "--", "extensions") ?? "") !== "";
const log = (line) => process.stderr.write(`${line}\n`);

log("bench: relay (figures 1, 2)...");
const relay = child("relay.mjs", [], { nodeFlags: ["--expose-gc"] });

log("bench: extension load (figure 3)...");
// One unrecorded load fills jiti's transpile cache, so every recorded sample starts from the same disk state.
child("load.mjs", ["bridge", 0]);
child("load.mjs", ["empty", 0]);
const KINDS = ["none", "empty", "bridge"];
const loadSamples = Object.fromEntries(KINDS.map((kind) => [kind, []]));
for (let s = 0; s < LOAD_SAMPLES; s++) {
	// Rotated order, so no kind always runs first after a pause.
	for (const kind of KINDS.map((_, i) => KINDS[(i + s) % KINDS.length])) loadSamples[kind].push(child("load.mjs", [kind, LOAD_WARM_RELOADS]));
}
const noCacheEnv = { ...piEnv, JITI_FS_CACHE: "false" };
const noCacheSamples = [];
for (let s = 0; s < NO_DISK_CACHE_SAMPLES; s++) noCacheSamples.push(child("load.mjs", ["bridge", 2], { env: noCacheEnv }));

log("bench: memory (figure 4)...");
const memory = child("memory.mjs", [MEMORY_N], { nodeFlags: ["--expose-gc"] });

log("bench: ask now, answer later...");
const later = child("ask-later.mjs", [2_000], { nodeFlags: ["--expose-gc"] });

log("bench: remote relay (figure 5)...");
const remote = child("remote.mjs", [], { nodeFlags: ["--expose-gc"] });

log("bench: web answer page (figure 6)...");
const web = child("web.mjs");
log("bench: NATS relay (figure 7)...");
const nats = child("nats.mjs", [], { nodeFlags: ["--expose-gc"] });
log("bench: NATS room flooded (figure 8)...");
const natsFlood = child("nats-flood.mjs", [], { nodeFlags: ["--expose-gc"] });
log("bench: relayed dialog of another extension (figure 9)...");
const dialogRelay = child("dialog-relay.mjs");
log("bench: MCP client round trip (figure 10)...");
const mcp = child("mcp.mjs");

// ---- figures ----
const loadFigure = (samples) => ({
	samples: samples.length,
	coldMs: median(samples.map((s) => s.coldMs)),
	warmMs: median(samples.flatMap((s) => s.warmMs)),
});
const load = Object.fromEntries(KINDS.map((kind) => [kind, loadFigure(loadSamples[kind])]));
load.bridgeNoDiskCache = loadFigure(noCacheSamples);
load.bridgeMinusNone = { coldMs: load.bridge.coldMs - load.none.coldMs, warmMs: load.bridge.warmMs - load.none.warmMs };
load.bridgeMinusEmpty = { coldMs: load.bridge.coldMs - load.empty.coldMs, warmMs: load.bridge.warmMs - load.empty.warmMs };

/** Figure 1's two ways of running each load (see relay.mjs): label for the tables. */
const MODES = { forcedGc: "forced GC", steady: "steady" };
const byN = (figures) => Object.fromEntries(figures.map((r) => [r.n, r]));
const relayByN = Object.fromEntries(Object.keys(MODES).map((mode) => [mode, byN(relay[mode])]));
const busByN = byN(relay.bus);
const growth = (figures, variant) => {
	const ratio = figures[1000][variant].totalMs / figures[100][variant].totalMs;
	const grown = { totalRatio: ratio, exponent: Math.log10(ratio) };
	// CPU time too: a busy machine lengthens the short rounds at 100 askers most, which bends the wall-time ratio.
	const cpu = figures[100][variant].cpuMeanMs;
	if (cpu === undefined) return grown;
	const cpuRatio = figures[1000][variant].cpuMeanMs / cpu;
	return { ...grown, cpuRatio, cpuExponent: Math.log10(cpuRatio) };
};
const VARIANTS = ["channel", "broadcast"];
const scaling = {
	relay: Object.fromEntries(Object.keys(MODES).map((mode) => [mode, Object.fromEntries(VARIANTS.map((v) => [v, growth(relayByN[mode], v)]))])),
	busOnly: Object.fromEntries(VARIANTS.map((v) => [v, growth(busByN, v)])),
};

const results = {
	date: new Date().toISOString(),
	node: process.version,
	cpus: availableParallelism(),
	cpuModel: cpus()[0]?.model,
	loadAverage1m: { before: loadBefore, after: loadavg()[0] },
	commit,
	extensionDirty,
	durationS: (performance.now() - started) / 1000,
	relay,
	scaling,
	load,
	memory,
	later,
	remote,
	web,
	nats,
	natsFlood,
	dialogRelay,
	mcp,
};
const tmp = `${RESULTS}.tmp`;
writeFileSync(tmp, `${JSON.stringify(results, null, "\t")}\n`);
renameSync(tmp, RESULTS);

// ---- tables ----
const f = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
const ratio = (a, b) => `${f(b / a, 2)}x`;
/** The first `labels` columns are text, aligned left; the others are figures, aligned right. */
const table = (head, rows, labels = 1) => {
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
	const line = (cells) => cells.map((c, i) => (i < labels ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ");
	return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
};

const out = [];
out.push(
	`checkpoint-bridge bench: ${results.date}, Node ${results.node}, ${results.cpus} CPUs, load average ${f(loadBefore, 2)} -> ${f(results.loadAverage1m.after, 2)}`,
);
out.push(
	`commit ${results.commit?.slice(0, 7) ?? "?"}${results.extensionDirty ? " + uncommitted changes in extensions/" : ""}; took ${f(results.durationS, 0)} s`,
);
if (loadBefore > results.cpus) out.push(`note: the machine was busy (load average above the CPU count): absolute times are inflated; the ratios hold better.`);

out.push(
	"",
	"1. Relay overhead per question (µs; allocation in KiB), host UI answers at once. channel = the extension (reply:<id> per request); broadcast = baseline (one shared event).",
	"   forced GC = a full GC before rounds (every round at 1,000 askers); steady = never forced",
);
const rows = [];
const kib = (bytes) => bytes / 1024;
for (const n of Object.keys(relayByN.forcedGc)) {
	for (const [mode, label] of Object.entries(MODES)) {
		const { channel: c, broadcast: b } = relayByN[mode][n];
		const first = mode === "forcedGc" ? n : "";
		rows.push([
			first,
			label,
			"end-to-end per call",
			f(c.e2eUs.p50),
			f(c.e2eUs.p99),
			f(b.e2eUs.p50),
			f(b.e2eUs.p99),
			ratio(c.e2eUs.p50, b.e2eUs.p50),
			ratio(c.e2eUs.p99, b.e2eUs.p99),
		]);
		rows.push([
			"",
			"",
			"service (shown -> settled)",
			f(c.serviceUs.p50, 2),
			f(c.serviceUs.p99, 2),
			f(b.serviceUs.p50, 2),
			f(b.serviceUs.p99, 2),
			ratio(c.serviceUs.p50, b.serviceUs.p50),
			ratio(c.serviceUs.p99, b.serviceUs.p99),
		]);
		rows.push(["", "", "amortized (round / askers)", f(c.perQuestionUs, 2), "", f(b.perQuestionUs, 2), "", ratio(c.perQuestionUs, b.perQuestionUs), ""]);
		rows.push([
			"",
			"",
			"thread CPU per question (mean)",
			f(c.cpuPerQuestionUs, 2),
			"",
			f(b.cpuPerQuestionUs, 2),
			"",
			ratio(c.cpuPerQuestionUs, b.cpuPerQuestionUs),
			"",
		]);
		rows.push([
			"",
			"",
			"allocated per question, KiB",
			f(kib(c.allocatedBytesPerQuestion), 2),
			"",
			f(kib(b.allocatedBytesPerQuestion), 2),
			"",
			ratio(c.allocatedBytesPerQuestion, b.allocatedBytesPerQuestion),
			"",
		]);
	}
}
out.push(table(["askers", "GC", "figure", "channel p50", "p99", "broadcast p50", "p99", "broadcast/channel p50", "p99"], rows, 3));
const at1000 = (mode) => relayByN[mode][1000].channel;
out.push(
	`   the extension at 1,000 askers: ${f(at1000("forcedGc").perQuestionUs)} µs per question with forced GC, ${f(at1000("steady").perQuestionUs)} µs steady; thread CPU ${f(at1000("forcedGc").cpuPerQuestionUs)} / ${f(at1000("steady").cpuPerQuestionUs)} µs; ${f(kib(at1000("steady").allocatedBytesPerQuestion), 1)} KiB allocated per question (steady)`,
);

out.push(
	"",
	"2. Growth from 100 to 1,000 concurrent askers (10x the load; exponent 1 = linear, 2 = quadratic). Wall time: median round; CPU: this thread's, mean per round",
);
const growthRow = (label, figures, grown, v, digits) => [
	label,
	f(figures[100][v].totalMs, digits),
	f(figures[1000][v].totalMs, digits),
	f((figures[100][v].totalMs * 1000) / 100, 2),
	f((figures[1000][v].totalMs * 1000) / 1000, 2),
	`${f(grown[v].totalRatio, 1)}x`,
	f(grown[v].exponent, 2),
	f((figures[100][v].cpuMeanMs * 1000) / 100, 2),
	f((figures[1000][v].cpuMeanMs * 1000) / 1000, 2),
	f(grown[v].cpuExponent, 2),
];
out.push(
	table(
		["variant", "ms @100", "ms @1000", "µs/question @100", "µs/question @1000", "ratio", "exponent", "CPU µs/question @100", "@1000", "CPU exponent"],
		[
			...Object.entries(MODES).flatMap(([mode, label]) => VARIANTS.map((v) => growthRow(`relay, ${v}, ${label}`, relayByN[mode], scaling.relay[mode], v, 2))),
			...VARIANTS.map((v) => growthRow(`bus traffic only, ${v}`, busByN, scaling.busOnly, v, 3)),
		],
	),
);

out.push(
	"",
	`3. Extension load through pi's DefaultResourceLoader (ms, median; fresh process per sample, ${LOAD_SAMPLES} samples, ${LOAD_WARM_RELOADS} later reloads each)`,
);
out.push(
	table(
		["extensions", "first reload (cold)", "later reload"],
		[
			["none", f(load.none.coldMs), f(load.none.warmMs, 2)],
			["empty .ts extension", f(load.empty.coldMs), f(load.empty.warmMs, 2)],
			["checkpoint-bridge", f(load.bridge.coldMs), f(load.bridge.warmMs, 2)],
			["checkpoint-bridge - none", f(load.bridgeMinusNone.coldMs), f(load.bridgeMinusNone.warmMs, 2)],
			["checkpoint-bridge - empty", f(load.bridgeMinusEmpty.coldMs), f(load.bridgeMinusEmpty.warmMs, 2)],
			[`checkpoint-bridge, no jiti disk cache (${NO_DISK_CACHE_SAMPLES} samples)`, f(load.bridgeNoDiskCache.coldMs), f(load.bridgeNoDiskCache.warmMs, 2)],
		],
	),
);

out.push("", `4. Memory per pending request (${memory.n.toLocaleString("en")} pending at a host that never answers; heap after full GC)`);
out.push(
	table(
		["figure", "value"],
		[
			["heap per pending request", `${f(memory.bytesPerPendingRequest / 1024, 2)} KiB`],
			["heap before / pending", `${f(memory.heapBeforeBytes / 2 ** 20)} / ${f(memory.heapPendingBytes / 2 ** 20)} MiB`],
			["heap left after release (all requests)", `${f((memory.heapAfterReleaseBytes - memory.heapBeforeBytes) / 1024, 0)} KiB`],
		],
	),
);
out.push(
	"",
	`4b. Ask now, answer later (wait: false receipts in the host's process; ${later.n.toLocaleString("en")} late questions at a host that never answers)`,
);
out.push(
	table(
		["figure", "value"],
		[
			[`receipt latency p50 / p99 (${later.receipts} calls)`, `${f(later.receiptUs.p50)} / ${f(later.receiptUs.p99)} µs`],
			["heap per late question", `${f(later.bytesPerLateQuestion / 1024, 2)} KiB`],
		],
	),
);
out.push(
	"",
	"5. Remote relay against in-process (µs per call), host UI answers at once. remote = askRemote from another process through the host's socket endpoint; in-process = askViaHost",
);
const remoteRow = (label, figure, local, far) => [
	label,
	figure,
	f(local.p50),
	f(local.p99),
	f(far.p50),
	f(far.p99),
	f(far.p50 - local.p50),
	ratio(local.p50, far.p50),
	ratio(local.p99, far.p99),
];
const { sequential: seq } = remote;
const concurrentRows = (label, conc) => [
	remoteRow(`${conc.askers} at once, ${label} (${conc.rounds} rounds)`, "per call", conc.inProcess.e2eUs, conc.remote.e2eUs),
	[
		"",
		"amortized (round / askers)",
		f(conc.inProcess.perQuestionUs),
		"",
		f(conc.remote.perQuestionUs),
		"",
		f(conc.remote.perQuestionUs - conc.inProcess.perQuestionUs),
		ratio(conc.inProcess.perQuestionUs, conc.remote.perQuestionUs),
		"",
	],
];
out.push(
	table(
		["load", "figure", "in-process p50", "p99", "remote p50", "p99", "remote - in-process p50", "remote/in-process p50", "p99"],
		[
			remoteRow(`1 at a time (${seq.calls} calls)`, "per call", seq.inProcess.e2eUs, seq.remote.e2eUs),
			...concurrentRows("forced GC", remote.concurrent),
			...concurrentRows("steady", remote.concurrentSteady),
		],
	),
);
out.push(...webReport(web, { f, table }));
out.push(...natsSection(nats, remote, { f, ratio, table }));
out.push(...natsFloodSection(natsFlood, { f, table }));
out.push(
	"",
	`9. A relayed dialog of another extension (µs per call, ${dialogRelay.calls} calls a side, one at a time): ctx.ui.confirm in an in-process child (CHECKPOINT_BRIDGE_RELAY_DIALOGS=1) against the same confirm in the host session; the host's UI answers at once`,
);
const dialogRow = (label, side) => [label, f(side.e2eUs.p50), f(side.e2eUs.p99), f(side.e2eUs.mean), f(side.cpuPerCallUs)];
out.push(
	table(
		["confirm from", "p50", "p99", "mean", "thread CPU per call (mean)"],
		[
			dialogRow("the host session (its own UI)", dialogRelay.host),
			dialogRow("a child (relayed to the host)", dialogRelay.child),
			["added by the relay", f(dialogRelay.addedP50Us), "", "", f(dialogRelay.addedCpuPerCallUs)],
		],
	),
);
out.push(
	"",
	`10. A question from an MCP client (µs per call, ${mcp.calls} calls a way, one at a time, the ways interleaved in blocks): the SDK client's tools/call of ask_user_via_host over stdio to the bin checkpoint-bridge-mcp and on through the local socket, or over streamable HTTP to the page's /mcp in the host's process; against askViaHost in the host's process; the host's UI answers at once`,
);
const way = (label, summary) => [label, f(summary.p50), f(summary.p99), f(summary.p50 - mcp.inProcessUs.p50)];
out.push(
	table(
		["asked from", "p50", "p99", "added p50"],
		[
			["the host's process (askViaHost)", f(mcp.inProcessUs.p50), f(mcp.inProcessUs.p99), ""],
			way("stdio, 2025 revisions (SDK v1 client)", mcp.ways.stdio2025),
			way("stdio, 2026-07-28 (SDK v2 client)", mcp.ways.stdio2026),
			way("HTTP /mcp, 2025 era (SDK v2 client, a session)", mcp.ways.http2025),
			way("HTTP /mcp, 2026-07-28 (SDK v2 client, stateless)", mcp.ways.http2026),
		],
	),
);
out.push("", `written to ${RESULTS}`);
console.log(out.join("\n"));
