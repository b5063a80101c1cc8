/**
 * The mail servers, through well-kept libraries: nodemailer submits over SMTP, imapflow reads the
 * inbox and waits in IMAP IDLE for what arrives, mailparser reads each mail, p-retry spaces the
 * tries after the IMAP server failed. A password never travels in clear to another machine: off
 * loopback, STARTTLS is required. An IMAP server is not trusted to be well-behaved: what it may send
 * in one line, literal or response is bounded near the mail size limit, and every command has a
 * time limit, so a hostile or broken server costs a warning, not memory or a silent stall.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import pRetry from "p-retry";
import { firstWithin } from "../../core/shared/wait.ts";
import { isLoopback, type MailServer } from "./config.ts";
import { visibleText } from "./html-text.ts";
import { type IncomingMail, MAX_MAIL_BYTES, type OutgoingMail } from "./mail-answers.ts";

/** How long a server may take to connect, greet or answer one command. @default 15000 */
const SERVER_TIMEOUT_MS = 15_000;
/** First wait before reading mail again after the IMAP server failed; doubled up to RECONNECT_MAX_MS. @default 5000 */
const RECONNECT_FIRST_MS = 5_000;
/** @default 300000 (5 min) */
const RECONNECT_MAX_MS = 300_000;
/**
 * What one IMAP server may send at most, in bytes: a line (a response without a literal), a
 * literal (the largest is a whole mail, read only up to MAX_MAIL_BYTES) and a whole response (a
 * literal and its framing); and the parts of one response. imapflow's own defaults are 1 GiB.
 */
export const IMAP_BOUNDS = { line: MAX_MAIL_BYTES, literal: MAX_MAIL_BYTES, response: 2 * MAX_MAIL_BYTES, tokens: 20_000 } as const;

/** A sender over SMTP submission; how many mails it is given is the budget's business (budget.ts). */
export function smtpSender(server: MailServer): (mail: OutgoingMail) => Promise<void> {
	const transport = nodemailer.createTransport({
		host: server.host,
		port: server.port,
		secure: server.secure,
		requireTLS: !server.secure && !isLoopback(server.host),
		auth: server.pass ? { user: server.user, pass: server.pass } : undefined,
		connectionTimeout: SERVER_TIMEOUT_MS,
		greetingTimeout: SERVER_TIMEOUT_MS,
		socketTimeout: SERVER_TIMEOUT_MS,
	});
	return async (mail) => void (await transport.sendMail(mail));
}

const addresses = (value: unknown): string[] => {
	const list = Array.isArray(value) ? value : value ? [value] : [];
	return list.flatMap((a: { value?: { address?: string }[] }) => (a.value ?? []).map((v) => v.address?.toLowerCase() ?? "")).filter(Boolean);
};
const headerText = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : value ? String(value).split(/\s+/) : []);

/** What a reply says, as a mail program shows it: its text part when it has one, else its HTML's visible text (or why that is unclear). */
function shownText(parsed: { text?: string | undefined; html?: string | false | undefined }): Pick<IncomingMail, "text" | "unread"> {
	if (parsed.text?.trim() || !parsed.html) return { text: parsed.text ?? "" };
	const seen = visibleText(parsed.html);
	return seen.ok ? { text: seen.text } : { text: undefined, unread: seen.reason };
}

/** mailparser's reading of one mail, as MailAnswers takes it. */
export async function readMail(source: Buffer): Promise<IncomingMail> {
	const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true, skipHtmlToText: true });
	const header = (name: string) => parsed.headers.get(name);
	const auto = String(header("auto-submitted") ?? "no").toLowerCase();
	const precedence = String(header("precedence") ?? "").toLowerCase();
	const delivered = [header("delivered-to"), header("x-original-to")].flatMap((h) =>
		h ? String(typeof h === "object" && "text" in h ? h.text : h).split(/[\s,]+/) : [],
	);
	return {
		from: addresses(parsed.from)[0] ?? "",
		recipients: [...addresses(parsed.to), ...addresses(parsed.cc), ...delivered.map((a) => a.replace(/^<|>$/g, "").toLowerCase())],
		thread: [...headerText(parsed.inReplyTo), ...headerText(parsed.references)],
		...shownText(parsed),
		automatic: !auto.startsWith("no") || ["bulk", "junk", "list"].includes(precedence),
	};
}

/** Bytes read of a mail too large to read whole: enough for its header, which says who sent it and which token it carries. @default 65536 */
const HEAD_BYTES = 64 * 1024;

/** Where a mail's header ends in its source (the first empty line), or its end. */
function headerEnd(source: Buffer): number {
	const crlf = source.indexOf("\r\n\r\n");
	if (crlf >= 0) return crlf + 4;
	const lf = source.indexOf("\n\n");
	return lf >= 0 ? lf + 2 : source.length;
}

/**
 * A mail as MailAnswers takes it: read whole when it is within MAX_MAIL_BYTES and mailparser reads it;
 * else only its header, with why its text was not read. Undefined when not even its header reads.
 */
async function incoming(source: Buffer, whole: boolean): Promise<IncomingMail | undefined> {
	let unread = `the mail is larger than ${MAX_MAIL_BYTES / 1024} KiB and was not read`;
	if (whole) {
		try {
			return await readMail(source);
		} catch (error) {
			unread = `the mail could not be read (${(error instanceof Error ? error.message : String(error)).slice(0, 120)})`;
		}
	}
	const header = await readMail(source.subarray(0, headerEnd(source))).catch(() => undefined);
	return header && { ...header, text: undefined, unread };
}

/** How long the inbox waits, in ms: before it tries the server again (doubling), and for one command. */
export interface InboxTiming {
	/** @default RECONNECT_FIRST_MS */
	firstRetryMs?: number;
	/** @default SERVER_TIMEOUT_MS */
	commandMs?: number;
}

/** Where an inbox stands (the mailbox's UIDVALIDITY and the last UID taken), written down so a host started again reads on from there. */
interface InboxPosition {
	read(): { validity: string; uid: number } | undefined;
	write(position: { validity: string; uid: number }): void;
}

/** What the inbox keeps beyond its process. */
export interface InboxMemory {
	/** Where it stood: read at the first opening, written after each mail taken. */
	position?: InboxPosition;
}

/** The error of a command the server did not answer in time. */
class Stalled extends Error {}

/**
 * Reads the inbox: every mail that arrives after it started (with a position written down, after
 * the last one an earlier process took, in the same mailbox), as soon as it arrives (IMAP IDLE),
 * each handed to `onMail` once, in order, and marked seen. A server down, refusing, stalling or
 * sending more than IMAP_BOUNDS is said once (again only after it worked in between); it is tried
 * again after a wait that doubles up to five minutes (p-retry), never in a tight loop.
 */
export class Inbox {
	readonly #server: MailServer;
	readonly #onMail: (mail: IncomingMail) => Promise<void>;
	readonly #warn: (message: string) => void;
	readonly #firstRetryMs: number;
	readonly #commandMs: number;
	readonly #closing = new AbortController();
	#client: ImapFlow | undefined;
	#lastUid: number | undefined;
	/** The mailbox's UIDVALIDITY, once open. */
	#validity = "";
	readonly #memory: InboxMemory;
	#warned = false;
	#attempts = 0;
	/** Resolves once the inbox has been opened the first time. */
	readonly ready: Promise<void>;
	#opened!: () => void;

	constructor(
		server: MailServer,
		onMail: (mail: IncomingMail) => Promise<void>,
		warn: (message: string) => void,
		timing: InboxTiming = {},
		memory: InboxMemory = {},
	) {
		this.#server = server;
		this.#memory = memory;
		this.#firstRetryMs = timing.firstRetryMs ?? RECONNECT_FIRST_MS;
		this.#commandMs = timing.commandMs ?? SERVER_TIMEOUT_MS;
		this.#onMail = onMail;
		this.#warn = warn;
		this.ready = new Promise((resolve) => (this.#opened = resolve));
		void this.#run();
	}

	/** Connections tried so far. */
	get attempts(): number {
		return this.#attempts;
	}

	/** Sessions one after the other: failures spaced by p-retry's doubling wait, a session that worked and ended by the first wait. */
	async #run(): Promise<void> {
		const { signal } = this.#closing;
		while (!signal.aborted) {
			await pRetry(() => this.#session(), {
				retries: Number.POSITIVE_INFINITY,
				factor: 2,
				minTimeout: this.#firstRetryMs,
				maxTimeout: RECONNECT_MAX_MS,
				randomize: false,
				unref: true,
				signal,
				onFailedAttempt: ({ error }) => this.#failed(error),
			}).catch((error: unknown) => {
				if (!signal.aborted) this.#failed(error);
			});
			await sleep(this.#firstRetryMs, undefined, { signal, ref: false }).catch(() => {});
		}
	}

	#failed(error: unknown): void {
		if (this.#warned || this.#closing.signal.aborted) return;
		this.#warned = true;
		const server = this.#server;
		this.#warn(`cannot read mail from ${server.host}:${server.port} (${error instanceof Error ? error.message : String(error)}); trying again later`);
	}

	#newClient(): ImapFlow {
		const server = this.#server;
		return new ImapFlow({
			host: server.host,
			port: server.port,
			secure: server.secure,
			doSTARTTLS: server.secure ? undefined : isLoopback(server.host) ? undefined : true,
			auth: { user: server.user, pass: server.pass },
			logger: false,
			// Waits in IDLE half a second after its last command, so a reply is read the moment it arrives.
			autoIdleDelay: 500,
			connectionTimeout: this.#commandMs,
			greetingTimeout: this.#commandMs,
			maxLineLength: IMAP_BOUNDS.line,
			maxLiteralSize: IMAP_BOUNDS.literal,
			maxResponseSize: IMAP_BOUNDS.response,
			maxResponseTokens: IMAP_BOUNDS.tokens,
		});
	}

	/** One connection: resolves when it ends after it worked, rejects when it failed (refused, stalled, over a bound). */
	async #session(): Promise<void> {
		this.#attempts++;
		const client = this.#newClient();
		this.#client = client;
		let failure: unknown;
		const fail = (error: unknown) => {
			failure ??= error;
			client.close();
		};
		const ended = new Promise<void>((resolve) => client.once("close", () => resolve()));
		client.on("error", fail);
		const onClose = () => client.close();
		this.#closing.signal.addEventListener("abort", onClose, { once: true });
		try {
			await this.#bounded(client, client.connect());
			const inbox = await this.#bounded(client, client.mailboxOpen("INBOX"));
			if (this.#lastUid === undefined) {
				// Mail already there when the bridge started is not its business, but for what came after the last one an earlier process took.
				const newest = Math.max(0, Number(inbox.uidNext) - 1);
				const before = this.#positionBefore();
				this.#validity = String(inbox.uidValidity);
				this.#lastUid = before && before.validity === this.#validity ? Math.min(before.uid, newest) : newest;
				this.#writePosition();
			}
			this.#opened();
			let draining = this.#take(client);
			await draining;
			this.#warned = false;
			client.on("exists", () => {
				draining = draining.then(() => this.#take(client)).catch(fail);
			});
			await ended;
		} catch (error) {
			fail(error);
		} finally {
			this.#closing.signal.removeEventListener("abort", onClose);
			if (this.#client === client) this.#client = undefined;
		}
		if (failure !== undefined && !this.#closing.signal.aborted) throw failure instanceof Error ? failure : new Error(String(failure));
	}

	/** `work`, or the connection closed and a Stalled error once the command time passes first. */
	async #bounded<T>(client: ImapFlow, work: Promise<T>): Promise<T> {
		const stalled = Symbol("stalled");
		const outcome = await firstWithin(work, { ms: this.#commandMs, elapsed: () => stalled, unref: true });
		if (outcome !== stalled) return outcome as T;
		client.close();
		throw new Stalled(`no answer within ${this.#commandMs / 1000} s`);
	}

	/** Every mail newer than the last taken, one at a time. */
	async #take(client: ImapFlow): Promise<void> {
		if (this.#closing.signal.aborted || this.#client !== client || this.#lastUid === undefined) return;
		const after = this.#lastUid;
		// Sizes only: what a stranger's mail may make large (its header fields) is fetched within bounds below.
		const found = await this.#bounded(
			client,
			(async () => {
				const list: { uid: number; size: number }[] = [];
				for await (const message of client.fetch(`${after + 1}:*`, { uid: true, size: true }, { uid: true }))
					if (message.uid > after) list.push({ uid: message.uid, size: message.size ?? 0 });
				return list;
			})(),
		);
		for (const { uid, size } of found.sort((a, b) => a.uid - b.uid)) {
			const whole = size <= MAX_MAIL_BYTES;
			const fetched = await this.#bounded(client, client.fetchOne(String(uid), { source: whole ? true : { start: 0, maxLength: HEAD_BYTES } }, { uid: true }));
			const mail = fetched !== false && fetched.source ? await incoming(fetched.source, whole) : undefined;
			this.#lastUid = uid;
			// A server that will not mark it seen is no reason to stop reading; one that does not answer is.
			await this.#bounded(client, client.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true })).catch((error: unknown) => {
				if (error instanceof Stalled) throw error;
			});
			if (mail) await this.#onMail(mail).catch(() => {});
			// Written once taken: a process killed before this reads the mail again, and a reply to a request that ended meanwhile answers nothing.
			this.#writePosition();
		}
	}

	#positionBefore(): { validity: string; uid: number } | undefined {
		try {
			return this.#memory.position?.read();
		} catch {
			return undefined;
		}
	}

	#writePosition(): void {
		if (this.#lastUid === undefined) return;
		try {
			this.#memory.position?.write({ validity: this.#validity, uid: this.#lastUid });
		} catch {
			// Not written: a restart reads from the newest mail then, as without a store.
		}
	}

	async close(): Promise<void> {
		const client = this.#client;
		this.#client = undefined;
		if (client) await this.#bounded(client, client.logout()).catch(() => {});
		this.#closing.abort();
	}
}
