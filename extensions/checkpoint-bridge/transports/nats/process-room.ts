/**
 * One room server per process, whichever copy of the extension starts it; like the local endpoint
 * it reaches the host over the process-global bus, so it outlives a host being replaced. One host
 * per room across machines: before serving, the process asks the room's `host` subject, and a
 * room somebody answers for is left alone.
 */

import { FRAME_VERSION } from "../../core/bridge/frames.ts";
import { processSlot, type StartSlot, startOnce, takeStarted } from "../../core/shared/process-slot.ts";
import type { SharedHandle } from "../../core/shared/shared-handle.ts";
import { type Broker, connectBroker } from "./broker.ts";
import type { NatsConfig } from "./config.ts";
import { decodeNatsFrame, encodeNatsFrame } from "./frames.ts";
import { HOST_CHECK_TIMEOUT_MS } from "./liveness.ts";
import { type RoomServer, serveRoom } from "./room-server.ts";
import { roomSubjects } from "./subjects.ts";

/** Registry key of the process's room server; `Symbol.for` makes it the same in every module copy. */
const ROOM_KEY = Symbol.for("checkpoint-bridge.nats-room");

/** How a host's start in a room went. */
export type RoomStart =
	/**
	 * This process serves the room now (or already did). `warning` is set for the first caller only,
	 * when the server let the host in without credentials: anyone who reaches it may read and write the room.
	 */
	| { kind: "serving"; room: string; hostId: string; warning?: string }
	/** Another host answers for the room: this one does not serve it. */
	| { kind: "taken"; room: string; hostId: string };

type Started = RoomStart & { server?: RoomServer; broker?: Broker };
const slotOf = (target: object) => processSlot<StartSlot<Started>>(target, ROOM_KEY, () => ({}));

/** Whether somebody serves the room: the id of the host that says so, else undefined (nobody, or nobody alive). */
async function servingHost(broker: Broker, prefix: string): Promise<string | undefined> {
	const outcome = await broker.request(
		roomSubjects(prefix).host,
		encodeNatsFrame({ type: "host", v: FRAME_VERSION.nats, host: "asking" }),
		HOST_CHECK_TIMEOUT_MS,
	);
	if (outcome.kind === "failed") throw new Error(outcome.message);
	if (outcome.kind !== "reply") return undefined;
	const checked = decodeNatsFrame(outcome.data);
	// Whoever answers on the room's host subject serves it, even in another version.
	return checked.ok && checked.frame.type === "host" ? checked.frame.host : "another version";
}

/** Opens the host's connection. @default connectBroker */
export type HostConnect = (config: NatsConfig) => Promise<Broker>;
const connectHost: HostConnect = (config) => connectBroker(config, { name: `checkpoint-bridge host (room ${config.room})` });

async function start(handle: SharedHandle, config: NatsConfig, connect: HostConnect): Promise<Started> {
	const broker = await connect(config);
	try {
		const other = await servingHost(broker, config.prefix);
		if (other !== undefined) {
			await broker.close();
			return { kind: "taken", room: config.room, hostId: other };
		}
		const server = serveRoom({ broker, handle, prefix: config.prefix });
		const warning =
			broker.authRequired === false
				? `the NATS server at ${config.servers.join(", ")} asks for no credentials: anyone who reaches it can read room "${config.room}"'s questions and answers and ask in it; give the server a token, users or accounts (see the NATS trust boundary in the docs)`
				: undefined;
		return { kind: "serving", room: config.room, hostId: server.hostId, server, broker, ...(warning ? { warning } : {}) };
	} catch (error) {
		await broker.close();
		throw error;
	}
}

/**
 * Serves the room in `config` from this process, once: the first call connects and checks the
 * room, later ones get the same outcome. Rejects, naming what to check, when the server cannot be
 * reached or refuses authorization; a failed or declined start is forgotten, so the next claim retries.
 */
export async function ensureProcessRoom(
	handle: SharedHandle,
	config: NatsConfig,
	target: object = globalThis,
	connect: HostConnect = connectHost,
): Promise<RoomStart> {
	// A room found taken is not kept: the next claim checks again.
	const started = await startOnce(
		slotOf(target),
		() => start(handle, config, connect),
		(outcome) => outcome.kind !== "taken",
	);
	const { kind, room, hostId } = started;
	// Said once per process: later hosts of the same room server are not told again.
	const warning = started.kind === "serving" ? started.warning : undefined;
	if (started.kind === "serving") delete started.warning;
	return kind === "serving" ? { kind, room, hostId, ...(warning ? { warning } : {}) } : { kind, room, hostId };
}

/** Stops serving the room, if this process does: askers with open requests hear it at once (and wait out their grace). */
export async function closeProcessRoom(note?: string, target: object = globalThis): Promise<void> {
	const started = await takeStarted(slotOf(target));
	started?.server?.close(note);
	await started?.broker?.close();
}
