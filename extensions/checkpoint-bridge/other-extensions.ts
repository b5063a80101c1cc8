/**
 * Other extensions' questions reach the host the way this extension's calls go (interop/):
 * pi-agent-ask's forms, as its external UI outside TUI mode, and, when switched on, the dialogs of
 * any extension in a session without a UI of its own (ADR-0012).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readConfig } from "./core/shared/config.ts";
import type { AskerIdentity } from "./core/shared/identity.ts";
import { NEGOTIATING_TOOL, offerExternalUI } from "./interop/external-ui.ts";
import { relayDialogsOn } from "./interop/marks.ts";
import type { Ways } from "./route.ts";

/** A session's ways, loaded at its first call or other ask tool's call (index.ts, ADR-0039). */
export interface LazyWays {
	/** The ways, loaded now if they were not. */
	ways(): Promise<Ways>;
	/** The ways once loaded; until then no call has gone any way. */
	found(): Ways | undefined;
}

/** Offers both; resolves once the dialog relay is in place (at once when it is off). `marker` is the tool's definition. */
export function reachOtherExtensions(
	pi: Pick<ExtensionAPI, "events" | "on">,
	marker: object,
	lazy: LazyWays,
	asker: () => AskerIdentity,
): void | Promise<void> {
	// pi-agent-ask's call asks whether a host is reachable synchronously, inside the call: the ways load before it runs.
	pi.on("tool_call", async (event) => {
		if (event.toolName === NEGOTIATING_TOOL && !lazy.found()) await lazy.ways();
	});
	// Without an event bus (an extension API older than pi.events) no other ask tool can negotiate.
	if (pi.events)
		offerExternalUI(pi.events, {
			// Loaded before pi-agent-ask's call runs (index.ts, at its tool_call): a way not loaded has never found a host.
			reachable: () => lazy.found()?.reachable() ?? false,
			// A form's dialogs get the call's whole budget: a dialog closing at the deadline is then a timeout, never read as the human's dismiss.
			ask: async (questions, signal) => {
				const budgetMs = readConfig().callTimeoutMs;
				return (await lazy.ways()).ask({ asker: asker(), questions, budgetMs, dialogTimeoutMs: budgetMs, signal });
			},
		});
	// The relay is loaded only when it is switched on.
	if (!relayDialogsOn()) return;
	// One module after the other: pi's loader can hand a concurrent import of a shared module a module half run.
	return lazy.ways().then(async (ways) => {
		const relay = await import("./interop/enable.ts");
		const { terminalHere } = await import("./core/answering/screens.ts");
		// The tool's definition marks this copy: pi keeps it as given in the session's runner.
		return relay.enableDialogRelay(marker, {
			// Reachable when the session binds: a host in this process, the endpoint of the host that spawned it, or a NATS room.
			reachable: ways.reachable,
			asker,
			ask: ways.ask,
			budgetMs: () => readConfig().callTimeoutMs,
			// Along the way a dialog goes: the bus, the local endpoint, or the NATS room.
			notify: (who, message, type) => ways.notice({ asker: who, message, type }),
			// A child's own components reach the host's terminal only when that terminal is in this process (ADR-0016).
			terminalHere: () => terminalHere() && ways.now().kind === "host",
		});
	});
}
