/**
 * The page's live view: one server-sent-events stream per open tab. A stream starts with the
 * whole state, then gets each change as it happens. A stream opened through a request link sees
 * that request only, and ends when it settles. The page's tabs and the request links draw on
 * separate quotas, so links (the one the notify command posts) can never lock the page out. A tab
 * that stops reading costs at most one frame: while its output is past STREAM_BUFFER_BYTES the
 * changes are not written, it gets a fresh state once it drains, and a tab still behind at two
 * keep-alive pings in a row is closed (its browser reconnects).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FormChange, FormsElsewhere } from "../../../core/answering/elsewhere.ts";
import { type Refusal, refuse, SECURITY_HEADERS } from "../http/guard.ts";
import { type Card, type CardView, frame, PAGE_EVENTS, type StateMessage } from "../page-events.ts";
import { type Board, type BoardChange, traceFor } from "./board.ts";

/** Page streams (the page token's) open at once; more are refused (429). @default 64 */
export const MAX_STREAMS = 64;
/** Streams one request link may have open at once; more are refused (429). @default 4 */
export const MAX_STREAMS_PER_LINK = 4;
/** Streams all request links together may have open at once; more are refused (429). @default 32 */
export const MAX_LINK_STREAMS = 32;
/** Unsent bytes past which a stream is behind: changes are skipped and it gets a fresh state once it drains. @default 262144 (256 KiB) */
export const STREAM_BUFFER_BYTES = 256 * 1024;
/** Traces a fresh page gets. @default 20 */
const TRACES_SHOWN = 20;

/** What a tab's id may be: the page makes one per tab, to tell "answered in this tab" from "in another tab". */
const TAB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A tab id as a request names it: the id, none, or why it is refused. */
export function tabId(value: unknown): { tab: string | undefined } | Refusal {
	if (value === undefined || value === null) return { tab: undefined };
	return typeof value === "string" && TAB_ID.test(value) ? { tab: value } : { status: 400, reason: "tab must be 1 to 64 letters, digits, - or _, or left out" };
}

/** Whose view a request has: the whole page, or one request through its link. */
export type Scope = { kind: "page" } | { kind: "request"; requestId: string };

/** Path of a request's own link, relative to the server's root. */
export const linkPath = (secret: string) => `/r/${secret}/`;

interface OpenStream {
	res: ServerResponse;
	scope: Scope;
	/** The tab it streams to, when the page named it (`events?tab=`). */
	tab: string | undefined;
	/** Changes were skipped while it was behind: it needs a fresh state. */
	stale: boolean;
	/** Pings in a row at which it was behind. */
	behindPings: number;
}

export class Streams {
	readonly #board: Board;
	readonly #open = new Set<OpenStream>();
	readonly #max: number;
	readonly #maxPerLink: number;
	readonly #maxLinks: number;
	readonly #bufferBytes: number;
	readonly #forms: Pick<FormsElsewhere, "list" | "subscribe"> | undefined;

	constructor(
		board: Board,
		max = MAX_STREAMS,
		limits: { perLink?: number; links?: number; bufferBytes?: number } = {},
		/** Forms open in the host's terminal, streamed to the page's tabs. @default none */
		forms?: Pick<FormsElsewhere, "list" | "subscribe">,
	) {
		this.#board = board;
		this.#forms = forms;
		this.#max = max;
		this.#maxPerLink = limits.perLink ?? MAX_STREAMS_PER_LINK;
		this.#maxLinks = limits.links ?? MAX_LINK_STREAMS;
		this.#bufferBytes = limits.bufferBytes ?? STREAM_BUFFER_BYTES;
	}

	#view(card: Card, scope: Scope): CardView {
		const secret = scope.kind === "page" ? this.#board.linkSecret(card.requestId) : undefined;
		return secret ? { ...card, link: linkPath(secret) } : card;
	}

	#covers(scope: Scope, requestId: string): boolean {
		return scope.kind === "page" || scope.requestId === requestId;
	}

	/** Why a new stream for `scope` is refused, if it is: each quota is its own. */
	#full(scope: Scope): string | undefined {
		let pages = 0;
		let links = 0;
		let thisLink = 0;
		for (const { scope: other } of this.#open) {
			if (other.kind === "page") pages++;
			else {
				links++;
				if (scope.kind === "request" && other.requestId === scope.requestId) thisLink++;
			}
		}
		if (scope.kind === "page") return pages >= this.#max ? `too many open pages (${this.#max}); close a tab` : undefined;
		if (thisLink >= this.#maxPerLink) return `this request's link is open in too many tabs (${this.#maxPerLink}); close one`;
		return links >= this.#maxLinks ? `too many request links are open (${this.#maxLinks}); close one` : undefined;
	}

	#state(scope: Scope, tab: string | undefined): StateMessage {
		this.#board.sync();
		const cards = this.#board.cards().filter((c) => this.#covers(scope, c.requestId));
		const traces =
			scope.kind === "page"
				? this.#board
						.traces()
						.slice(-TRACES_SHOWN)
						.map((t) => traceFor(t, tab))
				: [];
		const forms = scope.kind === "page" ? (this.#forms?.list() ?? []) : [];
		return { now: Date.now(), scope: scope.kind, host: this.#board.hostPresent, cards: cards.map((c) => this.#view(c, scope)), traces, forms };
	}

	/** Writes to a stream that keeps up; one that is behind gets nothing now and a fresh state once it drains. */
	#send(stream: OpenStream, text: string): void {
		if (stream.res.writableLength > this.#bufferBytes) {
			stream.stale = true;
			return;
		}
		stream.res.write(text);
	}

	/** Serves one stream until the tab goes away or the page closes. */
	open(req: IncomingMessage, res: ServerResponse, scope: Scope): void {
		const named = tabId(new URL(req.url ?? "/", "http://page.invalid").searchParams.get("tab") ?? undefined);
		if ("status" in named) return refuse(res, named);
		const { tab } = named;
		const full = this.#full(scope);
		if (full) return refuse(res, { status: 429, reason: full });
		res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
		res.write(frame(PAGE_EVENTS.state, this.#state(scope, tab)));
		const stream: OpenStream = { res, scope, tab, stale: false, behindPings: 0 };
		this.#open.add(stream);
		const onChange = (change: BoardChange) => {
			if (change.type === "host") return void this.#send(stream, frame(PAGE_EVENTS.host, { present: change.present }));
			const requestId = change.type === "gone" ? change.requestId : change.card.requestId;
			if (!this.#covers(scope, requestId)) return;
			if (change.type === "gone") {
				this.#send(stream, frame(PAGE_EVENTS.gone, { requestId, ...(change.trace ? { trace: traceFor(change.trace, tab) } : {}) }));
				// A request link dies with its request.
				if (scope.kind === "request") res.end();
				return;
			}
			this.#send(stream, frame(PAGE_EVENTS[change.type], { now: Date.now(), card: this.#view(change.card, scope) }));
		};
		const onDrain = () => {
			if (!stream.stale || res.writableEnded) return;
			stream.stale = false;
			res.write(frame(PAGE_EVENTS.state, this.#state(scope, tab)));
		};
		const unsubscribe = this.#board.subscribe(onChange);
		// A request link sees its own request only: no forms.
		const onForm = (change: FormChange) =>
			this.#send(stream, change.type === "form" ? frame(PAGE_EVENTS.form, { form: change.form }) : frame(PAGE_EVENTS.formGone, { id: change.id }));
		const unsubscribeForms = scope.kind === "page" ? this.#forms?.subscribe(onForm) : undefined;
		res.on("drain", onDrain);
		const closed = () => {
			unsubscribe();
			unsubscribeForms?.();
			res.off("drain", onDrain);
			this.#open.delete(stream);
		};
		res.once("close", closed);
		req.once("close", closed);
		res.on("error", closed);
	}

	/** A comment line on every stream, so idle connections (a phone, a proxy) stay open; a stream behind at two pings in a row is closed. */
	ping(): void {
		for (const stream of [...this.#open]) {
			if (stream.res.writableLength <= this.#bufferBytes) {
				stream.behindPings = 0;
				stream.res.write(": ping\n\n");
			} else if (++stream.behindPings >= 2) {
				this.#open.delete(stream);
				stream.res.destroy();
			}
		}
	}

	/** Ends every stream (the page is closing). */
	closeAll(): void {
		for (const { res } of [...this.#open]) res.end();
		this.#open.clear();
	}
}
