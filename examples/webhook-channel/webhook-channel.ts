/**
 * A channel that posts each relayed request to a webhook and takes the answers back over HTTP
 * (docs/extending.md walks through it). It is built on the observer contract alone: the `observe:*`
 * events say what is open and how it ended, and the `answer` event hands what the receiver sent
 * to the host's one answer check, which applies all of it or none.
 *
 * It keeps nothing across hosts: each claim starts its answer server and announces what is open,
 * each release closes both, so an extension loaded anew never leaves a second copy running.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Channel } from "../../extensions/checkpoint-bridge/core/answering/channel.ts";
import type {
	LateEvent,
	ObservedRequest,
	ObserverHandle,
	OutsideAnswer,
	OutsideAnswerReply,
	SettledEvent,
} from "../../extensions/checkpoint-bridge/observers.ts";

/** Where the channel posts and listens; read at each claim. */
export interface WebhookConfig {
	/** The receiver's URL, http(s). */
	url: string;
	/** `<host>:<port>` the answer server listens on. @default "127.0.0.1:0" (loopback, any free port) */
	listen?: string;
	/** The origin answer URLs name, when the receiver reaches the server through a proxy. @default the address it listens on */
	origin?: string;
}

/** Largest answer body read. @default 65536 */
const MAX_BODY_BYTES = 64 * 1024;
/** One post's own time limit. @default 10000 */
const POST_TIMEOUT_MS = 10_000;
/** How long a release waits for posts still going out (the ends of a host that quits) before it cuts them. @default 2000 */
const CLOSE_GRACE_MS = 2_000;
/** Ended requests whose answer URL still says "ended" rather than "unknown". @default 1000 */
const MAX_ENDED = 1_000;

/** What a host's UI offers a channel: a line of notice. */
type Notice = (message: string, type: "info" | "warning") => void;

/** The posts the receiver gets, each a JSON object with its `type`. */
export type WebhookPost =
	| {
			type: "request";
			requestId: string;
			asker: { label: string; kind?: string };
			questions: { id?: string; header?: string; question: string; kind: string; options?: string[]; multiSelect?: boolean; recommended?: string }[];
			/** Epoch ms at which the asker's budget runs out (the request may go late); 0: none. */
			deadline: number;
			/** Where `{ "answers": [...] }` or `{ "cancel": true }` is posted for this request. */
			answerUrl: string;
	  }
	| { type: "late"; requestId: string; expiresAt: number }
	| { type: "ended"; requestId: string; status: string; end?: string };

/** What every refusal of the answer server says: a code a program reads and a reason a human reads. */
type Refusal = { ok: false; code: "not_found" | "invalid_payload" | "invalid_answer" | "no_host"; reason: string };

/** HTTP status of each refusal. */
const STATUS_OF: Record<Refusal["code"], number> = { not_found: 404, invalid_payload: 400, invalid_answer: 422, no_host: 503 };

/** The channel the extension registers: between a claim and a release, one `Posting` runs. */
export function webhookChannel(config: () => WebhookConfig): Channel {
	let running: Posting | undefined;
	return {
		async claim(handle, ui) {
			await running?.close();
			const notice: Notice = (message, type) => ui.notify(`webhook channel: ${message}`, type);
			running = await Posting.start(handle, notice, config());
			notice(`posting requests to ${running.target.origin}; answers taken at ${running.origin}`, "info");
		},
		async release() {
			const was = running;
			running = undefined;
			await was?.close();
		},
	};
}

/** One claim's worth of the channel: the answer server, the bus listeners, the open requests' tokens. */
class Posting {
	/** Open requests by answer token, and each request's token. */
	readonly #tokens = new Map<string, string>();
	readonly #byRequest = new Map<string, string>();
	/** Tokens of requests that ended, with their status: an answer to one is told it came too late. */
	readonly #ended = new Map<string, string>();
	/** Posts go out one after the other, so "ended" never overtakes its "request". */
	#posting = Promise.resolve();
	#failing = false;
	/** Aborted once a release's grace is over: what is still being posted is cut. */
	readonly #closed = new AbortController();
	readonly #server = createServer((req, res) =>
		this.#answer(req, res).catch(() => {
			// The client went away mid-body: nothing was applied, nobody to tell.
			res.destroy();
		}),
	);
	origin = "";

	private constructor(
		readonly handle: ObserverHandle,
		readonly notice: Notice,
		readonly target: URL,
	) {}

	static async start(handle: ObserverHandle, notice: Notice, config: WebhookConfig): Promise<Posting> {
		const target = URL.parse(config.url);
		if (target?.protocol !== "http:" && target?.protocol !== "https:") throw new Error(`the webhook URL ${JSON.stringify(config.url)} is not an http(s) URL`);
		const run = new Posting(handle, notice, target);
		const [host = "127.0.0.1", port = "0"] = (config.listen || "127.0.0.1:0").split(/:(?=\d+$)/);
		await new Promise<void>((resolve, reject) => {
			run.#server.once("error", reject);
			run.#server.listen(Number(port), host, () => resolve());
		});
		const bound = run.#server.address() as AddressInfo;
		run.origin = config.origin?.replace(/\/+$/, "") || `http://${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`;
		handle.bus.on("observe:queued", run.#announce);
		handle.bus.on("observe:late", run.#late);
		handle.bus.on("observe:settled", run.#settled);
		// What was open before this claim (a host taking over, late requests) is announced too.
		const snapshot = handle.snapshot();
		for (const request of [...(snapshot?.open ?? []), ...(snapshot?.late ?? [])]) run.#announce(request);
		return run;
	}

	async close(): Promise<void> {
		this.handle.bus.off("observe:queued", this.#announce);
		this.handle.bus.off("observe:late", this.#late);
		this.handle.bus.off("observe:settled", this.#settled);
		this.#server.closeAllConnections();
		await new Promise<void>((resolve) => this.#server.close(() => resolve()));
		const cut = setTimeout(() => this.#closed.abort(), CLOSE_GRACE_MS);
		await this.#posting;
		clearTimeout(cut);
		this.#closed.abort();
	}

	readonly #announce = (request: ObservedRequest): void => {
		// Already announced (shown again, handed over), or the host's own question, asked at its keyboard.
		if (this.#byRequest.has(request.requestId) || request.asker.sessionId === this.handle.host()?.sessionId) return;
		const token = randomBytes(18).toString("base64url");
		this.#tokens.set(token, request.requestId);
		this.#byRequest.set(request.requestId, token);
		this.#post({
			type: "request",
			requestId: request.requestId,
			asker: { label: request.asker.label, ...(request.asker.kind ? { kind: request.asker.kind } : {}) },
			questions: request.questions.map((q) => ({
				...(q.id ? { id: q.id } : {}),
				...(q.header ? { header: q.header } : {}),
				question: q.question,
				kind: q.kind,
				...(q.options ? { options: q.options.map((o) => o.label) } : {}),
				...(q.multiSelect ? { multiSelect: true } : {}),
				...(q.recommended ? { recommended: q.recommended } : {}),
			})),
			deadline: request.deadline,
			answerUrl: `${this.origin}/answer/${token}`,
		});
	};

	readonly #late = (event: LateEvent): void => {
		if (this.#byRequest.has(event.requestId)) this.#post({ type: "late", requestId: event.requestId, expiresAt: event.expiresAt });
	};

	readonly #settled = (event: SettledEvent): void => {
		const token = this.#byRequest.get(event.requestId);
		if (token === undefined) return;
		this.#byRequest.delete(event.requestId);
		this.#tokens.delete(token);
		this.#ended.set(token, event.outcome.status);
		if (this.#ended.size > MAX_ENDED) this.#ended.delete(this.#ended.keys().next().value!);
		const { status, end } = event.outcome;
		this.#post({ type: "ended", requestId: event.requestId, status, ...(end ? { end } : {}) });
	};

	/** Queues one post; a receiver that fails is said once at the host (again after it recovered), and never touches a request. */
	#post(body: WebhookPost): void {
		this.#posting = this.#posting.then(async () => {
			if (this.#closed.signal.aborted) return;
			try {
				const response = await fetch(this.target, {
					method: "POST",
					headers: { "content-type": "application/json" },
					body: JSON.stringify(body),
					signal: AbortSignal.any([AbortSignal.timeout(POST_TIMEOUT_MS), this.#closed.signal]),
				});
				if (!response.ok) throw new Error(`HTTP ${response.status}`);
				this.#failing = false;
			} catch (error) {
				// Cut by the release: the host that would hear it has gone.
				if (!this.#failing && !this.#closed.signal.aborted)
					this.notice(`cannot post to the webhook (${error instanceof Error ? error.message : String(error)}); requests go on in the terminal`, "warning");
				this.#failing = true;
			}
		});
	}

	/** `POST /answer/<token>` with `{ "answers": [...] }` or `{ "cancel": true }`: the host's reply, as JSON. */
	async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const send = (status: number, body: OutsideAnswerReply | Refusal, headers: Record<string, string> = {}) => {
			res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
			res.end(`${JSON.stringify(body)}\n`);
		};
		const refuse = (code: Refusal["code"], reason: string, status = STATUS_OF[code], headers?: Record<string, string>) =>
			send(status, { ok: false, code, reason }, headers);
		const token = /^\/answer\/([A-Za-z0-9_-]{24})$/.exec(req.url ?? "")?.[1];
		if (token === undefined) return refuse("not_found", "answers are posted to a request's answerUrl");
		if (req.method !== "POST") return refuse("invalid_payload", "an answer is a POST", 405, { allow: "POST" });
		const requestId = this.#tokens.get(token);
		if (requestId === undefined) {
			const ended = this.#ended.get(token);
			if (ended === undefined) return refuse("not_found", "no open request has this answer URL");
			return refuse("not_found", `the request has ended (${ended}); nothing was applied`, 410);
		}
		const body = await readJson(req);
		if (!body.ok) return refuse("invalid_payload", body.reason, body.status, body.status === 413 ? { connection: "close" } : {});
		if (typeof body.value !== "object" || body.value === null || Array.isArray(body.value))
			return refuse("invalid_payload", 'the body must be a JSON object: {"answers": [...]} or {"cancel": true}');
		const { answers, cancel } = body.value as Record<string, unknown>;
		// The host checks the rest, as it checks every answer: one per question, each one it offered, all or none applied.
		const payload = {
			requestId,
			source: "outside",
			...(answers !== undefined ? { answers } : {}),
			...(cancel !== undefined ? { cancel } : {}),
		} as OutsideAnswer;
		let reply: OutsideAnswerReply | undefined;
		const heard = this.handle.bus.emit("answer", payload, (r: OutsideAnswerReply) => (reply = r));
		if (!heard || !reply) return refuse("no_host", "no session holds the host role right now; nothing was applied, post again in a moment");
		if (reply.ok) return send(200, reply);
		// not_found from the host: the request ended between the lookup above and the answer.
		return send(reply.code === "not_found" ? 410 : STATUS_OF[reply.code], reply);
	}
}

/** The body as JSON; past MAX_BODY_BYTES the rest is drained unread, so the refusal still reaches the client. */
function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; reason: string }> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on("data", (chunk: Buffer) => {
			size += chunk.length;
			if (size <= MAX_BODY_BYTES) chunks.push(chunk);
			else resolve({ ok: false, status: 413, reason: `the body is larger than ${MAX_BODY_BYTES} bytes` });
		});
		req.on("error", reject);
		req.on("end", () => {
			try {
				resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
			} catch {
				resolve({ ok: false, status: 400, reason: "the body is not JSON" });
			}
		});
	});
}
