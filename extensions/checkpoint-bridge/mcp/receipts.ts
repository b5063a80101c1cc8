/**
 * Receipts of questions asked with `wait: false`: the server process keeps each call running and
 * its envelope once it ends, until the client collects it (once) or goes away (then the calls still
 * open are cancelled at the host). Bounded: at most MAX_OPEN_RECEIPTS kept at once.
 */
import { nanoid } from "nanoid";
import type { Checked } from "../model/check.ts";
import type { Envelope } from "../model/result.ts";

/** Receipts one server process keeps at once, collected or not: the host's own cap per asker session. @default 16 */
export const MAX_OPEN_RECEIPTS = 16;

/** An envelope handed back for its receipt. */
interface Collected {
	receipt: string;
	envelope: Envelope;
}

/** What a wait for receipts gives: the envelopes that are there, and the receipts still open. */
export interface Collection {
	settled: Collected[];
	open: string[];
}

interface Kept {
	/** Aborts the call behind the receipt (the client went away). */
	abort: AbortController;
	/** Set once the call has ended. */
	envelope?: Envelope;
	/** Resolves when the call ends. */
	ended: Promise<void>;
}

/** The receipts of one server process. */
export class Receipts {
	readonly #kept = new Map<string, Kept>();

	/** Starts `call` (given the signal that ends it) under a new receipt; refused when MAX_OPEN_RECEIPTS are kept. */
	open(call: (signal: AbortSignal) => Promise<Envelope>): Checked<{ receipt: string }, { problem: string }> {
		if (this.#kept.size >= MAX_OPEN_RECEIPTS)
			return {
				ok: false,
				problem: `${this.#kept.size} receipts are kept already, the most this server keeps (${MAX_OPEN_RECEIPTS}); collect them with wait_for_host_answers first`,
			};
		const receipt = nanoid();
		const abort = new AbortController();
		const kept: Kept = { abort, ended: Promise.resolve() };
		kept.ended = call(abort.signal).then((envelope) => {
			kept.envelope = envelope;
		});
		this.#kept.set(receipt, kept);
		return { ok: true, receipt };
	}

	/** What is wrong with a list of receipts to wait for (not a list of strings, unknown ones), or undefined. */
	problemWith(receipts: unknown): string | undefined {
		if (!Array.isArray(receipts) || !receipts.every((r) => typeof r === "string")) return "receipts: must be an array of receipt strings";
		if (receipts.length > MAX_OPEN_RECEIPTS) return `receipts: has ${receipts.length}, at most ${MAX_OPEN_RECEIPTS}`;
		const unknown = receipts.filter((r) => !this.#kept.has(r));
		return unknown.length === 0
			? undefined
			: `receipts: ${unknown.map((r) => JSON.stringify(r)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not open here (unknown, or collected already)`;
	}

	/** The receipts whose call has not ended yet. */
	stillOpen(): string[] {
		return [...this.#kept].filter(([, kept]) => kept.envelope === undefined).map(([receipt]) => receipt);
	}

	/**
	 * Waits up to `waitMs` until one of `receipts` (all kept ones when undefined) has ended, or
	 * `signal` aborts; returns every one of them that has ended (forgotten once returned) and those still open.
	 */
	async collect(receipts: readonly string[] | undefined, waitMs: number, signal?: AbortSignal): Promise<Collection> {
		const wanted = (receipts ?? [...this.#kept.keys()]).filter((r) => this.#kept.has(r));
		const pending = wanted.map((r) => this.#kept.get(r)!);
		if (pending.length > 0 && !pending.some((k) => k.envelope)) {
			let timer: NodeJS.Timeout | undefined;
			let onAbort: (() => void) | undefined;
			await Promise.race([
				...pending.map((k) => k.ended),
				new Promise<void>((resolve) => {
					timer = setTimeout(resolve, waitMs);
					onAbort = resolve;
					signal?.addEventListener("abort", onAbort, { once: true });
				}),
			]);
			clearTimeout(timer);
			if (onAbort) signal?.removeEventListener("abort", onAbort);
		}
		const settled: Collected[] = [];
		const open: string[] = [];
		for (const receipt of wanted) {
			const envelope = this.#kept.get(receipt)?.envelope;
			if (envelope === undefined) open.push(receipt);
			else {
				this.#kept.delete(receipt);
				settled.push({ receipt, envelope });
			}
		}
		return { settled, open };
	}

	/** Cancels every call still open (the client went away) and resolves once they have all ended. */
	async cancelAll(): Promise<void> {
		const all = [...this.#kept.values()];
		for (const kept of all) kept.abort.abort();
		await Promise.all(all.map((k) => k.ended));
		this.#kept.clear();
	}
}
