/**
 * Figure 5: what a question from another process costs on top of one asked in the host's own
 * process. This process holds the host role, with a UI that answers at once, and serves the
 * process endpoint (the local Unix socket) as the extension does; it forks remote-asker.mjs with
 * the endpoint advertised in its environment. The same calls then run, in interleaved blocks,
 * through askViaHost here and through askRemote there, socket hop and all: one after another,
 * and 100 at once (with a full collection before each block, and steady, without). Prints one JSON
 * document on stdout. Run with --expose-gc (run.mjs does).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asking/asker.ts";
import { closeProcessEndpoint, ensureProcessEndpoint } from "../extensions/checkpoint-bridge/transports/local/index.ts";
import { concurrent, sequential } from "./ask-loop.mjs";
import { answeringHost, forkAsker } from "./asker-process.mjs";
import { median, summary } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const gc = globalThis.gc ?? (() => {});
// Sized to keep this file near 10 s on 2 idle cores.
const SEQUENTIAL = { warmup: 200, blocks: 5, perBlock: 100 };
const CONCURRENT = { askers: 100, warmup: 3, rounds: 30 };

const host = answeringHost();
const { handle, role } = host;
// The endpoint advertises itself in this environment, which the asking process inherits.
const childEnv = { ...process.env };
await ensureProcessEndpoint(handle, { env: childEnv });

const asker = await forkAsker(join(here, "remote-asker.mjs"), childEnv, "remote asker");
// Remote askers are shown as `<label> (pid <their pid>)`: counts the dialogs that came over the socket.
host.tag = `(pid ${asker.pid})`;
const remote = (loop, n, options) => asker.block(loop, n, options);

/** The same block here, through the in-process bus. */
function inProcess(loop, n, { gc: collect = true } = {}) {
	if (collect) gc();
	const ask = (options) => askViaHost({ handle, ...options });
	return loop === "sequential" ? sequential(ask, n) : concurrent(ask, n);
}

const SIDES = { inProcess, remote };
const names = Object.keys(SIDES);
let remoteCalls = 0;
/**
 * Runs `loop` on both sides `times` times, alternating which goes first; returns what each block gave.
 * `gc: false`: no full collection before each block (steady state; a forced one also throws away
 * optimised code, so the block after it measures V8 compiling again as much as the relay).
 */
async function interleaved(loop, n, times, options = {}) {
	const blocks = Object.fromEntries(names.map((name) => [name, []]));
	for (let b = 0; b < times; b++)
		for (const name of b % 2 === 0 ? names : [...names].reverse()) {
			blocks[name].push(await SIDES[name](loop, n, options));
			if (name === "remote") remoteCalls += n;
		}
	return blocks;
}

await interleaved("sequential", SEQUENTIAL.warmup, 1);
const seq = await interleaved("sequential", SEQUENTIAL.perBlock, SEQUENTIAL.blocks);
await interleaved("concurrent", CONCURRENT.askers, CONCURRENT.warmup);
const conc = await interleaved("concurrent", CONCURRENT.askers, CONCURRENT.rounds);
const steady = await interleaved("concurrent", CONCURRENT.askers, CONCURRENT.rounds, { gc: false });

await asker.close();
role.release("quit", "bench over");
await closeProcessEndpoint("bench over");
if (host.tagged !== remoteCalls) throw new Error(`${host.tagged} dialogs came from the asking process, expected ${remoteCalls}`);

const result = {
	sequential: { calls: SEQUENTIAL.blocks * SEQUENTIAL.perBlock },
	/** 100 at once, a full collection before each block in both processes. */
	concurrent: { askers: CONCURRENT.askers, rounds: CONCURRENT.rounds },
	/** The same, never a forced collection. */
	concurrentSteady: { askers: CONCURRENT.askers, rounds: CONCURRENT.rounds },
	remoteDialogs: host.tagged,
};
/** Per call latencies and the median round's wall time, amortized per question. */
function rounds(blocks) {
	const totals = blocks.map((b) => b.totalMs);
	const totalMs = median(totals);
	return {
		e2eUs: summary(blocks.flatMap((b) => b.latenciesUs)),
		totalMs,
		bestTotalMs: Math.min(...totals),
		perQuestionUs: (totalMs * 1000) / CONCURRENT.askers,
	};
}
for (const name of names) {
	result.sequential[name] = { e2eUs: summary(seq[name].flatMap((b) => b.latenciesUs)) };
	result.concurrent[name] = rounds(conc[name]);
	result.concurrentSteady[name] = rounds(steady[name]);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
