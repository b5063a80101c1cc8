/**
 * Ended requests whose session is not attached: each waits for its own session for a grace, then for
 * the host's session, without end. Bounded: past `maxHeld` the oldest go first.
 */

/** One held end: `toHost` once its grace ran out (or its asker is known gone). */
interface Held<D> {
	delivery: D;
	toHost: boolean;
}

export interface HeldDeliveries<D> {
	/** Holds `delivery` under `key`, replacing what was held there; one not yet `toHost` starts its grace. */
	hold(key: string, delivery: D, toHost: boolean): void;
	/** Takes what is held under `key` out (its grace stopped), if anything. */
	take(key: string): Held<D> | undefined;
	/** What is held under `key`, left where it is. */
	get(key: string): Held<D> | undefined;
	/** What is held now, oldest first, as a copy (taking while iterating is safe). */
	entries(): [string, Held<D>][];
}

export interface HeldOptions<D> {
	graceMs: number;
	maxHeld: number;
	/** The grace of `delivery` ran out: it was taken out, for the host's session. */
	graceOver(delivery: D): void;
	/** `key` was dropped to keep the bound. */
	dropped(key: string): void;
}

export function heldDeliveries<D>({ graceMs, maxHeld, graceOver, dropped }: HeldOptions<D>): HeldDeliveries<D> {
	const held = new Map<string, Held<D> & { timer?: ReturnType<typeof setTimeout> }>();
	const take = (key: string) => {
		const entry = held.get(key);
		if (!entry) return undefined;
		if (entry.timer) clearTimeout(entry.timer);
		held.delete(key);
		return { delivery: entry.delivery, toHost: entry.toHost };
	};
	return {
		hold(key, delivery, toHost) {
			// Held again, it keeps its place in the order.
			const previous = held.get(key);
			if (previous?.timer) clearTimeout(previous.timer);
			const entry: Held<D> & { timer?: ReturnType<typeof setTimeout> } = { delivery, toHost };
			if (!toHost)
				entry.timer = setTimeout(() => {
					held.delete(key);
					graceOver(delivery);
				}, graceMs);
			held.set(key, entry);
			// A Map iterates in insertion order: the first is the oldest.
			while (held.size > maxHeld) {
				const oldest = held.keys().next().value!;
				take(oldest);
				dropped(oldest);
			}
		},
		take,
		get(key) {
			const entry = held.get(key);
			return entry && { delivery: entry.delivery, toHost: entry.toHost };
		},
		entries: () => [...held].map(([key, { delivery, toHost }]) => [key, { delivery, toHost }]),
	};
}
