/**
 * Figures 1 and 2: what relaying one question costs, in process, when the host's UI answers at
 * once, so everything measured is the relay itself. N askers call askViaHost at the same moment;
 * the same rounds run through the extension's per-request reply channels ("channel") and through
 * the broadcast baseline ("broadcast"), interleaved; then the two buses' reply traffic alone, to
 * tell routing from the host's own work. Each load runs twice: with a forced full GC before rounds
 * (PLAN's gcEvery), which keeps one round's garbage out of the next but throws away optimised code
 * the next round recompiles, and in a steady state that never forces one. Prints one JSON document
 * on stdout. Run with --expose-gc (run.mjs does).
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host/host-role.ts";
import { PROTOCOL_VERSION, replyChannel } from "../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { broadcastHandle } from "./broadcast-bus.mjs";
import { mean, median, summary } from "./stats.mjs";

const gc = globalThis.gc ?? (() => {});
/**
 * CPU time of this thread, where the whole relay runs, in ms. Unlike wall time it leaves out the
 * time the process waits for a core, which a busy machine adds to short rounds far more, in
 * proportion, than to long ones. The kernel counts it in ticks, so only a mean over rounds means anything.
 */
const threadCpuMs =
	typeof process.threadCpuUsage === "function"
		? () => {
				const { user, system } = process.threadCpuUsage();
				return (user + system) / 1000;
			}
		: () => Number.NaN;
/**
 * Arguments, for a quick look at one load while changing the relay (run.mjs passes none): the loads
 * to run (e.g. `1000`), and `--channel` to leave out the broadcast baseline. With any of them the
 * bus-only rows are skipped and a summary of each load is also printed on stderr.
 */
const args = process.argv.slice(2);
const onlyLoads = args.filter((a) => /^\d+$/.test(a)).map(Number);
const quick = args.length > 0;
const VARIANTS = args.includes("--channel") ? { channel: createHandle } : { channel: createHandle, broadcast: broadcastHandle };
const OPTIONS = ["even", "odd"];
/**
 * Rounds per load: warm-up (not recorded), timed, and metered for allocation (apart, so the GC
 * profiler stays out of the timed ones); gcEvery: a forced full GC before every gcEvery-th round in
 * the forced-GC mode. Sized to keep this file near 45 s on 2 idle cores.
 */
const PLAN = [
	{ n: 1, warmup: 300, rounds: 3000, gcEvery: 200, metered: 300 },
	{ n: 100, warmup: 10, rounds: 200, gcEvery: 10, metered: 20 },
	{ n: 1000, warmup: 2, rounds: 12, gcEvery: 1, metered: 4 },
].filter((step) => onlyLoads.length === 0 || onlyLoads.includes(step.n));
/** The two ways each load runs: whether rounds start with a forced full GC on PLAN's schedule. */
const MODES = { forcedGc: true, steady: false };

const usedHeapBytes = () => v8.getHeapStatistics().used_heap_size;

/**
 * Bytes allocated on the JS heap between start() and stop(): the heap's growth plus what every
 * collection in between freed, read from V8's GC profiler, less what the metering itself allocates.
 */
function allocationMeter(overheadBytes = 0) {
	const profiler = new v8.GCProfiler();
	let before = 0;
	return {
		start() {
			profiler.start();
			before = usedHeapBytes();
		},
		stop() {
			const grown = usedHeapBytes() - before;
			const freed = profiler.stop().statistics.reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
			return grown + freed - overheadBytes;
		},
	};
}

/** What metering an empty stretch reports (the heap-statistics objects it builds itself). */
function meterOverhead() {
	const samples = [];
	for (let i = 0; i < 50; i++) {
		const meter = allocationMeter();
		meter.start();
		samples.push(meter.stop());
	}
	return median(samples);
}
const METER_OVERHEAD_BYTES = meterOverhead();

/**
 * One round: n askers ask one question each, all at once; resolves when every call has settled.
 * With `meter`, also the bytes allocated while the askers were served (the timed stretch).
 */
async function round(variant, n, { meter = false } = {}) {
	const handle = VARIANTS[variant]();
	const issuedAt = new Float64Array(n);
	const shownAt = new Float64Array(n);
	const settledAt = new Float64Array(n);
	// Answers at once; the answer depends on the asker, so a reply delivered to the wrong asker shows.
	// Has every method the host calls on pi's ctx.ui, setStatus included (the waiting-count footer).
	const ui = {
		select(title, options) {
			const i = Number(title.slice(1, title.indexOf("]")));
			shownAt[i] = performance.now();
			return Promise.resolve(options[i & 1]);
		},
		input: () => Promise.resolve(undefined),
		notify() {},
		setStatus() {},
	};
	const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
	if (!role) throw new Error("could not claim the host role");
	let wrong = 0;
	const calls = new Array(n);
	const allocation = meter ? allocationMeter(METER_OVERHEAD_BYTES) : undefined;
	allocation?.start();
	const cpuStartedAt = threadCpuMs();
	const startedAt = performance.now();
	for (let i = 0; i < n; i++) {
		issuedAt[i] = performance.now();
		calls[i] = askViaHost({
			handle,
			asker: { label: String(i), sessionId: `asker-${i}` },
			// Distinct per asker: the host shows identical concurrent questions only once.
			questions: [{ question: `Proceed with step ${i}?`, options: OPTIONS }],
			budgetMs: 300_000,
			dialogTimeoutMs: 180_000,
		}).then((envelope) => {
			settledAt[i] = performance.now();
			if (envelope.status !== "ok" || envelope.answers[0]?.answer !== OPTIONS[i & 1]) wrong++;
		});
	}
	await Promise.all(calls);
	const totalMs = performance.now() - startedAt;
	const cpuMs = threadCpuMs() - cpuStartedAt;
	const allocatedBytes = allocation?.stop();
	role.release("quit", "round over");
	if (wrong > 0) throw new Error(`${variant}, ${n} askers: ${wrong} calls did not get their own answer`);
	return { totalMs, cpuMs, allocatedBytes, issuedAt, shownAt, settledAt };
}

/** One load in one mode: warm-up, timed rounds, then metered rounds, the variants interleaved. */
async function measure({ n, warmup, rounds, gcEvery, metered }, forceGc) {
	const names = Object.keys(VARIANTS);
	// Alternate which variant goes first, so neither always runs right after a GC.
	const orderOf = (r) => (r % 2 === 0 ? names : [...names].reverse());
	const collect = (r) => {
		if (forceGc && r % gcEvery === 0) gc();
	};
	for (let r = 0; r < warmup; r++) for (const name of names) await round(name, n);
	const acc = Object.fromEntries(names.map((name) => [name, { totals: [], cpus: [], e2e: [], service: [], allocated: [] }]));
	for (let r = 0; r < rounds; r++) {
		for (const name of orderOf(r)) {
			collect(r);
			const { totalMs, cpuMs, issuedAt, shownAt, settledAt } = await round(name, n);
			const a = acc[name];
			a.totals.push(totalMs);
			a.cpus.push(cpuMs);
			for (let i = 0; i < n; i++) {
				a.e2e.push((settledAt[i] - issuedAt[i]) * 1000);
				a.service.push((settledAt[i] - shownAt[i]) * 1000);
			}
		}
	}
	for (let r = 0; r < metered; r++) {
		for (const name of orderOf(r)) {
			collect(r);
			acc[name].allocated.push((await round(name, n, { meter: true })).allocatedBytes);
		}
	}
	const result = { n, rounds, meteredRounds: metered };
	for (const name of names) {
		const { totals, cpus, e2e, service, allocated } = acc[name];
		const totalMs = median(totals);
		const cpuMeanMs = mean(cpus);
		result[name] = {
			totalMs,
			bestTotalMs: Math.min(...totals),
			cpuMeanMs,
			perQuestionUs: (totalMs * 1000) / n,
			cpuPerQuestionUs: (cpuMeanMs * 1000) / n,
			allocatedBytesPerQuestion: median(allocated) / n,
			e2eUs: summary(e2e),
			serviceUs: summary(service),
		};
	}
	return result;
}

const STAGES = ["queued", "shown", "answered"];

/**
 * The bus traffic of a round without the host, to tell routing from the host's own work: n askers
 * listen the way askViaHost does, then each request gets the replies a host sends it (three
 * progress replies, then its result, after which its asker stops listening). Returns ms.
 */
function busRound(variant, n) {
	const { bus } = VARIANTS[variant]();
	const ids = Array.from({ length: n }, (_, i) => `request-${i}`);
	let delivered = 0;
	for (const id of ids) {
		const channel = replyChannel(id);
		const onReply = (reply) => {
			if (reply.id !== id) return;
			delivered++;
			if (reply.kind === "result") bus.off(channel, onReply);
		};
		bus.on(channel, onReply);
	}
	const started = performance.now();
	for (const id of ids) {
		for (const stage of STAGES) bus.emit(replyChannel(id), { v: PROTOCOL_VERSION, id, kind: "progress", stage, answers: [] });
		bus.emit(replyChannel(id), { v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [] });
	}
	const ms = performance.now() - started;
	if (delivered !== n * (STAGES.length + 1)) throw new Error(`${variant}: ${delivered} replies delivered, expected ${n * (STAGES.length + 1)}`);
	return ms;
}

function measureBus(n, rounds, warmup = 3) {
	const names = Object.keys(VARIANTS);
	const totals = Object.fromEntries(names.map((name) => [name, []]));
	for (let r = 0; r < warmup + rounds; r++)
		for (const name of names) {
			const ms = busRound(name, n);
			if (r >= warmup) totals[name].push(ms);
		}
	return { n, ...Object.fromEntries(names.map((name) => [name, { totalMs: median(totals[name]) }])) };
}

const modes = Object.fromEntries(Object.keys(MODES).map((mode) => [mode, []]));
for (const step of PLAN) {
	// Forced GC first, as the figure always ran; the steady rounds then start from its warm code.
	for (const [mode, forceGc] of Object.entries(MODES)) {
		const started = performance.now();
		const figures = await measure(step, forceGc);
		modes[mode].push(figures);
		process.stderr.write(`  relay: ${step.n} asker(s), ${mode}, done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
		if (quick) {
			const c = figures.channel;
			process.stderr.write(
				`    channel: ${c.perQuestionUs.toFixed(1)} µs/question (best ${((c.bestTotalMs * 1000) / step.n).toFixed(1)}), thread CPU ${c.cpuPerQuestionUs.toFixed(1)} µs, ${(c.allocatedBytesPerQuestion / 1024).toFixed(2)} KiB allocated\n`,
			);
		}
	}
}
gc();
const bus = quick ? [] : [measureBus(100, 200), measureBus(1000, 20)];
process.stdout.write(`${JSON.stringify({ ...modes, meterOverheadBytes: METER_OVERHEAD_BYTES, bus })}\n`);
