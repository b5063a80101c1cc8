/**
 * Switches the relay of other extensions' dialogs on for one copy of the extension: finds pi's
 * ExtensionRunner (the pi that loads this copy: pi's loader maps the package name to itself),
 * registers this copy's marker (the definition of the tool it registered), and installs the wrapper
 * once per process (relay-install.ts).
 */
import { type RelayDeps, relayDialogsOn, relayedUI } from "./dialog-relay.ts";
import { installRelay, RELAY_MODE } from "./relay-install.ts";
import { relayedCustom, type ScreenDeps, unshownCustom, unshownNotice, watchUnshown } from "./screen-relay.ts";

/** What the copy tells the relay besides the relayed UI's needs. */
export interface EnableDeps extends RelayDeps {
	/** Whether a host is reachable now, when a session binds. */
	reachable(): boolean;
	/** Whether a host's terminal in this process draws child screens now (ADR-0016). @default never */
	terminalHere?: ScreenDeps["terminalHere"];
}

/** The child's abort signal now, read from pi's runner (its `getSignalFn`, which every context's `signal` reads). */
const runnerSignal = (runner: object) => () => {
	try {
		const read = (runner as { getSignalFn?: () => AbortSignal | undefined }).getSignalFn;
		return typeof read === "function" ? read.call(runner) : undefined;
	} catch {
		return undefined;
	}
};

/**
 * The relayed UI for a runner bound without one: in a foreground child of a terminal host (the
 * host's terminal draws child screens in this process) mode "tui" with `custom()` relayed; elsewhere
 * mode "rpc" with `custom()` giving undefined and one notice. ADR-0012, ADR-0016.
 */
function bindRelayed(noUI: object, runner: object, deps: EnableDeps): object | undefined {
	if (!relayDialogsOn() || !deps.reachable()) return undefined;
	const { terminalHere } = deps;
	if (!terminalHere?.()) {
		// One notice per child, whichever way its extension could not show its screen.
		const tell = unshownNotice(deps);
		return watchUnshown(relayedUI(noUI, { ...deps, custom: unshownCustom(tell) }), tell);
	}
	const custom = relayedCustom({ ...deps, terminalHere, signal: runnerSignal(runner) });
	return Object.assign(relayedUI(noUI, { ...deps, custom }), { [RELAY_MODE]: "tui" });
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
	installRelay(prototype, marker, (noUI, runner) => bindRelayed(noUI, runner, deps), options.warn ?? toStderr);
}
