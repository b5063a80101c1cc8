/**
 * What the page shows, built only from the observer contract (docs/observers.md): the snapshot
 * and the `observe:*` events on the shared handle's bus. It keeps one card per open request,
 * oldest first, a link secret per request, and a short trace of how each request ended, and
 * tells its listeners (the page's live streams) what changed.
 */

import type { SettledEvent, Snapshot } from "../../../core/shared/observers.ts";
import type { RequestEnd } from "../../../core/shared/request-record.ts";
import type { ObserverHandle } from "../../../core/shared/shared-handle.ts";
import type { AnswerPlace } from "../../../model/answer.ts";
import { answeredValues, answeredWhere } from "../../../model/answer-places.ts";
import type { Status } from "../../../model/result.ts";
import { digestOf, newSecret } from "../http/tokens.ts";
import type { Card, TraceView } from "../page-events.ts";

/** What the page needs of the shared handle: the public observer API and nothing else. */
export type { ObserverHandle };

/** Settled requests whose trace (and dead link) is remembered. @default 200 */
const MAX_TRACES = 200;

/** How a settled request ended, in a few words: `outcome` as every tab but the one that answered reads it. */
export interface Trace extends TraceView {
	/** The tab whose answer settled it, when it was a tab of the page: kept here, never sent. */
	tab?: string;
	/** `outcome` as that tab reads it ("in this tab"): kept here, never sent. */
	outcomeHere?: string;
}

/** A trace as `tab` reads it (undefined: a viewer that is no tab of the page), without what is kept only here. */
export function traceFor(trace: Trace, tab: string | undefined): TraceView {
	const { requestId, asker, outcome, end, settledAt, answered } = trace;
	return {
		requestId,
		asker,
		outcome: tab !== undefined && tab === trace.tab && trace.outcomeHere ? trace.outcomeHere : outcome,
		end,
		settledAt,
		...(answered ? { answered } : {}),
	};
}

/** How the page names its own place when it knows which tab answered. */
const OTHER_TAB: Partial<Record<AnswerPlace, string>> = { page: "on the page, in another tab" };
const THIS_TAB: Partial<Record<AnswerPlace, string>> = { page: "on the page, in this tab" };

export type BoardChange = { type: "added" | "update"; card: Card } | { type: "gone"; requestId: string; trace?: Trace } | { type: "host"; present: boolean };

interface Entry {
	card: Card;
	/** The asker's session id: a request is relayed when it is not the host's own. */
	sessionId: string;
	linkSecret: string;
	/** Hex digest of the link secret: the key it is found by. */
	linkDigest: string;
}

/**
 * How an event of an observer before `end` ended, read from its wire status: the page's only use of
 * the status. `timeout-or-cancelled` reads as a dismiss, whose words cover a dialog's own timeout.
 */
const END_OF_STATUS: Readonly<Record<Status, RequestEnd>> = {
	ok: "answered",
	"timeout-or-cancelled": "dismissed",
	timeout: "timeout",
	cancelled: "cancelled",
	"no-host": "host-gone",
	error: "failed",
	queued: "failed",
};

/** How a settled request ended: its typed `end`, or, from an observer before it, what its status says. */
const endOf = (outcome: Pick<SettledEvent["outcome"], "status" | "end">): RequestEnd => outcome.end ?? END_OF_STATUS[outcome.status];

/** Whether the request ended with every answer given. */
const isAnswered = (end: RequestEnd): end is "answered" | "answered-outside" => end === "answered" || end === "answered-outside";

/**
 * The words for each end without every answer. A dismiss keeps "or its dialog timed out": pi's
 * dialogs return nothing for both, and the host tells them apart by its own clock only.
 */
const UNANSWERED_WORDS: Readonly<Record<Exclude<RequestEnd, "answered" | "answered-outside">, string>> = {
	dismissed: "dismissed in the terminal, or its dialog timed out",
	"cancelled-outside": "cancelled from outside the terminal",
	"dialog-timeout": "closed unanswered at its dialog's own time limit",
	timeout: "ran out of time",
	expired: "expired unanswered after it went late",
	cancelled: "withdrawn by the asker",
	refused: "failed at the host: the answer did not fit its questions",
	failed: "failed at the host",
	"host-gone": "closed: the host session ended",
	"handed-over": "handed over to the next host session",
};

/**
 * The words for how a request ended, decided by `end` (the typed reason; without it, from `status`,
 * as an observer before `end` sent it): where its answers were given (`words` names some places
 * its own way), or why it has none.
 */
export function outcomeText(
	status: Status,
	answers: SettledEvent["outcome"]["answers"],
	end?: RequestEnd,
	words?: Partial<Record<AnswerPlace, string>>,
): string {
	const how = endOf({ status, end });
	return isAnswered(how) ? `answered ${answeredWhere(answers, words)}` : UNANSWERED_WORDS[how];
}

const sameCard = (a: Card, b: Card) =>
	a.state === b.state && a.question === b.question && a.position === b.position && a.questionDeadline === b.questionDeadline && a.lateSince === b.lateSince;

export class Board {
	readonly #handle: ObserverHandle;
	readonly #entries = new Map<string, Entry>();
	/** Request id of each open request's link, by the link secret's digest. */
	readonly #links = new Map<string, string>();
	/** Traces of settled requests, oldest first, at most MAX_TRACES. */
	readonly #traces = new Map<string, Trace>();
	/** Link digests of settled requests, pointing to their trace. */
	readonly #deadLinks = new Map<string, string>();
	readonly #listeners = new Set<(change: BoardChange) => void>();
	#hostPresent = false;
	#closed = false;
	/** The tab whose answer the host is taking right now (see `answering`). */
	#answeringTab: string | undefined;
	readonly #onEvent = () => this.sync(false);
	readonly #onSettled = (event: SettledEvent) => this.#settled(event);
	readonly #lastingLink: (requestId: string) => string | undefined;

	/** `lastingLink`: a request's link secret that outlives the process (derived from the store's seed), or undefined for a fresh one. */
	constructor(handle: ObserverHandle, lastingLink: (requestId: string) => string | undefined = () => undefined) {
		this.#handle = handle;
		this.#lastingLink = lastingLink;
		handle.bus.on("observe:queued", this.#onEvent);
		handle.bus.on("observe:shown", this.#onEvent);
		// A request that goes late keeps its card, now late: it has not settled (ADR-0025).
		handle.bus.on("observe:late", this.#onEvent);
		handle.bus.on("observe:settled", this.#onSettled);
		this.sync(true);
	}

	/** Whether a session holds the host role now. */
	get hostPresent(): boolean {
		return this.#hostPresent;
	}

	/** Open requests, oldest first. */
	cards(): Card[] {
		return [...this.#entries.values()].map((e) => e.card);
	}

	card(requestId: string): Card | undefined {
		return this.#entries.get(requestId)?.card;
	}

	/** Recent traces, oldest first (as kept: see traceFor). */
	traces(): Trace[] {
		return [...this.#traces.values()];
	}

	/** A settled request's trace, as kept (see traceFor). */
	trace(requestId: string): Trace | undefined {
		return this.#traces.get(requestId);
	}

	/**
	 * Runs `deliver`, which hands `tab`'s answer to the host: the host settles synchronously, on the
	 * bus, the request answered and every request that took that answer, so each trace made
	 * meanwhile says it was answered in that tab.
	 */
	answering<T>(tab: string | undefined, deliver: () => T): T {
		const outer = this.#answeringTab;
		this.#answeringTab = tab;
		try {
			return deliver();
		} finally {
			this.#answeringTab = outer;
		}
	}

	/** The secret of an open request's own link. */
	linkSecret(requestId: string): string | undefined {
		return this.#entries.get(requestId)?.linkSecret;
	}

	/** What a request link points to: an open request, a settled one (its trace), or nothing known. */
	resolveLink(secret: string): { open: Card } | { settled: Trace } | undefined {
		const digest = digestOf(secret).toString("hex");
		const open = this.#links.get(digest);
		if (open !== undefined) {
			const card = this.card(open);
			return card ? { open: card } : undefined;
		}
		const settled = this.#deadLinks.get(digest);
		const trace = settled === undefined ? undefined : this.#traces.get(settled);
		return trace ? { settled: trace } : undefined;
	}

	/** Whether the request was asked by another session than the host's own. */
	isRelayed(requestId: string): boolean {
		const entry = this.#entries.get(requestId);
		return entry !== undefined && entry.sessionId !== this.#handle.host()?.sessionId;
	}

	/** Calls `listener` with every change; returns the unsubscribe. */
	subscribe(listener: (change: BoardChange) => void): () => void {
		this.#listeners.add(listener);
		return () => this.#listeners.delete(listener);
	}

	/** Closes: stops listening on the bus and forgets every listener. */
	close(): void {
		this.#closed = true;
		this.#handle.bus.off("observe:queued", this.#onEvent);
		this.#handle.bus.off("observe:shown", this.#onEvent);
		this.#handle.bus.off("observe:late", this.#onEvent);
		this.#handle.bus.off("observe:settled", this.#onSettled);
		this.#listeners.clear();
	}

	/**
	 * Brings the cards in line with the host's snapshot: adds and updates cards, and with `prune`
	 * also drops those the snapshot no longer has (a request that ended without a settled event:
	 * one a replaced host parked that no new host took). Observer events sync without pruning: a new
	 * host adopting parked requests emits one `queued` per request, and the snapshot taken at the
	 * first one does not hold the others yet. Without a host (one being replaced) the cards stay:
	 * the next host adopts their requests under the same ids, and their links keep working.
	 */
	sync(prune = true): void {
		if (this.#closed) return;
		let snapshot: Snapshot | undefined;
		try {
			snapshot = this.#handle.snapshot();
		} catch {
			snapshot = undefined;
		}
		const present = snapshot !== undefined;
		if (present !== this.#hostPresent) {
			this.#hostPresent = present;
			this.#emit({ type: "host", present });
		}
		if (!snapshot) return;
		const late = snapshot.late ?? [];
		if (prune) {
			const open = new Set([...snapshot.open, ...late].map((o) => o.requestId));
			for (const [requestId] of this.#entries) if (!open.has(requestId)) this.#discard(requestId);
		}
		const cards: Card[] = snapshot.open.map((o, i) => ({
			requestId: o.requestId,
			asker: o.asker.label,
			questions: o.questions,
			queuedAt: o.queuedAt,
			deadline: o.deadline,
			state: o.state,
			...(o.state === "shown" && o.question !== undefined ? { question: o.question } : {}),
			...(o.state === "shown" && o.questionDeadline !== undefined ? { questionDeadline: o.questionDeadline } : {}),
			position: i + 1,
		}));
		// A late request keeps its card and its link: it is still answerable here, with no budget left to count down.
		late.forEach((l, i) =>
			cards.push({
				requestId: l.requestId,
				asker: l.asker.label,
				questions: l.questions,
				queuedAt: l.queuedAt,
				deadline: 0,
				state: "late",
				lateSince: l.lateSince,
				position: snapshot.open.length + i + 1,
			}),
		);
		const sessions = new Map([...snapshot.open, ...late].map((o) => [o.requestId, o.asker.sessionId]));
		for (const card of cards) {
			const entry = this.#entries.get(card.requestId);
			if (!entry) {
				// With a store open, the same link as before a restart: the request comes back under its id.
				const linkSecret = this.#lastingLink(card.requestId) ?? newSecret();
				const linkDigest = digestOf(linkSecret).toString("hex");
				this.#entries.set(card.requestId, { card, sessionId: sessions.get(card.requestId)!, linkSecret, linkDigest });
				this.#links.set(linkDigest, card.requestId);
				this.#emit({ type: "added", card });
			} else if (!sameCard(entry.card, card)) {
				entry.card = card;
				this.#emit({ type: "update", card });
			}
		}
	}

	#settled(event: SettledEvent): void {
		if (this.#closed) return;
		const entry = this.#entries.get(event.requestId);
		const end = endOf(event.outcome);
		// The request lives on, so its card and its link stay: handed over to the next host, or its budget ran out and it stays
		// open, marked late (an observer before ADR-0025 settled it then).
		if (entry && (end === "handed-over" || (end === "timeout" && this.#isLate(event.requestId)))) return this.sync(false);
		if (entry) {
			const { status, answers } = event.outcome;
			const tab = this.#answeringTab;
			const byTab = tab !== undefined && isAnswered(end) && answers.some((a) => a.place === "page");
			const answered = answeredValues(answers);
			this.#remember({
				requestId: event.requestId,
				asker: event.asker.label,
				outcome: outcomeText(status, answers, end, byTab ? OTHER_TAB : undefined),
				end,
				settledAt: event.settledAt,
				...(answered ? { answered } : {}),
				...(byTab ? { tab, outcomeHere: outcomeText(status, answers, end, THIS_TAB) } : {}),
			});
			this.#discard(event.requestId);
		}
		// Positions of the others moved up.
		this.sync(false);
	}

	#isLate(requestId: string): boolean {
		try {
			return this.#handle.snapshot()?.late?.some((l) => l.requestId === requestId) === true;
		} catch {
			return false;
		}
	}

	#remember(trace: Trace): void {
		this.#traces.set(trace.requestId, trace);
		if (this.#traces.size <= MAX_TRACES) return;
		const [oldest] = this.#traces.keys();
		this.#traces.delete(oldest!);
		for (const [digest, requestId] of this.#deadLinks) if (requestId === oldest) this.#deadLinks.delete(digest);
	}

	#discard(requestId: string): void {
		const entry = this.#entries.get(requestId)!;
		this.#entries.delete(requestId);
		this.#links.delete(entry.linkDigest);
		const trace = this.#traces.get(requestId);
		if (trace) this.#deadLinks.set(entry.linkDigest, requestId);
		this.#emit({ type: "gone", requestId, ...(trace ? { trace } : {}) });
	}

	#emit(change: BoardChange): void {
		for (const listener of [...this.#listeners]) {
			try {
				listener(change);
			} catch {
				// A stream that fails to write is closed by its own error handler; the others go on.
			}
		}
	}
}
