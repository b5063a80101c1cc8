/**
 * ntfy built in: `CHECKPOINT_BRIDGE_NTFY_URL` (server and topic) and, for a protected topic,
 * `CHECKPOINT_BRIDGE_NTFY_TOKEN`. Each relayed request on the page is published by ntfy's JSON API
 * with `fetch` (no shell, no header quoting): who asks and from where, its questions with their
 * options, the time left, up to three one-tap `http` buttons and the request's link as the click.
 * When it goes late, and when it ends, the same message (its sequence id is the request id) is
 * replaced: by the same buttons saying the asker stopped waiting, then by how it ended.
 * A failed publish is retried a bounded number of times, said once at the host, and never touches
 * the request. Asker text only ever travels as JSON string values.
 */
import pRetry, { AbortError } from "p-retry";
import { dirName } from "../../../core/shared/identity.ts";
import type { Checked } from "../../../model/check.ts";
import { timeLeftText } from "../../../model/time-left.ts";
import type { Board, BoardChange } from "../live/board.ts";
import type { Card } from "../page-events.ts";
import { actionsOf, type NotifyLinks, type NtfyAction, ntfyActionList } from "./notify-life.ts";
import type { AwayActions, OneTap } from "./one-tap.ts";

/** Environment variable: the ntfy server and topic, `https://ntfy.sh/my-topic`. */
const NTFY_URL_ENV = "CHECKPOINT_BRIDGE_NTFY_URL";
/** Environment variable: an access token for a protected topic (sent as `Authorization: Bearer`). */
const NTFY_TOKEN_ENV = "CHECKPOINT_BRIDGE_NTFY_TOKEN";

/** Tries after the first failed publish; with the waits below, a publish gives up within about 4 s. @default 3 */
const NTFY_RETRIES = 3;
/** Wait before the first retry, doubled for each next. @default 500 */
const NTFY_RETRY_MS = 500;
/** One publish's own time limit. @default 10000 */
const NTFY_PUBLISH_TIMEOUT_MS = 10_000;
/** Characters of a message kept: ntfy's limit is 4096 bytes, and the buttons carry the rest. @default 3000 */
const NTFY_MESSAGE_CHARS = 3_000;
/** ntfy's topic names. */
const TOPIC = /^[A-Za-z0-9_-]{1,64}$/;

/** Where to publish. */
export interface NtfyConfig {
	/** The server's URL that JSON messages are posted to (its root). */
	server: string;
	topic: string;
	token?: string;
}

/** One message as ntfy's JSON API takes it. */
export interface NtfyMessage {
	topic: string;
	title: string;
	message: string;
	sequence_id?: string;
	click?: string;
	actions?: NtfyAction[];
	priority?: number;
	tags?: string[];
}

/** The configuration the environment asks for: none (unset), or what is wrong with it. */
export function readNtfyConfig(env: NodeJS.ProcessEnv = process.env): Checked<{ config: NtfyConfig | undefined }, { reason: string }> {
	const raw = env[NTFY_URL_ENV]?.trim();
	if (!raw) return { ok: true, config: undefined };
	const wrong = (why: string) => ({ ok: false as const, reason: `${NTFY_URL_ENV}=${JSON.stringify(raw)} ${why}; ntfy stays off` });
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		return wrong("is not a URL (https://ntfy.sh/your-topic)");
	}
	if (url.protocol !== "https:" && url.protocol !== "http:") return wrong("must start with https:// (or http://)");
	if (url.username || url.password) return wrong(`holds a user or password: put an access token in ${NTFY_TOKEN_ENV} instead`);
	if (url.search || url.hash) return wrong("must be the server and the topic only, without ? or #");
	const parts = url.pathname.split("/").filter(Boolean);
	const topic = parts.pop();
	if (!topic || !TOPIC.test(topic)) return wrong("must end with a topic: letters, digits, _ and -, at most 64");
	const token = env[NTFY_TOKEN_ENV]?.trim();
	return { ok: true, config: { server: `${url.origin}/${parts.map((p) => `${p}/`).join("")}`, topic, ...(token ? { token } : {}) } };
}

/** Each question with its options (in the page's order, the recommended one marked), one per line. */
function questionLines(actions: Pick<AwayActions, "questions">): string[] {
	return actions.questions.flatMap((q, i) => {
		const head = actions.questions.length > 1 ? `${i + 1}. ${q.question}` : q.question;
		const options = q.kind === "confirm" ? ["Yes / No"] : (q.options ?? []).map((o) => `• ${o.label}${o.recommended ? " (recommended)" : ""}`);
		const kind = q.kind === "text" ? ["(free text: open the request)"] : q.multiSelect ? ["(several may be picked: open the request)"] : [];
		return [head, ...options, ...kind];
	});
}

const cut = (text: string) => (text.length > NTFY_MESSAGE_CHARS ? `${text.slice(0, NTFY_MESSAGE_CHARS - 1)}…` : text);

/** What a late request's message says instead of the time left. */
const LATE_TIME = "the asker's call stopped waiting; an answer still reaches it, as a message";

/** The message of a request that waits: who asks and from which project, its questions and options, the time left (or that it went late), its buttons. */
function askedMessage(
	config: NtfyConfig,
	card: Pick<Card, "asker" | "deadline" | "requestId" | "state">,
	actions: AwayActions,
	project: string,
	now: number,
): NtfyMessage {
	const left = card.state === "late" ? LATE_TIME : timeLeftText({ call: card.deadline }, now).replace(/^call /, "");
	return {
		topic: config.topic,
		sequence_id: card.requestId,
		title: `${card.asker} asks (${project})`,
		message: cut([...questionLines(actions), "", `Time: ${left}`].join("\n")),
		click: actions.link,
		actions: ntfyActionList(actions),
		tags: ["question"],
	};
}

/** The same message, replaced once the request ended: how, and what was asked; no buttons, low priority. */
function endedMessage(config: NtfyConfig, card: Pick<Card, "asker" | "requestId" | "questions">, outcome: string): NtfyMessage {
	return {
		topic: config.topic,
		sequence_id: card.requestId,
		title: `${card.asker}: ${outcome}`,
		message: cut(card.questions.map((q) => q.question).join("\n")),
		priority: 2,
	};
}

export interface NtfyChannelOptions {
	/** Told of the first failed publish (later ones are not repeated). */
	warn?: (message: string) => void;
	/** @default NTFY_RETRIES */
	retries?: number;
	/** @default NTFY_RETRY_MS */
	retryMs?: number;
	/** @default globalThis.fetch */
	fetch?: typeof fetch;
}

/** Publishes to one topic: one message after another per request, each retried, none ever throwing. */
export class NtfyChannel {
	readonly config: NtfyConfig;
	readonly #options: NtfyChannelOptions;
	/** The last publish of each request, so its end never overtakes its first message. */
	readonly #chains = new Map<string, Promise<void>>();
	readonly #closing = new AbortController();
	#warned = false;

	constructor(config: NtfyConfig, options: NtfyChannelOptions = {}) {
		this.config = config;
		this.#options = options;
	}

	/** Publishes `message` after the request's earlier ones; resolves whether it was taken (never rejects). */
	publish(message: NtfyMessage, key = message.sequence_id ?? ""): Promise<boolean> {
		let taken = false;
		const next = (this.#chains.get(key) ?? Promise.resolve()).then(async () => {
			taken = await this.#send(message);
		});
		this.#chains.set(key, next);
		void next.then(() => this.#chains.get(key) === next && this.#chains.delete(key));
		return next.then(() => taken);
	}

	async #send(message: NtfyMessage): Promise<boolean> {
		if (this.#closing.signal.aborted) return false;
		const headers: Record<string, string> = { "content-type": "application/json" };
		if (this.config.token) headers.authorization = `Bearer ${this.config.token}`;
		const once = async () => {
			const response = await (this.#options.fetch ?? fetch)(this.config.server, {
				method: "POST",
				headers,
				body: JSON.stringify(message),
				signal: AbortSignal.any([this.#closing.signal, AbortSignal.timeout(NTFY_PUBLISH_TIMEOUT_MS)]),
			});
			await response.body?.cancel();
			if (response.ok) return;
			const why = `${this.config.server} answered ${response.status}`;
			// A refusal (a wrong token, a bad topic) stays one: only a server's trouble or a limit is tried again.
			throw response.status >= 500 || response.status === 429 ? new Error(why) : new AbortError(why);
		};
		try {
			await pRetry(once, {
				retries: this.#options.retries ?? NTFY_RETRIES,
				minTimeout: this.#options.retryMs ?? NTFY_RETRY_MS,
				factor: 2,
				signal: this.#closing.signal,
			});
			return true;
		} catch (error) {
			if (this.#closing.signal.aborted || this.#warned) return false;
			this.#warned = true;
			const reason = error instanceof Error ? error.message : String(error);
			try {
				this.#options.warn?.(`checkpoint-bridge: publishing to ntfy failed (${reason}); the request is unaffected`);
			} catch {
				// Reporting is a courtesy.
			}
			return false;
		}
	}

	/** Stops: what is still being published is given up. */
	close(): void {
		this.#closing.abort();
	}
}

export interface NtfyWiring {
	/** How long a request waits unanswered before it is published, read for each request (the notify command's delay). */
	delayMs: () => number;
	/** The project named in titles. @default the host's directory's name */
	project?: string;
}

/**
 * Publishes each relayed request of the board once it has waited the delay, and replaces its
 * message when it ends; returns the unwiring. Needs no pi session: the board and the one-tap
 * URLs are the page's, which a host without a terminal runs too.
 */
export function wireNtfy(board: Board, oneTap: OneTap, links: NotifyLinks, channel: NtfyChannel, wiring: NtfyWiring): () => void {
	const project = wiring.project ?? dirName(process.cwd()) ?? "here";
	/** Relayed requests published (or about to be), with what an end message needs. */
	const published = new Map<string, Card>();
	const timers = new Map<string, ReturnType<typeof setTimeout>>();
	const publish = (card: Card) => {
		timers.delete(card.requestId);
		const actions = actionsOf(board, oneTap, links, card.requestId);
		// Settled within the delay: nobody is pinged.
		if (!actions) return;
		published.set(card.requestId, card);
		void channel.publish(askedMessage(channel.config, card, actions, project, Date.now()));
	};
	const onChange = (change: BoardChange) => {
		if (change.type === "gone") {
			clearTimeout(timers.get(change.requestId));
			timers.delete(change.requestId);
			const card = published.get(change.requestId);
			published.delete(change.requestId);
			if (card) void channel.publish(endedMessage(channel.config, card, change.trace?.outcome ?? "closed"));
			return;
		}
		// Gone late: the same message says so in place, its buttons still answer.
		if (change.type === "update" && change.card.state === "late" && published.get(change.card.requestId)?.state !== "late") {
			if (published.has(change.card.requestId)) publish(change.card);
			return;
		}
		if (change.type !== "added" || !board.isRelayed(change.card.requestId)) return;
		const { card } = change;
		const wait = card.queuedAt + wiring.delayMs() - Date.now();
		const timer = setTimeout(() => publish(board.card(card.requestId) ?? card), Math.max(0, wait));
		timer.unref();
		timers.set(card.requestId, timer);
	};
	const unsubscribe = board.subscribe(onChange);
	// Requests already on the page when ntfy starts (a host that took them back after a restart, then started its page): published as if just added.
	for (const card of board.cards()) onChange({ type: "added", card });
	return () => {
		unsubscribe();
		for (const timer of timers.values()) clearTimeout(timer);
		timers.clear();
	};
}
