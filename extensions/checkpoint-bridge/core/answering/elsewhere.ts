/**
 * Forms open elsewhere: questionnaires another extension shows in the host's own terminal, which
 * the web page shows as cards beside the relay's requests. Adapters (interop/) add a form, record
 * the verdict on an answer, and remove it when it ends; the page lists them and hands an answer to
 * `submit`, which puts it through the one answer check before the adapter's callback sees it. This
 * file knows no tool: a form is questions of our model, a tool name, and an optional callback.
 * One registry per process, on `globalThis` (any copy may start the page, only the host feeds it).
 */
import type { Answer } from "../../model/answer.ts";
import type { Checked } from "../../model/check.ts";
import { LIMITS } from "../../model/limits.ts";
import type { Question, QuestionInput } from "../../model/question.ts";
import { cutText, squeezeSpace } from "../../model/sanitise.ts";
import { validateAskParams } from "../../model/validate.ts";
import { type OutsideAnswerValue, resolveOutsideAnswer } from "../shared/outside-answers.ts";
import { processSlot } from "../shared/process-slot.ts";
import { firstWithin } from "../shared/wait.ts";

/** Registry key of the process's forms; `Symbol.for` makes it the same in every module copy. */
const FORMS_KEY = Symbol.for("checkpoint-bridge.forms-elsewhere");

/** Forms kept at once; adding one more drops the oldest (an adapter that missed an end cannot grow it). @default 16 */
export const MAX_FORMS_ELSEWHERE = 16;
/** How long `submit` waits for the tool's verdict before saying it has none. @default 5000 */
export const VERDICT_TIMEOUT_MS = 5_000;
/** Longest tool name, title or verdict text kept; longer ones are cut with "…". @default LIMITS.details */
const TEXT_MAX = LIMITS.details;

/** The tool's word on the page's last answer to a form. */
interface Verdict {
	ok: boolean;
	/** What the tool said, in one line (sanitised). */
	text: string;
	/** Epoch ms at which it came. */
	at: number;
}

/** A form open in the host's terminal, as the page shows it. */
export interface FormElsewhere {
	/** This registry's id for it (not the tool's). */
	id: string;
	/** The extension that shows it, e.g. "pi-agent-ask". */
	tool: string;
	/** The form's title, when it has one. */
	title?: string;
	/** Its questions, validated and sanitised like an asker's; empty when they cannot be shown. */
	questions: Question[];
	/** Epoch ms at which it opened. */
	openedAt: number;
	/** Whether the page may answer it; otherwise it is shown as waiting in the terminal. */
	answerable: boolean;
	/** The verdict on the page's last answer, once there is one. */
	verdict?: Verdict;
}

/** What the adapter does with answers that passed the check: hands them to its tool; resolves with the tool's verdict. */
export type SubmitToTool = (answers: Answer[], signal: AbortSignal) => Promise<{ ok: true } | { ok: false; reason: string }>;

/** What an adapter gives to add a form. */
export interface FormSpec {
	tool: string;
	title?: string;
	questions: QuestionInput[];
	/** Present when the tool takes answers from outside; without it the form is read-only. */
	submit?: SubmitToTool;
}

/** What changed, for the page's streams. */
export type FormChange = { type: "form"; form: FormElsewhere } | { type: "form-gone"; id: string };

/**
 * Why an answer to a form was not applied: kebab-case (ADR-0011), apart from the answer check's own
 * `not_found`, `invalid_payload` and `invalid_answer`, which keep the observer contract's snake
 * case (docs/observers.md).
 */
export type FormRefusalCode = "not_found" | "read-only" | "invalid_payload" | "invalid_answer" | "refused" | "no-verdict";

/** The reply to a page's answer. */
export type FormSubmitReply = Checked<object, { code: FormRefusalCode; reason: string }>;

/** One line of another extension's text: neutralised like asker text, cut to TEXT_MAX. */
const oneLine = (text: string) => cutText(text, TEXT_MAX, { tidy: squeezeSpace });

interface Entry {
	form: FormElsewhere;
	submit?: SubmitToTool;
}

export class FormsElsewhere {
	readonly #entries = new Map<string, Entry>();
	readonly #listeners = new Set<(change: FormChange) => void>();
	readonly #max: number;
	readonly #verdictTimeoutMs: number;
	#next = 0;

	/** @param options.max @default MAX_FORMS_ELSEWHERE; options.verdictTimeoutMs @default VERDICT_TIMEOUT_MS */
	constructor(options: { max?: number; verdictTimeoutMs?: number } = {}) {
		this.#max = options.max ?? MAX_FORMS_ELSEWHERE;
		this.#verdictTimeoutMs = options.verdictTimeoutMs ?? VERDICT_TIMEOUT_MS;
	}

	/**
	 * Adds a form; returns its id. Its questions go through the tool's validation (sanitised, within
	 * LIMITS); questions that fail it make the form read-only and shown without them.
	 */
	add(spec: FormSpec): string {
		const checked = validateAskParams({ questions: spec.questions });
		const id = `form-${++this.#next}`;
		const title = spec.title === undefined ? "" : oneLine(spec.title);
		const form: FormElsewhere = {
			id,
			tool: oneLine(spec.tool) || "another extension",
			...(title ? { title } : {}),
			questions: checked.ok ? checked.questions : [],
			openedAt: Date.now(),
			answerable: checked.ok && spec.submit !== undefined,
		};
		this.#entries.set(id, { form, ...(form.answerable ? { submit: spec.submit } : {}) });
		while (this.#entries.size > this.#max) this.remove(this.#entries.keys().next().value!);
		this.#emit({ type: "form", form });
		return id;
	}

	/** Removes a form (it ended, however); false when it was not here. */
	remove(id: string): boolean {
		if (!this.#entries.delete(id)) return false;
		this.#emit({ type: "form-gone", id });
		return true;
	}

	/** The open forms, oldest first. */
	list(): FormElsewhere[] {
		return [...this.#entries.values()].map((e) => e.form);
	}

	get(id: string): FormElsewhere | undefined {
		return this.#entries.get(id)?.form;
	}

	/** Calls `listener` with every change; returns the unsubscribe. */
	subscribe(listener: (change: FormChange) => void): () => void {
		this.#listeners.add(listener);
		return () => this.#listeners.delete(listener);
	}

	/**
	 * An answer from the page: `values` (one per question, in question order, as the relay's outside
	 * answers take them) goes through the one answer check; only answers that pass reach the tool,
	 * whose verdict is recorded on the form and returned. Never rejects.
	 */
	async submit(id: string, values: unknown): Promise<FormSubmitReply> {
		const entry = this.#entries.get(id);
		if (!entry) return { ok: false, code: "not_found", reason: "no form open in the terminal has this id (it may have closed)" };
		if (!entry.submit) return { ok: false, code: "read-only", reason: `${entry.form.tool} takes no answer from outside the terminal: answer it there` };
		if (!Array.isArray(values))
			return { ok: false, code: "invalid_payload", reason: "answers must be an array with one answer per question, in question order" };
		const checked = resolveOutsideAnswer(entry.form.questions, values as OutsideAnswerValue[], "web");
		if (!checked.ok) return checked.reply as FormSubmitReply;
		const abandon = new AbortController();
		let outcome: Awaited<ReturnType<SubmitToTool>> | "late";
		try {
			outcome = await firstWithin(entry.submit(checked.answers, abandon.signal), { ms: this.#verdictTimeoutMs, elapsed: () => "late" as const });
		} catch (error) {
			outcome = { ok: false, reason: error instanceof Error ? error.message : String(error) };
		} finally {
			abandon.abort();
		}
		const tool = entry.form.tool;
		const reply: FormSubmitReply =
			outcome === "late"
				? { ok: false, code: "no-verdict", reason: `${tool} did not confirm the answer within ${this.#verdictTimeoutMs} ms; it may still apply it` }
				: outcome.ok
					? { ok: true }
					: { ok: false, code: "refused", reason: `${tool} refused the answer: ${oneLine(outcome.reason) || "no reason given"}` };
		// The form may have ended meanwhile: a verdict on a form gone is not news.
		const current = this.#entries.get(id);
		if (current) {
			current.form = { ...current.form, verdict: { ok: reply.ok, text: reply.ok ? `${tool} took the answer` : reply.reason, at: Date.now() } };
			this.#emit({ type: "form", form: current.form });
		}
		return reply;
	}

	#emit(change: FormChange): void {
		for (const listener of [...this.#listeners]) {
			try {
				listener(change);
			} catch {
				// A stream that fails to write is closed by its own error handler; the others go on.
			}
		}
	}
}

/** The process's forms open elsewhere, created by the first copy that asks. */
export function formsElsewhere(target: object = globalThis): FormsElsewhere {
	return processSlot(target, FORMS_KEY, () => new FormsElsewhere());
}
