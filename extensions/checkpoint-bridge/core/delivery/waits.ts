/**
 * Calls waiting for queued requests to end (a wait on queued requests, docs/tool.md), by request id.
 * A later wait on an id takes its place; a wait that ends leaves only its own ids.
 */
import { waitAtMost } from "../shared/wait.ts";

/** The ends a wait got, in the order they came, and the ids still open when it ended. */
interface Waited<D> {
	ended: D[];
	open: string[];
}

export interface EndWaits<D> {
	/** Whether a wait takes the end of `requestId`. */
	has(requestId: string): boolean;
	/** Hands the end of `requestId` to the wait on it (check `has` first). */
	hand(requestId: string, delivery: D): void;
	/** Waits for `open` to end, `ended` already holding those that ended before, for at most `budgetMs` or until `signal` aborts. */
	wait(ended: D[], open: Set<string>, budgetMs: number, signal?: AbortSignal): Promise<Waited<D>>;
}

export function endWaits<D>(): EndWaits<D> {
	const waits = new Map<string, (delivery: D) => void>();
	return {
		has: (requestId) => waits.has(requestId),
		hand(requestId, delivery) {
			const wait = waits.get(requestId);
			waits.delete(requestId);
			wait?.(delivery);
		},
		wait(ended, open, budgetMs, signal) {
			const result = (): Waited<D> => ({ ended, open: [...open] });
			if (open.size === 0) return Promise.resolve(result());
			const mine = new Map<string, (delivery: D) => void>();
			return waitAtMost<Waited<D>>({ ms: budgetMs, elapsed: result, signal }, (settle) => {
				for (const id of open) {
					const take = (delivery: D) => {
						open.delete(id);
						ended.push(delivery);
						if (open.size === 0) settle(result());
					};
					mine.set(id, take);
					waits.set(id, take);
				}
				// Only its own: a later wait on the same id has taken its place and still waits.
				return () => {
					for (const id of open) if (waits.get(id) === mine.get(id)) waits.delete(id);
				};
			});
		},
	};
}
