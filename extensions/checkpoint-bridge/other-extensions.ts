/**
 * Other extensions' questions reach the host the way this extension's calls go (interop/):
 * pi-agent-ask's forms, as its external UI outside TUI mode, and, when switched on, the dialogs of
 * any extension in a session without a UI of its own (ADR-0012).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readConfig } from "./core/shared/config.ts";
import type { AskerIdentity } from "./core/shared/identity.ts";
import { offerExternalUI } from "./interop/external-ui.ts";
import { relayDialogsOn } from "./interop/marks.ts";
import type { Ways } from "./route.ts";

/** Offers both; resolves once the dialog relay is in place (at once when it is off). `marker` is the tool's definition. */
export function reachOtherExtensions(pi: Pick<ExtensionAPI, "events">, marker: object, ways: Ways, asker: () => AskerIdentity): void | Promise<void> {
	// Without an event bus (an extension API older than pi.events) no other ask tool can negotiate.
	if (pi.events)
		offerExternalUI(pi.events, {
			reachable: ways.reachable,
			// A form's dialogs get the call's whole budget: a dialog closing at the deadline is then a timeout, never read as the human's dismiss.
			ask: (questions, signal) => {
				const budgetMs = readConfig().callTimeoutMs;
				return ways.ask({ asker: asker(), questions, budgetMs, dialogTimeoutMs: budgetMs, signal });
			},
		});
	// The relay is loaded only when it is switched on.
	if (!relayDialogsOn()) return;
	// One module after the other: pi's loader can hand a concurrent import of a shared module a module half run.
	return import("./interop/enable.ts").then(async (relay) => {
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
