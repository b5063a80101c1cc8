/**
 * The route home (ADR-0034): where an ended request's answer goes once its call has returned, and
 * sending it there. The decision is home.ts's, from facts read here: the process's delivery box (a
 * wait, the asker's session, what was delivered), the takers (a transport that carries ends back to
 * an asker's process registers for the request, explicitly), and what the caller knows (its asker is
 * gone, the store keeps it open). Every caller sends through it: the host role, the bridge, the asking
 * side of `wait: false`; `where` asks the same question with the same facts, so what `/checkpoints`
 * says is where the end goes.
 */
import type { EventEmitter } from "eventemitter3";
import { processSlot } from "../shared/process-slot.ts";
import { type BusEvents, lateChannel, type RelayLate } from "../shared/protocol.ts";
import { type Delivery, type DeliveryBox, deliveryBox, keyOf } from "./delivery.ts";
import { type EndFacts, type EndOf, type Home, homeOf, wakesHost } from "./home.ts";

/** A transport's listener for the late end of one request it carries (protocol.ts RelayLate). */
export type LateTaker = (late: RelayLate, taken: (sent: boolean) => void) => void;

/**
 * Who takes ends back to an asker's process: a transport registers for each request whose late end it
 * carries there, and closes that registration when its client goes. The frame itself travels on the bus's late channel,
 * sealed by the host role, so a copy of the extension in the same process hears it.
 */
export interface EndTakers {
	/** Listens for the late end of `requestId` (its id in the host); the returned function closes the registration, once. */
	register(requestId: string, taker: LateTaker): () => void;
	/** Whether a transport takes the ends of `requestId` back now. */
	has(requestId: string): boolean;
}

/** Registry key of the takers of the process, one per bus; versioned, so a release whose takers differ keeps its own. */
const TAKERS_KEY = Symbol.for("checkpoint-bridge.route-home.takers.v1");

/** The takers on `bus` (the shared handle's), made by the first that asks. */
export function endTakers(bus: EventEmitter<BusEvents>): EndTakers {
	const all = processSlot(globalThis, TAKERS_KEY, () => new WeakMap<object, EndTakers>());
	let takers = all.get(bus);
	if (!takers) {
		const counts = new Map<string, number>();
		takers = {
			register(requestId, taker) {
				counts.set(requestId, (counts.get(requestId) ?? 0) + 1);
				bus.on(lateChannel(requestId), taker);
				let on = true;
				return () => {
					if (!on) return;
					on = false;
					bus.off(lateChannel(requestId), taker);
					const left = (counts.get(requestId) ?? 1) - 1;
					if (left > 0) counts.set(requestId, left);
					else counts.delete(requestId);
				};
			},
			has: (requestId) => counts.has(requestId),
		};
		all.set(bus, takers);
	}
	return takers;
}

/** How the caller can carry an end back to its asker's process; `taken(false)` when it could not. */
type SendBack = (taken: (sent: boolean) => void) => void;

interface SendOptions {
	/** The asker's transport, when one takes ends back to its process. */
	sendBack?: SendBack;
	/** The asker is known to be gone. @default false */
	gone?: boolean;
	/** Lost with its host (`no-host`) while the store keeps it open: not an end yet. @default false */
	openInStore?: boolean;
}

/** What a caller knows of an end beyond its asker, for `where`. */
type Known = Omit<SendOptions, "sendBack"> & { late?: boolean };

/** The one route home: where an end goes, and sending it there. */
export interface HomeRoute {
	/**
	 * Where an end of a request of `end`'s asker (`end.id`) would go now. `reachable`: its transport can take it
	 * back to its process (@default whether a transport registered for `end.id`, EndTakers); `known`: what
	 * the caller knows of it, as `send` is told, and whether it is a late end.
	 */
	where(end: EndOf, reachable?: boolean, known?: Known): Home;
	/** Sends `delivery` home, where `where` says with the same facts; where it went (first: a refused send-back goes on to the host's session). */
	send(delivery: Delivery, end: EndOf, options?: SendOptions): Home;
	/** The asking side: an end a transport brought back to this process, taken here (a wait, its session) or not (its host's session takes it then). */
	takeHere(delivery: Delivery): boolean;
}

/**
 * The route home over `box` (the process's delivery box), the host's session found by `hostSessionId`,
 * ends carried back by `takers`. @default takers: none known, so a caller's `sendBack` is taken as the way back
 */
export function homeRoute(hostSessionId: () => string | undefined, box: DeliveryBox = deliveryBox(hostSessionId), takers?: EndTakers): HomeRoute {
	const facts = (end: EndOf, requestId: string, late: boolean, options: SendOptions & { reachable: boolean }): EndFacts => {
		const here = end.origin === undefined;
		const session = end.asker.sessionId;
		return {
			here,
			delivered: box.wasDelivered(keyOf({ requestId, late })),
			gone: options.gone === true,
			waited: here && box.waitedFor?.(requestId) === true,
			attached: here && (session === hostSessionId() || box.attached(session)),
			takesBack: options.reachable,
			openInStore: options.openInStore === true,
			wakes: wakesHost(end, hostSessionId()),
		};
	};
	const reachableBy = (end: EndOf, sendBack: SendBack | undefined) => sendBack !== undefined && (end.id === undefined || !takers || takers.has(end.id));
	const route: HomeRoute = {
		where: (end, reachable = end.id !== undefined && takers?.has(end.id) === true, known = {}) =>
			homeOf(facts(end, end.id ?? "", known.late === true, { ...known, reachable })),
		send(delivery, end, options = {}) {
			const { sendBack } = options;
			const home = homeOf(facts(end, delivery.requestId, delivery.late === true, { ...options, reachable: reachableBy(end, sendBack) }));
			const toSend: Delivery = home.to === "host" && !home.wakes ? { ...delivery, wakesHost: false } : delivery;
			if (home.to === "wait" || home.to === "asker") box.deliver(toSend);
			// An asker of this process not known gone is held for its grace first (the box's); any other straight to the host's session.
			else if (home.to === "host") box.deliver(toSend, { gone: end.origin !== undefined || options.gone === true });
			else if (home.to === "asker-process") {
				let told = false;
				sendBack!((sent) => {
					if (told) return;
					told = true;
					if (!sent) route.send(delivery, end, { gone: true });
				});
			}
			return home;
		},
		takeHere(delivery) {
			// Asked from this process: its session here, or nothing here takes it.
			const home = homeOf(facts({ asker: { sessionId: delivery.askerSessionId } }, delivery.requestId, delivery.late === true, { reachable: false }));
			if (home.to === "wait" || home.to === "asker") box.deliver(delivery);
			return home.to !== "host";
		},
	};
	return route;
}
