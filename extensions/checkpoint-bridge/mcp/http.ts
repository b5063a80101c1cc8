/**
 * The tools over streamable HTTP, both eras on one URL: a 2026-07-28 request (it carries its own
 * envelope) is served statelessly by the SDK's handler, one server instance per request; a 2025
 * client gets a session of its own (`Mcp-Session-Id`), one server instance for its life, so its
 * name, its form and its cancels are as over stdio. Who calls is handed in as the request's
 * `authInfo` by the route that checked the token (surfaces/web/http/mcp-route.ts). Each client
 * holds at most its share of open requests (shares.ts); a session with a call in flight is never
 * closed to make room for a new one: the newcomer is refused instead.
 */
import { randomUUID } from "node:crypto";
import {
	type AuthInfo,
	createMcpHandler,
	isLegacyRequest,
	type McpRequestContext,
	type Server,
	WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { AskService } from "./server.ts";
import { clientNameIn, readBody, rpcError, Shares, whenSent } from "./shares.ts";

/** 2025-era sessions kept at once; the one idle longest with no call in flight is closed for a new one. @default 64 */
export const MAX_HTTP_SESSIONS = 64;
/** Largest request body read. @default 1 MiB */
const MAX_HTTP_BODY_BYTES = 1024 * 1024;

interface Session {
	transport: WebStandardStreamableHTTPServerTransport;
	server: Server;
	usedAt: number;
	/** Who it is, as its share counts: its client's name and address. */
	client: string;
	name: string;
	/** POSTs whose response is still open: calls in flight. */
	calls: number;
	/** Ends the session's own stream (GET), when one is open: it carries no call, so it gives way to one. */
	endStream?: () => void;
}

export interface McpHttp {
	fetch(request: Request, authInfo: AuthInfo): Promise<Response>;
	/** Sessions open now. */
	readonly sessionCount: number;
	close(): Promise<void>;
}

/** The request again, with the body already read. */
const withBody = (request: Request, bytes: Uint8Array | undefined) =>
	bytes === undefined ? request : new Request(request, { body: bytes as BodyInit, duplex: "half" } as RequestInit);

const parsed = (bytes: Uint8Array | undefined): unknown => {
	if (bytes === undefined) return undefined;
	try {
		return JSON.parse(Buffer.from(bytes).toString("utf8")) as unknown;
	} catch {
		return undefined;
	}
};

/** Whether a parsed body holds a JSON-RPC request (a method with an id): what keeps a response open. Unparsed counts as one. */
function carriesRequest(body: unknown): boolean {
	if (body === undefined) return true;
	const isRequest = (m: unknown) => typeof m === "object" && m !== null && "method" in m && "id" in m;
	return Array.isArray(body) ? body.some(isRequest) : isRequest(body);
}

const isInitialize = (body: unknown) => typeof body === "object" && body !== null && (body as { method?: unknown }).method === "initialize";

/** The 2025-era sessions, by id, with every client's share of open requests (its sessions' and its stateless calls'). */
class LegacySessions {
	readonly byId = new Map<string, Session>();
	readonly shares: Shares;
	readonly #service: AskService;
	readonly #max: number;

	constructor(service: AskService, max: number, perClient: number | undefined) {
		this.#service = service;
		this.#max = max;
		this.shares = new Shares(perClient);
	}

	/** A request of a 2025 client: an initialize opens its session; anything else goes to the session it names. */
	async serve(request: Request, authInfo: AuthInfo, body: unknown): Promise<Response> {
		const id = request.headers.get("mcp-session-id");
		if (id === null)
			return request.method === "POST" ? this.#opened(request, authInfo, body) : rpcError(400, "Bad Request: no Mcp-Session-Id (initialize first)");
		const session = this.byId.get(id);
		if (!session) return rpcError(404, "Session not found: initialize again");
		return this.#inSession(request, authInfo, session, body);
	}

	/** Takes a share of `client`'s open requests, ending one of its sessions' own streams when that makes room; undefined when at its share. */
	take(client: string): (() => void) | undefined {
		return this.shares.take(client) ?? (this.#streamGivenWay(client) ? this.shares.take(client) : undefined);
	}

	async close(): Promise<void> {
		await Promise.all([...this.byId.values()].map((s) => s.transport.close().catch(() => {})));
		this.byId.clear();
	}

	/** Makes room for a new session: closes the one idle longest with no call in flight; false when every session has one. */
	async #madeRoom(): Promise<boolean> {
		if (this.byId.size < this.#max) return true;
		const idle = [...this.byId].filter(([, s]) => s.calls === 0).sort(([, a], [, b]) => a.usedAt - b.usedAt)[0];
		if (!idle) return false;
		this.byId.delete(idle[0]);
		await idle[1].transport.close().catch(() => {});
		return true;
	}

	async #opened(request: Request, authInfo: AuthInfo, body: unknown): Promise<Response> {
		const name = clientNameIn(body);
		// Only an initialize opens a session: anything else is refused by the transport and makes no room.
		if (isInitialize(body) && !(await this.#madeRoom()))
			return rpcError(
				429,
				`Too Many Requests: all ${this.#max} MCP sessions have a call in flight, and none is closed for a new one; initialize again when one ends`,
				{ "retry-after": "5" },
			);
		const unit: McpRequestContext = { era: "legacy", authInfo, requestInfo: request };
		const transport = new WebStandardStreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID(),
			maxRequestBodySize: MAX_HTTP_BODY_BYTES,
			onsessioninitialized: (id) => void this.byId.set(id, session),
			onsessionclosed: (id) => void this.byId.delete(id),
		});
		const server = this.#service.factory(unit);
		const session: Session = { transport, server, usedAt: Date.now(), client: `${name}\0${authInfo.clientId}`, name, calls: 0 };
		await server.connect(transport);
		const response = await transport.handleRequest(request, { authInfo });
		// Not an initialize after all: nothing was opened.
		if (transport.sessionId === undefined) await transport.close().catch(() => {});
		return response;
	}

	async #inSession(request: Request, authInfo: AuthInfo, session: Session, body: unknown): Promise<Response> {
		// What answers the server (a form's answer, a notification) holds nothing open: it is never refused.
		if (request.method === "POST" && !carriesRequest(body)) return session.transport.handleRequest(request, { authInfo });
		const release = this.take(session.client);
		if (!release) return this.shares.refusal(session.name);
		session.usedAt = Date.now();
		const call = request.method === "POST";
		if (call) session.calls++;
		const settled = () => {
			release();
			if (call) session.calls--;
			else if (session.endStream === endStream) session.endStream = undefined;
			session.usedAt = Date.now();
		};
		const endStream = () => {
			settled();
			session.transport.closeStandaloneSSEStream();
		};
		if (request.method === "GET") session.endStream = endStream;
		try {
			return whenSent(await session.transport.handleRequest(request, { authInfo }), settled);
		} catch (error) {
			settled();
			throw error;
		}
	}

	/** A client at its share: the oldest of its sessions' own streams ends to make room for a request; false when it has none open. */
	#streamGivenWay(client: string): boolean {
		const streaming = [...this.byId.values()].find((s) => s.client === client && s.endStream);
		streaming?.endStream?.();
		return streaming !== undefined;
	}
}

/** The HTTP face of `service`; `perClient`: requests one client may have open at once. */
export function mcpOverHttp(service: AskService, limits: { sessions?: number; perClient?: number } = {}): McpHttp {
	const modern = createMcpHandler((unit) => service.factory(unit), { legacy: "reject", maxRequestBodySize: MAX_HTTP_BODY_BYTES, onerror: () => {} });
	const sessions = new LegacySessions(service, limits.sessions ?? MAX_HTTP_SESSIONS, limits.perClient);

	async function stateless(request: Request, authInfo: AuthInfo, body: unknown): Promise<Response> {
		if (!carriesRequest(body)) return modern.fetch(request, { authInfo });
		const name = clientNameIn(body);
		const release = sessions.take(`${name}\0${authInfo.clientId}`);
		if (!release) return sessions.shares.refusal(name);
		try {
			return whenSent(await modern.fetch(request, { authInfo }), release);
		} catch (error) {
			release();
			throw error;
		}
	}

	return {
		async fetch(given, authInfo) {
			let bytes: Uint8Array | undefined;
			if (given.method === "POST") {
				const read = await readBody(given, MAX_HTTP_BODY_BYTES);
				if ("refusal" in read) return read.refusal;
				bytes = read.bytes;
			}
			const body = parsed(bytes);
			const request = withBody(given, bytes);
			if (await isLegacyRequest(request, undefined, { maxRequestBodySize: MAX_HTTP_BODY_BYTES })) return sessions.serve(request, authInfo, body);
			return stateless(request, authInfo, body);
		},
		get sessionCount() {
			return sessions.byId.size;
		},
		async close() {
			await Promise.all([modern.close(), sessions.close()]);
		},
	};
}
