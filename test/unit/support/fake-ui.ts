/**
 * A programmatic host UI for unit tests: records every dialog, counts how many are open at once,
 * and behaves like pi's own dialogs (an aborted signal closes the dialog with undefined).
 */
import type { DialogUI } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";

export interface FakeDialog {
	method: "select" | "input";
	title: string;
	options?: string[];
	placeholder?: string;
	signal?: AbortSignal;
	timeout?: number;
	/** How the dialog closed, once it has. */
	closedBy?: "answer" | "error" | "signal";
	answer(value: string | undefined): void;
	fail(error: unknown): void;
}

export interface FakeUI {
	ui: DialogUI;
	dialogs: FakeDialog[];
	notices: { message: string; type?: string }[];
	/** Dialogs open right now. */
	readonly open: FakeDialog[];
	/** The most dialogs ever open at the same time. */
	readonly maxOpen: number;
	/** The newest dialog still open. */
	current(): FakeDialog | undefined;
}

/** `respond` runs for each new dialog (answer it at once, later, or never); `ignoreSignal` models a UI that does not honour aborts. */
export function fakeUI(options: { respond?: (dialog: FakeDialog) => void; ignoreSignal?: boolean } = {}): FakeUI {
	const dialogs: FakeDialog[] = [];
	const notices: { message: string; type?: string }[] = [];
	const open = new Set<FakeDialog>();
	let maxOpen = 0;
	const show = (
		method: FakeDialog["method"],
		title: string,
		extra: Pick<FakeDialog, "options" | "placeholder">,
		opts?: { signal?: AbortSignal; timeout?: number },
	) =>
		new Promise<string | undefined>((resolve, reject) => {
			const close = (how: NonNullable<FakeDialog["closedBy"]>) => {
				if (dialog.closedBy) return false;
				dialog.closedBy = how;
				open.delete(dialog);
				return true;
			};
			const dialog: FakeDialog = {
				method,
				title,
				...extra,
				...(opts?.signal ? { signal: opts.signal } : {}),
				...(opts?.timeout !== undefined ? { timeout: opts.timeout } : {}),
				answer: (value) => close("answer") && resolve(value),
				fail: (error) => close("error") && reject(error),
			};
			dialogs.push(dialog);
			open.add(dialog);
			maxOpen = Math.max(maxOpen, open.size);
			if (!options.ignoreSignal) {
				if (opts?.signal?.aborted) close("signal") && resolve(undefined);
				opts?.signal?.addEventListener("abort", () => close("signal") && resolve(undefined), { once: true });
			}
			options.respond?.(dialog);
		});
	return {
		ui: {
			select: (title, opts, o) => show("select", title, { options: opts }, o),
			input: (title, placeholder, o) => show("input", title, placeholder === undefined ? {} : { placeholder }, o),
			notify: (message, type) => void notices.push({ message, ...(type ? { type } : {}) }),
		},
		dialogs,
		notices,
		get open() {
			return [...open];
		},
		get maxOpen() {
			return maxOpen;
		},
		current: () => [...open].at(-1),
	};
}
