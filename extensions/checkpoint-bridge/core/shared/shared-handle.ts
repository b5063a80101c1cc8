/**
 * The state every copy of the extension in a process shares. pi gives each session (and each
 * pi-subagents child) its own copy of this module and its own `pi.events`, so the only thing they
 * have in common is `globalThis`: the handle lives there under a registry symbol, defined
 * read-only, and its bus's methods are pinned so other code cannot swap them.
 */
import { createRequire } from "node:module";
import type { EventEmitter } from "eventemitter3";
import type { Snapshot } from "./observers.ts";
import { processSlot } from "./process-slot.ts";
import { type BusEvents, PROTOCOL_VERSION, type RelayLate, type RelayReply } from "./protocol.ts";

// Through Node's own loader, once per process: pi's loader runs every file it loads again for each session it
// starts, where this package alone costs about 3 ms (ADR-0040).
const Emitter: typeof EventEmitter = createRequire(import.meta.url)("eventemitter3").EventEmitter;

/** Registry key of the shared handle; `Symbol.for` makes it the same in every module copy. */
export const HANDLE_KEY = Symbol.for("checkpoint-bridge.handle");

/** What anyone may know of the session holding the host role: public facts, nothing that acts for it. */
export interface HostClaim {
	/** The host session's id. */
	sessionId: string;
	/** The protocol version the host speaks. */
	protocol: number;
	/** What is open right now, oldest first. */
	snapshot?: () => Snapshot;
}

/** What only the claimant gets: the seal for its replies and the release of its role. Nobody else can obtain either. */
export interface HostCapability {
	/** Seals a reply: a deeply frozen copy, bound to the request id it carries. Send the copy it returns. */
	readonly seal: ReplySeal;
	/**
	 * Seals a reply the host built itself for this one send, without copying it: freezes it deeply
	 * in place and binds it to the request id it carries, so it cannot be rewritten, by its builder
	 * either. Only for plain data nobody else holds a reference to; anything else goes through `seal`.
	 * Absent on a handle made by an earlier release: `seal` does the same there, with a copy.
	 */
	readonly sealBuilt?: ReplySeal;
	/** Frees the role; false when this claim no longer holds it. The seal keeps working for replies still owed. */
	release(): boolean;
}

export interface SharedHandle {
	/** Protocol version of the copy that created the handle. */
	readonly protocol: number;
	/** The process-global bus. */
	readonly bus: EventEmitter<BusEvents>;
	/** The current host's public facts, if any session holds the role. */
	host(): Readonly<HostClaim> | undefined;
	/** Claims the host role: the claimant's capability, or undefined when another session holds the role. */
	claimHost(claim: HostClaim): HostCapability | undefined;
	/**
	 * Whether `reply` was sealed by a session that had the host role, for request `requestId`:
	 * askers (and the local endpoint) take no other reply on a request's channel.
	 */
	isFromHost(reply: unknown, requestId: string): boolean;
	/** What the host has open, oldest first; undefined without a host. */
	snapshot(): Snapshot | undefined;
}

/** What an observer uses of the shared handle (docs/observers.md): the bus, the snapshot and the host's public facts. @public */
export type ObserverHandle = Pick<SharedHandle, "bus" | "snapshot" | "host">;

/** Seals a reply as the host's: returns a deeply frozen copy bound to the reply's request id. */
export type ReplySeal = <T extends RelayReply | RelayLate>(reply: T) => T;

/** A copy of `value` whose every plain object and array is a copy of its own (anything else is kept as it is), not frozen yet. */
function plainCopy<T>(value: T): T {
	if (typeof value !== "object" || value === null) return value;
	if (Array.isArray(value)) return value.map(plainCopy) as T;
	// fromEntries defines each key as an own property: a "__proto__" key stays a key.
	return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plainCopy(inner)])) as T;
}

/** A base class whose constructor hands back the object it is given, so a subclass adds its private fields to that object. */
class Stamped {
	constructor(target: object) {
		// biome-ignore lint/correctness/noConstructorReturn: the object given is the instance, so that Seal's private fields go onto a reply
		return target;
	}
}

/**
 * The seal of a reply: which handle's host role sealed it, for which request id. Private fields:
 * no code outside this class reads or writes them, and a copy has none. A field on the reply itself,
 * not an entry of a WeakMap: one of those per reply was the dearest part of sending it, and every
 * entry was one more for the collector to trace.
 */
class Seal extends Stamped {
	readonly #by: object;
	readonly #id: string;

	constructor(reply: object, by: object, id: string) {
		super(reply);
		this.#by = by;
		this.#id = id;
	}

	/** Whether `value` carries the seal of `by` for request `id`. */
	static holds(value: object, by: object, id: string): boolean {
		return #id in value && value.#id === id && value.#by === by;
	}
}

/** Freezes `value` and every object and array in it, in place. */
function deepFreeze<T>(value: T): T {
	if (typeof value !== "object" || value === null) return value;
	// Indexed, and only objects recursed into: every reply is frozen, and most of its fields are text.
	if (Array.isArray(value)) {
		for (let i = 0; i < value.length; i++) {
			const inner: unknown = value[i];
			if (typeof inner === "object" && inner !== null) deepFreeze(inner);
		}
	} else
		for (const key in value) {
			const inner: unknown = value[key];
			if (typeof inner === "object" && inner !== null) deepFreeze(inner);
		}
	return Object.freeze(value);
}

/** The bus methods every copy relies on: pinned as own, read-only properties. */
const PINNED = ["emit", "on", "once", "off", "removeListener", "addListener", "removeAllListeners", "listeners", "listenerCount", "eventNames"] as const;

/** A fresh handle, not registered anywhere (tests make their own). */
export function createHandle(): SharedHandle {
	let current: { facts: Readonly<HostClaim>; token: object } | undefined;
	const bus = new Emitter<BusEvents>();
	// Replies the host role sent carry this handle's seal (Seal), bound to the request id each was sealed
	// for. A sealed reply is frozen right after, so its id and content cannot be rewritten, and a copy has no seal.
	const sealer = {};
	const seal: ReplySeal = (reply) => {
		const copy = plainCopy(reply);
		new Seal(copy, sealer, copy.id);
		return deepFreeze(copy);
	};
	const sealBuilt: ReplySeal = (reply) => {
		try {
			new Seal(reply, sealer, reply.id);
		} catch {
			// Sealed once already (or frozen, where the engine refuses new fields): the copy gets a seal of its own.
			return seal(reply);
		}
		return deepFreeze(reply);
	};
	for (const name of PINNED) {
		const method = (Emitter.prototype as unknown as Record<string, unknown>)[name];
		Object.defineProperty(bus, name, { value: method, writable: false, configurable: false, enumerable: false });
	}
	return Object.freeze({
		protocol: PROTOCOL_VERSION,
		bus,
		host: () => current?.facts,
		claimHost(claim: HostClaim) {
			if (current) return undefined;
			// A 0.1.0 copy claims with a claim id and expects a bare seal back, a parking lot on the handle, and a release by
			// that id: none of which this handle has. Refused, it hosts nothing here and never holds the role half claimed.
			if (typeof claim !== "object" || claim === null || "claimId" in claim) return undefined;
			// The token never leaves this closure: only the capability below can release this claim.
			const token = {};
			const { sessionId, protocol, snapshot } = claim;
			current = { token, facts: Object.freeze({ sessionId, protocol, ...(snapshot ? { snapshot } : {}) }) };
			return Object.freeze({
				seal,
				sealBuilt,
				release() {
					if (current?.token !== token) return false;
					current = undefined;
					return true;
				},
			});
		},
		isFromHost: (reply: unknown, requestId: string) =>
			typeof reply === "object" && reply !== null && typeof requestId === "string" && Seal.holds(reply, sealer, requestId),
		snapshot: () => current?.facts.snapshot?.(),
	});
}

/** The process's handle, created by the first copy that asks. Not writable, not replaceable. */
export function sharedHandle(target: object = globalThis): SharedHandle {
	return processSlot(target, HANDLE_KEY, createHandle);
}
