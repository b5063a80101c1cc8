/** The NATS transport: askers on other machines reach the host through a room on a NATS server (CHECKPOINT_BRIDGE_NATS). */
import type { Transport } from "../../core/asking/transport.ts";
import { askOverNats, noticeOverNats, releaseLateWaits } from "./asker.ts";
import { type Broker, connectBroker } from "./broker.ts";
import { type NatsConfig, type NatsReach, readNatsConfig } from "./config.ts";
import { pooledBroker } from "./pool.ts";
import { closeProcessRoom, ensureProcessRoom } from "./process-room.ts";

export { askOverNats, machineName, type NatsAskOptions, noticeOverNats, releaseLateWaits } from "./asker.ts";
export { type Broker, connectBroker } from "./broker.ts";
export { ENV_NATS, type NatsConfig, type NatsConfigResult, type NatsReach, readNatsConfig } from "./config.ts";
export { pooledBroker } from "./pool.ts";
export { closeProcessRoom, ensureProcessRoom, type RoomStart } from "./process-room.ts";
export { natsAsker, type RoomServer, serveRoom } from "./room-server.ts";

/** How this process's one NATS connection is named to the broker. */
const BROKER_NAME = `checkpoint-bridge asker (pid ${process.pid})`;

const tell = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The transport over `connect` (connectBroker; a test's broker). */
export function natsOver(connect: typeof connectBroker): Transport<NatsReach> {
	// One connection per asker process, kept across calls.
	const pooled = (config: NatsConfig) => () => pooledBroker(config, (): Promise<Broker> => connect(config, { name: BROKER_NAME }));
	return {
		ask: (reach, options) => askOverNats({ ...options, connect: pooled(reach.config), config: reach.config }),
		notice: (reach, notice) => noticeOverNats({ connect: pooled(reach.config), config: reach.config, notice }),
		releaseLate: releaseLateWaits,
		// Askers on other machines reach the host through the room (ADR-0009).
		async serve(handle, ui) {
			const nats = readNatsConfig();
			if (nats.kind !== "ok") return;
			for (const warning of nats.warnings) ui.notify(`checkpoint-bridge: ${warning}`, "warning");
			try {
				const started = await ensureProcessRoom(handle, nats.config);
				ui.notify(
					started.kind === "serving"
						? `checkpoint-bridge: serving room "${started.room}" on NATS`
						: `checkpoint-bridge: room "${started.room}" is already served by another host on NATS; this session does not serve it`,
					started.kind === "serving" ? "info" : "warning",
				);
				if (started.kind === "serving" && started.warning) ui.notify(`checkpoint-bridge: ${started.warning}`, "warning");
			} catch (error) {
				ui.notify(`checkpoint-bridge: cannot serve room "${nats.config.room}" on NATS: ${tell(error)}`, "warning");
			}
		},
		// A quitting host lets its askers go first, so those with a grace wait for the next host instead of settling.
		close: (note) => closeProcessRoom(note),
		closesFirst: true,
	};
}

export const transport = natsOver(connectBroker);
