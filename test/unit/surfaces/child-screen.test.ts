/**
 * A child's own component through the host's queue to the host's terminal (ADR-0015), without pi:
 * the child's `custom()` (interop/screen-relay.ts) on one side, the host's surface with child screens
 * (surfaces/child-screen/) drawing with a stand-in for pi's `ctx.ui.custom` on the other. The real
 * pi TUI with the real pi-subagents: test/integration/child-screens-tui.test.ts.
 */

import { performance } from "node:perf_hooks";
import { visibleWidth } from "@earendil-works/pi-tui";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { screens } from "../../../extensions/checkpoint-bridge/core/answering/screens.ts";
import {
	callerExtension,
	relayedCustom,
	toolEdge,
	unshownCustom,
	unshownNotice,
	watchUnshown,
} from "../../../extensions/checkpoint-bridge/interop/screen-relay.ts";
import { MAX_OPEN_PER_ASKER } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { MAX_SCREEN_LINES, type ScreenUI } from "../../../extensions/checkpoint-bridge/surfaces/child-screen/frame.ts";
import { withChildScreens } from "../../../extensions/checkpoint-bridge/surfaces/child-screen/surface.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { KEY_GUARD_MS } from "../../../extensions/checkpoint-bridge/surfaces/terminal-form/component.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A stand-in for pi's `ctx.ui.custom` in the TUI: one component on screen at a time, as pi's TUI has it. */
function fakeTerminal() {
	const shown: { component: { render(w: number): string[]; handleInput?(d: string): void }; done(v: unknown): void; closed: boolean; options: unknown }[] = [];
	let maxOpen = 0;
	const open = () => shown.filter((s) => !s.closed);
	const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };
	const ui = {
		custom<T>(factory: (tui: { requestRender(): void }, theme: unknown, kb: unknown, done: (v: T) => void) => unknown, options?: unknown): Promise<T> {
			return new Promise<T>((resolve) => {
				const entry = { component: undefined as never, closed: false, options, done: (_v: unknown) => {} };
				entry.done = (v: unknown) => {
					if (entry.closed) return;
					entry.closed = true;
					resolve(v as T);
				};
				shown.push(entry);
				maxOpen = Math.max(maxOpen, open().length);
				void Promise.resolve(factory({ requestRender: () => {} }, theme, {}, entry.done as (v: T) => void)).then((c) => (entry.component = c as never));
			});
		},
	};
	return {
		ui: ui as unknown as ScreenUI,
		shown,
		get maxOpen() {
			return maxOpen;
		},
		current: () => open().at(-1),
		/** The screen now, `width` columns wide. */
		screen: (width = 60) => open().at(-1)?.component?.render(width) ?? [],
	};
}

/** A host whose terminal draws child screens, and a child's `custom()` reaching it over the in-process bus. */
function setUp(options: { signal?: () => AbortSignal | undefined; budgetMs?: number } = {}) {
	const terminal = fakeTerminal();
	const r = relay({}, { surface: withChildScreens(dialogSurface(fakeUI().ui), terminal.ui) });
	const notices: string[] = [];
	const statuses: string[] = [];
	const custom = relayedCustom({
		asker: () => ({ label: "subagent-picker", sessionId: "child-1" }),
		ask: async (o) => {
			const envelope = await r.ask(o.questions, {
				label: o.asker.label,
				sessionId: o.asker.sessionId,
				budgetMs: o.budgetMs,
				dialogTimeoutMs: o.dialogTimeoutMs,
				...(o.signal ? { signal: o.signal } : {}),
			});
			statuses.push(envelope.status);
			return envelope;
		},
		budgetMs: () => options.budgetMs ?? 300_000,
		notify: (asker, message) => void notices.push(`[${asker.label}] ${message}`),
		terminalHere: () => true,
		...(options.signal ? { signal: options.signal } : {}),
	});
	return { ...r, terminal, custom, notices, statuses };
}

/** Waits until the terminal shows a component (the drawing module loads on the first child screen). */
async function drawn(terminal: ReturnType<typeof fakeTerminal>): Promise<void> {
	await vi.waitFor(() => {
		if (!terminal.current()?.component) throw new Error("nothing drawn yet");
	});
}

/** A child's component: lines, and keys it takes. */
function component(done: (v: unknown) => void, behaviour: { render?: () => string[]; key?: (d: string) => void } = {}) {
	return {
		render: behaviour.render ?? (() => ["Which colour?", "> 1. Red", "  2. Green"]),
		handleInput: behaviour.key ?? ((d: string) => d === "\r" && done({ answer: "Green" })),
		invalidate() {},
	};
}

describe("a child's screen in the host's terminal", () => {
	it("is drawn in its turn under a line naming who asks and the extension; keys wait for the guard; done(value) is what the child's custom() returns", async () => {
		const s = setUp();
		const result = s.custom((_tui: unknown, _theme: unknown, _kb: unknown, done: (v: unknown) => void) => component(done));
		await drawn(s.terminal);
		expect(s.terminal.screen(80)).toEqual([
			" [subagent-picker] · child-screen.test.ts's own screen · ctrl+] leaves",
			" … keys reach it in a moment",
			"Which colour?",
			"> 1. Red",
			"  2. Green",
		]);
		// Within the guard an Enter is ignored.
		s.terminal.current()!.component.handleInput!("\r");
		await drawn(s.terminal);
		expect(s.terminal.current()).toBeDefined();
		await vi.advanceTimersByTimeAsync(KEY_GUARD_MS);
		expect(s.terminal.screen()[1]).toBe("Which colour?");
		s.terminal.current()!.component.handleInput!("\r");
		expect(await result).toEqual({ answer: "Green" });
		expect(s.terminal.current()).toBeUndefined();
		expect(screens().open.size).toBe(0);
		expect(s.role.host.snapshot().open.length).toBe(0);
	});

	it("takes a factory that resolves its component later, as pi's custom() does", async () => {
		const s = setUp();
		const result = s.custom(async (_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) => component(done));
		await vi.advanceTimersByTimeAsync(KEY_GUARD_MS);
		s.terminal.screen();
		await vi.advanceTimersByTimeAsync(KEY_GUARD_MS);
		s.terminal.current()!.component.handleInput!("\r");
		expect(await result).toEqual({ answer: "Green" });
	});

	it("every line is cut to the terminal's width: a child cannot break the host's screen", async () => {
		const s = setUp();
		void s.custom((_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) =>
			component(done, { render: () => ["x".repeat(500), "\x1b[31mred\x1b[0m".repeat(80)] }),
		);
		await flush(vi);
		for (const line of s.terminal.screen(40)) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
	});

	it("ctrl+], the key the host keeps, ends the screen as dismissed though the component takes Esc, q and Ctrl+C for itself; the child gets undefined", async () => {
		const s = setUp();
		const keys: string[] = [];
		const result = s.custom((_t: unknown, _th: unknown, _k: unknown, _done: (v: unknown) => void) => component(() => {}, { key: (d) => void keys.push(d) }));
		await drawn(s.terminal);
		s.terminal.screen();
		await vi.advanceTimersByTimeAsync(KEY_GUARD_MS);
		s.terminal.screen();
		for (const key of ["\x1b", "q", "\x03"]) s.terminal.current()!.component.handleInput!(key);
		expect(keys).toEqual(["\x1b", "q", "\x03"]);
		expect(s.terminal.current()).toBeDefined();
		s.terminal.current()!.component.handleInput!("\x1d");
		expect(await result).toBeUndefined();
		expect(keys).toHaveLength(3);
		expect(s.terminal.current()).toBeUndefined();
		expect(s.role.host.snapshot().open.length).toBe(0);
		// Dismissed, as Esc on a form: the request ends without an answer, not by its budget.
		expect(s.statuses).toEqual(["timeout-or-cancelled"]);
	});

	it("a child's render output is bounded: 1,000 lines of 1 MB draw 200 lines cut to the width and one line counting the rest", async () => {
		const s = setUp();
		const huge = `\x1b[31m${"x".repeat(1_000_000)}`;
		void s.custom((_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) =>
			component(done, { render: () => Array.from({ length: 1_000 }, () => huge) }),
		);
		await drawn(s.terminal);
		s.terminal.screen(80);
		const started = performance.now();
		const screen = s.terminal.screen(80);
		const tookMs = performance.now() - started;
		expect(screen).toHaveLength(2 + MAX_SCREEN_LINES + 1);
		expect(screen.at(-1)).toBe(` … ${1_000 - MAX_SCREEN_LINES} more lines not shown`);
		for (const line of screen) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
		console.info(`child-screen.test.ts: one render of 1,000 lines of 1 MB took ${tookMs.toFixed(1)} ms`);
	});

	/** Opens a screen whose component behaves as `behaviour`, draws it and sends a key once keys count: it must end as closed. */
	async function endsClosed(behaviour: Parameters<typeof component>[1]) {
		const s = setUp();
		const result = s.custom((_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) => component(done, behaviour));
		await drawn(s.terminal);
		s.terminal.screen();
		await vi.advanceTimersByTimeAsync(KEY_GUARD_MS);
		s.terminal.screen();
		s.terminal.current()?.component.handleInput?.("x");
		expect(await result).toBeUndefined();
		expect(s.terminal.current()).toBeUndefined();
		expect(s.role.host.snapshot().open.length).toBe(0);
	}

	it("a component that throws while drawn ends as closed (undefined to the child) and leaves nothing of it on screen", () =>
		endsClosed({
			render: () => {
				throw new Error("render failed");
			},
		}));

	it("a component that throws on a key ends as closed (undefined to the child) and leaves nothing of it on screen", () =>
		endsClosed({
			key: () => {
				throw new Error("key failed");
			},
		}));

	it("a factory that throws or rejects, or gives no component: closed at once", async () => {
		const s = setUp();
		expect(
			await s.custom(() => {
				throw new Error("no");
			}),
		).toBeUndefined();
		expect(
			await s.custom(async () => {
				throw new Error("no");
			}),
		).toBeUndefined();
		expect(await s.custom(() => undefined)).toBeUndefined();
		expect(await s.custom("not a factory")).toBeUndefined();
		expect(s.terminal.current()).toBeUndefined();
	});

	it("the host closes it: the call's budget, the child's abort, the human's dismiss, the host's end; each time the child gets undefined and the screen leaves", async () => {
		const abort = new AbortController();
		const s = setUp({ budgetMs: 10_000, signal: () => abort.signal });
		const factory = (_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) => component(done);
		const budget = s.custom(factory);
		await flush(vi);
		await vi.advanceTimersByTimeAsync(10_000);
		expect(await budget).toBeUndefined();
		expect(s.terminal.current()).toBeUndefined();
		const aborted = s.custom(factory);
		await flush(vi);
		expect(s.terminal.current()).toBeDefined();
		abort.abort();
		expect(await aborted).toBeUndefined();
		expect(s.terminal.current()).toBeUndefined();
		// The human's dismiss of the request from outside the terminal (the page's link, an observer).
		const human = setUp();
		const dismissed = human.custom(factory);
		await flush(vi);
		expect(human.terminal.current()).toBeDefined();
		const requestId = human.handle.snapshot()!.open[0]!.requestId;
		expect(human.role.host.answerFromOutside({ requestId, cancel: true })).toEqual({ ok: true });
		expect(await dismissed).toBeUndefined();
		expect(human.terminal.current()).toBeUndefined();
		const ended = setUp();
		const hostEnd = ended.custom(factory);
		await flush(vi);
		ended.role.release("quit", "The host session ended.");
		expect(await hostEnd).toBeUndefined();
		expect(ended.terminal.current()).toBeUndefined();
	});

	it("one at a time: a second screen waits until the first closes; never two on screen", async () => {
		const s = setUp();
		let finish: (v: unknown) => void = () => {};
		const result = s.custom((_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) => {
			finish = done;
			return component(done);
		});
		await flush(vi);
		const second = s.custom((_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) => component(done, { render: () => ["second"] }));
		await flush(vi);
		expect(s.terminal.shown).toHaveLength(1);
		finish("first");
		expect(await result).toBe("first");
		await flush(vi);
		expect(s.terminal.shown).toHaveLength(2);
		expect(s.terminal.screen()).toContain("second");
		expect(s.terminal.maxOpen).toBe(1);
		s.terminal.current()!.done(undefined);
		expect(await second).toBeUndefined();
	});

	it("a child that opens components in a loop meets the per-asker cap (16): the rest get undefined at once", async () => {
		expect(MAX_OPEN_PER_ASKER).toBe(16);
		const s = setUp();
		const before = screens().open.size;
		const calls = Array.from({ length: MAX_OPEN_PER_ASKER + 3 }, () =>
			s.custom((_t: unknown, _th: unknown, _k: unknown, done: (v: unknown) => void) => component(done)),
		);
		await flush(vi);
		const early: unknown[] = [];
		calls.slice(MAX_OPEN_PER_ASKER).forEach((c) => void c.then((v) => early.push(v ?? "undefined")));
		await flush(vi);
		expect(early).toEqual(["undefined", "undefined", "undefined"]);
		expect(s.role.host.snapshot().open.length).toBe(MAX_OPEN_PER_ASKER);
		expect(s.terminal.shown).toHaveLength(1);
		s.role.release("quit", "done");
		await Promise.all(calls);
		expect(screens().open.size).toBe(before);
	});

	it("an unknown token, or a host without a terminal: dismissed at once, nothing drawn", async () => {
		const terminal = fakeTerminal();
		for (const ui of [terminal.ui, undefined]) {
			const surface = withChildScreens(dialogSurface(fakeUI().ui), ui);
			const outcome = await surface.askRequest?.({
				asker: "child",
				questions: [{ question: "x.ts shows its own screen in the terminal", kind: "confirm", dialog: "custom", id: "no-such-token" }],
				known: [],
				signal: new AbortController().signal,
				deadline: 0,
			});
			const asked = await surface.ask(
				{ asker: "child", index: 0, total: 1, signal: new AbortController().signal, deadline: 0 },
				{
					question: "x.ts shows its own screen in the terminal",
					kind: "confirm",
					dialog: "custom",
					id: "no-such-token",
				},
			);
			expect([outcome?.ended ?? "dismissed", asked]).toEqual(["dismissed", undefined]);
		}
		expect(terminal.shown).toHaveLength(0);
	});
});

describe("where no component can be drawn", () => {
	it("custom() gives undefined and the host one notice per child naming the extension", async () => {
		const told: string[] = [];
		const tell = unshownNotice({ asker: () => ({ label: "subagent-picker", sessionId: "c" }), notify: (a, m) => void told.push(`[${a.label}] ${m}`) });
		const custom = unshownCustom(tell);
		expect(await custom(() => ({}))).toBeUndefined();
		expect(await custom(() => ({}))).toBeUndefined();
		expect(told).toEqual([
			"[subagent-picker] child-screen.test.ts could not show its own screen here: its custom() got nothing, as in pi's RPC mode (a component is drawn only in the process of a host with a terminal; only pi's dialogs reach this host).",
		]);
	});

	it("an extension that reads ctx.mode while a tool runs and opens no dialog gets the notice; one that asks through pi's dialogs does not", async () => {
		const told: string[] = [];
		const tell = unshownNotice({ asker: () => ({ label: "c", sessionId: "c" }), notify: (_a, m) => void told.push(m) });
		const ui = watchUnshown({ select: async () => "a" }, tell);
		const read = (ui as unknown as Record<symbol, () => void>)[Symbol.for("checkpoint-bridge.mode-read")]!;
		// Outside a tool: a read is no refusal.
		read();
		toolEdge(ui, "end");
		// A tool that reads the mode and then asks.
		toolEdge(ui, "start");
		read();
		await ui.select();
		toolEdge(ui, "end");
		expect(told).toEqual([]);
		// A tool that reads the mode and asks nothing.
		toolEdge(ui, "start");
		read();
		toolEdge(ui, "end");
		expect(told).toHaveLength(1);
		expect(told[0]).toMatch(/^child-screen\.test\.ts could not show its own screen here: it asks only in pi's terminal/);
		// Another UI (the host's own) is left alone.
		expect(() => toolEdge({}, "end")).not.toThrow();
	});

	it("names the extension from the stack: its package, else its file; pi's and this extension's own frames skipped", () => {
		const stack = (...files: string[]) => ["Error", ...files.map((f) => `    at fn (${f}:1:2)`)].join("\n");
		const pi = "/x/node_modules/@earendil-works/pi-coding-agent/dist/core/extensions/runner.js";
		expect(callerExtension(stack(pi, "/x/node_modules/@juicesharp/rpiv-ask-user-question/ask-user-question.ts"))).toBe("@juicesharp/rpiv-ask-user-question");
		expect(callerExtension(stack(pi, "/x/node_modules/@earendil-works/pi-coding-agent/examples/extensions/question.ts"))).toBe("question.ts");
		expect(callerExtension(stack("/home/me/.pi/agent/extensions/gate.ts"))).toBe("gate.ts");
		expect(callerExtension(stack("file:///a/node_modules/pi-guardrails/node_modules/inner/x.js"))).toBe("inner");
		expect(callerExtension(stack(pi, "node:internal/process/task_queues"))).toBe("an extension");
		expect(callerExtension(undefined)).toBe("an extension");
	});
});
