/**
 * How a session created without a UI gets the relayed one: pi has no public way to give it one
 * (pi-subagents binds its children with `bindExtensions({ mode: "print" })` and no `uiContext`), so
 * `ExtensionRunner.prototype.setUIContext` is wrapped, once per process. A runner bound with no UI
 * whose extensions include a copy of checkpoint-bridge (found by the tool definition each copy
 * registers, which pi keeps as it was given) is handed that copy's relayed UI in mode "rpc", when the copy says a host is
 * reachable (in mode "tui" when the relayed UI says so: a foreground child of a terminal host, ADR-0016); every other call passes through untouched. Module copies cooperate through one
 * process-global slot, as the bus does. See ADR-0012.
 */

import { processSlot } from "../core/shared/process-slot.ts";
import { MODE_READ } from "./screen-relay.ts";

/** Registry key of the process's relay slot; `Symbol.for` makes it the same in every module copy. */
export const RELAY_SLOT_KEY = Symbol.for("checkpoint-bridge.dialog-relay");

/** The part of pi's ExtensionRunner the wrapper reads: its extensions' registered tools, and the UI it now holds. */
interface RunnerLike {
	extensions?: readonly { tools?: Map<string, { definition?: unknown }> }[];
	getUIContext?(): object;
}

/** Key under which a relayed UI says the mode it is bound with: "tui" for a foreground child of a terminal host (ADR-0016). */
export const RELAY_MODE = Symbol.for("checkpoint-bridge.relay-mode");

/** Called with the runner's no-op UI and the runner: the relayed UI to bind instead, or undefined to leave the runner as it is. */
export type RelayBinder = (noUI: object, runner: object) => object | undefined;

/** What every copy shares. */
interface RelaySlot {
	/** Prototypes already wrapped (a second pi in the process has its own). */
	readonly wrapped: WeakSet<object>;
	/** Each copy's marker (the definition of the tool it registered), and the binder of that copy. */
	readonly binders: WeakMap<object, RelayBinder>;
	/** Whether "pi lacks what the relay wraps" was said. */
	warned: boolean;
}

/** The process's relay slot, created by the first copy that asks. */
export function relaySlot(target: object = globalThis): RelaySlot {
	return processSlot<RelaySlot>(target, RELAY_SLOT_KEY, () => ({ wrapped: new WeakSet(), binders: new WeakMap(), warned: false }));
}

/**
 * The binder of the first checkpoint-bridge copy loaded into `runner`, found by its marker among the
 * runner's registered tools (pi wraps event handlers, but keeps a tool's definition as given).
 */
function binderOf(slot: RelaySlot, runner: RunnerLike): RelayBinder | undefined {
	if (!Array.isArray(runner.extensions)) return undefined;
	for (const extension of runner.extensions) {
		const tools = extension?.tools;
		if (!(tools instanceof Map)) continue;
		for (const tool of tools.values()) {
			const definition = tool?.definition;
			const binder = typeof definition === "object" && definition !== null ? slot.binders.get(definition) : undefined;
			if (binder) return binder;
		}
	}
	return undefined;
}

/** The hook each runner's mode reads call now, by runner. */
const modeHooks = new WeakMap<object, () => void>();

/**
 * Has every read of `runner.mode` (which each context's `ctx.mode` reads) call the hook `ui` carries,
 * if it carries one; the mode itself reads and writes as before.
 */
function watchModeReads(runner: object, ui: object): void {
	const hook = (ui as Record<symbol, unknown>)[MODE_READ];
	if (typeof hook !== "function") return void modeHooks.delete(runner);
	modeHooks.set(runner, hook as () => void);
	const own = Object.getOwnPropertyDescriptor(runner, "mode");
	if (!own || !("value" in own)) return;
	let mode: unknown = own.value;
	Object.defineProperty(runner, "mode", {
		configurable: true,
		enumerable: own.enumerable ?? true,
		get() {
			try {
				modeHooks.get(runner)?.();
			} catch {
				// A watch must never change what pi reads.
			}
			return mode;
		},
		set(value: unknown) {
			mode = value;
		},
	});
}

/** What `installRelay` did. */
export type InstallResult = "installed" | "already" | "unsupported";

/**
 * Wraps `setUIContext` of `prototype` (pi's ExtensionRunner.prototype) unless it is wrapped already,
 * and registers `binder` for the copy whose tool definition is `marker`. When the prototype has no
 * `setUIContext`, `warn` is told once per process and nothing is wrapped.
 */
export function installRelay(prototype: unknown, marker: object, binder: RelayBinder, warn: (message: string) => void, slot = relaySlot()): InstallResult {
	const proto = prototype as { setUIContext?: (ui?: object, mode?: string) => unknown } | undefined;
	if (typeof proto?.setUIContext !== "function") {
		if (!slot.warned) {
			slot.warned = true;
			warn("checkpoint-bridge: this pi has no ExtensionRunner.setUIContext to wrap; dialogs of other extensions in sessions without UI are not relayed");
		}
		return "unsupported";
	}
	slot.binders.set(marker, binder);
	if (slot.wrapped.has(proto)) return "already";
	const original = proto.setUIContext;
	proto.setUIContext = function (this: RunnerLike, ui?: object, mode?: string) {
		const result = original.call(this, ui, mode);
		// A runner given a UI of its own is watched no more.
		modeHooks.delete(this);
		if (ui) return result;
		try {
			const bind = binderOf(slot, this);
			// pi's own no-op UI, now bound: the relayed UI keeps every method of it.
			const noUI = bind && typeof this.getUIContext === "function" ? this.getUIContext() : undefined;
			const relayed = noUI ? bind!(noUI, this) : undefined;
			if (relayed) {
				original.call(this, relayed, (relayed as Record<symbol, unknown>)[RELAY_MODE] === "tui" ? "tui" : "rpc");
				watchModeReads(this, relayed);
			}
		} catch {
			// The relay is a courtesy: a runner it cannot serve stays as pi bound it.
		}
		return result;
	};
	slot.wrapped.add(proto);
	return "installed";
}
