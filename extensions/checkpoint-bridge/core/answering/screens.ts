/**
 * Child screens: a foreground child's own `ctx.ui.custom` component, drawn in the host's terminal
 * when its request's turn in the one queue comes (ADR-0016). A component cannot cross a process, so
 * it never rides the request: the request carries a token (its question's `id`), and the component
 * waits here, in one process-global registry every copy of the extension finds, until the terminal
 * surface draws it or the request ends.
 */
import { processSlot } from "../shared/process-slot.ts";

/** Registry key of the process's child screens; `Symbol.for` makes it the same in every module copy. */
const SCREENS_KEY = Symbol.for("checkpoint-bridge.screens");

/** pi's `custom()` factory, as a child's extension passes it: `(tui, theme, keybindings, done) => component` (or a promise of one). */
export type ScreenFactory = (tui: unknown, theme: unknown, keybindings: unknown, done: (value: unknown) => void) => unknown;

/** One child's component waiting to be drawn, or drawn now. */
export interface ChildScreen {
	/** The child's factory, called once, by the host's terminal. */
	readonly factory: ScreenFactory;
	/** The options the child passed to `custom()` (overlay, overlayOptions). */
	readonly options: Readonly<Record<string, unknown>>;
	/** The extension that asked, as the line above the component names it. */
	readonly extension: string;
	/** What the child's component handed to `done()`, once it did: the only way a value reaches the child. */
	result?: { value: unknown };
}

/** What every copy shares. */
interface ScreensSlot {
	/** Screens by token, while their request is open. */
	readonly open: Map<string, ChildScreen>;
	/** The host session whose terminal draws child screens now, if any (a TUI host of this process). */
	terminal: string | undefined;
}

/** The process's child screens. */
export const screens = (target: object = globalThis): ScreensSlot =>
	processSlot<ScreensSlot>(target, SCREENS_KEY, () => ({ open: new Map(), terminal: undefined }));

/** A TUI host of this process says its terminal draws child screens (`sessionId`), or no longer does. */
export function terminalDraws(sessionId: string, draws: boolean, target?: object): void {
	const slot = screens(target);
	if (draws) slot.terminal = sessionId;
	else if (slot.terminal === sessionId) slot.terminal = undefined;
}

/** Whether a host's terminal in this process draws child screens now. */
export const terminalHere = (target?: object): boolean => screens(target).terminal !== undefined;
