/** The NATS transport: what the extension wires in when CHECKPOINT_BRIDGE_NATS is set. The client itself loads on first use. */
export { askOverNats, machineName, type NatsAskOptions, noticeOverNats, releaseLateWaits } from "./asker.ts";
export { type Broker, connectBroker } from "./broker.ts";
export { ENV_NATS, type NatsConfig, type NatsConfigResult, readNatsConfig } from "./config.ts";
export { pooledBroker } from "./pool.ts";
export { closeProcessRoom, ensureProcessRoom, type RoomStart } from "./process-room.ts";
export { natsAsker, type RoomServer, serveRoom } from "./room-server.ts";
