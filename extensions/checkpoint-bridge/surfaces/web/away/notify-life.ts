/**
 * A notification's whole life, from the page's cards: the notify command runs for each relayed
 * request (with its link and its one-tap answers), again as a reminder, when it goes late, and when
 * it ends (with how); one-tap URLs die with their request.
 */
import type { Board } from "../live/board.ts";
import type { Card } from "../page-events.ts";
import type { Notifier, NotifyEvent, NotifyFacts } from "./notify-command.ts";
import type { AwayActions, AwayButton, OneTap } from "./one-tap.ts";

/** At most this many buttons on an ntfy notification (ntfy's own limit). */
const NTFY_MAX_ACTIONS = 3;

/** What a late request's runs say happened. */
const LATE_OUTCOME = "late: the asker's call stopped waiting; an answer still reaches it, as a message";

/** A value in ntfy's `Actions` header: quoted when it holds a separator, with no double quote inside. */
const ntfyValue = (text: string) => {
	const plain = text.replace(/[\r\n]+/g, " ").replaceAll('"', "'");
	return /[,;=']/.test(plain) ? `"${plain}"` : plain;
};

/**
 * The buttons as ntfy's `Actions` header: each an `http` action that POSTs to its URL and clears
 * the notification; with more buttons than ntfy shows, the first two and a `view` of the request's link.
 */
export function ntfyActions(actions: Pick<AwayActions, "buttons" | "link">): string {
	const view = `view, Open, ${actions.link}`;
	const http = (b: AwayButton) => `http, ${ntfyValue(b.label)}, ${b.answer}, method=POST, clear=true`;
	const { buttons } = actions;
	if (buttons.length === NTFY_MAX_ACTIONS) return buttons.map(http).join("; ");
	if (buttons.length > NTFY_MAX_ACTIONS) return [...buttons.slice(0, NTFY_MAX_ACTIONS - 1).map(http), view].join("; ");
	return [...buttons.map(http), view].join("; ");
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
	return board.subscribe((change) => {
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
	});
}
