/**
 * The transports (core/asking/transport.ts), one line each in TRANSPORTS, in the order a call tries
 * them: a host in this process, the local endpoint of a host in another, a NATS room. Each line
 * finds a host from what is read at the call (the shared handle, the environment, the endpoint's
 * advertisement) without loading the transport's code, which loads at the first call or claim that
 * goes its way. A new transport is a folder under transports/ exporting a `Transport`, and a line here.
 *
 * A call goes the way of the first transport that finds a host; with none, a wrong setting one of
 * them names ends it with `error`, else it settles `no-host`. Everything is read per call, so a host
 * that comes or goes is found at the next call; a host in this process is found first, without
 * reading anything outside it. A host's claim serves along each transport it serves.
 */
import { statSync } from "node:fs";
import type { CallOptions } from "./core/asking/call.ts";
import type { AskerPlace, Reach, ServingNotices, Transport, TransportEntry } from "./core/asking/transport.ts";
import type { RelayNotice } from "./core/shared/protocol.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";
import type { Envelope } from "./model/result.ts";
import { type HostHere, transport as inProcess } from "./transports/in-process/index.ts";
import type { EndpointReach } from "./transports/local/address.ts";
import { findHostEndpoint } from "./transports/local/advertisement.ts";
import { type NatsReach, readNatsConfig } from "./transports/nats/config.ts";

/** A host of this process holds the role on the shared handle: found without reading anything outside the process. */
export const IN_PROCESS: TransportEntry<HostHere> = {
	kind: "host",
	find: ({ handle }) => (handle.host() === undefined ? undefined : { kind: "host" }),
	reachable: () => true,
	// The host's book keeps a timed-out request's end for the asker's session itself (core/delivery/).
	lateEnds: false,
	serves: () => false,
	load: () => inProcess,
};

const socketThere = (path: string) => {
	try {
		return statSync(path).isSocket();
	} catch {
		return false;
	}
};

const LOCAL: TransportEntry<EndpointReach> = {
	kind: "endpoint",
	find: ({ env, cwd }) => {
		const endpoint = findHostEndpoint({ env, cwd });
		return endpoint && { kind: "endpoint", endpoint };
	},
	// The variable alone does not say a host listens: its socket must be there.
	reachable: ({ endpoint }) => socketThere(endpoint.socketPath),
	lateEnds: true,
	serves: () => true,
	load: () => import("./transports/local/index.ts").then((m) => m.transport),
};

const NATS: TransportEntry<NatsReach> = {
	kind: "nats",
	find: ({ env }) => {
		const nats = readNatsConfig(env);
		return nats.kind === "ok" ? { kind: "nats", config: nats.config } : nats.kind === "error" ? { error: nats.error } : undefined;
	},
	// A room cannot be probed without a round trip.
	reachable: () => true,
	lateEnds: true,
	serves: (env) => {
		const nats = readNatsConfig(env);
		return nats.kind === "error" ? { error: `not serving over NATS: ${nats.error}` } : nats.kind === "ok";
	},
	load: () => import("./transports/nats/index.ts").then((m) => m.transport),
};

export const TRANSPORTS: readonly TransportEntry[] = [IN_PROCESS, LOCAL, NATS];

let result: Promise<typeof import("./model/result.ts")> | undefined;
/** The envelope's maker, loaded once at the first call that ends here: every call that goes a transport's way loads it with the call. */
const loadResult = () => (result ??= import("./model/result.ts"));

/** The list a route is chosen from, sent along and served: TRANSPORTS unless a test gives others. */
type List = readonly TransportEntry[];

/** Each transport's code once loaded (or loading): one import for every caller, as pi's loader can hand a second one a module half run. */
const code = new Map<TransportEntry, Transport | Promise<Transport>>();

/** The code of `entry`, loaded at the first call (at once when its line holds it). */
function codeOf(entry: TransportEntry): Transport | Promise<Transport> {
	let loaded = code.get(entry);
	if (!loaded) {
		const loading = entry.load();
		loaded = loading instanceof Promise ? loading.then((ready) => (code.set(entry, ready), ready)) : loading;
		code.set(entry, loaded);
	}
	return loaded;
}

/** The transports whose code is loaded: those a call or a claim went through. */
const loadedTransports = (): Transport[] => [...code.values()].filter((loaded): loaded is Transport => !(loaded instanceof Promise));

const tell = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * At a claim: serves askers along each transport a host of this process serves, one after the other
 * in the list's order, each telling `ui` where or why not. False as soon as `released` says the
 * session ended meanwhile (its claim is void).
 */
export async function serveTransports(handle: SharedHandle, ui: ServingNotices, released: () => boolean, transports: List = TRANSPORTS): Promise<boolean> {
	for (const entry of transports) {
		const serves = entry.serves(process.env);
		if (serves === false) continue;
		if (serves !== true) ui.notify(`checkpoint-bridge: ${serves.error}`, "warning");
		else
			try {
				await (await codeOf(entry)).serve?.(handle, ui);
			} catch (error) {
				ui.notify(`checkpoint-bridge: the ${entry.kind} transport cannot start: ${tell(error)}`, "warning");
			}
		if (released()) return false;
	}
	return true;
}

/** At a quit: closes each transport a host of this process serves, those whose askers wait for the next host (`first`) or the others. */
export async function closeTransports(note: string, first: boolean, transports: List = TRANSPORTS): Promise<void> {
	for (const entry of transports) {
		if (entry.serves(process.env) !== true) continue;
		const transport = await codeOf(entry);
		if (Boolean(transport.closesFirst) === first) await transport.close?.(note);
	}
}

/** The way one call goes: a host found by a transport (its `kind`), a wrong setting, or no host anywhere this process can reach. */
export type Route = Reach | { readonly kind: "misconfigured"; readonly error: string } | { readonly kind: "none" };

/** The route for a call: the first transport in the list that finds a host; else the first wrong setting; else none. */
export function chooseRoute(at: AskerPlace, transports: List = TRANSPORTS): Route {
	let problem: string | undefined;
	for (const entry of transports) {
		const found = entry.find(at);
		if (found === undefined) continue;
		if (typeof found.kind === "string") return found as Reach;
		problem ??= String(found.error);
	}
	return problem === undefined ? { kind: "none" } : { kind: "misconfigured", error: problem };
}

const entryOf = (route: Route, transports: List) => transports.find((entry) => entry.kind === route.kind);

/** Whether a call along `route` reaches a host, told synchronously (for a negotiation that must answer at once). */
export function reachesHost(route: Route, transports: List = TRANSPORTS): boolean {
	return entryOf(route, transports)?.reachable(route) ?? false;
}

/** Sends the call along `route` and resolves with its envelope. Rejects only when the transport's code cannot load. */
export async function askAlong(route: Route, options: CallOptions, handle: SharedHandle, transports: List = TRANSPORTS): Promise<Envelope> {
	if (route.kind === "misconfigured")
		return (await loadResult()).makeEnvelope("error", [], `checkpoint-bridge: ${String(route.error)}`, { asker: options.asker.label, waitedMs: 0 });
	// With no host the bus call settles `no-host` itself, through the same call life as any other.
	const entry = entryOf(route, transports) ?? IN_PROCESS;
	return (await codeOf(entry)).ask(route, options, handle);
}

/**
 * Hands a notice of another extension (interop/dialog-relay.ts) to the host along `route`: at once
 * for a host in this process, once the transport's code is loaded for one in another; with no host
 * it is dropped, as pi's own no-op UI drops it.
 */
export function noticeAlong(route: Route, notice: Omit<RelayNotice, "v">, handle: SharedHandle, transports: List = TRANSPORTS): void {
	const entry = entryOf(route, transports);
	if (!entry) return;
	const send = (transport: Transport) => Promise.resolve(transport.notice(route, notice, handle)).catch(() => {});
	const loaded = codeOf(entry);
	if (loaded instanceof Promise) void loaded.then(send, () => {});
	else void send(loaded);
}

/** The session is gone: the late ends it awaited go to the host's session, over every transport loaded (one never loaded awaits none). */
export function releaseLate(sessionId: string): void {
	for (const loaded of loadedTransports()) loaded.releaseLate?.(sessionId);
}

/** A call to the host of this process over the bus (a host asking its own questions again). */
export const askHere = (options: CallOptions, handle: SharedHandle) => askAlong({ kind: IN_PROCESS.kind }, options, handle);

/** The way calls go from this session, chosen per call: a host that comes or goes is found at the next one. */
export interface Ways {
	/** The route a call would take now. */
	now(): Route;
	/** Whether a call now reaches a host (reachesHost). */
	reachable(): boolean;
	/**
	 * Sends a call the way calls go now (askAlong). `late` adds where the call's late end goes, asked
	 * for only when the way taken sends one (`lateEnds`): a call to a host of this process loads nothing for it.
	 */
	ask(options: CallOptions, late?: (options: CallOptions) => CallOptions | Promise<CallOptions>): Promise<Envelope>;
	/** Sends another extension's notice the way calls go now (noticeAlong). */
	notice(notice: Omit<RelayNotice, "v">): void;
	/** The session is gone: the late ends it awaited go to the host's session (releaseLate). */
	releaseLate(sessionId: string): void;
}

/** The ways of a session of this process over `handle`, read in this process's environment and working directory. */
export function waysFrom(handle: SharedHandle, transports: List = TRANSPORTS): Ways {
	const now = () => chooseRoute({ handle, env: process.env, cwd: process.cwd() }, transports);
	return {
		now,
		reachable: () => reachesHost(now(), transports),
		ask: async (options, late) => {
			const route = now();
			return askAlong(route, late && entryOf(route, transports)?.lateEnds ? await late(options) : options, handle, transports);
		},
		notice: (notice) => noticeAlong(now(), notice, handle, transports),
		releaseLate,
	};
}
