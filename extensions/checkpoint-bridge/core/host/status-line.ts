/** The host's footer: the status line while questions wait, drawn once per stretch of work (ADR-0022). */
import type { HostUI } from "../answering/surface.ts";
import type { DialogHost } from "./dialog-host.ts";

/** Key of the host's footer status. */
export const STATUS_KEY = "checkpoint-bridge";

/** Requests named in each part of the status line; the rest are counted. @default 3 */
const STATUS_ASKERS_SHOWN = 3;

/** Minutes (or hours) since `at`, as the status line says it. */
const ago = (at: number, now = Date.now()) => {
	const minutes = Math.floor((now - at) / 60_000);
	return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h`;
};

/**
 * The status line while questions wait, e.g.
 * `checkpoint-bridge: shown: planner (2 min) · 2 queued: reviewer (1 min), tester (0 min) · 1 late: planner (12 min)`
 * (labels may hold brackets of their own): the request on screen, those waiting their turn and the
 * late ones apart, each with who asked and how long ago (queued: since asked; late: since late).
 * While paused (`/checkpoints pause`) it says so first, then how many wait and who, as in
 * `checkpoint-bridge: paused · 2 …: reviewer (1 min), tester (0 min)`.
 */
export function statusText(host: DialogHost): string | undefined {
	const { shown, queued, queuedCount } = host.queued(STATUS_ASKERS_SHOWN);
	const late = host.lateRequests();
	const { paused } = host;
	if (!paused && !shown && queuedCount === 0 && late.length === 0) return undefined;
	const named = (requests: { label: string; at: number }[], total = requests.length) => {
		const more = total - STATUS_ASKERS_SHOWN;
		return `${requests
			.slice(0, STATUS_ASKERS_SHOWN)
			.map((r) => `${r.label} (${ago(r.at)})`)
			.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
	};
	const parts: string[] = [];
	if (paused) parts.push(`paused · ${queuedCount} waiting${queuedCount > 0 ? `: ${named(queued, queuedCount)}` : ""}`);
	if (shown) parts.push(`shown: ${named([shown])}`);
	if (queuedCount > 0 && !paused) parts.push(`${queuedCount} queued: ${named(queued, queuedCount)}`);
	if (late.length > 0) parts.push(`${late.length} late: ${named(late.map((l) => ({ label: l.request.asker.label, at: l.state.since })))}`);
	return `checkpoint-bridge: ${parts.join(" · ")}`;
}

/**
 * Redraws the status line at the first change, and once more when the work queued behind it is done
 * (process.nextTick: after the current callback and every promise job it started), with what is then
 * open. A burst of changes in one stretch of work (1,000 askers asking at once, each shown and answered
 * by a UI that answers at once) draws it twice, not once per change; no state that outlasts the
 * stretch is skipped. `flush` draws now what is pending. `settled` runs at the end of each stretch:
 * whether questions are still shown as waiting; then the end of the stretch looks again even after a
 * single change (the change may come before the request it reports has left the queue).
 */
function coalescedDraw(draw: () => void, settled: () => boolean): { changed(): void; flush(): void } {
	let scheduled = false;
	let again = false;
	const endOfStretch = () => {
		scheduled = false;
		if (!again && !settled()) return;
		again = false;
		draw();
		settled();
	};
	return {
		changed() {
			if (scheduled) {
				again = true;
				return;
			}
			draw();
			scheduled = true;
			process.nextTick(endOfStretch);
		},
		flush() {
			if (!again) return;
			again = false;
			draw();
		},
	};
}

/** How often the footer is looked at again while questions wait, so its minutes move. @default 10000 */
export const STATUS_TICK_MS = 10_000;

/**
 * The footer of `ui` for `host`, redrawn at each change (coalesced) and, while questions wait, every
 * `tickMs`, so `(0 min)` becomes `(1 min)` without a change of its own: the same text again is not
 * drawn again (an RPC client gets each change once). The timer runs only while the footer, as a
 * stretch of work left it, shows questions waiting; `close` ends the drawing for good (the role
 * released). The footer is a courtesy: a UI that fails to draw it must not fail a request or a shutdown.
 */
export function statusLine(ui: HostUI, host: () => DialogHost, tickMs = STATUS_TICK_MS): { changed(): void; flush(): void; close(): void } {
	let drawn: string | undefined;
	let ticker: ReturnType<typeof setInterval> | undefined;
	let closed = false;
	const draw = () => {
		if (closed) return;
		const text = statusText(host());
		if (text === drawn) return;
		drawn = text;
		try {
			ui.setStatus?.(STATUS_KEY, text);
		} catch {
			// Nothing to fall back to; the dialogs still work.
		}
	};
	/** Starts or stops the timer by what the footer shows now; whether it shows questions waiting. */
	const settled = () => {
		const shows = drawn !== undefined && !closed;
		if (shows && !ticker) {
			ticker = setInterval(() => {
				draw();
				settled();
			}, tickMs);
			// The footer's clock never keeps a process alive.
			ticker.unref?.();
		} else if (!shows && ticker) {
			clearInterval(ticker);
			ticker = undefined;
		}
		return shows;
	};
	return {
		...coalescedDraw(draw, settled),
		close() {
			closed = true;
			settled();
		},
	};
}
