/**
 * `ctx.ui.custom` in a session with the relayed UI (ADR-0016). In a foreground child of a TUI host
 * (the same process) the child's component is one request of the host's queue: its factory waits in
 * the process's child screens (core/answering/screens.ts) under a token the request's one question carries,
 * the host's terminal draws it when its turn comes, and what the component hands to `done()` comes
 * back; a request that ends otherwise (its budget, the child's abort, the host's end, the human's
 * dismiss, the per-asker cap) is a closed component, `undefined`. Anywhere else a component cannot be
 * drawn: `custom()` gives `undefined`, as pi does in RPC mode, and the host gets one notice per child
 * naming the extension that asked.
 */
import { fileURLToPath } from "node:url";
import { nanoid } from "nanoid";
import { type ScreenFactory, screens } from "../core/answering/screens.ts";
import type { CallOptions } from "../core/asking/call.ts";
import type { AskerIdentity } from "../core/shared/identity.ts";
import { DIALOG_LIMITS } from "../model/limits.ts";
import type { Envelope } from "../model/result.ts";
import { capLength, sanitiseText } from "../model/sanitise.ts";
import { TOOL_EDGE } from "./marks.ts";

export { toolEdge } from "./marks.ts";

/** What a child's `custom()` needs from the extension copy that relays it. */
export interface ScreenDeps {
	/** Who asks, read when the component is asked for. */
	asker(): AskerIdentity;
	/** Carries one call to the host. Never rejects. */
	ask(options: CallOptions): Promise<Envelope>;
	/** Longest a component waits and stays open, queue included, in ms (pi's `custom()` takes no timeout). */
	budgetMs(): number;
	/** Hands a notice to the host, prefixed with who sends it. */
	notify(asker: AskerIdentity, message: string, type: "info" | "warning" | "error"): void;
	/** Whether a host's terminal in this process draws child screens now. */
	terminalHere(): boolean;
	/** The child's abort signal now (its agent's run), if any: aborting it closes the component. @default none */
	signal?(): AbortSignal | undefined;
}

/** pi's `custom()` as the relayed UI has it. */
export type RelayedCustom = (factory: unknown, options?: unknown) => Promise<unknown>;

/** This extension's own directory: a stack frame in it is never the extension that asked. */
const OWN_DIR = (() => {
	try {
		return fileURLToPath(new URL("../", import.meta.url));
	} catch {
		return undefined;
	}
})();

/** pi's own code (its dist, not its examples), Node's and the TypeScript loader's: never the extension that asked. */
const PI_OR_NODE = /[\\/]node_modules[\\/](@(earendil-works|mariozechner)[\\/][^\\/]+[\\/]dist|jiti)[\\/]|^node:|^internal[\\/]/;
/** pi's own packages: an extension among their examples is named by its file. */
const PI_PACKAGE = /^@(earendil-works|mariozechner)\//;

/**
 * The extension whose code called `custom()`, from the call's stack: the first frame outside this
 * extension and pi, as its npm package name when it is one, else its file's name; "an extension" when
 * none is found.
 */
export function callerExtension(stack: string | undefined): string {
	return findCaller(stack) ?? "an extension";
}

/** The extension whose code is on `stack` below this extension's and pi's, if any. */
function findCaller(stack: string | undefined): string | undefined {
	for (const line of (stack ?? "").split("\n").slice(1)) {
		const file = /\(?((?:file:\/\/)?[^\s()]+?):\d+:\d+\)?\s*$/.exec(line.trim())?.[1]?.replace(/^file:\/\//, "");
		if (!file || PI_OR_NODE.test(file) || (OWN_DIR !== undefined && file.startsWith(OWN_DIR))) continue;
		// The innermost package the file is in.
		const packaged = [...file.matchAll(/[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)(?=[\\/])/g)].pop()?.[1];
		const pkg = packaged?.replace(/\\/g, "/");
		const name = pkg && !PI_PACKAGE.test(pkg) ? pkg : (file.split(/[\\/]/).pop() ?? "");
		const shown = capLength(sanitiseText(name), 100).trim();
		if (shown) return shown;
	}
	return undefined;
}

/** Tells the host, once per child, that `extension`'s screen could not be shown, and `why`. */
export type UnshownNotice = (extension: string, why: string) => void;

/** One notice per child (per relayed UI) that its extension's screen could not be shown. */
export function unshownNotice(deps: Pick<ScreenDeps, "asker" | "notify">): UnshownNotice {
	let told = false;
	return (extension, why) => {
		if (told) return;
		told = true;
		try {
			deps.notify(deps.asker(), `${extension} could not show its own screen here: ${why}.`, "warning");
		} catch {
			// A notice is a courtesy.
		}
	};
}

/** Why a child's screen is not drawn where the host has no terminal in this process. */
const NO_TERMINAL_HERE =
	"its custom() got nothing, as in pi's RPC mode (a component is drawn only in the process of a host with a terminal; only pi's dialogs reach this host)";

/** `custom()` where no component can be drawn (RPC hosts, other processes, other machines): undefined, and the one notice. */
export function unshownCustom(tell: UnshownNotice): RelayedCustom {
	return async () => {
		tell(callerExtension(new Error().stack), NO_TERMINAL_HERE);
		return undefined;
	};
}

/** The question a child's screen is in the host's queue: a confirm titled with the extension, its `id` the screen's token. */
const screenQuestion = (extension: string, token: string) => ({
	question: capLength(`${extension} shows its own screen in the terminal`, DIALOG_LIMITS.question),
	kind: "confirm" as const,
	dialog: "custom" as const,
	id: token,
});

/** `custom()` in a foreground child of a TUI host: the child's component, drawn in the host's terminal in its turn. */
export function relayedCustom(deps: ScreenDeps): RelayedCustom {
	const tell = unshownNotice(deps);
	return async (factory, options) => {
		const extension = callerExtension(new Error().stack);
		if (typeof factory !== "function") return undefined;
		// The host went, or is no terminal any more: nothing can draw it.
		if (!deps.terminalHere()) {
			tell(extension, NO_TERMINAL_HERE);
			return undefined;
		}
		const open = screens().open;
		const token = nanoid();
		const given = typeof options === "object" && options !== null ? (options as Record<string, unknown>) : {};
		open.set(token, { factory: factory as ScreenFactory, options: given, extension });
		try {
			const budgetMs = deps.budgetMs();
			const signal = deps.signal?.();
			const envelope = await deps.ask({
				asker: deps.asker(),
				questions: [screenQuestion(extension, token)],
				budgetMs,
				dialogTimeoutMs: budgetMs,
				...(signal ? { signal } : {}),
			});
			const result = open.get(token)?.result;
			return envelope.status === "ok" && result ? result.value : undefined;
		} catch {
			return undefined;
		} finally {
			open.delete(token);
		}
	};
}

/** Key of the hook a relayed UI in mode "rpc" has pi's runner call on every read of its mode (relay-install.ts). */
export const MODE_READ = Symbol.for("checkpoint-bridge.mode-read");

/** Why a screen that refused without pi's terminal is not shown. */
const NEEDS_TERMINAL = "it asks only in pi's terminal (it checked for mode \"tui\" and asked nothing), and only pi's dialogs reach this host";

/**
 * Watches a child bound in mode "rpc" for an extension that refuses to ask without mode "tui" (pi's
 * question.ts, questionnaire.ts): an extension that reads `ctx.mode` while one of the child's tools
 * runs, when no dialog opens before that tool ends, gets the one notice. `ui` is changed in place:
 * its dialogs note that one opened.
 */
export function watchUnshown<U extends object>(ui: U, tell: UnshownNotice): U {
	const readers = new Set<string>();
	let inTool = false;
	let asked = false;
	const methods = ui as Record<string, unknown>;
	for (const name of ["select", "confirm", "input", "editor", "custom"]) {
		const method = methods[name];
		if (typeof method !== "function") continue;
		methods[name] = (...args: unknown[]) => {
			asked = true;
			return (method as (...a: unknown[]) => unknown)(...args);
		};
	}
	return Object.assign(ui, {
		[MODE_READ]: () => {
			if (!inTool) return;
			const reader = findCaller(new Error().stack);
			if (reader) readers.add(reader);
		},
		[TOOL_EDGE]: (edge: "start" | "end") => {
			if (edge === "end" && !asked && readers.size > 0) tell([...readers][0]!, NEEDS_TERMINAL);
			inTool = edge === "start";
			asked = false;
			readers.clear();
		},
	});
}
