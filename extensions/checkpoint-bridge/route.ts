/**
 * Which way an asker's call goes, and sending it that way. The order: a host in this process, the
 * local endpoint of a host that spawned this process, a NATS room, else none (the call settles
 * `no-host`). Everything is read per call, so a host that comes or goes is found at the next call;
 * a host in this process is found without reading anything outside it.
 */
import { statSync } from "node:fs";
import type { CallOptions } from "./core/asking/call.ts";
import { readHostGrace } from "./core/shared/config.ts";
import { PROTOCOL_VERSION, type RelayNotice } from "./core/shared/protocol.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";
import type { LoadNats } from "./host-life.ts";
import { type Envelope, makeEnvelope } from "./model/result.ts";
import type { EndpointAddress } from "./transports/local/address.ts";
import { findHostEndpoint } from "./transports/local/advertisement.ts";
import { type NatsConfig, type NatsConfigResult, readNatsConfig } from "./transports/nats/config.ts";

/** The way one call goes. */
export type Route =
	/** A session of this process holds the host role: over the process-global bus. */
	| { kind: "host" }
	/** A host in another process advertised its local endpoint (CHECKPOINT_BRIDGE_ENDPOINT, or for this working directory). */
	| { kind: "endpoint"; endpoint: EndpointAddress }
	/** A NATS room is configured (CHECKPOINT_BRIDGE_NATS). */
	| { kind: "nats"; config: NatsConfig }
	/** The NATS configuration is wrong: the call ends with `error`, naming it. */
	| { kind: "misconfigured"; error: string }
	/** No host anywhere this process can reach. */
	| { kind: "none" };

/** What the asker's process found, each read at the call. */
export interface RouteFindings {
	/** Whether a session of this process holds the host role. */
	hostHere: boolean;
	/** The endpoint advertised in the environment or for the working directory, if any. */
	endpoint: EndpointAddress | undefined;
	/** The NATS transport's configuration. */
	nats: NatsConfigResult;
}

/** The route for a call: the first of host here, endpoint, NATS room that is there; a broken NATS configuration only when neither of the others is. */
export function chooseRoute(found: RouteFindings): Route {
	if (found.hostHere) return { kind: "host" };
	if (found.endpoint) return { kind: "endpoint", endpoint: found.endpoint };
	if (found.nats.kind === "error") return { kind: "misconfigured", error: found.nats.error };
	if (found.nats.kind === "ok") return { kind: "nats", config: found.nats.config };
	return { kind: "none" };
}

/**
 * Whether a call along `route` reaches a host, told synchronously (for a negotiation that must answer
 * at once): a host here, an advertised endpoint whose socket is there (the variable alone does not say
 * a host listens), or a configured NATS room (which cannot be probed without a round trip).
 */
export function reachesHost(route: Route): boolean {
	if (route.kind === "host" || route.kind === "nats") return true;
	if (route.kind !== "endpoint") return false;
	try {
		return statSync(route.endpoint.socketPath).isSocket();
	} catch {
		return false;
	}
}

let askerModule: Promise<typeof import("./core/asking/asker.ts")> | undefined;
/**
 * The bus's asking side, loaded once at the first call: a session that never asks loads none of it.
 * One import for every caller: pi's loader can hand a second, concurrent import a module half run.
 */
export const loadAsker = () => (askerModule ??= import("./core/asking/asker.ts"));

type LocalClient = Pick<typeof import("./transports/local/index.ts"), "askRemote" | "noticeRemote" | "releaseLateWaits">;
/** The local endpoint's client once loaded: the first call that goes to an endpoint loads it; finding one reads only its advertisement. */
let localClient: LocalClient | undefined;
let localImport: Promise<LocalClient> | undefined;
const loadLocal = (): Promise<LocalClient> =>
	(localImport ??= import("./transports/local/index.ts").then(
		({ askRemote, noticeRemote, releaseLateWaits }) => (localClient = { askRemote, noticeRemote, releaseLateWaits }),
	));

/** The session is gone: its late waits on local endpoints end (nothing to do while the client was never loaded). */
export function releaseLocalLateWaits(sessionId: string): void {
	localClient?.releaseLateWaits(sessionId);
}

/** How this process's one NATS connection is named to the broker. */
const BROKER_NAME = `checkpoint-bridge asker (pid ${process.pid})`;

/** Sends the call along `route` and resolves with its envelope. Rejects only when the NATS transport cannot load. */
export async function askAlong(route: Route, options: CallOptions, via: { handle: SharedHandle; loadNats: LoadNats }): Promise<Envelope> {
	switch (route.kind) {
		case "host":
		case "none":
			// With no host the bus call settles `no-host` itself, through the same call life as any other.
			return (await loadAsker()).askViaHost({ handle: via.handle, ...options });
		case "endpoint": {
			const { askRemote } = await loadLocal();
			// A host that goes away is waited for: the next one in this working directory gets the request again.
			return askRemote(route.endpoint, { ...options, graceMs: readHostGrace().graceMs, find: (gone) => findHostEndpoint({ gone }) });
		}
		case "misconfigured":
			return makeEnvelope("error", [], `checkpoint-bridge: ${route.error}`, { asker: options.asker.label, waitedMs: 0 });
		case "nats": {
			const { config } = route;
			const { askOverNats, connectBroker, pooledBroker } = await via.loadNats();
			// One connection per asker process, kept across calls.
			const connect = () => pooledBroker(config, () => connectBroker(config, { name: BROKER_NAME }));
			return askOverNats({ ...options, connect, config });
		}
	}
}

/**
 * Hands a notice of another extension (interop/dialog-relay.ts) to the host along `route`: on the
 * bus for a host in this process, in a notice frame to the endpoint of a host in another, on the
 * room's notice subject over NATS; with no host it is dropped, as pi's own no-op UI drops it.
 */
export function noticeAlong(route: Route, notice: Omit<RelayNotice, "v">, via: { handle: SharedHandle; loadNats: LoadNats }): void {
	if (route.kind === "host") via.handle.bus.emit("relay:notice", { v: PROTOCOL_VERSION, ...notice });
	else if (route.kind === "endpoint") {
		const { endpoint } = route;
		void loadLocal()
			.then(({ noticeRemote }) => noticeRemote(endpoint, notice))
			.catch(() => {});
	} else if (route.kind === "nats") {
		const { config } = route;
		void via
			.loadNats()
			.then(({ connectBroker, pooledBroker, noticeOverNats }) =>
				noticeOverNats({
					connect: () => pooledBroker(config, () => connectBroker(config, { name: BROKER_NAME })),
					config,
					notice,
				}),
			)
			.catch(() => {});
	}
}

/** The way calls go from this session, chosen per call: a host that comes or goes is found at the next one. */
export interface Ways {
	/** The route a call would take now. */
	now(): Route;
	/** Whether a call now reaches a host (reachesHost). */
	reachable(): boolean;
	/** Sends a call the way calls go now (askAlong). */
	ask(options: CallOptions): Promise<Envelope>;
	/** Sends another extension's notice the way calls go now (noticeAlong). */
	notice(notice: Omit<RelayNotice, "v">): void;
}

/** What is read outside this process to find a host there: the endpoint's advertisement, the NATS settings. */
export interface OutsideReads {
	endpoint(): EndpointAddress | undefined;
	nats(): NatsConfigResult;
}

const OUTSIDE: OutsideReads = { endpoint: () => findHostEndpoint(), nats: () => readNatsConfig() };

/** The ways of a session of this process, over `via`; `outside` only for tests. */
export function waysFrom(via: { handle: SharedHandle; loadNats: LoadNats }, outside: OutsideReads = OUTSIDE): Ways {
	// A host in this process is found on the handle: nothing outside is read for it.
	const now = (): Route =>
		via.handle.host() !== undefined ? { kind: "host" } : chooseRoute({ hostHere: false, endpoint: outside.endpoint(), nats: outside.nats() });
	return {
		now,
		reachable: () => reachesHost(now()),
		ask: (options) => askAlong(now(), options, via),
		notice: (notice) => noticeAlong(now(), notice, via),
	};
}
