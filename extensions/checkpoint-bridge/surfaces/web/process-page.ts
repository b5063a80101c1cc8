/**
 * One web page per process, whichever copy of the extension starts it, kept on `globalThis` like
 * the local endpoint: it reaches the host over the bus, so it outlives a host being replaced
 * (/new, /resume, /fork, /reload), and it closes when the host quits.
 */
import { processSlot, type StartSlot, startOnce, takeStarted } from "../../core/shared/process-slot.ts";
import { WEB_PAGE_KEY } from "./enable.ts";
import type { WebAddress } from "./http/address.ts";
import type { ObserverHandle } from "./live/board.ts";
import { startWebPage, type WebPage, type WebPageOptions } from "./server.ts";

type Notice = NonNullable<WebPageOptions["notice"]>;

interface Slot extends StartSlot<WebPage> {
	/** The current host's notices; replaced by each host that claims, cleared when it goes. */
	notice?: Notice;
}

const slotOf = (target: object): Slot => processSlot<Slot>(target, WEB_PAGE_KEY, () => ({}));

/**
 * The process's page: started on the first call, the same one after (`started` says which). A
 * failed start is forgotten, so the next call retries.
 */
export async function ensureWebPage(
	handle: ObserverHandle,
	address: WebAddress,
	options: Omit<WebPageOptions, "handle" | "address" | "notice"> = {},
	target: object = globalThis,
): Promise<{ page: WebPage; started: boolean }> {
	const slot = slotOf(target);
	if (slot.starting) return { page: await slot.starting, started: false };
	const page = await startOnce(slot, () => startWebPage({ handle, address, ...options, notice: (message, type) => slot.notice?.(message, type) }));
	return { page, started: true };
}

/** The page running in this process, if any. */
export async function currentWebPage(target: object = globalThis): Promise<WebPage | undefined> {
	return slotOf(target).starting?.catch(() => undefined);
}

/** Where the page's notices go: the host that holds the role now (undefined while none does). */
export function setWebNotice(notice: Notice | undefined, target: object = globalThis): void {
	slotOf(target).notice = notice;
}

/** Closes the process's page, if one runs; true when one did. */
export async function closeWebPage(target: object = globalThis): Promise<boolean> {
	const page = await takeStarted(slotOf(target));
	await page?.close();
	return page !== undefined;
}
