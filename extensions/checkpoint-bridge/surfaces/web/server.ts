/**
 * The web answer page's server (node:http, ADR-0008): serves the page, its live stream and its
 * answers on one address, reaching the host only over the shared handle's bus, so it outlives a
 * host being replaced. Neither it nor its connections keep the process alive.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type FormsElsewhere, formsElsewhere } from "../../core/answering/elsewhere.ts";
import { shownOrder } from "../../model/question.ts";
import { timeLeftText } from "../../model/time-left.ts";
import { NOTIFY_AFTER_ENV, NOTIFY_REMIND_ENV, NOTIFY_TIMEOUT_MS, Notifier, notifyDelay } from "./away/notify-command.ts";
import { actionsOf, wireNotifications } from "./away/notify-life.ts";
import { type AwayActions, OneTap } from "./away/one-tap.ts";
import { type PublicOrigin, parsePublicUrl, urlHost, WEB_PUBLIC_URL_ENV, type WebAddress } from "./http/address.ts";
import { Connections, MAX_CONNECTIONS, refuseConnection, timeoutOptions } from "./http/connections.ts";
import { MAX_BODY_BYTES, refuse } from "./http/guard.ts";
import { mcpRoute } from "./http/mcp-route.ts";
import { type Assets, route } from "./http/routes.ts";
import { digestOf, newSecret } from "./http/tokens.ts";
import { Board, type ObserverHandle } from "./live/board.ts";
import { linkPath, MAX_STREAMS, Streams } from "./live/stream.ts";
import { PAGE_EVENTS } from "./page-events.ts";

/** Interval of the keep-alive ping on every stream, which also re-reads the host's snapshot. @default 15000 */
export const KEEPALIVE_MS = 15_000;

export interface WebPageOptions {
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
	/** The one external origin (a reverse proxy) the page also answers on, and announces. @default process.env.CHECKPOINT_BRIDGE_WEB_PUBLIC_URL */
	publicUrl?: string;
	/** @default STREAM_BUFFER_BYTES */
	streamBufferBytes?: number;
	/** The notify command, read for each relayed request. @default process.env.CHECKPOINT_BRIDGE_NOTIFY_COMMAND */
	notifyCommand?: () => string | undefined;
	/** @default NOTIFY_TIMEOUT_MS */
	notifyTimeoutMs?: number;
	/** How long a relayed request waits unanswered before the notify command runs, read for each request. @default process.env.CHECKPOINT_BRIDGE_NOTIFY_AFTER_MS, else 0 (at once) */
	notifyAfterMs?: () => number;
	/** How long after the first run a request still unanswered gets a reminder run; 0: none. @default process.env.CHECKPOINT_BRIDGE_NOTIFY_REMIND_MS, else 0 */
	notifyRemindMs?: () => number;
	/** Where the page reports a problem (the notify command failing). @default none */
	notice?: (message: string, type: "info" | "warning") => void;
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

/** A notify delay read from the environment for each request; a problem with its value is said once per value, not once per request. */
function delayFromEnv(name: string, notice: WebPageOptions["notice"]): () => number {
	let said: string | undefined;
	return () => {
		const delay = notifyDelay(process.env, name);
		if (delay.problem && delay.problem !== said) notice?.(`checkpoint-bridge: ${delay.problem}`, "warning");
		said = delay.problem;
		return delay.ms;
	};
}

/** The notify command's runner, as the options or the environment set it. */
function pageNotifier(options: WebPageOptions): Notifier {
	return new Notifier({
		...(options.notifyCommand ? { command: options.notifyCommand } : {}),
		delayMs: options.notifyAfterMs ?? delayFromEnv(NOTIFY_AFTER_ENV, options.notice),
		remindMs: options.notifyRemindMs ?? delayFromEnv(NOTIFY_REMIND_ENV, options.notice),
		timeoutMs: options.notifyTimeoutMs ?? NOTIFY_TIMEOUT_MS,
		onFailure: (reason) => options.notice?.(`checkpoint-bridge: the notify command failed (${reason}); the request is unaffected`, "warning"),
	});
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

	const board = new Board(handle);
	const forms = options.forms ?? formsElsewhere();
	const streams = new Streams(
		board,
		options.maxStreams ?? MAX_STREAMS,
		{ ...(options.streamBufferBytes === undefined ? {} : { bufferBytes: options.streamBufferBytes }) },
		forms,
	);
	const notifier = pageNotifier(options);
	const linkFor = (requestId: string) => {
		const secret = board.linkSecret(requestId);
		return secret ? `${shownOrigin}${linkPath(secret)}` : undefined;
	};
	const oneTap = new OneTap();
	const links = { linkFor, origin: shownOrigin };
	const unsubscribe = wireNotifications(board, notifier, oneTap, links);
	const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
	serveRequests(server, { handle, board, streams, forms, assets, pageDigest: digestOf(token), hosts, origins, origin, maxBodyBytes, oneTap });
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
		close() {
			closing ??= (async () => {
				clearInterval(keepAlive);
				unsubscribe();
				board.close();
				const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
				streams.closeAll();
				server.closeAllConnections();
				await Promise.all([serverClosed, notifier.close()]);
			})();
			return closing;
		},
	};
}
