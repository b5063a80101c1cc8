/**
 * What every session reads of the relay before it is loaded: whether it is on, whether a UI is a
 * relayed one, and the hook a relayed UI watches tools with. The relay's code (dialog-relay.ts,
 * screen-relay.ts) loads only where it is switched on.
 */

/** The environment variable that turns the relay on ("1"). */
const RELAY_DIALOGS_ENV = "CHECKPOINT_BRIDGE_RELAY_DIALOGS";

/** Whether the relay of other extensions' dialogs is on in `env`. */
export const relayDialogsOn = (env: NodeJS.ProcessEnv = process.env): boolean => env[RELAY_DIALOGS_ENV]?.trim() === "1";

/** Marks a UI built by the relay: pi spreads it into the session's context, symbol keys included, so `ctx.ui` still carries it. */
export const RELAYED_UI = Symbol.for("checkpoint-bridge.relayed-ui");

/** Whether `ui` is a relayed UI (a session with one is not a host). */
export const isRelayedUI = (ui: unknown): boolean => typeof ui === "object" && ui !== null && (ui as Record<symbol, unknown>)[RELAYED_UI] === true;

/** Key of the hook told when a tool of the child starts ("start") and ends ("end"). */
export const TOOL_EDGE = Symbol.for("checkpoint-bridge.tool-edge");

/** Tells a watched relayed UI (screen-relay.ts watchUnshown) that a tool of its session started or ended; any other UI is left alone. */
export function toolEdge(ui: unknown, edge: "start" | "end"): void {
	try {
		const hook = typeof ui === "object" && ui !== null ? (ui as Record<symbol, unknown>)[TOOL_EDGE] : undefined;
		if (typeof hook === "function") hook(edge);
	} catch {
		// The watch is a courtesy.
	}
}
