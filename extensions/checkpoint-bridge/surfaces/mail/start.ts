/**
 * Answers by mail, one per process, kept on `globalThis` like the web page: it reaches the host over
 * the bus, so it outlives a host being replaced, and it stops when the host quits.
 */

import { processSlot, type StartSlot, startOnce, takeStarted } from "../../core/shared/process-slot.ts";
import type { ObserverHandle } from "../../core/shared/shared-handle.ts";
import { currentStore } from "../../core/store/open.ts";
import { webPageSlotExists } from "../web/enable.ts";
import type { WebPage } from "../web/server.ts";
import type { MailConfig } from "./config.ts";
import { MailAnswers, type MailMemory } from "./mail-answers.ts";
import { Inbox, type InboxMemory, smtpSender } from "./transport.ts";

type Notice = (message: string, type: "info" | "warning") => void;

interface Running {
	answers: MailAnswers;
	inbox: Inbox;
}

interface Slot extends StartSlot<Running> {
	/** The current host's notices; replaced by each host that claims. */
	notice?: Notice;
}

const MAIL_KEY = Symbol.for("checkpoint-bridge.mail");
const slotOf = (target: object): Slot => processSlot<Slot>(target, MAIL_KEY, () => ({}));

/** Whether a phone can reach the page: it runs under a public origin, or on an address other than loopback. */
export const reachableFromPhone = (page: Pick<WebPage, "address" | "url" | "origin">) => !(page.address.loopback && page.url.startsWith(page.origin));

/** The one-tap answers of the page running in this process (loaded only then), when a phone can reach it. */
async function pageActions(requestId: string) {
	if (!webPageSlotExists()) return undefined;
	const page = await (await import("../web/index.ts")).currentWebPage();
	return page && reachableFromPhone(page) ? page.actionsFor(requestId) : undefined;
}

/** Requests marked mailed at most; the oldest mark goes first (a request ended while no host ran leaves one behind). @default 256 */
const MAX_MAILED_MARKS = 256;
/** The `meta` key of the requests mailed. */
const MAILED_KEY = "mail.mailed";

/** The store's meta, when one is open now: read at each use, since a host without a terminal starts mail before it opens the store. */
const meta = () => currentStore()?.meta;

/** Tokens and mailed requests, written down in the store when one is open (ADR-0033). */
export const storeMailMemory = (): MailMemory => {
	const marks = (): string[] => {
		try {
			const list: unknown = JSON.parse(meta()?.get(MAILED_KEY) ?? "[]");
			return Array.isArray(list) ? list.filter((id): id is string => typeof id === "string") : [];
		} catch {
			return [];
		}
	};
	return {
		token(requestId) {
			const secret = currentStore()?.secretFor("mail", requestId);
			// The reply token's form: 32 hex digits.
			return secret === undefined ? undefined : Buffer.from(secret, "base64url").subarray(0, 16).toString("hex");
		},
		wasMailed: (requestId) => marks().includes(requestId),
		mark(requestId, mailed) {
			const store = meta();
			if (!store) return;
			const others = marks().filter((id) => id !== requestId);
			store.set(MAILED_KEY, JSON.stringify(mailed ? [...others, requestId].slice(-MAX_MAILED_MARKS) : others));
		},
	};
};

/** The inbox's position in the store's meta, under its server, user and mailbox. */
function storeInboxMemory(config: MailConfig): InboxMemory {
	const key = `mail.imap.${config.imap.user}@${config.imap.host}:${config.imap.port}/INBOX`;
	return {
		position: {
			read() {
				const written = meta()?.get(key);
				if (written === undefined) return undefined;
				const parsed = JSON.parse(written) as { validity?: unknown; uid?: unknown };
				return typeof parsed.validity === "string" && Number.isSafeInteger(parsed.uid) ? { validity: parsed.validity, uid: parsed.uid as number } : undefined;
			},
			write: (position) => meta()?.set(key, JSON.stringify(position)),
		},
	};
}

/** Starts the process's answers by mail (or finds them running); `started` says which. */
export async function ensureMail(handle: ObserverHandle, config: MailConfig, notice: Notice, target: object = globalThis): Promise<{ started: boolean }> {
	const slot = slotOf(target);
	slot.notice = notice;
	if (slot.starting) return (await slot.starting, { started: false });
	await startOnce(slot, async () => {
		const answers = new MailAnswers({
			handle,
			config,
			send: smtpSender(config.smtp),
			actionsFor: pageActions,
			notice: (message, type) => slot.notice?.(message, type),
			memory: storeMailMemory(),
		});
		const inbox = new Inbox(
			config.imap,
			(mail) => answers.receive(mail),
			(message) => slot.notice?.(`checkpoint-bridge: ${message}; requests go on in the terminal and on the page`, "warning"),
			{},
			storeInboxMemory(config),
		);
		return { answers, inbox };
	});
	return { started: true };
}

/** Where the notices of answers by mail go: the host that holds the role now (undefined while none does). */
export function setMailNotice(notice: Notice | undefined, target: object = globalThis): void {
	slotOf(target).notice = notice;
}

/** Stops the process's answers by mail, if they run. */
export async function closeMail(target: object = globalThis): Promise<void> {
	const running = await takeStarted(slotOf(target));
	running?.answers.close();
	await running?.inbox.close();
}
