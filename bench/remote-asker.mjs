/**
 * Figure 5's other process: asks the host advertised in CHECKPOINT_BRIDGE_ENDPOINT through
 * askRemote, as a pi process spawned by the host would. remote.mjs forks it and drives it over
 * the IPC channel (asker-process.mjs); each reply carries the latencies timed here, around
 * askRemote itself.
 */
import { askRemote, endpointFromEnv } from "../extensions/checkpoint-bridge/transports/local/index.ts";
import { serveAskLoops } from "./asker-process.mjs";

const endpoint = endpointFromEnv(process.env);
if (!endpoint) throw new Error("no endpoint advertised in the environment");
serveAskLoops((options) => askRemote(endpoint, options));
