/**
 * The mail set-up, read from the environment: where requests go (the human's address), the
 * own address of checkpoint-bridge, the SMTP submission server that sends and the IMAP server that reads.
 * Nothing of mail loads or runs unless `CHECKPOINT_BRIDGE_MAIL_TO` is set.
 */
import type { Checked } from "../../model/check.ts";

const MAIL_ENV = {
	/** The human's address: requests are mailed there, and replies are taken only from it. */
	to: "CHECKPOINT_BRIDGE_MAIL_TO",
	/** checkpoint-bridge's own address (From); replies go to it plus-addressed with the request's token. */
	from: "CHECKPOINT_BRIDGE_MAIL_FROM",
	/** SMTP submission: `smtp://user:password@host:587` (STARTTLS) or `smtps://…:465`. */
	smtp: "CHECKPOINT_BRIDGE_MAIL_SMTP",
	/** IMAP: `imap://user:password@host:143` (STARTTLS) or `imaps://…:993`; the inbox is read. */
	imap: "CHECKPOINT_BRIDGE_MAIL_IMAP",
	/** How long a relayed request waits unanswered before it is mailed, in ms. @default 300000 */
	after: "CHECKPOINT_BRIDGE_MAIL_AFTER_MS",
} as const;

/** @default 300000 (5 min) */
const MAIL_AFTER_DEFAULT_MS = 300_000;

export interface MailServer {
	secure: boolean;
	host: string;
	port: number;
	user: string;
	pass: string;
}

export interface MailConfig {
	to: string;
	from: string;
	smtp: MailServer;
	imap: MailServer;
	afterMs: number;
}

const ADDRESS = /^[^\s@<>"]+@[^\s@<>"]+$/;

function server(
	name: string,
	raw: string | undefined,
	schemes: Record<string, { secure: boolean; port: number }>,
): Checked<{ server: MailServer }, { reason: string }> {
	if (!raw?.trim()) return { ok: false, reason: `${name} is not set` };
	let url: URL;
	try {
		url = new URL(raw.trim());
	} catch {
		return { ok: false, reason: `${name} is not a URL (${Object.keys(schemes).join("://… or ")}://…)` };
	}
	const scheme = schemes[url.protocol.slice(0, -1)];
	if (!scheme) return { ok: false, reason: `${name} must start with ${Object.keys(schemes).join(":// or ")}://` };
	if (!url.hostname || !url.username) return { ok: false, reason: `${name} must name a user and a host (scheme://user:password@host:port)` };
	return {
		ok: true,
		server: {
			secure: scheme.secure,
			host: url.hostname.replace(/^\[|\]$/g, ""),
			port: url.port ? Number(url.port) : scheme.port,
			user: decodeURIComponent(url.username),
			pass: decodeURIComponent(url.password),
		},
	};
}

/** The set-up, `off` when CHECKPOINT_BRIDGE_MAIL_TO is unset, or why it cannot be used. */
export function readMailConfig(env: NodeJS.ProcessEnv = process.env): { kind: "off" } | { kind: "error"; error: string } | { kind: "ok"; config: MailConfig } {
	const to = env[MAIL_ENV.to]?.trim();
	if (!to) return { kind: "off" };
	const from = env[MAIL_ENV.from]?.trim() ?? "";
	if (!ADDRESS.test(to)) return { kind: "error", error: `${MAIL_ENV.to}=${JSON.stringify(to)} is not a mail address` };
	if (!ADDRESS.test(from)) return { kind: "error", error: `${MAIL_ENV.from} must be checkpoint-bridge's own mail address (got ${JSON.stringify(from)})` };
	if (from.split("@")[0]!.includes("+")) return { kind: "error", error: `${MAIL_ENV.from} must have no "+": checkpoint-bridge adds +<token> for replies` };
	const smtp = server(MAIL_ENV.smtp, env[MAIL_ENV.smtp], { smtp: { secure: false, port: 587 }, smtps: { secure: true, port: 465 } });
	if (!smtp.ok) return { kind: "error", error: smtp.reason };
	const imap = server(MAIL_ENV.imap, env[MAIL_ENV.imap], { imap: { secure: false, port: 143 }, imaps: { secure: true, port: 993 } });
	if (!imap.ok) return { kind: "error", error: imap.reason };
	const afterRaw = env[MAIL_ENV.after]?.trim();
	const afterMs = afterRaw ? Number(afterRaw) : MAIL_AFTER_DEFAULT_MS;
	if (!Number.isFinite(afterMs) || afterMs < 0)
		return { kind: "error", error: `${MAIL_ENV.after}=${JSON.stringify(afterRaw)} is not a number of milliseconds` };
	return { kind: "ok", config: { to, from, smtp: smtp.server, imap: imap.server, afterMs: Math.round(afterMs) } };
}

/** Whether a server is this machine: only there may a password travel without TLS. */
export const isLoopback = (host: string) => host === "localhost" || host === "::1" || /^127\./.test(host);
