/**
 * A host UI for property and load tests. It behaves like pi's dialogs (an aborted signal or an
 * expired `timeout` closes the dialog with undefined) and checks, at every opening, that no other
 * dialog is still open. Dialogs stay open until the test (or `respond`) settles them, so a test
 * can interleave answers with everything else that may happen meanwhile.
 */
import type { DialogUI } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";

export type DialogKind = "select" | "input";

/** How a dialog ended. `threw` is a synchronous throw from select/input itself. */
export type DialogOutcome =
	| { kind: "value"; value: unknown }
	| { kind: "rejected"; error: unknown }
	| { kind: "threw"; error: unknown }
	| { kind: "aborted"; reason: unknown }
	| { kind: "timed-out" };

export interface Dialog {
	readonly seq: number;
	readonly kind: DialogKind;
	readonly title: string;
	readonly options?: readonly string[];
	readonly placeholder?: string;
	readonly signal?: AbortSignal;
	readonly timeout?: number;
	outcome?: DialogOutcome;
}

export interface PropertyUIOptions {
	/** Called once per opened dialog, synchronously; may settle it at once or later. */
	respond?: (dialog: Dialog, ui: PropertyUI) => void;
	/** Close a dialog with undefined once its `timeout` passes, as pi does. @default true */
	honourTimeout?: boolean;
	/** Keep every dialog and notice (property tests); off for long load runs. @default true */
	keepHistory?: boolean;
}

interface Live {
	dialog: Dialog;
	resolve(value: unknown): void;
	reject(error: unknown): void;
	cleanup(): void;
}

export class PropertyUI implements DialogUI {
	readonly dialogs: Dialog[] = [];
	readonly notices: { message: string; type?: string }[] = [];
	/** The footer status, by key, as last set. */
	readonly status = new Map<string, string>();
	/** One entry per opening that found another dialog still open. */
	readonly overlaps: string[] = [];
	opened = 0;
	maxOpen = 0;
	/** When set, the next select/input call throws this synchronously instead of opening. */
	throwOnNextOpen: { error: unknown } | undefined;
	/** When set, notify throws it. */
	notifyThrows: unknown;
	readonly #live = new Map<Dialog, Live>();
	readonly #options: PropertyUIOptions;

	constructor(options: PropertyUIOptions = {}) {
		this.#options = options;
	}

	/** Dialogs open right now (not settled, not aborted, not timed out). */
	get open(): Dialog[] {
		return [...this.#live.keys()];
	}

	/** The one open dialog, if any. */
	current(): Dialog | undefined {
		return this.#live.keys().next().value;
	}

	select(title: string, options: string[], opts?: { signal?: AbortSignal; timeout?: number }): Promise<string | undefined> {
		return this.#show("select", title, { options: [...options] }, opts);
	}

	input(title: string, placeholder?: string, opts?: { signal?: AbortSignal; timeout?: number }): Promise<string | undefined> {
		return this.#show("input", title, placeholder === undefined ? {} : { placeholder }, opts);
	}

	notify(message: string, type?: "info" | "warning" | "error"): void {
		if (this.#options.keepHistory !== false) this.notices.push({ message, ...(type ? { type } : {}) });
		if (this.notifyThrows !== undefined) throw this.notifyThrows;
	}

	setStatus(key: string, text: string | undefined): void {
		if (text === undefined) this.status.delete(key);
		else this.status.set(key, text);
	}

	/** Closes an open dialog with a value (any value: the host must cope with what a client sends). */
	answer(dialog: Dialog, value: unknown): void {
		const live = this.#live.get(dialog);
		if (!live) throw new Error(`dialog ${dialog.seq} is not open`);
		this.#close(live, { kind: "value", value });
		live.resolve(value);
	}

	/** Makes an open dialog's promise reject. */
	fail(dialog: Dialog, error: unknown): void {
		const live = this.#live.get(dialog);
		if (!live) throw new Error(`dialog ${dialog.seq} is not open`);
		this.#close(live, { kind: "rejected", error });
		live.reject(error);
	}

	#close(live: Live, outcome: DialogOutcome): void {
		live.dialog.outcome = outcome;
		live.cleanup();
		this.#live.delete(live.dialog);
	}

	#show(
		kind: DialogKind,
		title: string,
		extra: { options?: string[]; placeholder?: string },
		opts?: { signal?: AbortSignal; timeout?: number },
	): Promise<string | undefined> {
		const seq = ++this.opened;
		const keep = this.#options.keepHistory !== false;
		const dialog: Dialog = {
			seq,
			kind,
			title,
			...extra,
			...(opts?.signal ? { signal: opts.signal } : {}),
			...(opts?.timeout !== undefined ? { timeout: opts.timeout } : {}),
		};
		if (keep) this.dialogs.push(dialog);
		if (this.throwOnNextOpen) {
			const { error } = this.throwOnNextOpen;
			this.throwOnNextOpen = undefined;
			dialog.outcome = { kind: "threw", error };
			throw error;
		}
		if (this.#live.size > 0) this.overlaps.push(`dialog ${seq} "${title}" opened while ${this.open.map((d) => `${d.seq} "${d.title}"`).join(", ")} still open`);
		return new Promise<string | undefined>((resolve, reject) => {
			const signal = opts?.signal;
			let timer: ReturnType<typeof setTimeout> | undefined;
			const onAbort = () => {
				const live = this.#live.get(dialog);
				if (!live) return;
				this.#close(live, { kind: "aborted", reason: signal?.reason });
				resolve(undefined);
			};
			const live: Live = {
				dialog,
				resolve: resolve as (value: unknown) => void,
				reject,
				cleanup: () => {
					if (timer !== undefined) clearTimeout(timer);
					signal?.removeEventListener("abort", onAbort);
				},
			};
			if (signal?.aborted) {
				dialog.outcome = { kind: "aborted", reason: signal.reason };
				resolve(undefined);
				return;
			}
			this.#live.set(dialog, live);
			this.maxOpen = Math.max(this.maxOpen, this.#live.size);
			signal?.addEventListener("abort", onAbort, { once: true });
			if (this.#options.honourTimeout !== false && opts?.timeout !== undefined)
				timer = setTimeout(() => {
					if (!this.#live.has(dialog)) return;
					this.#close(live, { kind: "timed-out" });
					resolve(undefined);
				}, opts.timeout);
			this.#options.respond?.(dialog, this);
		});
	}
}
