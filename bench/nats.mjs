/**
 * Figure 7: a question over NATS, beside figure 5's local socket and in-process figures. Starts a
 * real nats-server on a free loopback port; this process holds the host role (UI answers at once)
 * and serves the room as the extension does; it forks nats-asker.mjs, which asks through
 * askOverNats (one connection kept across calls, as the tool does): one after another, and 100 at once.
 * Prints one JSON document on stdout ({ skipped } when nats-server is not installed).
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { closeProcessRoom, ensureProcessRoom, readNatsConfig } from "../extensions/checkpoint-bridge/transports/nats/index.ts";
import { answeringHost, forkAsker } from "./asker-process.mjs";
import { requireNatsServer, startNatsServer } from "./nats-server.mjs";
import { median, summary } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// Sized to keep this file near 15 s on 2 idle cores. One at a time, the warm-up and the blocks of 100 of figure 5's socket
// column, which this one is read against: after only 50 calls the NATS client's code is still cold.
const SEQUENTIAL = { warmup: 200, blocks: 3, perBlock: 100 };
const CONCURRENT = { askers: 100, warmup: 2, rounds: 15 };

requireNatsServer();
const url = await startNatsServer("nats");

const env = { ...process.env, CHECKPOINT_BRIDGE_NATS: url, CHECKPOINT_BRIDGE_ROOM: "bench" };
const config = readNatsConfig(env);
if (config.kind !== "ok") throw new Error(JSON.stringify(config));
const host = answeringHost();
const { handle, role } = host;
const served = await ensureProcessRoom(handle, config.config);
if (served.kind !== "serving") throw new Error(`the bench room is ${served.kind}`);

const asker = await forkAsker(join(here, "nats-asker.mjs"), env, "NATS asker");
// NATS askers are shown as `<label> (<machine>:<pid>)`: counts the dialogs that came over NATS.
host.tag = `:${asker.pid})`;
const block = (loop, n) => asker.block(loop, n);

let calls = 0;
await block("sequential", SEQUENTIAL.warmup);
const seq = { latenciesUs: [] };
for (let b = 0; b < SEQUENTIAL.blocks; b++) seq.latenciesUs.push(...(await block("sequential", SEQUENTIAL.perBlock)).latenciesUs);
for (let i = 0; i < CONCURRENT.warmup; i++) await block("concurrent", CONCURRENT.askers);
const rounds = [];
for (let i = 0; i < CONCURRENT.rounds; i++) rounds.push(await block("concurrent", CONCURRENT.askers));
calls = SEQUENTIAL.warmup + SEQUENTIAL.blocks * SEQUENTIAL.perBlock + (CONCURRENT.warmup + CONCURRENT.rounds) * CONCURRENT.askers;

await asker.close();
await closeProcessRoom("bench over");
role.release("quit", "bench over");
if (host.tagged !== calls) throw new Error(`${host.tagged} dialogs came over NATS, expected ${calls}`);

const totals = rounds.map((r) => r.totalMs);
const totalMs = median(totals);
const result = {
	server: spawnSync("nats-server", ["--version"], { encoding: "utf8" }).stdout.trim(),
	sequential: { calls: SEQUENTIAL.blocks * SEQUENTIAL.perBlock, e2eUs: summary(seq.latenciesUs) },
	concurrent: {
		askers: CONCURRENT.askers,
		rounds: CONCURRENT.rounds,
		e2eUs: summary(rounds.flatMap((r) => r.latenciesUs)),
		totalMs,
		bestTotalMs: Math.min(...totals),
		perQuestionUs: (totalMs * 1000) / CONCURRENT.askers,
	},
	natsDialogs: host.tagged,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
// The nats-server child would keep this process alive; the exit hook stops it.
process.exit(0);
