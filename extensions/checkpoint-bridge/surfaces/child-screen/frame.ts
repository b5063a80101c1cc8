/**
 * A child's own component drawn in the host's terminal (ADR-0016): under a line naming who asks, the
 * extension and the one key the host keeps (CLOSE_KEY: it ends the screen as dismissed, whatever the
 * component does with Esc, q or Ctrl+C), behind the same key guard as the form, at most
 * MAX_SCREEN_LINES lines each cut to the terminal's width (and, before pi-tui measures it, to
 * MAX_LINE_UNITS code units, so a child's megabyte lines cost what is shown). The child's code runs
 * inside the host's TUI, so whatever it throws while drawn or on a key ends its screen as closed
 * (`undefined` to the child) and the host's screen stays whole.
 */
import { type Component, type Focusable, matchesKey, truncateToWidth } from "@earendil-works/pi-tui";
import type { ChildScreen } from "../../core/answering/screens.ts";
import { sanitiseText } from "../../model/sanitise.ts";
import { KEY_GUARD_MS } from "../terminal-form/component.ts";

/** The key the host keeps while a child's screen is up: it ends the screen as dismissed (telnet's escape key; pi's editor alone binds it, to a jump). */
const CLOSE_KEY = "ctrl+]";
/** Lines of a child's screen drawn; the rest are counted in one last line. @default 200 */
export const MAX_SCREEN_LINES = 200;
/** Code units of one line of a child's screen looked at before it is cut to the terminal's width. @default 4096 */
const MAX_LINE_UNITS = 4_096;

/** An escape sequence a cut left unfinished at the end of a line: dropped, so it cannot swallow what follows. */
const CUT_ESCAPE = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[PX^_][^\x1b]*)?$/;

/** One line of the child's, bounded before pi-tui measures it, then cut to `width`. */
function shownLine(line: unknown, width: number): string {
	const text = typeof line === "string" ? line : String(line);
	const bounded = text.length > MAX_LINE_UNITS ? text.slice(0, MAX_LINE_UNITS).replace(CUT_ESCAPE, "") : text;
	return truncateToWidth(bounded, width);
}

/** The slice of pi's theme the line above the component uses. */
interface LineTheme {
	fg(color: string, text: string): string;
	bold(text: string): string;
}

/** pi's `ctx.ui.custom` as the host's terminal has it. */
export interface ScreenUI {
	custom<T>(
		factory: (tui: { requestRender(): void }, theme: LineTheme, keybindings: unknown, done: (result: T) => void) => Component | Promise<Component>,
		options?: { overlay?: boolean; blocked?: { kind: "question"; message: string } },
	): Promise<T>;
}

/** What one drawing of a child's screen needs. */
export interface DrawOptions {
	/** Who asks, as titles show it. */
	asker: string;
	screen: ChildScreen;
	/** Aborts when the request stops (budget, the child's abort, the host's end, a dismiss): the screen closes at once. */
	signal: AbortSignal;
	/** Called once when the screen is put up, to count what the human saw. */
	onDialog?: () => void;
	/** Keys are ignored for this long after the first render. @default KEY_GUARD_MS */
	keyGuardMs?: number;
}

/** A component of the child's, as far as the frame calls it; any of it may be missing or throw. */
type ChildComponent = Partial<Component & Focusable> & { dispose?(): void };

interface FrameOptions {
	inner: ChildComponent;
	asker: string;
	extension: string;
	theme: unknown;
	keyGuardMs: number;
	requestRender(): void;
	/** The child's component threw: its screen ends as closed. */
	fail(): void;
	/** The human pressed CLOSE_KEY: the screen ends as dismissed. */
	close(): void;
}

/** Colours text with the host's theme, or leaves it plain when the theme cannot. */
function themed(theme: unknown, color: string, text: string, bold = false): string {
	try {
		const t = theme as LineTheme;
		return t.fg(color, bold ? t.bold(text) : text);
	} catch {
		return text;
	}
}

/** The child's component inside the host's terminal. */
class ScreenFrame implements Component, Focusable {
	readonly #o: FrameOptions;
	#failed = false;
	#shownAt: number | undefined;
	#guardTimer: ReturnType<typeof setTimeout> | undefined;
	#focused = false;

	constructor(options: FrameOptions) {
		this.#o = options;
	}

	get focused(): boolean {
		return this.#focused;
	}

	/** Focus (pi-tui's cursor for an input inside) passes to the child's component. */
	set focused(value: boolean) {
		this.#focused = value;
		this.#guard(() => {
			if ("focused" in this.#o.inner) this.#o.inner.focused = value;
		});
	}

	get wantsKeyRelease(): boolean {
		return this.#guard(() => this.#o.inner.wantsKeyRelease === true) ?? false;
	}

	render(width: number): string[] {
		if (this.#failed) return [];
		const lines = this.#guard(() => {
			const drawn = this.#o.inner.render?.(width);
			return Array.isArray(drawn) ? drawn : [];
		});
		if (lines === undefined) return [];
		this.#firstShown();
		const { asker, extension, theme } = this.#o;
		const head = ` ${themed(theme, "accent", `[${sanitiseText(asker)}]`, true)} · ${themed(theme, "muted", `${sanitiseText(extension)}'s own screen`)} · ${themed(theme, "dim", `${CLOSE_KEY} leaves`)}`;
		const out = [truncateToWidth(head, width)];
		if (!this.#takesKeys()) out.push(truncateToWidth(themed(theme, "dim", " … keys reach it in a moment"), width));
		// A line wider than the terminal would break the host's screen: each is cut to the width.
		const shown = Math.min(lines.length, MAX_SCREEN_LINES);
		for (let i = 0; i < shown; i++) out.push(shownLine(lines[i], width));
		if (lines.length > shown) out.push(truncateToWidth(themed(theme, "dim", ` … ${lines.length - shown} more lines not shown`), width));
		return out;
	}

	handleInput(data: string): void {
		if (this.#failed) return;
		// The host's own key, guard or not: the one way out a component cannot take away.
		if (matchesKey(data, CLOSE_KEY)) return this.#o.close();
		if (!this.#takesKeys()) return;
		this.#guard(() => this.#o.inner.handleInput?.(data));
	}

	invalidate(): void {
		this.#guard(() => this.#o.inner.invalidate?.());
	}

	/** Stops the guard's timer and disposes the child's component. */
	dispose(): void {
		clearTimeout(this.#guardTimer);
		try {
			this.#o.inner.dispose?.();
		} catch {
			// Its own leftovers: the screen is closed either way.
		}
	}

	/** Runs the child's code; a throw ends the screen as closed. */
	#guard<T>(run: () => T): T | undefined {
		if (this.#failed) return undefined;
		try {
			return run();
		} catch {
			this.#failed = true;
			this.dispose();
			this.#o.fail();
			return undefined;
		}
	}

	#takesKeys(): boolean {
		return this.#o.keyGuardMs <= 0 || (this.#shownAt !== undefined && Date.now() - this.#shownAt >= this.#o.keyGuardMs);
	}

	/** Starts the guard at the first render, and draws again when it ends. */
	#firstShown(): void {
		if (this.#shownAt !== undefined) return;
		this.#shownAt = Date.now();
		if (this.#o.keyGuardMs <= 0) return;
		this.#guardTimer = setTimeout(() => this.#o.requestRender(), this.#o.keyGuardMs);
		this.#guardTimer.unref?.();
	}
}

/** An empty component, put up when the child's factory failed, closed at once. */
const EMPTY: Component = { render: () => [], invalidate: () => {} };

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | undefined)?.then === "function";

/**
 * Draws a child's screen in the host's terminal until the child's component calls `done()` (true:
 * its value is in `screen.result`) or the screen closes otherwise (false): the signal, a throw, the
 * TUI closing it. Never rejects.
 */
export function drawScreen(ui: ScreenUI, options: DrawOptions): Promise<boolean> {
	const { screen, signal, asker } = options;
	if (signal.aborted) return Promise.resolve(false);
	return new Promise<boolean>((resolve) => {
		let settled = false;
		let close: ((result: unknown) => void) | undefined;
		let frame: ScreenFrame | undefined;
		const settle = (given: boolean) => {
			if (settled) return;
			settled = true;
			signal.removeEventListener("abort", onAbort);
			resolve(given);
			frame?.dispose();
			// The TUI takes the screen off; a failure there must not reach the relay.
			try {
				close?.(undefined);
			} catch {
				// Already gone.
			}
		};
		const onAbort = () => settle(false);
		signal.addEventListener("abort", onAbort, { once: true });
		const childDone = (value: unknown) => {
			if (settled) return;
			screen.result = { value };
			settle(true);
		};
		const { overlay, overlayOptions, onHandle } = screen.options;
		const custom = {
			...(overlay === true ? { overlay: true } : {}),
			...(overlayOptions !== undefined ? { overlayOptions } : {}),
			...(typeof onHandle === "function" ? { onHandle: (handle: unknown) => safely(() => onHandle(handle)) } : {}),
			blocked: { kind: "question" as const, message: `[${asker}] ${screen.extension}` },
		};
		let started: Promise<unknown>;
		try {
			started = ui.custom<unknown>((tui, theme, keybindings, done) => {
				close = done;
				options.onDialog?.();
				const framed = (inner: unknown): Component => {
					if (typeof inner !== "object" || inner === null) {
						settle(false);
						return EMPTY;
					}
					frame = new ScreenFrame({
						inner: inner as ChildComponent,
						asker,
						extension: screen.extension,
						theme,
						keyGuardMs: options.keyGuardMs ?? KEY_GUARD_MS,
						requestRender: () => safely(() => tui.requestRender()),
						fail: () => settle(false),
						close: () => settle(false),
					});
					// Ended while the component was being built: close it as soon as pi has it.
					if (settled) {
						frame.dispose();
						queueMicrotask(() => safely(() => done(undefined)));
					}
					return frame;
				};
				let built: unknown;
				try {
					built = screen.factory(tui, theme, keybindings, childDone);
				} catch {
					return framed(undefined);
				}
				return isThenable(built) ? Promise.resolve(built).then(framed, () => framed(undefined)) : framed(built);
			}, custom);
		} catch {
			return settle(false);
		}
		Promise.resolve(started).then(
			() => settle(false),
			() => settle(false),
		);
	});
}

/** Runs `run`, swallowing what it throws. */
function safely(run: () => unknown): void {
	try {
		run();
	} catch {
		// The child's or the TUI's failure ends nothing here.
	}
}
