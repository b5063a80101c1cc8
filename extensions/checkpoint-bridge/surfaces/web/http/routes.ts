/**
 * The page's HTTP routes. Every path starts with a secret: `/t/<page token>/…` is the whole page,
 * `/r/<request link>/…` one request. Under either: `` (the page), `app.js`, `app.css`, `events`
 * (the live stream) and `answer` (POST); under a request link only, `qr.svg` (that link as a QR code);
 * under the page token only, `form` (POST: an answer to a form open in the terminal, forms.ts). Checks run in this order: Host, secret, method, and for
 * an answer Origin, body, then the one answer check of the core (an `answer` event on the bus).
 * `/a/<secret>` is a one-tap answer (away/tap-route.ts). The paths are declared on find-my-way's
 * router, each with its step; a path it does not know is a 404.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import type { OutsideAnswerReply } from "../../../core/shared/outside-answers.ts";
import { waitAtMost } from "../../../core/shared/wait.ts";
import type { OneTap } from "../away/one-tap.ts";
import { qrSvg } from "../away/qr.ts";
import { tapRoute } from "../away/tap-route.ts";
import { type Board, type ObserverHandle, traceFor } from "../live/board.ts";
import { answerForm, type FormRouteContext } from "../live/forms.ts";
import { linkPath, type Scope, type Streams, tabId } from "../live/stream.ts";
import { checkHost, type Refusal, readPostedObject, refuse, SECURITY_HEADERS } from "./guard.ts";
import { matchesDigest } from "./tokens.ts";

/** The page's own files, read once at start. */
export interface Assets {
	html: string;
	js: string;
	css: string;
}

export interface RouteContext {
	handle: ObserverHandle;
	board: Board;
	streams: Streams;
	assets: Assets;
	/** Digest of the page token. */
	pageDigest: Buffer;
	/** `Host` values that name this server. */
	hosts: ReadonlySet<string>;
	/** Origins the page is served from. */
	origins: ReadonlySet<string>;
	maxBodyBytes: number;
	/** Scheme, host and port of the page's links, as announced. */
	origin: string;
	/** How long to wait for the host's reply to an answer. @default 5000 */
	replyTimeoutMs?: number;
	/** Forms open in the host's terminal that the page answers too. */
	forms: FormRouteContext["forms"];
	/** One-tap answers, under `/a/<secret>` (away/tap-route.ts). */
	oneTap: OneTap;
}

const FILES: Record<string, { type: string; body: keyof Assets }> = {
	"": { type: "text/html; charset=utf-8", body: "html" },
	"app.js": { type: "text/javascript; charset=utf-8", body: "js" },
	"app.css": { type: "text/css; charset=utf-8", body: "css" },
};

/** What a secret in a path may be. */
const SECRET = "([A-Za-z0-9_-]{1,128})";

/** Status of each refusal code of the core's answer check (snake case: the observer contract's codes, docs/observers.md). */
const ANSWER_STATUS: Record<Exclude<OutsideAnswerReply, { ok: true }>["code"], number> = { invalid_payload: 400, invalid_answer: 422, not_found: 404 };

function json(res: ServerResponse, status: number, value: unknown): void {
	const body = JSON.stringify(value);
	res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)) });
	res.end(body);
}

/** Who the secret in the path lets in, or why nobody. */
function scopeOf(ctx: RouteContext, kind: string, secret: string): Scope | Refusal {
	if (kind === "t")
		return matchesDigest(secret, ctx.pageDigest) ? { kind: "page" } : { status: 403, reason: "wrong page token: use the link the host announced" };
	const link = ctx.board.resolveLink(secret);
	if (!link) return { status: 404, reason: "no open request has this link" };
	if ("settled" in link) return { status: 410, reason: `this request has settled: ${link.settled.outcome}` };
	return { kind: "request", requestId: link.open.requestId };
}

/** Sends the answer through the core's one check and waits for the host's reply. */
function askHost(ctx: RouteContext, payload: unknown): Promise<OutsideAnswerReply | "no-host" | "no-reply"> {
	// The host replies at once; a listener that never does must not hold the request open.
	return waitAtMost<OutsideAnswerReply | "no-host" | "no-reply">({ ms: ctx.replyTimeoutMs ?? 5_000, elapsed: () => "no-reply" }, (settle) => {
		if (!ctx.handle.bus.emit("answer", payload, settle)) settle("no-host");
		return undefined;
	});
}

async function answer(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, scope: Scope): Promise<void> {
	const value = await readPostedObject(req, res, ctx.origins, ctx.maxBodyBytes, "{ requestId, answers }");
	if (!value) return;
	const { requestId: named, answers, tab: tabValue, via, decline } = value;
	const tab = tabId(tabValue);
	if ("status" in tab) return refuse(res, tab);
	if (via !== undefined && via !== "notify")
		return refuse(res, { status: 400, reason: 'via must be "notify" (the page was opened from the notify command\'s link) or left out' });
	let requestId: unknown = named;
	if (scope.kind === "request") {
		if (named !== undefined && named !== scope.requestId) return refuse(res, { status: 403, reason: "this link answers its own request only" });
		requestId = scope.requestId;
	}
	if (typeof requestId !== "string" || requestId === "") return refuse(res, { status: 400, reason: "requestId must be a non-empty string" });
	if (decline !== undefined && (decline !== true || answers !== undefined))
		return refuse(res, { status: 400, reason: "decline is true without answers (the terminal's Esc), or left out" });
	// Only the answers (or a decline) are taken from the body: the source is always the page.
	// Where on the page: its secret says; a request link opened from the notify command's message says so.
	const place = scope.kind === "page" ? "page" : via === "notify" ? "notify-link" : "link";
	const what = decline ? { cancel: true } : { answers };
	const reply = await ctx.board.answering(tab.tab, () => askHost(ctx, { requestId, ...what, source: "web", place }));
	if (reply === "no-host" || reply === "no-reply") {
		return refuse(res, {
			status: 409,
			reason:
				reply === "no-host" ? "no session holds the host role right now; try again in a moment" : "the host did not confirm the answer; nothing was applied",
		});
	}
	if (reply.ok) return json(res, 200, { ok: true });
	if (reply.code === "not_found") {
		const trace = ctx.board.trace(requestId);
		if (trace) return refuse(res, { status: 409, reason: `not applied: this request is already closed (${traceFor(trace, tab.tab).outcome})` });
		ctx.board.sync();
	}
	refuse(res, { status: ANSWER_STATUS[reply.code], reason: reply.reason });
}

/** What the path's parameters are, as the router found them. */
type Params = Record<string, string | undefined>;
type Step = (ctx: RouteContext, req: IncomingMessage, res: ServerResponse, params: Params, path: string) => void;

/** The page's paths: each a step of its own, kept as the route's store. */
const router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false });
const on = (path: string, step: Step) => router.all(path, () => {}, step);
on(`/a/:secret${SECRET}`, (ctx, req, res, params) =>
	tapRoute({ oneTap: ctx.oneTap, origins: ctx.origins, askHost: (payload) => askHost(ctx, payload) }, req, res, params.secret!),
);
for (const kind of ["t", "r"] as const) {
	// Relative links in the page need the trailing slash.
	on(`/${kind}/:secret${SECRET}`, (ctx, _req, res, params, path) => {
		const scope = scopeOf(ctx, kind, params.secret!);
		if ("status" in scope) return refuse(res, scope);
		res.writeHead(308, { ...SECURITY_HEADERS, location: `${path}/` });
		res.end();
	});
	on(`/${kind}/:secret${SECRET}/`, (ctx, req, res, params) => under(ctx, req, res, kind, params.secret!, ""));
	on(`/${kind}/:secret${SECRET}/:name`, (ctx, req, res, params) => under(ctx, req, res, kind, params.secret!, params.name!));
}

/** Handles one request; never throws, never answers 5xx for anything a client sends. */
export function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): void {
	const wrongHost = checkHost(req, ctx.hosts);
	if (wrongHost) return refuse(res, wrongHost);
	let path: string;
	try {
		path = new URL(req.url ?? "/", "http://page.invalid").pathname;
	} catch {
		return refuse(res, { status: 400, reason: "the request target is not a URL path" });
	}
	// Percent-encoding has no place in a secret or a file name here: such a path is nobody's.
	const found = path.includes("%") ? null : router.find((req.method ?? "GET") as HTTPMethod, path);
	if (!found) return refuse(res, { status: 404, reason: "not found: open the link the host announced" });
	(found.store as Step)(ctx, req, res, found.params, path);
}

/** A request under a secret: `name` is what follows it (the page itself when empty). */
function under(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, kind: "t" | "r", secret: string, name: string): void {
	const scope = scopeOf(ctx, kind, secret);
	if ("status" in scope) return refuse(res, scope);
	const method = req.method ?? "GET";
	if (name === "answer") {
		if (method !== "POST") return refuse(res, { status: 405, reason: "answers are sent with POST" }, { allow: "POST" });
		void answer(ctx, req, res, scope).catch(() => refuse(res, { status: 400, reason: "the answer could not be read" }));
		return;
	}
	if (name === "form") {
		// The page token answers everything; a request's link answers its own request only.
		if (scope.kind !== "page")
			return refuse(res, { status: 404, reason: "forms open in the terminal are answered on the page itself, not through a request's link" });
		if (method !== "POST") return refuse(res, { status: 405, reason: "answers are sent with POST" }, { allow: "POST" });
		void answerForm(ctx, req, res).catch(() => refuse(res, { status: 400, reason: "the answer could not be read" }));
		return;
	}
	if (name === "qr.svg") {
		// A request's code is its own link, and only a request link serves one: no code ever carries the page token.
		if (scope.kind !== "request") return refuse(res, { status: 404, reason: "a QR code is served under a request's own link only" });
		if (method !== "GET" && method !== "HEAD") return refuse(res, { status: 405, reason: "the QR code is read with GET" }, { allow: "GET, HEAD" });
		void qrSvg(`${ctx.origin}${linkPath(secret!)}`).then(
			(svg) => {
				res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "image/svg+xml", "content-length": String(Buffer.byteLength(svg)) });
				res.end(method === "HEAD" ? undefined : svg);
			},
			() => refuse(res, { status: 404, reason: "QR codes are not available: the qrcode package cannot be loaded" }),
		);
		return;
	}
	if (name === "events") {
		if (method !== "GET") return refuse(res, { status: 405, reason: "the live view is read with GET" }, { allow: "GET" });
		return ctx.streams.open(req, res, scope);
	}
	if (!(name in FILES)) return refuse(res, { status: 404, reason: `not found: ${name}` });
	if (method !== "GET" && method !== "HEAD") return refuse(res, { status: 405, reason: `${name || "the page"} is read with GET` }, { allow: "GET, HEAD" });
	const file = FILES[name]!;
	const body = ctx.assets[file.body];
	res.writeHead(200, { ...SECURITY_HEADERS, "content-type": file.type, "content-length": String(Buffer.byteLength(body)) });
	res.end(method === "HEAD" ? undefined : body);
}
