/**
 * Two children's own screens at once, on the real pi runtime in one process (ADR-0016): a host
 * session bound in mode "tui" with a programmatic terminal, two child sessions built as pi-subagents
 * builds them (no UI, their own module copies) and CHECKPOINT_BRIDGE_RELAY_DIALOGS=1. pi-subagents
 * runs one foreground child at a time, so two children asking at once are sessions made here.
 */
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KEY_GUARD_MS } from "../../extensions/checkpoint-bridge/surfaces/terminal-form/component.ts";
import { until } from "../support/until.ts";
import { PiWorld, ProgrammaticUI, type SessionHandle } from "./harness/sdk-sessions.ts";

const RELAY = "CHECKPOINT_BRIDGE_RELAY_DIALOGS";
let world: PiWorld;
let saved: string | undefined;
beforeEach(() => {
	saved = process.env[RELAY];
	process.env[RELAY] = "1";
	world = new PiWorld();
});
afterEach(async () => {
	await world.close();
	if (saved === undefined) delete process.env[RELAY];
	else process.env[RELAY] = saved;
});

/** What the host's terminal drew: each `custom()` call, its component once built, whether it closed. */
interface Drawn {
	component?: { render(width: number): string[]; handleInput?(data: string): void };
	closed: boolean;
	done(value: unknown): void;
}

/** A terminal for the host: pi's `custom()` as the TUI has it, one component at a time on screen. */
function terminal(ui: ProgrammaticUI) {
	const drawn: Drawn[] = [];
	let maxOpen = 0;
	const custom = ((factory: (tui: unknown, theme: unknown, kb: unknown, done: (v: unknown) => void) => unknown) =>
		new Promise<unknown>((resolve) => {
			const entry: Drawn = {
				closed: false,
				done: (value) => {
					if (entry.closed) return;
					entry.closed = true;
					resolve(value);
				},
			};
			drawn.push(entry);
			maxOpen = Math.max(maxOpen, drawn.filter((d) => !d.closed).length);
			void Promise.resolve(factory({ requestRender() {} }, ui.context.theme, {}, entry.done)).then((c) => (entry.component = c as Drawn["component"]));
		})) as ExtensionUIContext["custom"];
	return {
		drawn,
		custom,
		get maxOpen() {
			return maxOpen;
		},
	};
}

/** The UI pi bound a child with: what its extensions' `ctx.ui` is. */
const childUI = (child: SessionHandle) => (child.session.extensionRunner as unknown as { getUIContext(): ExtensionUIContext }).getUIContext();
const childMode = (child: SessionHandle) => (child.session.extensionRunner as unknown as { mode: string }).mode;

describe("children's own screens at once, on the real pi runtime", () => {
	it("two children asking at once are drawn one after the other in the host's terminal, never together; each gets its own component's value", async () => {
		const ui = new ProgrammaticUI();
		const tty = terminal(ui);
		const host = await (world as unknown as { createSession(role: string, name: string, ask: undefined): Promise<SessionHandle> }).createSession(
			"host",
			"tui-host",
			undefined,
		);
		await host.session.bindExtensions({ uiContext: { ...ui.context, custom: tty.custom }, mode: "tui" });
		const alpha = await world.createChild({ name: "alpha" });
		const beta = await world.createChild({ name: "beta" });
		expect([childMode(alpha), childMode(beta)]).toEqual(["tui", "tui"]);
		const screen = (name: string) => (_tui: unknown, _theme: unknown, _kb: unknown, done: (v: unknown) => void) => ({
			render: () => [`${name}'s question`],
			handleInput: (data: string) => done(`${name}:${data}`),
			invalidate() {},
		});
		const answers = [childUI(alpha).custom(screen("alpha")), childUI(beta).custom(screen("beta"))];
		const shown: string[] = [];
		for (const turn of [0, 1]) {
			await until(() => tty.drawn[turn]?.component !== undefined, `screen ${turn + 1} drawn`);
			// The host's theme colours the line: compared without its escapes.
			const lines = tty.drawn[turn]!.component!.render(80).map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
			// Under the line naming who asks; only this one is open.
			expect(lines[0]).toMatch(/^ \[.+\] · child-screens-sdk\.test\.ts's own screen(?: · ctrl\+\].*)?$/);
			expect(tty.drawn.filter((d) => !d.closed)).toHaveLength(1);
			shown.push(lines.find((l) => l.endsWith("'s question"))!);
			await new Promise((resolve) => setTimeout(resolve, KEY_GUARD_MS + 20));
			tty.drawn[turn]!.component!.handleInput!("x");
		}
		expect(shown.sort()).toEqual(["alpha's question", "beta's question"]);
		expect(await Promise.all(answers)).toEqual(["alpha:x", "beta:x"]);
		expect(tty.maxOpen).toBe(1);
		expect(tty.drawn.every((d) => d.closed)).toBe(true);
	});
});
