/**
 * Figure 5's other process: asks the host advertised in CHECKPOINT_BRIDGE_ENDPOINT through
 * askRemote, as a pi process spawned by the host would. remote.mjs forks it and drives it over
 * the IPC channel, one block of calls per message, so the host can interleave its own blocks;
 * each reply carries the latencies timed here, around askRemote itself.
 */
import { askRemote, endpointFromEnv } from "../extensions/checkpoint-bridge/transports/local/index.ts";
import { concurrent, sequential } from "./ask-loop.mjs";

const endpoint = endpointFromEnv(process.env);
if (!endpoint) throw new Error("no endpoint advertised in the environment");
const gc = globalThis.gc ?? (() => {});
const ask = (options) => askRemote(endpoint, options);
const LOOPS = { sequential, concurrent };

process.on("message", async ({ loop, n }) => {
	try {
		gc();
		process.send({ ok: true, ...(await LOOPS[loop](ask, n)) });
	} catch (error) {
		process.send({ ok: false, message: error instanceof Error ? error.message : String(error) });
	}
});
// The host closes the channel when it is done.
process.on("disconnect", () => process.exit(0));
// Messages sent before a listener exists are lost: the host waits for this one.
process.send({ ready: true });
