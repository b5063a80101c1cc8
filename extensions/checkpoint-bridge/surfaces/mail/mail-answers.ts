/**
 * Requests by mail, built on the observer contract alone (docs/observers.md; its codes, such as
 * `not_found`, keep their snake case there): a relayed request still unanswered after
 * the delay is mailed to the human's address with a reply token of its own (in the Reply-To plus
 * address and in the Message-ID a reply's thread headers carry); a reply from that address with
 * that token answers it through the outside-answer API. A reply to a request that fits nothing gets
 * a short mail saying why; a mail without a token of ours gets none (whoever can mail the bridge
 * could otherwise spend the mail budget), only a warning at the host. Every mail is within the
 * budget (budget.ts).
 *
 * With a store open (ADR-0033) a request's token is derived from its id and the store's seed, and
 * which requests were mailed is written down: a host started again in the same directory takes a
 * reply to a mail of before the restart, and does not mail the question again.
 */
import { randomBytes } from "node:crypto";
import type { LateEvent, QueuedEvent, SettledEvent } from "../../core/shared/observers.ts";
import type { OutsideAnswerReply, OutsideAnswerValue } from "../../core/shared/outside-answers.ts";
import type { ObserverHandle } from "../../core/shared/shared-handle.ts";
import type { AwayActions } from "../web/away/one-tap.ts";
import { outcomeText } from "../web/live/board.ts";
import { MailBudget } from "./budget.ts";
import { endedBody, type MailedRequest, refusalBody, requestBody, subjectOf } from "./compose.ts";
import type { MailConfig } from "./config.ts";
import { answersFromReply } from "./reply.ts";

/** A mail as it is sent. */
export interface OutgoingMail {
	to: string;
	from: string;
	replyTo: string;
	subject: string;
	text: string;
	messageId?: string;
	inReplyTo?: string;
	headers: Record<string, string>;
}

/** A mail as the inbox hands it over (mailparser's reading of it). */
export interface IncomingMail {
	/** The sender's address (From), lower case. */
	from: string;
	/** Every address it was delivered to (To, Cc, Delivered-To, X-Original-To). */
	recipients: string[];
	/** Message ids of In-Reply-To and References. */
	thread: string[];
	/** What the reply says: its text part, or the visible text of its HTML; undefined when it was not read. */
	text: string | undefined;
	/** Why its text was not read (too large, unreadable, ambiguous); set when `text` is undefined. */
	unread?: string;
	/** Auto-Submitted other than "no", or Precedence bulk/junk/list: a robot's mail, never answered. */
	automatic: boolean;
}

/** Biggest mail read; a larger one is refused by a short mail. @default 262144 (256 KiB) */
export const MAX_MAIL_BYTES = 256 * 1024;
/** Mails refusing replies to one request, at most; later replies to it are dropped unanswered. @default 3 */
const REFUSALS_PER_REQUEST = 3;
/** Ended requests whose token still gets "it ended" rather than "unknown". @default 1000 */
const MAX_ENDED = 1_000;

interface Tracked {
	request: MailedRequest;
	/** Whose share of the budget its mail takes. */
	asker: string;
	token: string;
	timer?: ReturnType<typeof setTimeout>;
	mailed: boolean;
	refusals: number;
}

/** What outlives the host's process, when a store is open: each request's token, and which requests were mailed. */
export interface MailMemory {
	/** The token of request `requestId` that a host started again gives it too; undefined: a fresh random one. */
	token(requestId: string): string | undefined;
	/** Whether the request was mailed by a host before this one. */
	wasMailed(requestId: string): boolean;
	/** The request was mailed (or ended: `mailed` false). */
	mark(requestId: string, mailed: boolean): void;
}

export interface MailAnswersOptions {
	handle: ObserverHandle;
	config: MailConfig;
	/** Sends one mail; rejects when it cannot. */
	send: (mail: OutgoingMail) => Promise<void>;
	/** The request's one-tap answers and link, when the page runs. */
	actionsFor?: (requestId: string) => Promise<AwayActions | undefined>;
	/** Where warnings go (once each). */
	notice: (message: string, type: "info" | "warning") => void;
	/** The mail budget. @default a MailBudget of MAIL_BUDGET */
	budget?: MailBudget;
	/** What outlives the process. @default nothing: tokens are random, nothing is written down */
	memory?: MailMemory;
}

const newToken = () => randomBytes(16).toString("hex");
const TOKEN = /^[0-9a-f]{32}$/;

export class MailAnswers {
	readonly #options: MailAnswersOptions;
	readonly #requests = new Map<string, Tracked>();
	readonly #tokens = new Map<string, string>();
	readonly #ended = new Map<string, { request: MailedRequest; how: string; told: number }>();
	readonly #warned = new Set<string>();
	readonly #budget: MailBudget;
	readonly #local: string;
	readonly #domain: string;
	/** The request a mail's answer is being given to right now: its settled event comes before the host's reply. */
	#answering: string | undefined;
	#closed = false;
	readonly #onQueued = (event: QueuedEvent) => this.#queued(event);
	readonly #onSettled = (event: SettledEvent) => this.#settled(event);
	/** A late request it does not track yet (taken back late after a restart, mail started first) is one to track. */
	readonly #onLate = (event: LateEvent) => this.#queued({ ...event, position: 0 });

	constructor(options: MailAnswersOptions) {
		this.#options = options;
		this.#budget = options.budget ?? new MailBudget();
		[this.#local, this.#domain] = options.config.from.split("@") as [string, string];
		options.handle.bus.on("observe:queued", this.#onQueued);
		options.handle.bus.on("observe:settled", this.#onSettled);
		options.handle.bus.on("observe:late", this.#onLate);
		// Requests already open when mail starts (late ones too: they are still answerable).
		const snapshot = options.handle.snapshot();
		for (const open of snapshot?.open ?? []) this.#queued({ ...open, position: 0 });
		for (const late of snapshot?.late ?? []) this.#queued({ ...late, deadline: 0, position: 0 });
	}

	/** The address replies to a request go to. */
	replyAddress = (token: string) => `${this.#local}+${token}@${this.#domain}`;
	#messageId = (token: string) => `<cb.${token}@${this.#domain}>`;

	close(): void {
		this.#closed = true;
		this.#options.handle.bus.off("observe:queued", this.#onQueued);
		this.#options.handle.bus.off("observe:settled", this.#onSettled);
		this.#options.handle.bus.off("observe:late", this.#onLate);
		for (const tracked of this.#requests.values()) clearTimeout(tracked.timer);
	}

	#warnOnce(key: string, message: string): void {
		if (this.#warned.has(key)) return;
		this.#warned.add(key);
		try {
			this.#options.notice(`checkpoint-bridge: ${message}`, "warning");
		} catch {
			// Reporting is a courtesy.
		}
	}

	/** Warns once per budget window: what strangers can cause is said, but not once per mail. */
	#warnPerWindow(key: string, message: string): void {
		this.#warnOnce(`${key}:${Math.floor(Date.now() / this.#budget.figures.windowMs)}`, message);
	}

	#queued(event: QueuedEvent): void {
		if (this.#closed || this.#requests.has(event.requestId)) return;
		// The host's own questions are at its keyboard; relayed ones are what waits for a human away.
		if (event.asker.sessionId === this.#options.handle.host()?.sessionId) return;
		const memory = this.#options.memory;
		const token = memory?.token(event.requestId) ?? newToken();
		const tracked: Tracked = {
			request: { requestId: event.requestId, asker: event.asker.label, questions: event.questions },
			asker: event.asker.sessionId,
			token,
			mailed: false,
			refusals: 0,
		};
		this.#requests.set(event.requestId, tracked);
		this.#tokens.set(token, event.requestId);
		// Mailed before a restart: its mail's token answers it still, and it is not mailed again.
		if (memory?.wasMailed(event.requestId)) return void (tracked.mailed = true);
		const wait = Math.max(0, event.queuedAt + this.#options.config.afterMs - Date.now());
		tracked.timer = setTimeout(() => void this.#mailRequest(tracked), wait);
		tracked.timer.unref();
	}

	/** Writes down whether a request is mailed; a store that fails costs the restart its memory, never the request. */
	#remember(requestId: string, mailed: boolean): void {
		try {
			this.#options.memory?.mark(requestId, mailed);
		} catch (error) {
			this.#warnOnce("memory", `cannot write down which requests were mailed (${error instanceof Error ? error.message : String(error)})`);
		}
	}

	#isOpen(requestId: string): boolean {
		const snapshot = this.#options.handle.snapshot();
		return snapshot !== undefined && [...snapshot.open, ...(snapshot.late ?? [])].some((o) => o.requestId === requestId);
	}

	#stillOpen = (tracked: Tracked) => !this.#closed && this.#requests.has(tracked.request.requestId) && this.#isOpen(tracked.request.requestId);

	async #mailRequest(tracked: Tracked): Promise<void> {
		if (!this.#stillOpen(tracked)) return;
		if (!(await this.#budget.hasRoom(tracked.asker))) {
			const { mails, perAsker, windowMs } = this.#budget.figures;
			this.#warnPerWindow(
				`budget:${tracked.asker}`,
				`the mail budget (${mails} mails in ${windowMs / 60_000} minutes, ${perAsker} for one asker's requests) is spent for now; ${tracked.request.asker}'s request is mailed as soon as it allows`,
			);
		}
		await this.#budget.forRequest(tracked.asker);
		if (!this.#stillOpen(tracked)) return void this.#budget.giveBack(tracked.asker);
		tracked.mailed = true;
		this.#remember(tracked.request.requestId, true);
		const actions = await this.#options.actionsFor?.(tracked.request.requestId).catch(() => undefined);
		await this.#send(tracked.token, subjectOf(tracked.request), requestBody(tracked.request, actions), { messageId: this.#messageId(tracked.token) });
	}

	async #send(token: string, subject: string, text: string, thread: { messageId?: string; inReplyTo?: string }): Promise<void> {
		const { config } = this.#options;
		try {
			await this.#options.send({
				to: config.to,
				from: config.from,
				replyTo: this.replyAddress(token),
				subject,
				text,
				...thread,
				// A robot's mail: vacation responders and the like must not answer it.
				headers: { "Auto-Submitted": thread.messageId ? "auto-generated" : "auto-replied" },
			});
		} catch (error) {
			this.#warnOnce("send", `cannot send mail (${error instanceof Error ? error.message : String(error)}); requests go on in the terminal and on the page`);
		}
	}

	#settled(event: SettledEvent): void {
		const tracked = this.#requests.get(event.requestId);
		if (!tracked) return;
		// Late (its call stopped waiting, the question stays open): still answerable by mail.
		if (event.outcome.status === "timeout" && this.#options.handle.snapshot()?.late?.some((l) => l.requestId === event.requestId)) return;
		clearTimeout(tracked.timer);
		if (tracked.mailed) this.#remember(event.requestId, false);
		this.#requests.delete(event.requestId);
		this.#tokens.delete(tracked.token);
		const how = this.#answering === event.requestId ? "answered by your reply" : outcomeText(event.outcome.status, event.outcome.answers, event.outcome.end);
		this.#ended.set(tracked.token, { request: tracked.request, how, told: 0 });
		if (this.#ended.size > MAX_ENDED) this.#ended.delete(this.#ended.keys().next().value!);
		// A request never mailed ends without a mail.
		if (tracked.mailed)
			void this.#send(tracked.token, `Re: ${subjectOf(tracked.request)}`, endedBody(tracked.request, how), { inReplyTo: this.#messageId(tracked.token) });
	}

	/** The reply token a mail carries: its plus address, or a Message-ID of ours in its thread headers. */
	#tokenOf(mail: IncomingMail): string | undefined {
		const local = this.#local.toLowerCase();
		const domain = this.#domain.toLowerCase();
		for (const address of mail.recipients) {
			const [user, host] = address.toLowerCase().split("@");
			if (host === domain && user?.startsWith(`${local}+`) && TOKEN.test(user.slice(local.length + 1))) return user.slice(local.length + 1);
		}
		for (const id of mail.thread) {
			const found = /^<?cb\.([0-9a-f]{32})@([^>]+)>?$/i.exec(id.trim());
			if (found && found[2]!.toLowerCase() === domain) return found[1]!.toLowerCase();
		}
		return undefined;
	}

	/** Takes one incoming mail: answers a request, or says why not to the human, or drops it. */
	async receive(mail: IncomingMail): Promise<void> {
		if (this.#closed || mail.automatic) return;
		if (mail.from !== this.#options.config.to.toLowerCase()) {
			// Never answered: a reply to a forged or foreign sender would send mail to a stranger.
			this.#warnOnce("sender", `a mail from ${JSON.stringify(mail.from.slice(0, 80))} was ignored: answers are taken only from ${this.#options.config.to}`);
			return;
		}
		const token = this.#tokenOf(mail);
		if (!token)
			return this.#warnPerWindow(
				"no-token",
				`a mail from ${this.#options.config.to} without a request token was ignored: answers by mail are replies to a request's own mail`,
			);
		// Only a mail that knows a token of ours costs a mail: a token is in no mail but the human's.
		const reply = async (subject: string, body: string) => {
			if (await this.#budget.forReply()) return this.#send(token, subject, body, {});
			this.#warnPerWindow("reply-budget", "the mail budget is spent for now: a reply to a mail was not answered by mail");
		};
		const toldEnded = () => {
			const ended = this.#ended.get(token);
			// As often as a refusal: a mail program answering in a loop gets no mail loop back.
			if (ended && ++ended.told <= REFUSALS_PER_REQUEST) return reply(`Re: ${subjectOf(ended.request)}`, endedBody(ended.request, ended.how));
		};
		const requestId = this.#tokens.get(token);
		if (requestId === undefined) {
			if (this.#ended.has(token)) return toldEnded();
			return this.#warnPerWindow(
				"unknown-token",
				"a mail with an unknown request token was ignored (a request of an earlier session, a token mistyped, or a forgery)",
			);
		}
		const tracked = this.#requests.get(requestId)!;
		const refuse = (reason: string) => {
			if (++tracked.refusals > REFUSALS_PER_REQUEST)
				return this.#warnOnce(`flood:${requestId}`, `replies to ${tracked.request.asker}'s question keep failing; later ones are dropped unanswered`);
			return reply(`Re: ${subjectOf(tracked.request)}`, refusalBody(tracked.request, reason));
		};
		if (mail.text === undefined) return refuse(mail.unread ?? `the mail is larger than ${MAX_MAIL_BYTES / 1024} KiB and was not read`);
		const parsed = answersFromReply(tracked.request.questions, mail.text);
		if (!parsed.ok) return refuse(parsed.reason);
		const outcome = this.#answer(requestId, parsed.answers);
		if (outcome === "no-host") return refuse("no session holds the host role right now; nothing was applied, reply again in a moment");
		if (outcome.ok) return;
		// Ended meanwhile: its settled event has moved the token to the ended.
		if (outcome.code === "not_found") return toldEnded();
		return refuse(outcome.reason);
	}

	/** Hands the answers to the core's one check; the host replies synchronously on the bus. */
	#answer(requestId: string, answers: OutsideAnswerValue[]): OutsideAnswerReply | "no-host" {
		let reply: OutsideAnswerReply | undefined;
		this.#answering = requestId;
		try {
			const delivered = this.#options.handle.bus.emit(
				"answer",
				{ requestId, answers, source: "outside", place: "mail" },
				(r: OutsideAnswerReply) => (reply = r),
			);
			return delivered && reply ? reply : "no-host";
		} finally {
			this.#answering = undefined;
		}
	}
}
