/**
 * Each HTTP client's share of `/mcp`: a client (its own name and the address it connects from, as
 * the host counts an asker) holds at most MCP_REQUESTS_PER_CLIENT requests open at once (waiting
 * calls, a 2025 session's stream), so that no client, and no pair of clients, takes the page's whole
 * `/mcp` quota (surfaces/web/http/mcp-route.ts). A request counts from the moment it is read until
 * its response has been sent or the client went away.
 */
import { CLIENT_INFO_META_KEY } from "@modelcontextprotocol/server";

/** Requests one client may have open at `/mcp` at once; more are refused (429). @default 8 */
export const MCP_REQUESTS_PER_CLIENT = 8;

/** A JSON-RPC error as an HTTP response, for a request the HTTP layer refuses itself. */
export const rpcError = (status: number, message: string, headers: Record<string, string> = {}) =>
	new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), {
		status,
		headers: { "content-type": "application/json", ...headers },
	});

/** A POST body read whole, up to `limit` bytes: its bytes, or the refusal of one over it. */
export async function readBody(request: Request, limit: number): Promise<{ bytes: Uint8Array } | { refusal: Response }> {
	const tooLarge = { refusal: rpcError(413, `Payload Too Large: the body is larger than ${limit} bytes`) };
	if (Number(request.headers.get("content-length") ?? 0) > limit) return tooLarge;
	if (!request.body) return { bytes: new Uint8Array() };
	const chunks: Uint8Array[] = [];
	let size = 0;
	const reader = request.body.getReader();
	try {
		for (;;) {
			const { done, value } = await reader.read();
			if (done) break;
			size += value.byteLength;
			if (size > limit) {
				await reader.cancel().catch(() => {});
				return tooLarge;
			}
			chunks.push(value);
		}
	} catch {
		return { refusal: rpcError(400, "Bad Request: the body was cut off") };
	}
	return { bytes: Buffer.concat(chunks) };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The client's own name in a parsed body: an initialize's clientInfo, or a 2026-07-28 request's envelope; "" when it names none. */
export function clientNameIn(body: unknown): string {
	const first = Array.isArray(body) ? body[0] : body;
	if (!isRecord(first) || !isRecord(first.params)) return "";
	const { params } = first;
	const info = isRecord(params.clientInfo) ? params.clientInfo : isRecord(params._meta) ? params._meta[CLIENT_INFO_META_KEY] : undefined;
	return isRecord(info) && typeof info.name === "string" ? info.name : "";
}

/** `response`, whose `settled` runs once when its body has been read to its end or given up (at once when it has none). */
export function whenSent(response: Response, settled: () => void): Response {
	let done = false;
	const once = () => {
		if (done) return;
		done = true;
		settled();
	};
	if (!response.body) {
		once();
		return response;
	}
	const reader = response.body.getReader();
	const body = new ReadableStream<Uint8Array>({
		async pull(controller) {
			try {
				const { done: ended, value } = await reader.read();
				if (!ended) return controller.enqueue(value);
				once();
				controller.close();
			} catch (error) {
				once();
				controller.error(error);
			}
		},
		cancel(reason) {
			once();
			return reader.cancel(reason).catch(() => {});
		},
	});
	return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Open requests per client; a client at its share is refused. */
export class Shares {
	readonly #open = new Map<string, number>();
	readonly #perClient: number;

	constructor(perClient = MCP_REQUESTS_PER_CLIENT) {
		this.#perClient = perClient;
	}

	/** Counts one request of `client` until `release` runs; undefined when the client already has its share open. */
	take(client: string): (() => void) | undefined {
		const open = this.#open.get(client) ?? 0;
		if (open >= this.#perClient) return undefined;
		this.#open.set(client, open + 1);
		let released = false;
		return () => {
			if (released) return;
			released = true;
			const left = (this.#open.get(client) ?? 1) - 1;
			if (left > 0) this.#open.set(client, left);
			else this.#open.delete(client);
		};
	}

	/** What a client over its share is told. */
	refusal(name: string): Response {
		const who = name ? `the client ${JSON.stringify(name.slice(0, 64))}` : "this client";
		return rpcError(
			429,
			`Too Many Requests: ${who} already has ${this.#perClient} requests open at /mcp, its share (each client's limit of requests open at once); wait for one to end, or queue questions with wait: false`,
			{ "retry-after": "5" },
		);
	}
}
