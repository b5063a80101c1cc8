/**
 * The state every copy of the extension in a process shares. pi gives each session (and each
 * pi-subagents child) its own copy of this module and its own `pi.events`, so the only thing they
 * have in common is `globalThis`: the handle lives there under a registry symbol.
 */
import { EventEmitter } from "eventemitter3";
import { PROTOCOL_VERSION, type BusEvents } from "./protocol.ts";

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
}

export interface SharedHandle {
	/** Protocol version of the copy that created the handle. */
	readonly protocol: number;
	/** The process-global bus. */
	readonly bus: EventEmitter<BusEvents>;
	/** Read the current host claim, if any. */
	host(): HostClaim | undefined;
	/** Claim the host role; false when another session holds it. */
	claimHost(claim: HostClaim): boolean;
	/** Release the host role; only the holder of `claimId` can. */
	releaseHost(claimId: string): boolean;
}

/** A fresh handle, not registered anywhere (tests make their own). */
export function createHandle(): SharedHandle {
	let current: HostClaim | undefined;
	return Object.freeze({
		protocol: PROTOCOL_VERSION,
		bus: new EventEmitter<BusEvents>(),
		host: () => current,
		claimHost(claim: HostClaim) {
			if (current) return false;
			current = Object.freeze({ ...claim });
			return true;
		},
		releaseHost(claimId: string) {
			if (current?.claimId !== claimId) return false;
			current = undefined;
			return true;
		},
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
