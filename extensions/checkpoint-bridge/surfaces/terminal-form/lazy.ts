/**
 * The terminal form, loaded on the first question the TUI shows rather than when the extension
 * loads: sessions that never ask (children, headless runs, RPC hosts) never pay for it.
 */
import type { Surface } from "../../core/answering/surface.ts";
import type { CustomUI, FormOptions } from "./surface.ts";

/** The form surface for `ui`, its module imported on first use; a failed import fails that call only and is tried again next time. */
export function lazyFormSurface(ui: CustomUI, options: FormOptions = {}): Surface {
	let loaded: Promise<Surface> | undefined;
	const load = () => {
		loaded ??= import("./surface.ts").then(({ formSurface }) => formSurface(ui, options));
		loaded.catch(() => (loaded = undefined));
		return loaded;
	};
	return {
		place: "terminal",
		askRequest: async (prompt) => (await load()).askRequest!(prompt),
		ask: async (prompt, question) => (await load()).ask(prompt, question),
	};
}
