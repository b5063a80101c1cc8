/**
 * `/mcp` on the page's listener: MCP over streamable HTTP for agents anywhere that reach the page
 * (ADR-0026). The page's rules hold: the Host must name the page, a request that says where it comes
 * from must come from the page's own origin (a foreign Origin gets 403), and the page token is the
 * bearer token. The MCP server itself is not the page's: the extension's root offers it here
 * (offerMcpRoute) and it is loaded on the first request that passes the checks, so a page no MCP
 * client uses never loads the MCP SDK.
 *
 * `/mcp` has a quota of its own: at most MAX_MCP_REQUESTS requests open at once (waiting calls and
 * their streams), so that of the page's MAX_CONNECTIONS the rest always stay for the human's own ways
 * in (the page, its streams, request links, one-tap URLs); past it the oldest GET (a 2025 session's
 * own stream, which carries no call) gives way, and without one the request is refused with a 429 and
 * a JSON-RPC error naming the limit. Within it each client has a share (mcp/shares.ts). A client that
 * does not read its stream costs at most MCP_STREAM_BUFFER_BYTES unsent: past them its notifications
 * are dropped, and a stream still growing past MCP_STREAM_END_BYTES is ended.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { processSlot } from "../../../core/shared/process-slot.ts";
import { checkHost, refuse, SECURITY_HEADERS } from "./guard.ts";
import { matchesDigest } from "./tokens.ts";

/** The path of the MCP endpoint. */
const MCP_PATH = "/mcp";
/** `/mcp` requests open at once, every client together; more are refused (429). MAX_CONNECTIONS less this many stay for the human. @default 32 */
export const MAX_MCP_REQUESTS = 32;
/** Unsent bytes of one `/mcp` response past which its notifications (progress, keep-alives) are dropped. @default 65536 (64 KiB) */
export const MCP_STREAM_BUFFER_BYTES = 64 * 1024;
/** Unsent bytes of one `/mcp` response past which it is ended, whatever it was to say. @default 262144 (256 KiB) */
export const MCP_STREAM_END_BYTES = 4 * MCP_STREAM_BUFFER_BYTES;

/** Who connects, as the checks found it: the address the request came from. */
interface McpCaller {
	/** The peer's address (a proxy's, behind one). */
	address: string;
	/** Whether it came through the page's public URL (a proxy). */
	proxied: boolean;
}

/** Serves one MCP request that passed the page's checks. */
export type McpFetch = (request: Request, caller: McpCaller) => Promise<Response>;

interface Slot {
	/** Loads the MCP server's handler, once. */
	load?: () => Promise<McpFetch>;
	loaded?: Promise<McpFetch>;
}

const MCP_ROUTE_KEY = Symbol.for("checkpoint-bridge.web.mcp");
const slotOf = (target: object): Slot => processSlot<Slot>(target, MCP_ROUTE_KEY, () => ({}));

/** Offers the MCP server to every page of the process; the first offer stands (every copy of the extension offers the same). */
export function offerMcpRoute(load: () => Promise<McpFetch>, target: object = globalThis): void {
	slotOf(target).load ??= load;
}

/** What the route reads of the page. */
export interface McpRouteContext {
	hosts: ReadonlySet<string>;
	origins: ReadonlySet<string>;
	pageDigest: Buffer;
	/** The page's own listener origin: a Host that is not it came through the proxy. */
	origin: string;
	/** The page's `/mcp` requests open now, and how many may be. */
	mcpLoad: McpLoad;
}

/** The `/mcp` quota of one page. */
export interface McpLoad {
	/** The responses open now. */
	open: Set<ServerResponse>;
	/** Those of them that answer a GET (a 2025 session's own stream, which carries no call), oldest first. */
	streams: Set<ServerResponse>;
	max: number;
	/** Unsent bytes past which notifications are dropped, and past which a response is ended. */
	bufferBytes: number;
	endBytes: number;
}

/** A fresh quota. */
export const mcpLoad = (max = MAX_MCP_REQUESTS, bufferBytes = MCP_STREAM_BUFFER_BYTES): McpLoad => ({
	open: new Set(),
	streams: new Set(),
	max,
	bufferBytes,
	endBytes: 4 * bufferBytes,
});

/** A refusal as a JSON-RPC error, which an MCP client shows as what went wrong. */
function refuseRpc(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}): void {
	const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
	res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...extra });
	res.end(body);
}

/** The bearer token of an Authorization header, or undefined. */
const bearerOf = (header: string | undefined) => /^Bearer\s+([A-Za-z0-9_-]{1,256})\s*$/i.exec(header ?? "")?.[1];

/** The check of the page's rules for `/mcp`, in order: Host, Origin, token. */
function refusalOf(ctx: McpRouteContext, req: IncomingMessage) {
	const wrongHost = checkHost(req, ctx.hosts);
	const none: Record<string, string> = {};
	if (wrongHost) return { ...wrongHost, headers: none };
	const origin = req.headers.origin;
	// An agent sends no Origin; a browser does, and only the page's own may drive this endpoint.
	if (origin !== undefined && !ctx.origins.has(origin.toLowerCase()))
		return { status: 403, reason: `requests from ${JSON.stringify(origin)} are refused: only the page's own origin may call /mcp`, headers: none };
	const token = bearerOf(req.headers.authorization);
	if (token === undefined || !matchesDigest(token, ctx.pageDigest))
		return {
			status: 401,
			reason: "the MCP endpoint needs the page's token as a bearer token (Authorization: Bearer <token>, the token in the page's URL)",
			headers: { "www-authenticate": 'Bearer realm="checkpoint-bridge"' } as Record<string, string>,
		};
	return undefined;
}

/** A node request as a web Request, its body streamed and aborted when the client goes away. */
function webRequest(req: IncomingMessage, res: ServerResponse, origin: string): Request {
	const abort = new AbortController();
	res.once("close", () => abort.abort());
	const headers = new Headers();
	for (const [name, value] of Object.entries(req.headers)) {
		if (value === undefined) continue;
		for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
	}
	const method = req.method ?? "GET";
	const body = method === "GET" || method === "HEAD" ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>);
	return new Request(`${origin}${req.url ?? MCP_PATH}`, { method, headers, signal: abort.signal, ...(body ? { body, duplex: "half" } : {}) } as RequestInit);
}

/** Whether an SSE event can be left out for a client that is behind: a comment (keep-alive), or a notification (no id). */
function droppable(event: string): boolean {
	const data = event
		.split("\n")
		.filter((line) => line.startsWith("data:"))
		.map((line) => line.slice(5).trimStart())
		.join("\n");
	if (data === "") return event.split("\n").every((line) => line === "" || line.startsWith(":"));
	try {
		const message = JSON.parse(data) as Record<string, unknown>;
		return typeof message === "object" && message !== null && "method" in message && !("id" in message);
	} catch {
		return false;
	}
}

/**
 * Copies an SSE body event by event, read as fast as it comes so nothing waits unsent in the MCP
 * server: while the client has more than `bufferBytes` unread, droppable events are left out; past
 * `endBytes` the response is ended.
 */
async function copyEvents(body: ReadableStream<Uint8Array>, res: ServerResponse, load: McpLoad): Promise<void> {
	const reader = body.getReader();
	res.once("close", () => void reader.cancel().catch(() => {}));
	const decoder = new TextDecoder();
	let partial = "";
	for (;;) {
		const { done, value } = await reader.read();
		if (res.destroyed) return;
		partial += decoder.decode(value, { stream: !done });
		const events = partial.split("\n\n");
		partial = done ? "" : events.pop()!;
		for (const event of events) {
			if (event === "") continue;
			if (res.writableLength > load.endBytes) return void res.destroy();
			if (res.writableLength > load.bufferBytes && droppable(event)) continue;
			res.write(`${event}\n\n`);
		}
		if (done) return void res.end();
		// An event that never ends is not an event: it is sent on as it comes, within the same bounds.
		if (partial.length > load.bufferBytes) {
			if (res.writableLength > load.endBytes) return void res.destroy();
			res.write(partial);
			partial = "";
		}
	}
}

/** Writes a web Response to the node response, streaming its body (SSE included), its unsent bytes bounded. */
export async function sendResponse(response: Response, req: IncomingMessage, res: ServerResponse, load: McpLoad): Promise<void> {
	const headers: Record<string, string> = { ...SECURITY_HEADERS };
	response.headers.forEach((value, name) => {
		headers[name] = value;
	});
	// Answered before the body was read to its end (too large): the rest is not read, the connection closes once said.
	if (!req.complete) {
		headers.connection = "close";
		res.once("finish", () => req.socket.destroySoon());
	}
	res.writeHead(response.status, headers);
	if (!response.body) return void res.end();
	if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
		// A stream may say nothing for a while: its client learns at once that it is open.
		res.flushHeaders();
		return copyEvents(response.body, res, load).catch(() => void res.destroy());
	}
	const body = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>);
	body.on("error", () => res.destroy());
	res.once("close", () => body.destroy());
	body.pipe(res);
}

/** Serves `/mcp` when the request is for it (true), else leaves it to the page's routes (false). */
export function mcpRoute(ctx: McpRouteContext, req: IncomingMessage, res: ServerResponse, target: object = globalThis): boolean {
	const path = (req.url ?? "").split("?")[0];
	if (path !== MCP_PATH) return false;
	const refusal = refusalOf(ctx, req);
	if (refusal) {
		refuse(res, refusal, refusal.headers);
		return true;
	}
	const slot = slotOf(target);
	if (!slot.load) {
		refuse(res, { status: 404, reason: "no MCP server is offered in this process" });
		return true;
	}
	const load = ctx.mcpLoad;
	// Full: a session's own stream carries no call, so the oldest gives way (its client opens it again later).
	const oldestStream = load.open.size >= load.max ? load.streams.values().next().value : undefined;
	if (oldestStream) {
		load.open.delete(oldestStream);
		load.streams.delete(oldestStream);
		oldestStream.end();
	}
	if (load.open.size >= load.max) {
		refuseRpc(
			res,
			429,
			`Too Many Requests: /mcp has ${load.max} requests open, its limit for every client together (the rest of the page's connections stay for the human); try again when a call ends`,
			{ "retry-after": "5" },
		);
		return true;
	}
	load.open.add(res);
	if (req.method === "GET") load.streams.add(res);
	res.once("close", () => {
		load.open.delete(res);
		load.streams.delete(res);
	});
	const own = new URL(ctx.origin);
	const host = req.headers.host?.toLowerCase();
	const caller: McpCaller = { address: req.socket.remoteAddress ?? "unknown", proxied: host !== own.host && host !== `localhost:${own.port}` };
	slot.loaded ??= slot.load().catch((error: unknown) => {
		slot.loaded = undefined;
		throw error;
	});
	void slot.loaded
		.then((fetch) => fetch(webRequest(req, res, ctx.origin), caller))
		.then((response) => sendResponse(response, req, res, load))
		.catch(() => refuse(res, { status: 400, reason: "the MCP server could not serve the request" }));
	return true;
}
