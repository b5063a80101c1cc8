/**
 * The page's HTTP security checks, each a refusal with a status and a one-line reason, and the
 * headers every response carries. The page holds answers to an agent's questions: a foreign site
 * must not read it (token, Host), drive it (Origin), frame it, or make it run script of its own.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Checked } from "../../../model/check.ts";

/** Largest request body read. @default 65536 (64 KiB) */
export const MAX_BODY_BYTES = 64 * 1024;

/** A refusal: a 4xx and why, in one line. */
export interface Refusal {
	status: number;
	reason: string;
}

/** Sent with every response, refusals included. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
	// No inline script or style, nothing from anywhere but the page itself, no framing.
	"content-security-policy":
		"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"referrer-policy": "no-referrer",
	"cache-control": "no-store",
	"x-content-type-options": "nosniff",
	"x-frame-options": "DENY",
	"cross-origin-opener-policy": "same-origin",
	"cross-origin-resource-policy": "same-origin",
};

/** Sends a refusal: its status and its reason as one line of text. */
export function refuse(res: ServerResponse, refusal: Refusal, extra: Record<string, string> = {}): void {
	const body = `${refusal.reason.replace(/[\r\n]+/g, " ")}\n`;
	if (res.headersSent) return void res.destroy();
	res.writeHead(refusal.status, {
		...SECURITY_HEADERS,
		"content-type": "text/plain; charset=utf-8",
		"content-length": String(Buffer.byteLength(body)),
		...extra,
	});
	res.end(body);
}

/** The `Host` header must name this server as its URL does (a rebound DNS name is refused). */
export function checkHost(req: IncomingMessage, allowed: ReadonlySet<string>): Refusal | undefined {
	const host = req.headers.host?.toLowerCase();
	if (host !== undefined && allowed.has(host)) return undefined;
	return { status: 403, reason: `the Host header ${JSON.stringify(req.headers.host ?? "")} does not name this server (${[...allowed][0]})` };
}

/**
 * A request that changes something must come from the page itself: its `Origin` is the page's
 * origin, or, without one, `Sec-Fetch-Site` says same-origin. A request that says neither is refused.
 */
function checkSameOrigin(req: IncomingMessage, origins: ReadonlySet<string>): Refusal | undefined {
	const origin = req.headers.origin;
	const site = req.headers["sec-fetch-site"];
	if (origin !== undefined)
		return origins.has(origin.toLowerCase())
			? undefined
			: { status: 403, reason: `requests from ${JSON.stringify(origin)} are refused: only the page itself may answer` };
	if (site === undefined) return { status: 403, reason: "the request does not say where it comes from (no Origin or Sec-Fetch-Site header)" };
	return site === "same-origin" ? undefined : { status: 403, reason: `requests from another site (Sec-Fetch-Site: ${JSON.stringify(site)}) are refused` };
}

/** Reads a JSON body of at most `limit` bytes; an oversized body is refused as soon as it is known to be, without reading the rest. */
function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Checked<{ value: unknown }, { refusal: Refusal }>> {
	const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
	if (type !== "application/json")
		return Promise.resolve({ ok: false, refusal: { status: 415, reason: "the body must be JSON (Content-Type: application/json)" } });
	const tooLarge = { ok: false as const, refusal: { status: 413, reason: `the body is larger than ${limit} bytes` } };
	const declared = Number(req.headers["content-length"]);
	if (Number.isFinite(declared) && declared > limit) return Promise.resolve(tooLarge);
	return new Promise((resolve) => {
		const chunks: Buffer[] = [];
		let size = 0;
		let done = false;
		const settle = (result: Checked<{ value: unknown }, { refusal: Refusal }>) => {
			if (done) return;
			done = true;
			req.off("data", onData);
			resolve(result);
		};
		const onData = (chunk: Buffer) => {
			size += chunk.length;
			if (size > limit) return settle(tooLarge);
			chunks.push(chunk);
		};
		req.on("data", onData);
		req.once("end", () => {
			try {
				settle({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown });
			} catch {
				settle({ ok: false, refusal: { status: 400, reason: "the body is not valid JSON" } });
			}
		});
		// A client that goes away mid-body gets no answer; nothing was applied.
		req.once("error", () => settle({ ok: false, refusal: { status: 400, reason: "the body was cut off" } }));
		req.once("aborted", () => settle({ ok: false, refusal: { status: 400, reason: "the body was cut off" } }));
	});
}

/**
 * What every answer route reads first: a same-origin request whose body is a JSON object. Resolves
 * with the object, or with undefined once the refusal (naming `shape`, the object expected) is sent.
 */
export async function readPostedObject(
	req: IncomingMessage,
	res: ServerResponse,
	origins: ReadonlySet<string>,
	limit: number,
	shape: string,
): Promise<Record<string, unknown> | undefined> {
	const foreign = checkSameOrigin(req, origins);
	if (foreign) return void refuse(res, foreign);
	const body = await readJsonBody(req, limit);
	// An oversized body is not read to its end: close the connection after saying so.
	if (!body.ok) return void refuse(res, body.refusal, body.refusal.status === 413 ? { connection: "close" } : {});
	const value = body.value;
	if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
	refuse(res, { status: 400, reason: `the body must be a JSON object: ${shape}` });
	return undefined;
}
