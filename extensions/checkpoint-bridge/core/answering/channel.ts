/**
 * A channel: a way the human is reached, and answers, away from the terminal (the page with its
 * one-tap links, the notify command and ntfy; mail). Each is one folder under surfaces/ and one line
 * of the list in channels.ts, which loads a channel's code only while it is configured; one kept in
 * another extension is registered there instead (docs/extending.md).
 */
import type { ObserverHandle } from "../shared/shared-handle.ts";
import type { HostUI } from "./surface.ts";

/** A channel's code, loaded once it is configured. */
export interface Channel {
	/** At a claim: starts reaching the human this way (or takes over what runs) and tells `ui` where, or why it cannot. */
	claim(handle: ObserverHandle, ui: HostUI): Promise<void>;
	/** At a release: its notices go nowhere until the next claim; with `quit` it stops. */
	release(quit: boolean): Promise<void>;
}

/** A channel's line in the list: enough to tell whether to load it. */
export interface ChannelEntry {
	/** What the human knows it as, in notices and docs. */
	readonly name: string;
	/** Whether it has anything to do now (its setting is there, or it runs), told without loading its code. */
	configured(): boolean;
	/** Its code; called only while `configured()`. */
	load(): Promise<Channel>;
}
