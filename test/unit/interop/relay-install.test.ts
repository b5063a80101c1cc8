/**
 * The wrapper of pi's ExtensionRunner.prototype.setUIContext: installed once per process however
 * many module copies of the relay load, and binding the relayed UI only to runners bound without a
 * UI whose extensions include a copy of checkpoint-bridge. A stand-in for pi's runner with its
 * semantics (a no-op UI, `hasUI` as "not the no-op UI", the bound UI spread as pi does); pi's real
 * runner is exercised by test/integration/dialog-relay-rpc.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { sharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { isRelayedUI } from "../../../extensions/checkpoint-bridge/interop/dialog-relay.ts";
import { installRelay, RELAY_MODE, RELAY_SLOT_KEY, relaySlot } from "../../../extensions/checkpoint-bridge/interop/relay-install.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";

/** One extension as pi's loader records it: its tools by name, each definition as the extension gave it. */
type LoadedExtension = { path: string; tools: Map<string, { definition: object }> };

/** pi's no-op UI, in the part these tests read. */
const NO_UI = Object.freeze({
	select: async () => undefined,
	confirm: async () => false,
	input: async () => undefined,
	editor: async () => undefined,
	notify: () => {},
	setWidget: () => {},
	getEditorText: () => "",
});

/** pi's ExtensionRunner, in what the wrapper relies on. */
class ExtensionRunner {
	uiContext: Record<string, (...args: never[]) => unknown> = NO_UI;
	mode = "print";
	constructor(readonly extensions: LoadedExtension[]) {}
	setUIContext(uiContext?: object, mode = "print") {
		this.uiContext = uiContext ? { ...(uiContext as Record<string, never>) } : NO_UI;
		this.mode = mode;
	}
	getUIContext() {
		return this.uiContext;
	}
	hasUI() {
		return this.uiContext !== NO_UI;
	}
}

/** Loads a fresh module copy of the relay into its own extension record, as pi gives each child session its own copy of the extension. */
async function loadCopy(): Promise<LoadedExtension> {
	vi.resetModules();
	const { enableDialogRelay } = await import("../../../extensions/checkpoint-bridge/interop/enable.ts");
	const { askViaHost } = await import("../../../extensions/checkpoint-bridge/core/asking/asker.ts");
	const { sharedHandle: handleOfCopy } = await import("../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts");
	const definition = { name: "ask_user_via_host" };
	const extension: LoadedExtension = { path: "checkpoint-bridge", tools: new Map([["ask_user_via_host", { definition }]]) };
	const handle = handleOfCopy();
	await enableDialogRelay(
		definition,
		{
			reachable: () => handle.host() !== undefined,
			asker: () => ({ label: "subagent-reviewer", sessionId: "child" }),
			ask: (options) => askViaHost({ handle, ...options }),
			budgetMs: () => 60_000,
			notify: () => {},
		},
		{ prototype: async () => ExtensionRunner.prototype },
	);
	return extension;
}

const runnerOf = (...extensions: LoadedExtension[]) => new ExtensionRunner(extensions);

const other: LoadedExtension = { path: "permission-gate", tools: new Map([["guarded_step", { definition: { name: "guarded_step" } }]]) };

afterEach(() => {
	vi.unstubAllEnvs();
});

describe("installed once per process, for UI-less runners of sessions that loaded us", () => {
	const original = ExtensionRunner.prototype.setUIContext;

	it("copies of the extension wrap setUIContext once; each runner gets the relayed UI of the copy it loaded, in mode rpc", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_RELAY_DIALOGS", "1");
		const handle = sharedHandle();
		const host = fakeUI({ respond: (d) => d.answer("Yes") });
		const role = claimHostRole(handle, { ui: host.ui, surface: dialogSurface(host.ui), sessionId: "host" });
		const first = await loadCopy();
		const wrapped = ExtensionRunner.prototype.setUIContext;
		expect(wrapped).not.toBe(original);
		const second = await loadCopy();
		expect(ExtensionRunner.prototype.setUIContext).toBe(wrapped);

		const child = runnerOf(other, second);
		child.setUIContext(undefined, "print");
		expect(child.hasUI()).toBe(true);
		expect(child.mode).toBe("rpc");
		expect(isRelayedUI(child.getUIContext())).toBe(true);
		expect(await (child.getUIContext().confirm as (t: string, m: string) => Promise<boolean>)("Run rm -rf build/?", "")).toBe(true);
		expect(host.dialogs[0]?.title).toBe("[subagent-reviewer] Run rm -rf build/?");
		// Setters stay pi's no-ops; every method of pi's UI is still there.
		expect(child.getUIContext().setWidget).toBe(NO_UI.setWidget);
		expect(child.getUIContext().getEditorText).toBe(NO_UI.getEditorText);

		// A session with a UI of its own is never touched.
		const own = fakeUI();
		const withUI = runnerOf(first);
		withUI.setUIContext({ ...own.ui }, "tui");
		expect(withUI.mode).toBe("tui");
		void (withUI.getUIContext().select as (t: string, o: string[]) => Promise<unknown>)("Mine?", ["a"]);
		expect(own.dialogs).toHaveLength(1);

		// A session that did not load checkpoint-bridge stays without UI.
		const stranger = runnerOf(other);
		stranger.setUIContext(undefined, "print");
		expect(stranger.hasUI()).toBe(false);

		// No host reachable when the session binds: it stays as it is.
		role?.release("quit", "gone");
		const late = runnerOf(first);
		late.setUIContext(undefined, "print");
		expect(late.hasUI()).toBe(false);
		expect(late.mode).toBe("print");

		// Switched off: unchanged, even with a host.
		const again = claimHostRole(handle, { ui: host.ui, surface: dialogSurface(host.ui), sessionId: "host" });
		vi.stubEnv("CHECKPOINT_BRIDGE_RELAY_DIALOGS", "0");
		const off = runnerOf(first);
		off.setUIContext(undefined, "print");
		expect(off.hasUI()).toBe(false);
		again?.release("quit", "gone");
	});

	it("without the switch the extension loads nothing of the relay", async () => {
		vi.resetModules();
		const factory = (await import("../../../extensions/checkpoint-bridge/index.ts")).default as (pi: unknown) => unknown;
		const loaded = factory({ on: () => {}, registerTool: () => {}, registerCommand: () => {}, appendEntry: () => {}, getSessionName: () => undefined });
		expect(loaded).toBeUndefined();
	});

	it("a pi without setUIContext is told once, and nothing is wrapped", () => {
		const slot = relaySlot({});
		const warn = vi.fn();
		expect(
			installRelay(
				{},
				() => {},
				() => ({}),
				warn,
				slot,
			),
		).toBe("unsupported");
		expect(
			installRelay(
				undefined,
				() => {},
				() => ({}),
				warn,
				slot,
			),
		).toBe("unsupported");
		expect(warn).toHaveBeenCalledTimes(1);
		expect(warn.mock.calls[0]?.[0]).toMatch(/no ExtensionRunner.setUIContext/);
	});

	it("the slot is process-global and cannot be replaced", () => {
		const target = {};
		const slot = relaySlot(target);
		expect(relaySlot(target)).toBe(slot);
		expect(() => Object.assign(target, { [RELAY_SLOT_KEY]: {} })).toThrow();
	});

	it("a relayed UI that says mode tui is bound in mode tui; one carrying a mode-read hook has every read of the runner's mode call it, the mode unchanged", () => {
		class Runner {
			mode = "print";
			ui: object | undefined;
			extensions = [{ tools: new Map([["t", { definition: marker }]]) }];
			setUIContext(ui?: object, mode = "print") {
				this.ui = ui ?? noUI;
				this.mode = mode;
			}
			getUIContext() {
				return this.ui;
			}
		}
		const noUI = { no: true };
		const marker = {};
		const reads: string[] = [];
		let give: object = {};
		expect(installRelay(Runner.prototype, marker, () => give, vi.fn(), relaySlot({}))).toBe("installed");
		give = { [RELAY_MODE]: "tui" };
		const tui = new Runner();
		tui.setUIContext(undefined, "print");
		expect(tui.mode).toBe("tui");
		give = { [Symbol.for("checkpoint-bridge.mode-read")]: () => reads.push("read") };
		const rpc = new Runner();
		rpc.setUIContext(undefined, "print");
		expect([rpc.mode, rpc.mode]).toEqual(["rpc", "rpc"]);
		expect(reads).toEqual(["read", "read"]);
		// pi binding the runner again with a UI of its own: its mode as pi writes it, watched no more.
		rpc.setUIContext({ own: true }, "rpc");
		expect(rpc.mode).toBe("rpc");
		rpc.mode = "print";
		expect(rpc.mode).toBe("print");
		expect(reads).toEqual(["read", "read"]);
	});
});
