/**
 * The tools over streamable HTTP, both eras on one URL: a 2026-07-28 request (it carries its own
 * envelope) is served statelessly by the SDK's handler, one server instance per request; a 2025
 * client gets a session of its own (`Mcp-Session-Id`), one server instance for its life, so its
 * name, its form and its cancels are as over stdio. Who calls is handed in as the request's
 * `authInfo` by the route that checked the token (surfaces/web/http/mcp-route.ts).
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

/** 2025-era sessions kept at once; the one idle longest is closed for a new one. @default 64 */
const MAX_HTTP_SESSIONS = 64;
/** Largest request body read. @default 1 MiB */
const MAX_HTTP_BODY_BYTES = 1024 * 1024;

interface Session {
	transport: WebStandardStreamableHTTPServerTransport;
	server: Server;
	usedAt: number;
}

/** JSON-RPC error as a response, for a request the session layer refuses itself. */
const rpcError = (status: number, message: string) =>
	new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), {
		status,
		headers: { "content-type": "application/json" },
	});

export interface McpHttp {
	fetch(request: Request, authInfo: AuthInfo): Promise<Response>;
	/** Sessions open now. */
	readonly sessionCount: number;
	close(): Promise<void>;
}

/** The HTTP face of `service`. */
export function mcpOverHttp(service: AskService): McpHttp {
	const modern = createMcpHandler((unit) => service.factory(unit), { legacy: "reject", maxRequestBodySize: MAX_HTTP_BODY_BYTES, onerror: () => {} });
	const sessions = new Map<string, Session>();

	async function evictIdlest(): Promise<void> {
		const [id, idlest] = [...sessions].sort(([, a], [, b]) => a.usedAt - b.usedAt)[0]!;
		sessions.delete(id);
		await idlest.transport.close().catch(() => {});
	}

	async function opened(request: Request, authInfo: AuthInfo): Promise<Response> {
		if (sessions.size >= MAX_HTTP_SESSIONS) await evictIdlest();
		const unit: McpRequestContext = { era: "legacy", authInfo, requestInfo: request };
		const transport = new WebStandardStreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID(),
			maxRequestBodySize: MAX_HTTP_BODY_BYTES,
			onsessioninitialized: (id) => void sessions.set(id, session),
			onsessionclosed: (id) => void sessions.delete(id),
		});
		const server = service.factory(unit);
		const session: Session = { transport, server, usedAt: Date.now() };
		await server.connect(transport);
		const response = await transport.handleRequest(request, { authInfo });
		// Not an initialize after all: nothing was opened.
		if (transport.sessionId === undefined) await transport.close().catch(() => {});
		return response;
	}

	async function legacy(request: Request, authInfo: AuthInfo): Promise<Response> {
		const id = request.headers.get("mcp-session-id");
		if (id === null) return request.method === "POST" ? opened(request, authInfo) : rpcError(400, "Bad Request: no Mcp-Session-Id (initialize first)");
		const session = sessions.get(id);
		if (!session) return rpcError(404, "Session not found: initialize again");
		session.usedAt = Date.now();
		return session.transport.handleRequest(request, { authInfo });
	}

	return {
		async fetch(request, authInfo) {
			if (await isLegacyRequest(request, undefined, { maxRequestBodySize: MAX_HTTP_BODY_BYTES })) return legacy(request, authInfo);
			return modern.fetch(request, { authInfo });
		},
		get sessionCount() {
			return sessions.size;
		},
		async close() {
			await Promise.all([modern.close(), ...[...sessions.values()].map((s) => s.transport.close().catch(() => {}))]);
			sessions.clear();
		},
	};
}
