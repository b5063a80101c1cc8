/**
 * The page's TCP connections, bounded (issue 19): anyone who can reach the port may open
 * connections, token or not, and each costs the host a file descriptor it shares with the local
 * endpoint and everything else. Past the bound the oldest idle connection (no request in flight:
 * one still sending its headers, or a keep-alive one between requests) is destroyed to make room;
 * when every connection is busy (streams, answers in flight), the new one is destroyed instead.
 * Node accepts a whole backlog in one turn of the event loop, before it reads what any of those
 * connections sent: so that a burst cannot evict a browser whose request is waiting to be read,
 * at most EVICTIONS_PER_TURN connections make room per turn, and the rest of the burst is turned away.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * TCP connections the page holds at once. `/mcp` keeps at most MAX_MCP_REQUESTS (32) of them busy
 * (mcp-route.ts), so the rest (96) always stay for the human's own ways in: the page, its streams, links and one-tap URLs. @default 128
 */
export const MAX_CONNECTIONS = 128;
/** Connections evicted to make room within one turn of the event loop; later newcomers of that turn are destroyed instead. @default 16 */
const EVICTIONS_PER_TURN = 16;
/** How long a client may take to send a request's headers before its connection is destroyed. @default 5000 */
export const HEADERS_TIMEOUT_MS = 5_000;
/** How long a client may take to send a whole request (headers and body). @default 15000 */
const REQUEST_TIMEOUT_MS = 15_000;
/** How often Node checks those two timeouts. @default 1000 */
const TIMEOUT_CHECK_MS = 1_000;
/** How long a refused connection may take to flush its one-line answer before it is destroyed. @default 1000 */
const REFUSAL_LINGER_MS = 1_000;

/** Options for http.createServer that make the timeouts above apply. */
export const timeoutOptions = { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS };

/** Ends a connection with a last answer, then destroys it whether or not the peer reads or closes its side. */
export function refuseConnection(socket: Socket, answer: string): void {
	if (!socket.writable) return void socket.destroy();
	const linger = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
	linger.unref();
	socket.end(answer, () => {
		clearTimeout(linger);
		socket.destroy();
	});
}

/** Tracks the server's connections, oldest first, and keeps them within `max`. */
export class Connections {
	/** Every open connection, oldest first, with the requests it has in flight. */
	readonly #open = new Map<Socket, number>();
	readonly #max: number;
	#evictedThisTurn = 0;

	constructor(server: Server, max = MAX_CONNECTIONS) {
		this.#max = max;
		server.on("connection", (socket: Socket) => this.#accept(socket));
		server.on("request", (req: IncomingMessage, res: ServerResponse) => {
			const socket = req.socket;
			if (!this.#open.has(socket)) return;
			this.#open.set(socket, this.#open.get(socket)! + 1);
			res.once("close", () => {
				const inFlight = this.#open.get(socket);
				if (inFlight !== undefined) this.#open.set(socket, inFlight - 1);
			});
		});
	}

	/** Connections open now. */
	get count(): number {
		return this.#open.size;
	}

	#accept(socket: Socket): void {
		if (this.#open.size >= this.#max) {
			const victim = this.#evictedThisTurn < EVICTIONS_PER_TURN ? this.#oldestIdle() : undefined;
			// Every connection is serving, or this turn's burst has made room enough: the newcomer is the one turned away.
			if (!victim) return void socket.destroy();
			if (this.#evictedThisTurn++ === 0) setImmediate(() => (this.#evictedThisTurn = 0)).unref();
			this.#open.delete(victim);
			victim.destroy();
		}
		this.#open.set(socket, 0);
		socket.once("close", () => this.#open.delete(socket));
	}

	#oldestIdle(): Socket | undefined {
		for (const [socket, inFlight] of this.#open) if (inFlight === 0) return socket;
		return undefined;
	}
}
