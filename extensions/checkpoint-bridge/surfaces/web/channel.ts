/** The page as a channel (core/answering/channel.ts): its one-tap links, the notify command and ntfy start and stop with it. */
import type { Channel } from "../../core/answering/channel.ts";
import { closeRunningWebPage, webPageOnClaim, webPageOnRelease } from "./command.ts";

export const pageChannel: Channel = {
	claim: webPageOnClaim,
	async release(quit) {
		await webPageOnRelease();
		if (quit) await closeRunningWebPage();
	},
};
