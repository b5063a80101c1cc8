/**
 * The web answer page's server (node:http, ADR-0008): serves the page, its live stream and its
 * answers on one address, reaching the host only over the shared handle's bus, so it outlives a
 * host being replaced. Neither it nor its connections keep the process alive.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type FormsElsewhere, formsElsewhere } from "../../core/answering/elsewhere.ts";
import { currentStore } from "../../core/store/open.ts";
import { shownOrder } from "../../model/question.ts";
import { timeLeftText } from "../../model/time-left.ts";
import { type ChannelOptions, startChannels } from "./away/channels.ts";
import { actionsOf } from "./away/notify-life.ts";
import { type AwayActions, OneTap } from "./away/one-tap.ts";
import { type PublicOrigin, parsePublicUrl, urlHost, WEB_PUBLIC_URL_ENV, type WebAddress } from "./http/address.ts";
import { Connections, MAX_CONNECTIONS, refuseConnection, timeoutOptions } from "./http/connections.ts";
import { MAX_BODY_BYTES, refuse } from "./http/guard.ts";
import { MAX_MCP_REQUESTS, MCP_STREAM_BUFFER_BYTES, mcpLoad, mcpRoute } from "./http/mcp-route.ts";
import { type Assets, route } from "./http/routes.ts";
import { digestOf, newSecret } from "./http/tokens.ts";
import { Board, type ObserverHandle } from "./live/board.ts";
import { linkPath, MAX_STREAMS, Streams } from "./live/stream.ts";
import { PAGE_EVENTS } from "./page-events.ts";

/** Interval of the keep-alive ping on every stream, which also re-reads the host's snapshot. @default 15000 */
export const KEEPALIVE_MS = 15_000;

export interface WebPageOptions extends ChannelOptions {
	/** The shared handle: only its observer API is used. */
	handle: ObserverHandle;
	address: WebAddress;
	/** @default MAX_BODY_BYTES (64 KiB) */
	maxBodyBytes?: number;
	/** @default KEEPALIVE_MS */
	keepAliveMs?: number;
	/** @default MAX_STREAMS */
	maxStreams?: number;
	/** @default MAX_CONNECTIONS */
	maxConnections?: number;
	/** `/mcp` requests open at once, every client together: the rest of maxConnections stays for the page, its streams, links and one-tap URLs. @default MAX_MCP_REQUESTS */
	maxMcpRequests?: number;
	/** Unsent bytes of an `/mcp` response past which its notifications are dropped (four times as many end it). @default MCP_STREAM_BUFFER_BYTES */
	mcpBufferBytes?: number;
	/** The one external origin (a reverse proxy) the page also answers on, and announces. @default process.env.CHECKPOINT_BRIDGE_WEB_PUBLIC_URL */
	publicUrl?: string;
	/** @default STREAM_BUFFER_BYTES */
	streamBufferBytes?: number;
	/** Forms open in the host's terminal (other extensions'), shown and answered too. @default the process's (formsElsewhere()) */
	forms?: FormsElsewhere;
}

export interface WebPage {
	/** The page's URL, token included: whoever has it can answer every request. Behind a proxy (publicUrl), the proxy's. */
	readonly url: string;
	/** Scheme, host and port it listens on (the proxy's origin is in `url`). */
	readonly origin: string;
	/** Where it listens, with the port it got. */
	readonly address: WebAddress;
	/** The own link of an open request (answers that request only), undefined once it settled. */
	linkFor(requestId: string): string | undefined;
	/** An open request's one-tap answers and link (what the notify command gets), undefined once it settled. */
	actionsFor(requestId: string): AwayActions | undefined;
	/** Sends a test notification (ntfy, the notify command) with an "It works" button whose press is said at the host; what was sent. */
	notifyTest(asker: string): Promise<string>;
	/** Stops serving: streams end, connections close, notify commands are killed, the bus is let go. */
	close(): Promise<void>;
}

const staticFile = (name: string) => readFileSync(new URL(`./static/${name}`, import.meta.url), "utf8");

/**
 * The page's script: the terminal form's own time formatter (model/time-left.ts, self-contained), so
 * page and terminal say the same, the one order of a question's options (model/question.ts, as
 * self-contained), and the live stream's event names (page-events.ts), so page and
 * stream.ts use the same, then app.js (static/page-globals.d.ts declares both for its type check).
 */
export const pageScript = () =>
	`const timeLeftText = ${timeLeftText.toString()};\nconst shownOrder = ${shownOrder.toString()};\nconst PAGE_EVENTS = Object.freeze(${JSON.stringify(PAGE_EVENTS)});\n${staticFile("app.js")}`;

/** The one external origin the page also answers on, from the option or the environment; rejects one that is not an origin. */
function publicOriginOf(options: WebPageOptions): PublicOrigin | undefined {
	const spec = (options.publicUrl ?? process.env[WEB_PUBLIC_URL_ENV])?.trim();
	if (!spec) return undefined;
	const parsed = parsePublicUrl(spec);
	if (!parsed.ok) throw new Error(parsed.reason);
	return parsed.publicOrigin;
}

/** Listens on the page's address; the port it got, and the hosts and origins a request may name (a proxy's too). */
async function listenOn(server: http.Server, given: WebAddress, publicOrigin: PublicOrigin | undefined) {
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(given.port, given.host, () => {
			server.off("error", reject);
			resolve();
		});
	});
	const port = (server.address() as AddressInfo).port;
	const address: WebAddress = { ...given, port };
	const authority = `${urlHost(address.host)}:${port}`;
	const origin = `http://${authority}`;
	const local = [authority, ...(address.loopback ? [`localhost:${port}`] : [])];
	// Behind a proxy: the Host it forwards and its Origin, and nothing else besides the page's own.
	const hosts = new Set([...local, ...(publicOrigin ? [publicOrigin.host] : [])]);
	const origins = new Set([...local.map((h) => `http://${h}`), ...(publicOrigin ? [publicOrigin.origin] : [])]);
	return { address, origin, hosts, origins, shownOrigin: publicOrigin?.origin ?? origin };
}

/** Routes every request (`/mcp` first); a failure of any kind answers the client and leaves the host session running. */
function serveRequests(server: http.Server, context: Parameters<typeof route>[0] & Parameters<typeof mcpRoute>[0]): void {
	server.on("request", (req, res) => {
		try {
			// `/mcp`: agents anywhere ask over MCP, behind the page's own checks (mcp-route.ts).
			if (mcpRoute(context, req, res)) return;
			route(context, req, res);
		} catch {
			// route never throws by design; if it did, the client still gets an answer and the host lives on.
			refuse(res, { status: 400, reason: "the request could not be handled" });
		}
	});
	server.on("connection", (socket) => socket.unref());
	// A failing accept or a malformed request line must not take the host session down.
	server.on("error", () => {});
	// A malformed request, or one too slow to arrive: one line of answer, then the descriptor is given back even if the peer never reads.
	server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
		const late = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
		const reason = late ? "the request took too long to arrive\n" : "the request could not be parsed as HTTP/1.1\n";
		const status = late ? "408 Request Timeout" : "400 Bad Request";
		refuseConnection(
			socket as Socket,
			`HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${reason.length}\r\nconnection: close\r\n\r\n${reason}`,
		);
	});
	server.unref();
}

/** Starts the page; rejects when the address cannot be listened on or the public URL is not an origin. */
export async function startWebPage(options: WebPageOptions): Promise<WebPage> {
	const { handle } = options;
	const publicOrigin = publicOriginOf(options);
	const assets: Assets = { html: staticFile("page.html"), js: pageScript(), css: staticFile("app.css") };
	// A request without Host is refused by checkHost, with its reason, rather than by Node's bare 400.
	const server = http.createServer({ requireHostHeader: false, ...timeoutOptions });
	// It bounds the server's connections from here on, on the server's own events.
	new Connections(server, options.maxConnections ?? MAX_CONNECTIONS);
	const { address, origin, hosts, origins, shownOrigin } = await listenOn(server, options.address, publicOrigin);
	const token = newSecret();

	// Links and one-tap URLs outlive a restart when the host writes its requests down (ADR-0033): derived from the store's seed.
	const lasting = (purpose: string, id: string) => {
		try {
			return currentStore()?.secretFor(purpose, id);
		} catch {
			return undefined; // a store that fails now: a fresh secret, as without one
		}
	};
	const board = new Board(handle, (requestId) => lasting("link", requestId));
	const forms = options.forms ?? formsElsewhere();
	const streams = new Streams(
		board,
		options.maxStreams ?? MAX_STREAMS,
		{ ...(options.streamBufferBytes === undefined ? {} : { bufferBytes: options.streamBufferBytes }) },
		forms,
	);
	const linkFor = (requestId: string) => {
		const secret = board.linkSecret(requestId);
		return secret ? `${shownOrigin}${linkPath(secret)}` : undefined;
	};
	const oneTap = new OneTap(lasting);
	// Every card's URLs exist from its first sight, so a tap on one sent before a restart is found before anything is sent again.
	for (const card of board.cards()) oneTap.prepare(card);
	board.subscribe((change) => change.type === "added" && oneTap.prepare(change.card));
	const links = { linkFor, origin: shownOrigin };
	const channels = startChannels(board, oneTap, links, options);
	const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
	const mcp = mcpLoad(options.maxMcpRequests ?? MAX_MCP_REQUESTS, options.mcpBufferBytes ?? MCP_STREAM_BUFFER_BYTES);
	serveRequests(server, { handle, board, streams, forms, assets, pageDigest: digestOf(token), hosts, origins, origin, maxBodyBytes, oneTap, mcpLoad: mcp });
	const keepAlive = setInterval(() => {
		board.sync();
		streams.ping();
	}, options.keepAliveMs ?? KEEPALIVE_MS);
	keepAlive.unref();

	let closing: Promise<void> | undefined;
	return {
		url: `${shownOrigin}/t/${token}/`,
		origin,
		address,
		linkFor,
		actionsFor: (requestId) => actionsOf(board, oneTap, links, requestId),
		notifyTest: (asker) => channels.test(asker),
		close() {
			closing ??= (async () => {
				clearInterval(keepAlive);
				board.close();
				const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
				streams.closeAll();
				server.closeAllConnections();
				await Promise.all([serverClosed, channels.close()]);
			})();
			return closing;
		},
	};
}
