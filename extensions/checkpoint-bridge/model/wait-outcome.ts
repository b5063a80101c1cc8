/**
 * What `wait_for_host_answers` returns, built in one place for pi's tool (tool/wait.ts) and the MCP
 * tool of that name (mcp/receipts.ts): they differ only in who asks and where a request still open
 * goes next.
 */
import type { Envelope } from "./result.ts";

/** What a wait for requests asked with `wait: false` returns. */
export interface WaitOutcome {
	status: "ok" | "timeout" | "error";
	/** The envelopes of the requests that ended, in the order they ended. */
	ended: Envelope[];
	/** Ids still open when the wait ended. */
	open: string[];
	/** Ids named that were handed back before the wait (as a message, or by an earlier wait). */
	delivered?: string[];
	note?: string;
}

/** How one tool's notes name its asker and what becomes of a request. */
export interface WaitWords {
	/** Whose requests: "this session", "this client". */
	asker: string;
	/** How a request was handed back before the wait, e.g. "delivered before, as a message in this session". */
	handedBack: string;
	/** What to do about the requests still open when the wait ended. */
	stillOpen: string;
}

/** A wait refused before it waited: nothing named is touched. */
export const waitRefused = (note: string): WaitOutcome => ({ status: "error", ended: [], open: [], note });

/**
 * A wait's outcome: `ended` and `open` as the wait left them (both empty when nothing named was
 * left to wait for), `delivered` those handed back before it. `ok` once nothing named is open.
 */
export function waitOutcome(ended: Envelope[], open: string[], delivered: string[], words: WaitWords): WaitOutcome {
	const extra = delivered.length > 0 ? { delivered } : {};
	if (ended.length === 0 && open.length === 0)
		return {
			status: "ok",
			ended,
			open,
			...extra,
			note: delivered.length > 0 ? `Every request named was ${words.handedBack}.` : `Nothing of ${words.asker} is queued.`,
		};
	if (open.length === 0) return { status: "ok", ended, open, ...extra };
	return { status: "timeout", ended, open, ...extra, note: `${open.length} still open when the wait ended: ${words.stillOpen} Do not ask them again.` };
}
