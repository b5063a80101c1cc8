/**
 * Answers by mail, one per process, kept on `globalThis` like the web page: it reaches the host over
 * the bus, so it outlives a host being replaced, and it stops when the host quits.
 */

import { processSlot, type StartSlot, startOnce, takeStarted } from "../../core/shared/process-slot.ts";
import type { ObserverHandle } from "../../core/shared/shared-handle.ts";
import { webPageSlotExists } from "../web/enable.ts";
import type { WebPage } from "../web/server.ts";
import type { MailConfig } from "./config.ts";
import { MailAnswers } from "./mail-answers.ts";
import { Inbox, smtpSender } from "./transport.ts";

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
		});
		const inbox = new Inbox(
			config.imap,
			(mail) => answers.receive(mail),
			(message) => slot.notice?.(`checkpoint-bridge: ${message}; requests go on in the terminal and on the page`, "warning"),
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
