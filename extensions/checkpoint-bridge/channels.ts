/**
 * The channels (core/answering/channel.ts), one line each. A channel's code loads at the first
 * claim it is configured for; a session that never hosts, or hosts without one, loads none of it.
 * A new channel is a folder under surfaces/ exporting a `Channel`, and a line here; one kept in
 * another extension is added with `registerChannel` (docs/extending.md).
 */
import type { Channel, ChannelEntry } from "./core/answering/channel.ts";
import type { HostUI } from "./core/answering/surface.ts";
import { processSlot } from "./core/shared/process-slot.ts";
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

/**
 * The channels other extensions registered, by name, on `globalThis`: pi gives each extension, and
 * each session, its own copy of this module, and a registration must reach every copy.
 */
const REGISTERED_KEY = Symbol.for("checkpoint-bridge.channels");
const registered = (target: object) => processSlot(target, REGISTERED_KEY, () => new Map<string, ChannelEntry>());

/**
 * Adds a channel kept outside this package to every host of this process, from the next claim on,
 * after the listed ones. Registering a name again replaces its entry (an extension loaded again
 * registers again); a listed channel's name, or no name, is refused. @public
 */
export function registerChannel(entry: ChannelEntry, target: object = globalThis): void {
	const name = typeof entry?.name === "string" ? entry.name.trim() : "";
	if (name === "") throw new TypeError("checkpoint-bridge: a channel needs a name");
	if (CHANNELS.some((listed) => listed.name === name)) throw new TypeError(`checkpoint-bridge: "${name}" is a listed channel's name`);
	if (typeof entry.configured !== "function" || typeof entry.load !== "function")
		throw new TypeError(`checkpoint-bridge: the channel "${name}" needs configured() and load()`);
	registered(target).set(name, entry);
}

/** The channels of one process: the list and those registered (or, in a test, `entries`). */
export function channelsOf(entries?: readonly ChannelEntry[], target: object = globalThis) {
	const current = () => entries ?? [...CHANNELS, ...registered(target).values()];
	/** Those loaded so far: a channel configured once is released even after its setting goes, or its entry was replaced. */
	const loaded = new Map<ChannelEntry, Promise<Channel>>();
	const load = (entry: ChannelEntry) => loaded.get(entry) ?? loaded.set(entry, entry.load()).get(entry)!;
	return {
		/** At a claim: each configured channel, one after the other, in the list's order. */
		async claim(handle: ObserverHandle, ui: HostUI): Promise<void> {
			for (const entry of current()) {
				try {
					if (entry.configured()) await (await load(entry)).claim(handle, ui);
				} catch (error) {
					ui.notify(`checkpoint-bridge: the ${entry.name} channel cannot start: ${error instanceof Error ? error.message : String(error)}`, "warning");
				}
			}
		},
		/** At a release: each channel loaded or configured now; one that fails keeps none of the others from stopping. */
		async release(quit: boolean): Promise<void> {
			for (const entry of new Set([...current(), ...loaded.keys()])) {
				try {
					if (loaded.has(entry) || entry.configured()) await (await load(entry)).release(quit);
				} catch {
					// No host to tell at a release; its next claim names a channel that cannot start.
				}
			}
		},
	};
}
