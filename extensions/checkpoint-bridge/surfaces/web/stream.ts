/**
 * The page's live view: one server-sent-events stream per open tab. A stream starts with the
 * whole state, then gets each change as it happens. A stream opened through a request link sees
 * that request only, and ends when it settles.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Board, BoardChange, Card, Trace } from "./board.ts";
import { refuse, SECURITY_HEADERS } from "./guard.ts";

/** Streams open at once; more are refused (429). @default 64 */
export const MAX_STREAMS = 64;
/** Traces a fresh page gets. @default 20 */
export const TRACES_SHOWN = 20;

/** Whose view a request has: the whole page, or one request through its link. */
export type Scope = { kind: "page" } | { kind: "request"; requestId: string };

/** A card as a tab gets it: the page also gets each request's own link. */
export type CardView = Card & { link?: string };

/** The first message of a stream. */
export interface StateMessage {
	/** The server's clock, so a phone whose clock is off still counts down right. */
	now: number;
	scope: Scope["kind"];
	host: boolean;
	cards: CardView[];
	traces: Trace[];
}

/** Path of a request's own link, relative to the server's root. */
export const linkPath = (secret: string) => `/r/${secret}/`;

function frame(event: string, data: unknown): string {
	// JSON has no raw line breaks, so one data line always holds the whole message.
	return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class Streams {
	readonly #board: Board;
	readonly #open = new Set<ServerResponse>();
	readonly #max: number;

	constructor(board: Board, max = MAX_STREAMS) {
		this.#board = board;
		this.#max = max;
	}

	get count(): number {
		return this.#open.size;
	}

	#view(card: Card, scope: Scope): CardView {
		const secret = scope.kind === "page" ? this.#board.linkSecret(card.requestId) : undefined;
		return secret ? { ...card, link: linkPath(secret) } : card;
	}

	#covers(scope: Scope, requestId: string): boolean {
		return scope.kind === "page" || scope.requestId === requestId;
	}

	/** Serves one stream until the tab goes away or the page closes. */
	open(req: IncomingMessage, res: ServerResponse, scope: Scope): void {
		if (this.#open.size >= this.#max) return refuse(res, { status: 429, reason: `too many open pages (${this.#max}); close a tab` });
		this.#board.sync();
		const cards = this.#board.cards().filter((c) => this.#covers(scope, c.requestId));
		const traces = scope.kind === "page" ? this.#board.traces().slice(-TRACES_SHOWN) : [];
		const state: StateMessage = { now: Date.now(), scope: scope.kind, host: this.#board.hostPresent, cards: cards.map((c) => this.#view(c, scope)), traces };
		res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
		res.write(frame("state", state));
		this.#open.add(res);
		const onChange = (change: BoardChange) => {
			if (change.type === "host") return void res.write(frame("host", { present: change.present }));
			const requestId = change.type === "gone" ? change.requestId : change.card.requestId;
			if (!this.#covers(scope, requestId)) return;
			if (change.type === "gone") {
				res.write(frame("gone", { requestId, ...(change.trace ? { trace: change.trace } : {}) }));
				// A request link dies with its request.
				if (scope.kind === "request") res.end();
				return;
			}
			res.write(frame(change.type, { now: Date.now(), card: this.#view(change.card, scope) }));
		};
		const unsubscribe = this.#board.subscribe(onChange);
		const closed = () => {
			unsubscribe();
			this.#open.delete(res);
		};
		res.once("close", closed);
		req.once("close", closed);
		res.on("error", closed);
	}

	/** A comment line on every stream, so idle connections (a phone, a proxy) stay open. */
	ping(): void {
		for (const res of this.#open) res.write(": ping\n\n");
	}

	/** Ends every stream (the page is closing). */
	closeAll(): void {
		for (const res of [...this.#open]) res.end();
		this.#open.clear();
	}
}
