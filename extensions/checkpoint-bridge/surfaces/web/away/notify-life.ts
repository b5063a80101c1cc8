/**
 * A notification's whole life, from the page's cards: the notify command runs for each relayed
 * request (with its link and its one-tap answers), again as a reminder, when it goes late, and when
 * it ends (with how); one-tap URLs die with their request.
 */
import type { Board, BoardChange } from "../live/board.ts";
import type { Card } from "../page-events.ts";
import type { Notifier, NotifyEvent, NotifyFacts } from "./notify-command.ts";
import type { AwayActions, AwayButton, OneTap } from "./one-tap.ts";

/** At most this many buttons on an ntfy notification (ntfy's own limit). */
const NTFY_MAX_ACTIONS = 3;

/** What a late request's runs say happened. */
const LATE_OUTCOME = "late: the asker's call stopped waiting; an answer still reaches it, as a message";

/** One button as ntfy's JSON API (and its `Actions` header, in JSON form) takes it. */
export interface NtfyAction {
	action: "http";
	label: string;
	url: string;
	method: "POST";
	clear: true;
}

/**
 * A notification's buttons, ntfy's three at most: the taps that answer the whole request (its
 * options, or "Accept the recommendations"), as many as leave room, then Decline. The request's
 * link is the notification's click, not a button.
 */
function notificationButtons(actions: Pick<AwayActions, "buttons" | "decline">): AwayButton[] {
	return [...actions.buttons.slice(0, NTFY_MAX_ACTIONS - 1), actions.decline];
}

/** The buttons as ntfy's `http` actions: each POSTs to its one-tap URL and clears the notification. */
export function ntfyActionList(actions: Pick<AwayActions, "buttons" | "decline">): NtfyAction[] {
	return notificationButtons(actions).map((b) => ({ action: "http", label: b.label, url: b.answer, method: "POST", clear: true }));
}

/**
 * The buttons as ntfy's `Actions` header: its JSON form (ntfy reads a value starting with `[` as
 * JSON), so no label can close a quote or start another action, and every character but printable
 * ASCII escaped (`\uXXXX`), so no label can put a line break or a non-ASCII byte into the header.
 */
export function ntfyActions(actions: Pick<AwayActions, "buttons" | "decline">): string {
	return JSON.stringify(ntfyActionList(actions)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export interface NotifyLinks {
	/** The request's own link, while it is open. */
	linkFor(requestId: string): string | undefined;
	/** The origin links are announced under (the public one, when set). */
	origin: string;
}

/** The one-tap actions of an open request, as the notify command and a mail get them; undefined once it left the page. */
export function actionsOf(board: Board, oneTap: OneTap, links: NotifyLinks, requestId: string): AwayActions | undefined {
	const card = board.card(requestId);
	const link = links.linkFor(requestId);
	// Marked, so an answer given through it is traced as given through the notify command's link.
	return card && link ? oneTap.actionsFor(card, links.origin, `${link}?via=notify`) : undefined;
}

/** Wires the notifier and the one-tap URLs to the board's changes; returns the unwiring. */
export function wireNotifications(board: Board, notifier: Notifier, oneTap: OneTap, links: NotifyLinks): () => void {
	/** Relayed requests on the page: what a later run says about one that left it. */
	const cards = new Map<string, Card>();
	const firstQuestion = (card: Card) => card.questions[0]?.question.replace(/\s+/g, " ") ?? "";
	const factsOf = (card: Card, event: NotifyEvent, outcome?: string): NotifyFacts | undefined => {
		const actions = event === "ended" ? undefined : actionsOf(board, oneTap, links, card.requestId);
		// No link once it settled: a request answered (or ended) within the delay pings nobody.
		if (!actions && event !== "ended") return undefined;
		return {
			url: actions?.link ?? "",
			asker: card.asker,
			question: firstQuestion(card),
			event,
			requestId: card.requestId,
			...(outcome ? { outcome } : {}),
			...(actions ? { actions: JSON.stringify(actions), ntfyActions: ntfyActions(actions) } : {}),
		};
	};
	const onChange = (change: BoardChange) => {
		if (change.type === "gone") {
			const how = change.trace?.outcome ?? "closed";
			oneTap.end(change.requestId, how);
			const card = cards.get(change.requestId);
			cards.delete(change.requestId);
			if (!card) return notifier.unschedule(change.requestId);
			return notifier.ended(change.requestId, factsOf(card, "ended", how)!);
		}
		if (change.type === "update" && change.card.state === "late" && cards.has(change.card.requestId)) {
			const facts = factsOf(change.card, "late", LATE_OUTCOME);
			if (facts) notifier.late(change.card.requestId, facts);
			return;
		}
		if (change.type !== "added" || !board.isRelayed(change.card.requestId)) return;
		const { card } = change;
		cards.set(card.requestId, card);
		notifier.notify(card.requestId, (event) => factsOf(cards.get(card.requestId) ?? card, event), card.queuedAt);
	};
	const unsubscribe = board.subscribe(onChange);
	// Requests already on the page when it starts (a host that took them back after a restart, then started its page): notified as if just added.
	for (const card of board.cards()) onChange({ type: "added", card });
	return unsubscribe;
}
