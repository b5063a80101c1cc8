/**
 * The state every copy of the extension in a process shares. pi gives each session (and each
 * pi-subagents child) its own copy of this module and its own `pi.events`, so the only thing they
 * have in common is `globalThis`: the handle lives there under a registry symbol, defined
 * read-only, and its bus's methods are pinned so other code cannot swap them.
 */
import { EventEmitter } from "eventemitter3";
import type { ParkedRequest } from "./dialog-host.ts";
import type { Snapshot } from "./observers.ts";
import { PROTOCOL_VERSION, type BusEvents, type RelayCancel, type RelayReply } from "./protocol.ts";

/** Registry key of the shared handle; `Symbol.for` makes it the same in every module copy. */
export const HANDLE_KEY = Symbol.for("checkpoint-bridge.handle");

/** The session currently holding the host role. */
export interface HostClaim {
	/** Unique per claim, so only the claimant can release it. */
	claimId: string;
	/** The host session's id. */
	sessionId: string;
	/** The protocol version the host speaks. */
	protocol: number;
	/** What is open right now, oldest first. */
	snapshot?: () => Snapshot;
}

export interface SharedHandle {
	/** Protocol version of the copy that created the handle. */
	readonly protocol: number;
	/** The process-global bus. */
	readonly bus: EventEmitter<BusEvents>;
	/** The current host claim, if any. */
	host(): HostClaim | undefined;
	/**
	 * Claim the host role. Returns the claimant's seal, which it puts on every reply it sends, or
	 * undefined when another session holds the role.
	 */
	claimHost(claim: HostClaim): ReplySeal | undefined;
	/** Whether a reply was sealed by a session that held the host role: askers take no other. */
	isFromHost(reply: unknown): boolean;
	/** Release the host role; only the holder of `claimId` can. */
	releaseHost(claimId: string): boolean;
	/** What the host has open, oldest first; undefined without a host. */
	snapshot(): Snapshot | undefined;
	/** Keeps requests of a host being replaced for `graceMs`; `expire` gets them if no new host takes them. */
	park(requests: ParkedRequest[], graceMs: number, expire: (requests: ParkedRequest[]) => void): void;
	/** Takes the parked requests, oldest first (the new host adopts them). */
	takeParked(): ParkedRequest[];
}

/** Marks a reply as sent by the host: only a claimant holds one, so no other code can answer an asker. */
export type ReplySeal = <T extends RelayReply>(reply: T) => T;

/** The bus methods every copy relies on: pinned as own, read-only properties. */
const PINNED = ["emit", "on", "once", "off", "removeListener", "addListener", "removeAllListeners", "listeners", "listenerCount", "eventNames"] as const;

/** A fresh handle, not registered anywhere (tests make their own). */
export function createHandle(): SharedHandle {
	let current: HostClaim | undefined;
	let parked: { requests: ParkedRequest[]; timer: ReturnType<typeof setTimeout> } | undefined;
	const bus = new EventEmitter<BusEvents>();
	// Replies the host role sent; anything else on a reply channel is somebody else's forgery.
	const sealed = new WeakSet<object>();
	const seal: ReplySeal = (reply) => {
		sealed.add(reply);
		return reply;
	};
	for (const name of PINNED) {
		const method = (EventEmitter.prototype as unknown as Record<string, unknown>)[name];
		Object.defineProperty(bus, name, { value: method, writable: false, configurable: false, enumerable: false });
	}
	const unpark = (): ParkedRequest[] => {
		if (!parked) return [];
		clearTimeout(parked.timer);
		bus.off("cancel", dropParked);
		const { requests } = parked;
		parked = undefined;
		return requests;
	};
	// An asker that gives up while its request waits for the next host must not be shown to it.
	const dropParked = (cancel: RelayCancel) => {
		if (parked) parked.requests = parked.requests.filter((p) => p.request.id !== cancel?.id);
	};
	return Object.freeze({
		protocol: PROTOCOL_VERSION,
		bus,
		host: () => current,
		claimHost(claim: HostClaim) {
			if (current) return undefined;
			current = Object.freeze({ ...claim });
			return seal;
		},
		isFromHost: (reply: unknown) => typeof reply === "object" && reply !== null && sealed.has(reply),
		releaseHost(claimId: string) {
			if (current?.claimId !== claimId) return false;
			current = undefined;
			return true;
		},
		snapshot: () => current?.snapshot?.(),
		park(requests: ParkedRequest[], graceMs: number, expire: (requests: ParkedRequest[]) => void) {
			if (requests.length === 0) return;
			const previous = unpark();
			const all = [...previous, ...requests];
			const timer = setTimeout(() => expire(unpark()), graceMs);
			parked = { requests: all, timer };
			bus.on("cancel", dropParked);
		},
		takeParked: () => unpark(),
	});
}

/** The process's handle, created by the first copy that asks. Not writable, not replaceable. */
export function sharedHandle(target: object = globalThis): SharedHandle {
	const slot = target as Record<symbol, SharedHandle | undefined>;
	const existing = slot[HANDLE_KEY];
	if (existing) return existing;
	const handle = createHandle();
	Object.defineProperty(target, HANDLE_KEY, { value: handle, writable: false, configurable: false, enumerable: false });
	return handle;
}
