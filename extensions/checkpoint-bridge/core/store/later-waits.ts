/**
 * A later run's wait on requests another run asked with `wait: false` (docs/tool.md, resume): the
 * request id is the capability; the host writes each such request's end down (book.ts), and the wait
 * reads it from the store of the host's directory, whichever process waits and whether the host
 * restarted between. An end is handed to every wait that names it until it expires.
 */
import { type Envelope, makeEnvelope } from "../../model/result.ts";
import { waitAtMost } from "../shared/wait.ts";
import type { RequestStore, StoredEnd } from "./store.ts";

/** How often a wait looks at the store again: a human's answer needs no finer step. @default 250 */
export const LOOK_EVERY_MS = 250;

/** The envelope a waiting call would have returned, from an end the store kept. */
function storedEnvelope(end: StoredEnd): Envelope {
	return makeEnvelope(end.status, end.answers, end.note, {
		requestId: end.askerId,
		asker: end.asker,
		waitedMs: Math.max(0, end.endedAt - end.queuedAt),
		...(end.reason ? { reason: end.reason } : {}),
	});
}

/** Whether the store knows `requestId` at all: open at a host, or ended and kept. */
export const storeKnows = (store: RequestStore, requestId: string): boolean => store.endOf(requestId) !== undefined || store.isOpen(requestId);

/** Waits, for at most `budgetMs`, for the requests `ids` to end in the store: their envelopes in the order they were found, and the ids still open. */
export function waitInStore(
	store: RequestStore,
	ids: readonly string[],
	budgetMs: number,
	signal?: AbortSignal,
): Promise<{ ended: Envelope[]; open: string[] }> {
	const ended: Envelope[] = [];
	const open = new Set(ids);
	const look = () => {
		for (const id of [...open]) {
			const end = store.endOf(id);
			if (!end) continue;
			ended.push(storedEnvelope(end));
			open.delete(id);
		}
		return open.size === 0;
	};
	const result = () => ({ ended, open: [...open] });
	if (look()) return Promise.resolve(result());
	return waitAtMost({ ms: budgetMs, elapsed: result, signal }, (settle) => {
		const timer = setInterval(() => {
			if (look()) settle(result());
		}, LOOK_EVERY_MS);
		return () => clearInterval(timer);
	});
}
