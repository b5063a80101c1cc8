/**
 * The web answer page: what the extension loads, only when the page is turned on
 * (`CHECKPOINT_BRIDGE_WEB`, `/checkpoints web`). Built on the observer contract alone
 * (docs/observers.md): the reference client for anyone writing their own.
 */
import type { WebAddress } from "./http/address.ts";
import type { WebPage } from "./server.ts";

export { NOTIFY_COMMAND_ENV } from "./away/notify-command.ts";
export { readNtfyConfig } from "./away/ntfy.ts";
export { qrHalfBlocks } from "./away/qr.ts";
export { unreachableLinksWarning } from "./away/reachable.ts";
export { DEFAULT_WEB_ADDRESS, parseWebAddress, type WebAddress } from "./http/address.ts";
export { closeWebPage, currentWebPage, ensureWebPage, setWebNotice } from "./process-page.ts";
export type { WebPage } from "./server.ts";

/** The line the host shows when the page starts, and `/checkpoints` again. */
export const announcement = (page: WebPage): string => `checkpoint-bridge: answer in a browser at ${page.url}`;

/** The warning for a page that other machines can reach; undefined on loopback. */
export function exposureWarning(address: WebAddress): string | undefined {
	if (address.loopback) return undefined;
	return `checkpoint-bridge: the answer page listens on ${address.host}, reachable from the network: anyone who gets its link can answer, and plain http can be read on the way`;
}
