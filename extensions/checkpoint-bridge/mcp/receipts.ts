/**
 * Requests asked over MCP with `wait: false`: the server keeps each call running under the request
 * id the host shows, and its envelope once it ends, until a wait hands it back. Each belongs to the
 * asker session that asked it; a wait names its own, or an id another process asked that the store of
 * the host's directory knows (core/store/later-waits.ts: the request id is the capability), so a
 * client that ended, or a host that restarted, loses no answer. Bounded per asker and in all.
 */
import { firstWithin } from "../core/shared/wait.ts";
import { storeKnows, waitInStore } from "../core/store/later-waits.ts";
import type { RequestStore } from "../core/store/store.ts";
import type { Checked } from "../model/check.ts";
import type { Envelope } from "../model/result.ts";
import { type WaitOutcome, type WaitWords, waitOutcome, waitRefused } from "../model/wait-outcome.ts";

/** Queued requests one asker session keeps at once, ended or not: the host's own cap per asker. @default 16 */
export const MAX_OPEN_RECEIPTS = 16;
/** Queued requests the server keeps for every asker together (HTTP serves many). @default 256 */
const MAX_RECEIPTS = 256;
/** Ids of requests already handed back that a later wait still recognises. @default 256 */
const MAX_HANDED_BACK = 256;
/** Longest id quoted back in a refusal: an id is the server's own nanoid, anything longer is not one. @default 40 */
const QUOTED_ID_LENGTH = 40;

/** How the MCP tool's notes read: a request still open is collected by another wait, never sent. */
const WORDS: WaitWords = {
	asker: "this client",
	handedBack: "handed back by an earlier wait",
	stillOpen: "a queued request is not an answer; do nothing that depends on it, call wait_for_host_answers again later.",
};

interface Receipt {
	owner: string;
	/** Aborts the call behind the request (the client went away, or the server closes). */
	abort: AbortController;
	/** Set once the call has ended. */
	envelope?: Envelope;
	/** Resolves when the call ends. */
	ended: Promise<void>;
	/** Resolves once the host has taken the request (or the call ended): the process may end after that. */
	taken: Promise<void>;
}

/** An id as a refusal quotes it: cut, so a megabyte of id is not echoed back. */
export const quoted = (id: string) => JSON.stringify(id.length > QUOTED_ID_LENGTH ? `${id.slice(0, QUOTED_ID_LENGTH)}…` : id);

/** The queued requests of one server (a stdio process, or the host's HTTP endpoint). */
export class Receipts {
	readonly #receipts = new Map<string, Receipt>();
	/** Ids handed back, oldest first, with their owner: a later wait is told so, not refused. */
	readonly #handedBack = new Map<string, string>();
	/** The store of the host's directory, where an id asked by another process is found; undefined when there is none. */
	readonly #stored: () => RequestStore | undefined;

	constructor(stored: () => RequestStore | undefined = () => undefined) {
		this.#stored = stored;
	}

	/**
	 * Starts `call` under `requestId` for `owner`, which calls `taken` once the host has the request;
	 * refused when the owner, or the server, keeps the most it may.
	 */
	open(
		owner: string,
		requestId: string,
		call: (signal: AbortSignal, taken: () => void) => Promise<Envelope>,
	): Checked<{ requestId: string }, { problem: string }> {
		const mine = [...this.#receipts.values()].filter((k) => k.owner === owner).length;
		if (mine >= MAX_OPEN_RECEIPTS)
			return {
				ok: false,
				problem: `${mine} queued requests are kept for this client already, the most it may have (${MAX_OPEN_RECEIPTS}); wait for them with wait_for_host_answers first`,
			};
		if (this.#receipts.size >= MAX_RECEIPTS)
			return { ok: false, problem: `the server keeps ${MAX_RECEIPTS} queued requests already, the most it keeps; try again later` };
		const abort = new AbortController();
		let take = () => {};
		const taken = new Promise<void>((resolve) => {
			take = resolve;
		});
		const receipt: Receipt = { owner, abort, ended: Promise.resolve(), taken };
		receipt.ended = call(abort.signal, take).then((envelope) => {
			receipt.envelope = envelope;
			take();
		});
		this.#receipts.set(requestId, receipt);
		return { ok: true, requestId };
	}

	/**
	 * Waits up to `waitMs` until one of `requestIds` (every one of the owner's when undefined) has
	 * ended, or `signal` aborts. Concurrent waits on one id agree: each gets its envelope once it
	 * ended; a wait after that is told it was handed back.
	 */
	async wait(owner: string, requestIds: readonly string[] | undefined, waitMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
		const ids = requestIds === undefined ? [...this.#receipts].filter(([, k]) => k.owner === owner).map(([id]) => id) : [...new Set(requestIds)];
		if (ids.length > MAX_OPEN_RECEIPTS) return waitRefused(`${ids.length} request ids; a wait takes at most ${MAX_OPEN_RECEIPTS}.`);
		const delivered = ids.filter((id) => !this.#receipts.has(id) && this.#handedBack.get(id) === owner);
		const foreign = ids.filter((id) => (this.#receipts.get(id)?.owner ?? this.#handedBack.get(id) ?? owner) !== owner);
		const notHere = ids.filter((id) => !this.#receipts.has(id) && !this.#handedBack.has(id));
		const store = notHere.length > 0 ? this.#stored() : undefined;
		// Asked by another process (a client that ended, before a restart or not): written down at the host, found by its id.
		const earlier = store ? notHere.filter((id) => storeKnows(store, id)) : [];
		const unknown = notHere.filter((id) => !earlier.includes(id));
		if (foreign.length > 0) return waitRefused(`Not requests of this client: ${foreign.map(quoted).join(", ")}.`);
		if (unknown.length > 0)
			return waitRefused(`Unknown request ids (not asked with wait: false by this client, or long gone): ${unknown.map(quoted).join(", ")}.`);
		// Kept by reference: a concurrent wait that hands one back first does not take it from this one.
		const receipts = ids.filter((id) => this.#receipts.has(id)).map((id) => [id, this.#receipts.get(id)!] as const);
		if (receipts.length === 0 && earlier.length === 0) return waitOutcome([], [], delivered, WORDS);
		// The store's wait ends with the first end here too: aborted, it settles with what it found so far.
		const looked = new AbortController();
		const inStore = signal ? AbortSignal.any([signal, looked.signal]) : looked.signal;
		const before = store && earlier.length > 0 ? waitInStore(store, earlier, waitMs, inStore) : undefined;
		if (receipts.length > 0) {
			if (!receipts.some(([, k]) => k.envelope))
				await endOfFirst([...receipts.map(([, k]) => k.ended), ...(before ? [before.then(() => {})] : [])], waitMs, signal);
			looked.abort();
		}
		const stored = before ? await before : { ended: [], open: [] };
		const ended: Envelope[] = [...stored.ended];
		const open: string[] = [...stored.open];
		for (const [id, receipt] of receipts) {
			if (receipt.envelope === undefined) open.push(id);
			else {
				ended.push(receipt.envelope);
				this.#handBack(id, receipt.owner);
			}
		}
		return waitOutcome(ended, open, delivered, WORDS);
	}

	/** Forgets an ended request, remembering its id (bounded) so a later wait is told it was handed back. */
	#handBack(id: string, owner: string): void {
		if (!this.#receipts.delete(id)) return;
		this.#handedBack.set(id, owner);
		if (this.#handedBack.size > MAX_HANDED_BACK) this.#handedBack.delete(this.#handedBack.keys().next().value!);
	}

	/** Resolves once the host has taken every call still open, or `withinMs` passed: what a process that ends waits for. */
	async allTaken(withinMs: number): Promise<void> {
		await firstWithin(Promise.all([...this.#receipts.values()].map((k) => k.taken)), { ms: withinMs, elapsed: () => undefined });
	}

	/** Cancels every call of `owner` (every call when undefined) still open, and resolves once they have all ended. */
	async cancelAll(owner?: string): Promise<void> {
		const all = [...this.#receipts].filter(([, k]) => owner === undefined || k.owner === owner);
		for (const [, receipt] of all) receipt.abort.abort();
		await Promise.all(all.map(([, k]) => k.ended));
		for (const [id] of all) this.#receipts.delete(id);
	}
}

/** Resolves when the first of `ends` does, `waitMs` passes, or `signal` aborts. */
function endOfFirst(ends: Promise<void>[], waitMs: number, signal?: AbortSignal): Promise<void> {
	return firstWithin(Promise.race(ends), { ms: waitMs, elapsed: () => undefined, signal });
}
