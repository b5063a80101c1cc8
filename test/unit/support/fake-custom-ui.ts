/**
 * pi's `ctx.ui.custom` without a terminal: builds the component from the factory, records what is
 * on screen, and resolves the call when the component calls `done`, like pi's TUI.
 */
import type { Component } from "@earendil-works/pi-tui";
import type { FormTheme } from "../../../extensions/checkpoint-bridge/surfaces/terminal-form/render.ts";
import type { CustomUI } from "../../../extensions/checkpoint-bridge/surfaces/terminal-form/surface.ts";
import { ansiTheme, KEY } from "../surfaces/terminal-form/support.ts";

interface ShownForm {
	component: Component & { dispose?(): void };
	options: Parameters<CustomUI["custom"]>[1];
	/** How the form closed, once it has. */
	closed?: unknown;
	/** Sends keys; `{ type }` is typed character by character. */
	press(...keys: (keyof typeof KEY | { type: string })[]): void;
	/** The screen at `width` as plain text. */
	screen(width?: number): string;
}

export interface FakeCustomUI {
	ui: CustomUI & { notify(message: string): void };
	forms: ShownForm[];
	readonly open: ShownForm[];
	readonly maxOpen: number;
	current(): ShownForm | undefined;
}

/** `failNext` makes building the next form throw what it returns; `theme` stands in for pi's. */
export function fakeCustomUI(options: { failNext?: () => unknown; theme?: FormTheme } = {}): FakeCustomUI {
	const forms: ShownForm[] = [];
	const open = new Set<ShownForm>();
	let maxOpen = 0;
	let failNext = options.failNext;
	const ui: FakeCustomUI["ui"] = {
		notify: () => {},
		custom<T>(factory: Parameters<CustomUI["custom"]>[0], customOptions?: Parameters<CustomUI["custom"]>[1]) {
			return new Promise<T>((resolve, reject) => {
				let form: ShownForm | undefined;
				const done = (result: unknown) => {
					if (!form || form.closed !== undefined) return;
					form.closed = result;
					open.delete(form);
					form.component.dispose?.();
					resolve(result as T);
				};
				const fail = failNext;
				failNext = undefined;
				try {
					if (fail) throw fail();
					const component = factory({ requestRender: () => {} }, options.theme ?? ansiTheme, undefined, done);
					form = {
						component,
						options: customOptions,
						press: (...keys) => {
							for (const key of keys) {
								if (typeof key === "string") component.handleInput?.(KEY[key]);
								else for (const ch of key.type) component.handleInput?.(ch);
							}
						},
						screen: (width = 100) =>
							component
								.render(width)
								.map((l) => l.replace(/\x1b_[^\x07]*\x07|\x1b\[[0-9;]*m/g, ""))
								.join("\n"),
					};
					forms.push(form);
					open.add(form);
					maxOpen = Math.max(maxOpen, open.size);
				} catch (error) {
					reject(error);
				}
			});
		},
	};
	return {
		ui,
		forms,
		get open() {
			return [...open];
		},
		get maxOpen() {
			return maxOpen;
		},
		current: () => [...open].at(-1),
	};
}
