/**
 * Ended requests not sent yet, their session not attached: each waits for its own session for a grace,
 * then for the host's session, without end. Bounded: past `maxUnsent` the oldest are discarded.
 */

/** One unsent end: `toHost` once its grace ran out (or its asker is known gone). */
interface Unsent<D> {
	delivery: D;
	toHost: boolean;
}

export interface UnsentEnds<D> {
	/** Keeps `delivery` under `key`, replacing what was there; one not yet `toHost` starts its grace. */
	hold(key: string, delivery: D, toHost: boolean): void;
	/** Takes what is under `key` out (its grace stopped), if anything. */
	take(key: string): Unsent<D> | undefined;
	/** What is under `key`, left where it is. */
	get(key: string): Unsent<D> | undefined;
	/** What is unsent now, oldest first, as a copy (taking while iterating is safe). */
	entries(): [string, Unsent<D>][];
}

export interface UnsentOptions<D> {
	graceMs: number;
	maxUnsent: number;
	/** The grace of `delivery` ran out: it was taken out, for the host's session. */
	graceOver(delivery: D): void;
	/** `key` was discarded to keep the bound. */
	discarded(key: string): void;
}

export function unsentEnds<D>({ graceMs, maxUnsent, graceOver, discarded }: UnsentOptions<D>): UnsentEnds<D> {
	const unsent = new Map<string, Unsent<D> & { timer?: ReturnType<typeof setTimeout> }>();
	const take = (key: string) => {
		const entry = unsent.get(key);
		if (!entry) return undefined;
		if (entry.timer) clearTimeout(entry.timer);
		unsent.delete(key);
		return { delivery: entry.delivery, toHost: entry.toHost };
	};
	return {
		hold(key, delivery, toHost) {
			// Kept again under its key, it keeps its place in the order.
			const previous = unsent.get(key);
			if (previous?.timer) clearTimeout(previous.timer);
			const entry: Unsent<D> & { timer?: ReturnType<typeof setTimeout> } = { delivery, toHost };
			if (!toHost)
				entry.timer = setTimeout(() => {
					unsent.delete(key);
					graceOver(delivery);
				}, graceMs);
			unsent.set(key, entry);
			// A Map iterates in insertion order: the first is the oldest.
			while (unsent.size > maxUnsent) {
				const oldest = unsent.keys().next().value!;
				take(oldest);
				discarded(oldest);
			}
		},
		take,
		get(key) {
			const entry = unsent.get(key);
			return entry && { delivery: entry.delivery, toHost: entry.toHost };
		},
		entries: () => [...unsent].map(([key, { delivery, toHost }]) => [key, { delivery, toHost }]),
	};
}
