/**
 * Switches the relay of other extensions' dialogs on for one copy of the extension: finds pi's
 * ExtensionRunner (the pi that loads this copy: pi's loader maps the package name to itself),
 * registers this copy's marker (the definition of the tool it registered), and installs the wrapper
 * once per process (relay-install.ts).
 */
import { type RelayDeps, relayDialogsOn, relayedUI } from "./dialog-relay.ts";
import { installRelay } from "./relay-install.ts";

/** What the copy tells the relay besides the relayed UI's needs. */
export interface EnableDeps extends RelayDeps {
	/** Whether a host is reachable now, when a session binds. */
	reachable(): boolean;
}

/** pi's ExtensionRunner.prototype, or undefined when the loading pi does not export it. */
async function runnerPrototype(): Promise<unknown> {
	try {
		return ((await import("@earendil-works/pi-coding-agent")) as { ExtensionRunner?: { prototype?: unknown } }).ExtensionRunner?.prototype;
	} catch {
		return undefined;
	}
}

/** Where the notice goes that this pi cannot be wrapped: stderr, since a session without UI has nowhere else. */
const toStderr = (message: string) => void process.stderr.write(`${message}\n`);

/** Turns the relay on for the session whose extension registered the tool `definition` (this copy's marker). Never throws. */
export async function enableDialogRelay(
	marker: object,
	deps: EnableDeps,
	options: { warn?: (message: string) => void; prototype?: () => Promise<unknown> } = {},
): Promise<void> {
	const prototype = await (options.prototype ?? runnerPrototype)();
	installRelay(prototype, marker, (noUI) => (relayDialogsOn() && deps.reachable() ? relayedUI(noUI, deps) : undefined), options.warn ?? toStderr);
}
