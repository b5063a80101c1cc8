/**
 * The channels (core/answering/channel.ts), one line each. A channel's code loads at the first
 * claim it is configured for; a session that never hosts, or hosts without one, loads none of it.
 * A new channel is a folder under surfaces/ exporting a `Channel`, and a line here.
 */
import type { Channel, ChannelEntry } from "./core/answering/channel.ts";
import type { HostUI } from "./core/answering/surface.ts";
import type { ObserverHandle } from "./core/shared/shared-handle.ts";
import { WEB_ENV, webPageSlotExists } from "./surfaces/web/enable.ts";

const set = (name: string) => Boolean(process.env[name]?.trim());

export const CHANNELS: readonly ChannelEntry[] = [
	// The page also tells, at the claim, what keeps the links that ntfy, the notify command and mail send from working.
	{
		name: "page",
		configured: () =>
			set(WEB_ENV) || webPageSlotExists() || ["CHECKPOINT_BRIDGE_NTFY_URL", "CHECKPOINT_BRIDGE_NOTIFY_COMMAND", "CHECKPOINT_BRIDGE_MAIL_TO"].some(set),
		load: () => import("./surfaces/web/channel.ts").then((m) => m.pageChannel),
	},
	{ name: "mail", configured: () => set("CHECKPOINT_BRIDGE_MAIL_TO"), load: () => import("./surfaces/mail/channel.ts").then((m) => m.mailChannel) },
];

/** The channels of one process, over `entries` (CHANNELS unless a test gives others). */
export function channelsOf(entries: readonly ChannelEntry[] = CHANNELS) {
	/** Those loaded so far: a channel configured once is released even after its setting goes. */
	const loaded = new Map<ChannelEntry, Promise<Channel>>();
	const load = (entry: ChannelEntry) => loaded.get(entry) ?? loaded.set(entry, entry.load()).get(entry)!;
	return {
		/** At a claim: each configured channel, one after the other, in the list's order. */
		async claim(handle: ObserverHandle, ui: HostUI): Promise<void> {
			for (const entry of entries) {
				if (!entry.configured()) continue;
				try {
					await (await load(entry)).claim(handle, ui);
				} catch (error) {
					ui.notify(`checkpoint-bridge: the ${entry.name} channel cannot start: ${error instanceof Error ? error.message : String(error)}`, "warning");
				}
			}
		},
		/** At a release: each channel loaded or configured now. */
		async release(quit: boolean): Promise<void> {
			for (const entry of entries) {
				if (!loaded.has(entry) && !entry.configured()) continue;
				await (await load(entry)).release(quit);
			}
		},
	};
}
