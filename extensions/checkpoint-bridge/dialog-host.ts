/**
 * The host side: one FIFO queue of dialogs for the whole process. Every request, the host's own
 * included, goes through it, so the human never sees two dialogs at once.
 */
import PQueue from "p-queue";
import type { Answer, Status } from "./envelope.ts";
import { PROTOCOL_VERSION, type RelayCancel, type RelayReply, type RelayRequest } from "./protocol.ts";
import { validateAskParams, type Question } from "./validate.ts";

/** The dialog primitives the host needs; pi's `ctx.ui` has them in the TUI and in RPC mode. */
export interface DialogUI {
	select(title: string, options: string[], opts?: { signal?: AbortSignal; timeout?: number }): Promise<string | undefined>;
	input(title: string, placeholder?: string, opts?: { signal?: AbortSignal; timeout?: number }): Promise<string | undefined>;
	notify(message: string, type?: "info" | "warning" | "error"): void;
}

export interface DialogHostOptions {
	/** Where dialogs are shown. */
	ui: DialogUI;
	/** The host session's id: its own requests get no arrival receipt. */
	sessionId: string;
	/** Sends a reply to the one asker it is addressed to. */
	reply: (reply: RelayReply) => void;
}

/** Why a held request stopped before its questions were done. */
type StopReason = "timeout" | "cancelled" | "host-ended";

interface Held {
	request: RelayRequest;
	/** Aborts on any stop: closes the open dialog. */
	stop: AbortController;
	/** Aborts only while still queued, so p-queue drops it without freeing a running slot early. */
	unqueue: AbortController;
	started: boolean;
	settled: boolean;
	answers: Answer[];
	deadlineTimer: ReturnType<typeof setTimeout>;
	hostEndedNote?: string;
}

/** Resolves with the dialog's value, or with undefined as soon as `signal` aborts: a UI that ignores the signal cannot hold the queue. */
function untilAborted<T>(dialog: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
	if (signal.aborted) return Promise.resolve(undefined);
	return new Promise((resolve, reject) => {
		const onAbort = () => resolve(undefined);
		signal.addEventListener("abort", onAbort, { once: true });
		dialog.then(
			(value) => {
				signal.removeEventListener("abort", onAbort);
				resolve(value);
			},
			(error: unknown) => {
				signal.removeEventListener("abort", onAbort);
				reject(error);
			},
		);
	});
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** `[asker] (i/n) question`; the position only for batches of more than one. */
export function dialogTitle(asker: string, index: number, total: number, question: string): string {
	return `[${asker}] ${total > 1 ? `(${index + 1}/${total}) ` : ""}${question}`;
}

export class DialogHost {
	readonly #ui: DialogUI;
	readonly #sessionId: string;
	readonly #reply: (reply: RelayReply) => void;
	readonly #queue = new PQueue({ concurrency: 1 });
	readonly #held = new Map<string, Held>();

	constructor(options: DialogHostOptions) {
		this.#ui = options.ui;
		this.#sessionId = options.sessionId;
		this.#reply = options.reply;
	}

	/** Requests held: shown or waiting in the queue. */
	get heldCount(): number {
		return this.#held.size;
	}

	/** Tasks in the dialog queue, the running one included. */
	get queueLength(): number {
		return this.#queue.size + this.#queue.pending;
	}

	/** Takes a request off the bus and queues its dialogs. Malformed requests get an `error` result when they can be addressed. */
	serve(request: RelayRequest): void {
		if (typeof request?.id !== "string" || request.id === "" || this.#held.has(request.id)) return;
		const problem = this.#checkRequest(request);
		if (problem) {
			this.#reply({ v: PROTOCOL_VERSION, id: request.id, kind: "result", status: "error", answers: [], note: problem });
			return;
		}
		const remaining = request.deadline - Date.now();
		if (remaining <= 0) {
			this.#reply({ v: PROTOCOL_VERSION, id: request.id, kind: "result", status: "timeout", answers: [], note: "The call's budget had run out before it reached the host." });
			return;
		}
		const held: Held = {
			request,
			stop: new AbortController(),
			unqueue: new AbortController(),
			started: false,
			settled: false,
			answers: [],
			deadlineTimer: setTimeout(() => this.#stop(held, "timeout"), remaining),
		};
		this.#held.set(request.id, held);
		const position = this.#held.size;
		this.#progress(held, "queued", { position });
		if (request.asker.sessionId !== this.#sessionId) {
			const n = request.questions.length;
			this.#ui.notify(`checkpoint-bridge: [${request.asker.label}] asks ${n} question${n === 1 ? "" : "s"}${position > 1 ? ` (${position - 1} ahead)` : ""}`, "info");
		}
		this.#queue
			.add(() => this.#run(held), { signal: held.unqueue.signal })
			.catch(() => {
				// Dropped while queued: #stop has already settled it.
			});
	}

	/** The asker gave up (its budget or its abort): dismiss the dialog or drop the queued request. */
	cancel(message: RelayCancel): void {
		const held = this.#held.get(message?.id);
		if (held) this.#stop(held, "cancelled");
	}

	/** The host session is going away: every held request settles now with `no-host`. */
	shutdown(note: string): void {
		for (const held of [...this.#held.values()]) {
			held.hostEndedNote = note;
			this.#stop(held, "host-ended");
		}
		this.#queue.clear();
	}

	#checkRequest(request: RelayRequest): string | undefined {
		if (request.v !== PROTOCOL_VERSION)
			return `The asker speaks checkpoint-bridge protocol v${String(request.v)}; the host speaks v${PROTOCOL_VERSION}.`;
		const checked = validateAskParams({ questions: request.questions });
		if (!checked.ok) return `Invalid parameters: ${checked.problems.join("; ")}.`;
		if (typeof request.asker?.label !== "string" || typeof request.asker?.sessionId !== "string") return "The request does not say who asks.";
		if (!Number.isFinite(request.deadline) || !Number.isFinite(request.dialogTimeoutMs)) return "The request has no valid deadline.";
		return undefined;
	}

	#progress(held: Held, stage: "queued" | "shown" | "answered", extra: { question?: number; position?: number } = {}): void {
		this.#reply({ v: PROTOCOL_VERSION, id: held.request.id, kind: "progress", stage, answers: [...held.answers], ...extra });
	}

	#settle(held: Held, status: Status, note?: string): void {
		if (held.settled) return;
		held.settled = true;
		clearTimeout(held.deadlineTimer);
		this.#held.delete(held.request.id);
		// Nobody listens any more for a cancelled request: its asker settled first.
		if (status === "cancelled") return;
		this.#reply({ v: PROTOCOL_VERSION, id: held.request.id, kind: "result", status, answers: [...held.answers], ...(note ? { note } : {}) });
	}

	#stop(held: Held, reason: StopReason): void {
		if (held.settled) return;
		if (!held.started) held.unqueue.abort(reason);
		held.stop.abort(reason);
		if (reason === "timeout") this.#settle(held, "timeout", `The call's budget ran out before every question was answered.`);
		else if (reason === "host-ended") this.#settle(held, "no-host", held.hostEndedNote);
		else this.#settle(held, "cancelled");
	}

	async #run(held: Held): Promise<void> {
		held.started = true;
		const { request } = held;
		const total = request.questions.length;
		for (const [index, question] of request.questions.entries()) {
			if (held.settled) return;
			let answer: string | undefined;
			try {
				answer = await this.#ask(held, question, dialogTitle(request.asker.label, index, total, question.question), index);
			} catch (error) {
				this.#settle(held, "error", `The host dialog failed: ${errorText(error)}`);
				return;
			}
			if (held.settled) return;
			if (answer === undefined) {
				const n = held.answers.length;
				this.#settle(held, "timeout-or-cancelled", `The user dismissed question ${index + 1} of ${total}, or its dialog timed out; ${n} answered.`);
				return;
			}
			held.answers.push({ question: question.question, answer });
			this.#progress(held, "answered", { question: index });
		}
		this.#settle(held, "ok");
	}

	/** One question, one dialog (asked again when a select answer was not offered), within the question's own budget. */
	async #ask(held: Held, question: Question, title: string, index: number): Promise<string | undefined> {
		const budget = Math.min(held.request.dialogTimeoutMs, held.request.deadline - Date.now());
		if (budget <= 0) return undefined;
		const expiry = new AbortController();
		const timer = setTimeout(() => expiry.abort("dialog-timeout"), budget);
		const signal = AbortSignal.any([held.stop.signal, expiry.signal]);
		const deadline = Date.now() + budget;
		try {
			this.#progress(held, "shown", { question: index });
			for (;;) {
				const opts = { signal, timeout: Math.max(1, deadline - Date.now()) };
				const value = question.options
					? await untilAborted(this.#ui.select(title, question.options, opts), signal)
					: await untilAborted(this.#ui.input(title, question.placeholder, opts), signal);
				if (value === undefined || signal.aborted) return undefined;
				if (typeof value !== "string") throw new TypeError(`the host UI returned ${typeof value} instead of text`);
				if (!question.options || question.options.includes(value)) return value;
				// An RPC client can send any string; an answer that was not offered is never passed on.
				this.#ui.notify(`checkpoint-bridge: "${value}" is not one of the offered options; please choose again.`, "warning");
			}
		} finally {
			clearTimeout(timer);
		}
	}
}
