/**
 * The mail servers, through well-kept libraries: nodemailer submits over SMTP, imapflow reads the
 * inbox and waits in IMAP IDLE for what arrives, mailparser reads each mail. A password never
 * travels in clear to another machine: off loopback, STARTTLS is required.
 */
import { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { isLoopback, type MailServer } from "./config.ts";
import { type IncomingMail, MAX_MAIL_BYTES, type OutgoingMail } from "./mail-answers.ts";

/** Mails sent at most per window: a flood of replies cannot make checkpoint-bridge flood the mailbox. @default 30 */
const SEND_BUDGET = 30;
/** @default 600000 (10 min) */
const SEND_WINDOW_MS = 600_000;
/** How long a server may take to connect, greet or answer. @default 15000 */
const SERVER_TIMEOUT_MS = 15_000;
/** First wait before reading mail again after the IMAP server failed; doubled up to RECONNECT_MAX_MS. @default 5000 */
const RECONNECT_FIRST_MS = 5_000;
/** @default 300000 (5 min) */
const RECONNECT_MAX_MS = 300_000;

/** A sender over SMTP submission, within SEND_BUDGET mails per window. */
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
	const sent: number[] = [];
	return async (mail) => {
		const now = Date.now();
		while (sent.length && sent[0]! <= now - SEND_WINDOW_MS) sent.shift();
		if (sent.length >= SEND_BUDGET) throw new Error(`more than ${SEND_BUDGET} mails in ${SEND_WINDOW_MS / 60_000} minutes; holding back`);
		sent.push(now);
		await transport.sendMail(mail);
	};
}

const addresses = (value: unknown): string[] => {
	const list = Array.isArray(value) ? value : value ? [value] : [];
	return list.flatMap((a: { value?: { address?: string }[] }) => (a.value ?? []).map((v) => v.address?.toLowerCase() ?? "")).filter(Boolean);
};
const headerText = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : value ? String(value).split(/\s+/) : []);

/** mailparser's reading of one mail, as MailAnswers takes it. */
async function readMail(source: Buffer): Promise<IncomingMail> {
	const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true });
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
		text: parsed.text ?? "",
		automatic: !auto.startsWith("no") || ["bulk", "junk", "list"].includes(precedence),
	};
}

/** What MailAnswers is told of a mail too large to read: its sender and addresses from the envelope only. */
function envelopeOnly(envelope: { from?: { address?: string }[]; to?: { address?: string }[]; inReplyTo?: string } | undefined): IncomingMail {
	return {
		from: envelope?.from?.[0]?.address?.toLowerCase() ?? "",
		recipients: (envelope?.to ?? []).map((a) => a.address?.toLowerCase() ?? ""),
		thread: envelope?.inReplyTo ? [envelope.inReplyTo] : [],
		text: undefined,
		automatic: false,
	};
}

/**
 * Reads the inbox: every mail that arrives after it started, as soon as it arrives (IMAP IDLE),
 * each handed to `onMail` once, in order, and marked seen. A server down or refusing is said once
 * (again only after it worked in between); it is tried again after a wait that doubles up to five
 * minutes, never in a tight loop.
 */
export class Inbox {
	readonly #server: MailServer;
	readonly #onMail: (mail: IncomingMail) => Promise<void>;
	readonly #warn: (message: string) => void;
	#client: ImapFlow | undefined;
	#lastUid: number | undefined;
	#draining: Promise<void> = Promise.resolve();
	readonly #firstRetryMs: number;
	#retryMs: number;
	#warned = false;
	#attempts = 0;
	#retry: ReturnType<typeof setTimeout> | undefined;
	#closed = false;
	/** Resolves once the inbox has been opened the first time. */
	readonly ready: Promise<void>;
	#opened!: () => void;

	constructor(server: MailServer, onMail: (mail: IncomingMail) => Promise<void>, warn: (message: string) => void, firstRetryMs = RECONNECT_FIRST_MS) {
		this.#server = server;
		this.#firstRetryMs = this.#retryMs = firstRetryMs;
		this.#onMail = onMail;
		this.#warn = warn;
		this.ready = new Promise((resolve) => (this.#opened = resolve));
		void this.#connect();
	}

	/** Connections tried so far. */
	get attempts(): number {
		return this.#attempts;
	}

	async #connect(): Promise<void> {
		if (this.#closed) return;
		this.#attempts++;
		const server = this.#server;
		const client = new ImapFlow({
			host: server.host,
			port: server.port,
			secure: server.secure,
			doSTARTTLS: server.secure ? undefined : isLoopback(server.host) ? undefined : true,
			auth: { user: server.user, pass: server.pass },
			logger: false,
			// Waits in IDLE half a second after its last command, so a reply is read the moment it arrives.
			autoIdleDelay: 500,
			connectionTimeout: SERVER_TIMEOUT_MS,
			greetingTimeout: SERVER_TIMEOUT_MS,
		});
		this.#client = client;
		client.on("error", () => {});
		client.on("close", () => this.#lost(client));
		client.on("exists", () => this.#drain(client));
		try {
			await client.connect();
			const inbox = await client.mailboxOpen("INBOX");
			// Mail already there when the bridge started is not its business.
			this.#lastUid ??= Math.max(0, Number(inbox.uidNext) - 1);
			this.#retryMs = this.#firstRetryMs;
			this.#warned = false;
			this.#opened();
			this.#drain(client);
		} catch (error) {
			if (!this.#warned)
				this.#warn(`cannot read mail from ${server.host}:${server.port} (${error instanceof Error ? error.message : String(error)}); trying again later`);
			this.#warned = true;
			this.#lost(client);
		}
	}

	#lost(client: ImapFlow): void {
		if (this.#client !== client || this.#closed) return;
		this.#client = undefined;
		void client.logout().catch(() => {});
		this.#retry = setTimeout(() => void this.#connect(), this.#retryMs);
		this.#retry.unref();
		this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MAX_MS);
	}

	#drain(client: ImapFlow): void {
		this.#draining = this.#draining.then(() => this.#take(client)).catch(() => {});
	}

	/** Every mail newer than the last taken, one at a time. */
	async #take(client: ImapFlow): Promise<void> {
		if (this.#closed || this.#client !== client || this.#lastUid === undefined) return;
		const found: { uid: number; size: number; envelope: Parameters<typeof envelopeOnly>[0] }[] = [];
		for await (const message of client.fetch(`${this.#lastUid + 1}:*`, { uid: true, size: true, envelope: true }, { uid: true }))
			if (message.uid > this.#lastUid)
				found.push({ uid: message.uid, size: message.size ?? 0, envelope: message.envelope as Parameters<typeof envelopeOnly>[0] });
		for (const { uid, size, envelope } of found.sort((a, b) => a.uid - b.uid)) {
			let mail = envelopeOnly(envelope);
			if (size <= MAX_MAIL_BYTES) {
				const whole = await client.fetchOne(String(uid), { source: true }, { uid: true });
				if (whole !== false && whole.source) mail = await readMail(whole.source).catch(() => mail);
			}
			this.#lastUid = uid;
			await client.messageFlagsAdd(String(uid), ["\\Seen"], { uid: true }).catch(() => {});
			await this.#onMail(mail).catch(() => {});
		}
	}

	async close(): Promise<void> {
		this.#closed = true;
		clearTimeout(this.#retry);
		const client = this.#client;
		this.#client = undefined;
		await client?.logout().catch(() => client.close());
	}
}
