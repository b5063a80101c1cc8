/**
 * `/a/<secret>`: a one-tap answer. A POST answers (what ntfy's `http` action, a chat bot or the
 * confirmation page's button sends); a GET or HEAD only shows a page with one button, because mail
 * scanners and link previews fetch every link on their own and must never answer. A POST without
 * `Origin` is taken (a phone app or a bot sends none): the secret is the authority, and it answers
 * once. A browser on another site says its `Origin`, and is refused. A question's button of a
 * request of several questions records that question's choice (202) and answers the request only
 * with the tap that leaves no question without one. A request's Decline is the terminal's Esc: an
 * outside cancel with its place. A test button only tells the terminal it was pressed. The
 * outside-answer API's codes keep their snake case (docs/observers.md).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OutsideAnswerReply } from "../../../core/shared/outside-answers.ts";
import { type Refusal, refuse, SECURITY_HEADERS } from "../http/guard.ts";
import type { ChoiceStep, OneTap, TapEntry } from "./one-tap.ts";

/** Largest body a one-tap POST may carry (it needs none: ntfy sends none, the form a few bytes). @default 4096 */
const TAP_BODY_BYTES = 4_096;

export interface TapContext {
	oneTap: OneTap;
	/** Origins the page is served from (its own, and the public one). */
	origins: ReadonlySet<string>;
	/** Hands an answer to the host's one check and waits for its reply. */
	askHost(payload: unknown): Promise<OutsideAnswerReply | "no-host" | "no-reply">;
}

/** The confirmation page's own policy: the page's, but its one form may post to itself. */
const CONFIRM_HEADERS = {
	...SECURITY_HEADERS,
	"content-security-policy": "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function html(res: ServerResponse, status: number, title: string, body: string, head = false): void {
	const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
	res.writeHead(status, { ...CONFIRM_HEADERS, "content-type": "text/html; charset=utf-8", "content-length": String(Buffer.byteLength(page)) });
	res.end(head ? undefined : page);
}

/** Whether the answer should be a page (a browser's form) rather than one line (an app or a bot). */
const wantsPage = (req: IncomingMessage) =>
	(req.headers["content-type"] ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded") || (req.headers.accept ?? "").includes("text/html");

function answerWith(req: IncomingMessage, res: ServerResponse, status: number, line: string, done = "Answered"): void {
	if (wantsPage(req)) return html(res, status, "checkpoint-bridge", `<h1>${status === 200 ? done : "Not answered"}</h1><p id="result">${escapeHtml(line)}</p>`);
	if (status === 200) {
		const body = `${line}\n`;
		res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", "content-length": String(Buffer.byteLength(body)) });
		return void res.end(body);
	}
	refuse(res, { status, reason: line });
}

/** A browser on another site says so; an app or a bot says nothing. */
function foreign(req: IncomingMessage, origins: ReadonlySet<string>): Refusal | undefined {
	const origin = req.headers.origin;
	const site = req.headers["sec-fetch-site"];
	// The confirmation page's form sends "null" (its Referrer-Policy is no-referrer), with the browser's word that it is same-origin.
	const ownForm = origin === "null" && site === "same-origin";
	if (origin !== undefined && !ownForm && !origins.has(origin.toLowerCase()))
		return { status: 403, reason: `answers from ${JSON.stringify(origin)} are refused: only the confirmation page, an app or a bot may answer` };
	if (site !== undefined && site !== "same-origin" && site !== "none")
		return { status: 403, reason: `answers from another site (Sec-Fetch-Site: ${JSON.stringify(site)}) are refused` };
	return undefined;
}

/** Reads and drops a small body; false once a too-large one was refused. */
function drainBody(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
	const declared = Number(req.headers["content-length"]);
	const tooLarge = () => refuse(res, { status: 413, reason: `a one-tap answer carries no body (at most ${TAP_BODY_BYTES} bytes)` }, { connection: "close" });
	if (Number.isFinite(declared) && declared > TAP_BODY_BYTES) return Promise.resolve((tooLarge(), false));
	return new Promise((resolve) => {
		let size = 0;
		let done = false;
		const settle = (ok: boolean) => {
			if (done) return;
			done = true;
			req.off("data", onData);
			resolve(ok);
		};
		const onData = (chunk: Buffer) => {
			size += chunk.length;
			if (size > TAP_BODY_BYTES) {
				tooLarge();
				settle(false);
			}
		};
		req.on("data", onData);
		req.once("end", () => settle(true));
		req.once("error", () => settle(false));
		req.once("aborted", () => settle(false));
	});
}

async function post(ctx: TapContext, req: IncomingMessage, res: ServerResponse, secret: string): Promise<void> {
	const wrongSite = foreign(req, ctx.origins);
	if (wrongSite) return refuse(res, wrongSite);
	if (!(await drainBody(req, res))) return;
	// Taken before the host is asked: a second tap meanwhile finds it used.
	const entry = ctx.oneTap.take(secret);
	if (!entry) {
		const known = ctx.oneTap.lookup(secret);
		return answerWith(req, res, known ? 410 : 404, known && "dead" in known ? known.dead : "no request has this one-tap link");
	}
	if (entry.test) {
		entry.test();
		return answerWith(req, res, 200, "it works: the terminal says this button was pressed", "It works");
	}
	if (entry.part) return choose(ctx, req, res, secret, entry);
	await apply(ctx, req, res, secret, entry, entry.decline ? "decline" : entry.answers, entry.label);
}

/** A question's button among several: recorded, or, the last choice missing, the whole set applied. */
async function choose(ctx: TapContext, req: IncomingMessage, res: ServerResponse, secret: string, entry: TapEntry): Promise<void> {
	const step = ctx.oneTap.choose(entry);
	if (step.kind === "ended") return answerWith(req, res, 410, "this request has ended; nothing was recorded");
	if (step.kind === "busy") {
		ctx.oneTap.giveBack(secret, entry);
		return answerWith(req, res, 409, "this request's choices are being applied right now; nothing was recorded, try again in a moment");
	}
	if (step.kind === "recorded") return recorded(req, res, entry, step);
	const applied = await apply(ctx, req, res, secret, entry, step.answers, step.labels.join(" / "));
	if (!applied) ctx.oneTap.unchoose(entry, step.previous);
}

/** Says what was recorded and which questions still wait (free text: on the request's link). */
function recorded(req: IncomingMessage, res: ServerResponse, entry: TapEntry, step: Extract<ChoiceStep, { kind: "recorded" }>): void {
	const instead = step.previous && step.previous.label !== entry.label ? ` (instead of ${JSON.stringify(step.previous.label)})` : "";
	const line = `recorded: ${entry.label} for ${JSON.stringify(entry.question)}${instead}; nothing is answered until each question has a choice`;
	const unanswered = step.unanswered.map((q) => `${JSON.stringify(q.question)}${q.tappable ? "" : " (free text: on the request's link)"}`);
	const onLink = step.unanswered.some((q) => !q.tappable) && step.link;
	if (!wantsPage(req)) {
		const body = [
			line,
			`still waiting: ${unanswered.join(", ")}`,
			...(onLink ? [`the request's link, where its questions are answered together: ${step.link}`] : []),
		].join("\n");
		res.writeHead(202, { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", "content-length": String(Buffer.byteLength(`${body}\n`)) });
		return void res.end(`${body}\n`);
	}
	const items = unanswered.map((w) => `<li>${escapeHtml(w)}</li>`).join("");
	const link = onLink ? `<p><a id="link" href="${escapeHtml(step.link)}">Open the request</a>: there its questions are answered together.</p>` : "";
	html(res, 202, "checkpoint-bridge", `<h1>Recorded</h1><p id="result">${escapeHtml(line)}</p><p>Still waiting:</p><ul id="waiting">${items}</ul>${link}`);
}

/** Hands answers to the host and says how it went; true once applied or the request ended, false when nothing changed. */
async function apply(
	ctx: TapContext,
	req: IncomingMessage,
	res: ServerResponse,
	secret: string,
	entry: TapEntry,
	answers: unknown[] | "decline",
	label: string,
): Promise<boolean> {
	const what = answers === "decline" ? { cancel: true } : { answers };
	const payload = { requestId: entry.requestId, ...what, source: "web", place: "notify-link" };
	const reply = await ctx.askHost(payload);
	if (reply === "no-host" || reply === "no-reply") {
		ctx.oneTap.giveBack(secret, entry);
		answerWith(req, res, 409, "no session holds the host role right now; nothing was applied, try again in a moment");
		return false;
	}
	if (reply.ok && answers === "decline") return (answerWith(req, res, 200, "declined: the asker is told, as Esc in the terminal tells it", "Declined"), true);
	if (reply.ok) return (answerWith(req, res, 200, `answered: ${label}`), true);
	if (reply.code === "not_found") {
		// The host's settled event has usually said how by now.
		const known = ctx.oneTap.lookup(secret);
		const how = known && "dead" in known && known.dead.startsWith("this request has ended") ? known.dead : "this request has ended";
		return (answerWith(req, res, 410, `${how}; nothing was applied`), true);
	}
	answerWith(req, res, 422, `not applied: ${reply.reason}`);
	return false;
}

/** Handles `/a/<secret>` (the Host was checked); never throws. */
export function tapRoute(ctx: TapContext, req: IncomingMessage, res: ServerResponse, secret: string): void {
	const method = req.method ?? "GET";
	if (method === "POST") {
		void post(ctx, req, res, secret).catch(() => refuse(res, { status: 400, reason: "the answer could not be read" }));
		return;
	}
	if (method !== "GET" && method !== "HEAD")
		return refuse(res, { status: 405, reason: "a one-tap link is opened with GET and answers with POST" }, { allow: "GET, HEAD, POST" });
	const found = ctx.oneTap.lookup(secret);
	if (!found) return refuse(res, { status: 404, reason: "no request has this one-tap link" });
	if ("dead" in found) return html(res, 410, "checkpoint-bridge", `<h1>Not answerable</h1><p id="result">${escapeHtml(found.dead)}</p>`, method === "HEAD");
	const { asker, question, label, part, decline, test } = found.open;
	const note = part
		? '<p id="part">This records your choice for this question; the request is answered once each of its questions has one.</p>'
		: decline
			? "<p>Nothing is declined until you press the button.</p>"
			: "<p>Nothing is answered until you press the button.</p>";
	const button = decline ? "Decline" : test ? "It works" : `Answer: ${escapeHtml(label)}`;
	html(
		res,
		200,
		`${asker}: ${label}?`,
		`<p>${escapeHtml(asker)} asks:</p><h1 id="question">${escapeHtml(question)}</h1><form method="post"><button type="submit" id="confirm">${button}</button></form>${note}`,
		method === "HEAD",
	);
}
