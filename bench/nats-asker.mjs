/**
 * Figure 7's other process: asks over NATS with askOverNats on one connection kept across calls, as the tool
 * does in a process without a host of its own. nats.mjs forks it and drives it over IPC.
 */
import { askOverNats, connectBroker, pooledBroker, readNatsConfig } from "../extensions/checkpoint-bridge/transports/nats/index.ts";
import { serveAskLoops } from "./asker-process.mjs";

const nats = readNatsConfig(process.env);
if (nats.kind !== "ok") throw new Error(`CHECKPOINT_BRIDGE_NATS: ${JSON.stringify(nats)}`);
const { config } = nats;
const connect = () => pooledBroker(config, () => connectBroker(config, { name: "bench asker" }));
serveAskLoops((options) => askOverNats({ ...options, connect, config }));
