/**
 * Figure 5: what a question from another process costs on top of one asked in the host's own
 * process. This process holds the host role, with a UI that answers at once, and serves the
 * process endpoint (the local Unix socket) as the extension does; it forks remote-asker.mjs with
 * the endpoint advertised in its environment. The same calls then run, in interleaved blocks,
 * through askViaHost here and through askRemote there, socket hop and all: one after another,
 * and 100 at once. Prints one JSON document on stdout.
 * Run with --expose-gc (run.mjs does): both processes collect garbage before each block.
 */
import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asker.ts";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host-role.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { closeProcessEndpoint, ensureProcessEndpoint } from "../extensions/checkpoint-bridge/transports/local/index.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared-handle.ts";
import { concurrent, sequential, stepOf } from "./ask-loop.mjs";
import { median, summary } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const gc = globalThis.gc ?? (() => {});
// Sized to keep this file near 10 s on 2 idle cores.
const SEQUENTIAL = { warmup: 200, blocks: 5, perBlock: 100 };
const CONCURRENT = { askers: 100, warmup: 3, rounds: 30 };

const handle = createHandle();
let remoteTag = "";
let remoteDialogs = 0;
const ui = {
	select(title, options) {
		// Remote askers are shown as `<label> (pid <their pid>)`: counts the dialogs that came over the socket.
		if (title.includes(remoteTag)) remoteDialogs++;
		return Promise.resolve(options[stepOf(title) & 1]);
	},
	input: () => Promise.resolve(undefined),
	notify() {},
	setStatus() {},
};
const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
if (!role) throw new Error("could not claim the host role");
// The endpoint advertises itself in this environment, which the asking process inherits.
const childEnv = { ...process.env };
await ensureProcessEndpoint(handle, { env: childEnv });

const child = fork(join(here, "remote-asker.mjs"), [], { env: childEnv, execArgv: ["--expose-gc"], stdio: ["ignore", "ignore", "inherit", "ipc"] });
remoteTag = `(pid ${child.pid})`;
const exited = new Promise((resolve) => child.once("exit", resolve));
// Its first message says it is listening.
await new Promise((resolve, reject) => {
	child.once("message", resolve);
	child.once("exit", (code) => reject(new Error(`the asking process exited (${code}) before it was ready`)));
});

/** One block in the asking process. */
function remote(loop, n) {
	return new Promise((resolve, reject) => {
		const onExit = (code) => reject(new Error(`the asking process exited (${code}) during a ${loop} block`));
		child.once("exit", onExit);
		child.once("message", (reply) => {
			child.off("exit", onExit);
			if (reply.ok) resolve(reply);
			else reject(new Error(`remote asker: ${reply.message}`));
		});
		child.send({ loop, n });
	});
}

/** The same block here, through the in-process bus. */
function inProcess(loop, n) {
	gc();
	const ask = (options) => askViaHost({ handle, ...options });
	return loop === "sequential" ? sequential(ask, n) : concurrent(ask, n);
}

const SIDES = { inProcess, remote };
const names = Object.keys(SIDES);
let remoteCalls = 0;
/** Runs `loop` on both sides `times` times, alternating which goes first; returns what each block gave. */
async function interleaved(loop, n, times) {
	const blocks = Object.fromEntries(names.map((name) => [name, []]));
	for (let b = 0; b < times; b++)
		for (const name of b % 2 === 0 ? names : [...names].reverse()) {
			blocks[name].push(await SIDES[name](loop, n));
			if (name === "remote") remoteCalls += n;
		}
	return blocks;
}

await interleaved("sequential", SEQUENTIAL.warmup, 1);
const seq = await interleaved("sequential", SEQUENTIAL.perBlock, SEQUENTIAL.blocks);
await interleaved("concurrent", CONCURRENT.askers, CONCURRENT.warmup);
const conc = await interleaved("concurrent", CONCURRENT.askers, CONCURRENT.rounds);

child.disconnect();
await exited;
role.release("quit", "bench over");
await closeProcessEndpoint("bench over");
if (remoteDialogs !== remoteCalls) throw new Error(`${remoteDialogs} dialogs came from the asking process, expected ${remoteCalls}`);

const result = {
	sequential: { calls: SEQUENTIAL.blocks * SEQUENTIAL.perBlock },
	concurrent: { askers: CONCURRENT.askers, rounds: CONCURRENT.rounds },
	remoteDialogs,
};
for (const name of names) {
	result.sequential[name] = { e2eUs: summary(seq[name].flatMap((b) => b.latenciesUs)) };
	const totals = conc[name].map((b) => b.totalMs);
	const totalMs = median(totals);
	result.concurrent[name] = {
		e2eUs: summary(conc[name].flatMap((b) => b.latenciesUs)),
		totalMs,
		bestTotalMs: Math.min(...totals),
		perQuestionUs: (totalMs * 1000) / CONCURRENT.askers,
	};
}
process.stdout.write(`${JSON.stringify(result)}\n`);
