/** The NATS transport: what the extension wires in when CHECKPOINT_BRIDGE_NATS is set. The client itself loads on first use. */
export { askOverNats, machineName, type NatsAskOptions } from "./asker.ts";
export { connectBroker, type Broker } from "./broker.ts";
export { ENV_NATS, readNatsConfig, type NatsConfig, type NatsConfigResult } from "./config.ts";
export { closeProcessRoom, ensureProcessRoom, type RoomStart } from "./process-room.ts";
export { natsAsker, serveRoom, type RoomServer } from "./room-server.ts";
