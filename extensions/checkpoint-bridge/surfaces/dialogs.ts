/**
 * The surface of pi's own dialogs: how a question is shown with pi's dialog primitives (select and
 * input, which every pi UI has: the TUI and RPC clients), and how what the human picked becomes an answer.
 *
 * - free text: `input`
 * - confirm: `select` of Yes / No (pi's `confirm` cannot tell "no" from a dismissed dialog)
 * - choice: `select` of the options in the one shown order (model/question.ts: the recommended
 *   one first, marked), descriptions after a dash, and "Other (type your own)" last when allowed, which leads to an `input`
 * - multi-select: a `select` loop; each pick toggles an option (☐/☑), "Other" adds a typed value,
 *   and "Done" ends it. An RPC client may also send an option's bare label to toggle it.
 *
 * Each question is answered, or undefined when the human dismissed it or its time ran out. Each
 * dialog is opened with the signal; a dialog that ignores the signal is abandoned when it aborts.
 * A pick that was not offered is refused and asked again.
 */

import type { HostUI, QuestionPrompt, Surface } from "../core/answering/surface.ts";
import { NO_LIMIT } from "../core/shared/config.ts";
import type { Answer } from "../model/answer.ts";
import { answerOf, multiAnswer } from "../model/answer-check.ts";
import { type Question, shownLabels } from "../model/question.ts";

export const OTHER_ENTRY = "Other (type your own)";
const YES = "Yes";
const NO = "No";
const RECOMMENDED_MARK = " (recommended)";
const CHECKED = "☑ ";
const UNCHECKED = "☐ ";

/** Characters of one option's preview folded into a dialog title; the rest is cut with a visible mark. @default 300 */
export const PREVIEW_IN_TITLE = 300;

/** An option's preview as a dialog title carries it: under a `── preview: label ──` line, cut to PREVIEW_IN_TITLE with a mark that says how much is left out. */
function foldedPreview(label: string, preview: string): string {
	const chars = [...preview];
	const cut =
		chars.length > PREVIEW_IN_TITLE
			? `${chars.slice(0, PREVIEW_IN_TITLE).join("")}… [preview cut: ${chars.length - PREVIEW_IN_TITLE} more characters]`
			: preview;
	return `── preview: ${label} ──\n${cut}`;
}

/** `[asker] (i/n) header: question`, then the details and the options' previews on their own lines; the position only for batches of more than one. */
function dialogTitle(asker: string, index: number, total: number, question: Pick<Question, "question" | "header" | "details" | "options">): string {
	const position = total > 1 ? `(${index + 1}/${total}) ` : "";
	const header = question.header ? `${question.header}: ` : "";
	let title = `[${asker}] ${position}${header}${question.question}`;
	if (question.details) title += `\n${question.details}`;
	for (const option of question.options ?? []) if (option.preview) title += `\n${foldedPreview(option.label, option.preview)}`;
	return title;
}

/** The select entries of a single choice, and the option label behind each. */
export function choiceEntries(question: Question): Map<string, string> {
	const entries = new Map<string, string>();
	for (const label of shownLabels(question)) {
		const description = question.options?.find((o) => o.label === label)?.description;
		entries.set(`${label}${label === question.recommended ? RECOMMENDED_MARK : ""}${description ? ` — ${description}` : ""}`, label);
	}
	return entries;
}

/** The select entries of one round of a multi-select: each option with its box, Other, Done. */
export function multiSelectEntries(question: Question, picked: ReadonlySet<string>, typed: readonly string[]): Map<string, string> {
	const entries = new Map<string, string>();
	for (const [entry, label] of choiceEntries(question)) entries.set(`${picked.has(label) ? CHECKED : UNCHECKED}${entry}`, label);
	for (const value of typed) entries.set(`${CHECKED}${value} (typed)`, value);
	if (question.allowOther) entries.set(OTHER_ENTRY, OTHER_ENTRY);
	entries.set(doneEntry(picked.size + typed.length), DONE);
	return entries;
}

/** Sentinel for the multi-select's Done entry. */
const DONE = "\u0000done";
const doneEntry = (count: number) => `Done (${count} selected)`;

/** Maps what a select returned to the label behind it: the entry itself, or an option's bare label (RPC clients may send that). */
function entryValue(entries: ReadonlyMap<string, string>, value: string): string | undefined {
	return entries.get(value) ?? (new Set(entries.values()).has(value) && value !== DONE ? value : undefined);
}

/** The dialog primitives the host needs; pi's `ctx.ui` has them in the TUI and in RPC mode. */
export interface DialogUI extends HostUI {
	select(title: string, options: string[], opts?: { signal?: AbortSignal; timeout?: number }): Promise<string | undefined>;
	input(title: string, placeholder?: string, opts?: { signal?: AbortSignal; timeout?: number }): Promise<string | undefined>;
	/** pi's multi-line editor, for a relayed editor dialog; it takes no signal, so an ended request abandons it. @default input instead */
	editor?(title: string, prefill?: string): Promise<string | undefined>;
}

/**
 * Resolves with the dialog's text (checked to be text), or with undefined as soon as `signal` aborts:
 * a UI that ignores the signal cannot hold the queue.
 */
function untilAborted(dialog: Promise<unknown>, signal: AbortSignal): Promise<string | undefined> {
	if (signal.aborted) return Promise.resolve(undefined);
	return new Promise((resolve, reject) => {
		const onAbort = () => resolve(undefined);
		signal.addEventListener("abort", onAbort, { once: true });
		dialog.then(
			(value) => {
				signal.removeEventListener("abort", onAbort);
				try {
					resolve(checkText(value));
				} catch (error) {
					reject(error);
				}
			},
			(error: unknown) => {
				signal.removeEventListener("abort", onAbort);
				reject(error);
			},
		);
	});
}

interface AskContext {
	ui: DialogUI;
	title: string;
	/** Aborts when the question's time is up or its call ended. */
	signal: AbortSignal;
	/** Epoch ms by which the question must be answered; 0 (NO_LIMIT): no time limit. */
	deadline: number;
	/** Called each time a dialog opens, to count what the human saw. */
	onDialog?: () => void;
}

/** Answers not offered, in a row, after which a question fails with `error` instead of being asked again. @default 10 */
export const MAX_REFUSALS = 10;

/** Tells the human why an answer was refused; a failing notify must not turn a refusal into an error. */
function warn(ctx: AskContext, message: string): void {
	try {
		ctx.ui.notify(message, "warning");
	} catch {
		// The dialog is asked again either way.
	}
}

function checkText(value: unknown): string | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== "string") throw new TypeError(`the host UI returned ${typeof value} instead of text`);
	return value;
}

// No timeout for a question without a time limit: pi then shows (and an RPC client gets) none.
const options = (ctx: AskContext) =>
	ctx.deadline === NO_LIMIT ? { signal: ctx.signal } : { signal: ctx.signal, timeout: Math.max(1, ctx.deadline - Date.now()) };

function select(ctx: AskContext, entries: string[]): Promise<string | undefined> {
	ctx.onDialog?.();
	return untilAborted(ctx.ui.select(ctx.title, entries, options(ctx)), ctx.signal);
}

function input(ctx: AskContext, title: string, placeholder?: string): Promise<string | undefined> {
	ctx.onDialog?.();
	return untilAborted(ctx.ui.input(title, placeholder, options(ctx)), ctx.signal);
}

/**
 * Selects until the pick is one of `entries` (mapped to its value), or the dialog closes. A chain,
 * not an async loop: a pick is usually taken at once, and every question asked comes through here.
 */
function pick(ctx: AskContext, entries: ReadonlyMap<string, string>, refusals = 0): Promise<string | undefined> {
	return select(ctx, [...entries.keys()]).then((value) => {
		if (value === undefined || ctx.signal.aborted) return undefined;
		const picked = entryValue(entries, value);
		if (picked !== undefined) return picked;
		// An RPC client can send any string; an answer that was not offered is never passed on.
		warn(ctx, `checkpoint-bridge: "${value}" is not one of the offered options; please choose again.`);
		// A UI that answers instantly and wrongly forever would spin without end and starve the process.
		if (refusals + 1 >= MAX_REFUSALS) throw new Error(`the host UI returned ${MAX_REFUSALS} answers in a row that were not offered`);
		return pick(ctx, entries, refusals + 1);
	});
}

async function typeOther(ctx: AskContext, question: Question): Promise<string | undefined> {
	for (;;) {
		const [first, ...details] = ctx.title.split("\n");
		const value = await input(ctx, [`${first} — type your own answer`, ...details].join("\n"), question.placeholder);
		if (value === undefined || ctx.signal.aborted) return undefined;
		if (value.trim() !== "") return value.trim();
		warn(ctx, "checkpoint-bridge: an empty answer is not an answer; type one or dismiss the dialog.");
	}
}

const isOffered = (question: Question, value: string) => question.options?.some((o) => o.label === value) ?? false;

function askChoice(ctx: AskContext, question: Question): Promise<Answer | undefined> {
	const entries = choiceEntries(question);
	if (question.allowOther) entries.set(OTHER_ENTRY, OTHER_ENTRY);
	return pick(ctx, entries).then((label) => {
		if (label === undefined) return undefined;
		return label === OTHER_ENTRY ? askOther(ctx, question) : answerOf(question, "option", label);
	});
}

/** "Other" was picked: the typed answer. */
async function askOther(ctx: AskContext, question: Question): Promise<Answer | undefined> {
	const typed = await typeOther(ctx, question);
	if (typed === undefined) return undefined;
	// Typing an offered label is picking that option.
	return isOffered(question, typed) ? answerOf(question, "option", typed) : answerOf(question, "other", typed);
}

async function askMulti(ctx: AskContext, question: Question): Promise<Answer | undefined> {
	const picked = new Set<string>();
	const typed: string[] = [];
	for (;;) {
		const value = await pick(ctx, multiSelectEntries(question, picked, typed));
		if (value === undefined) return undefined;
		if (value === DONE) {
			if (picked.size + typed.length > 0) return multiAnswer(question, picked, typed);
			warn(ctx, "checkpoint-bridge: pick at least one option, then Done.");
		} else if (value === OTHER_ENTRY) {
			const own = await typeOther(ctx, question);
			if (own === undefined) return undefined;
			// Typing an offered label picks that option; a value typed twice counts once.
			if (isOffered(question, own)) picked.add(own);
			else if (!typed.includes(own)) typed.push(own);
		} else if (typed.includes(value)) typed.splice(typed.indexOf(value), 1);
		else if (picked.has(value)) picked.delete(value);
		else picked.add(value);
	}
}

/** One question, answered or not. Rejects when the UI fails. */
function askQuestion(ctx: AskContext, question: Question): Promise<Answer | undefined> {
	switch (question.kind) {
		case "text":
			return askText(ctx, question);
		case "confirm":
			return askConfirm(ctx, question);
		case "choice":
			return question.multiSelect ? askMulti(ctx, question) : askChoice(ctx, question);
	}
}

async function askText(ctx: AskContext, question: Question): Promise<Answer | undefined> {
	const value =
		question.dialog === "editor" && ctx.ui.editor
			? (ctx.onDialog?.(), await untilAborted(ctx.ui.editor(ctx.title, question.initial), ctx.signal))
			: await input(ctx, ctx.title, question.placeholder);
	return value === undefined || ctx.signal.aborted ? undefined : answerOf(question, "text", value);
}

/** The entries of a yes/no question: the same for every one (pick only reads them). */
const YES_NO: ReadonlyMap<string, string> = new Map([
	[YES, YES],
	[NO, NO],
]);

function askConfirm(ctx: AskContext, question: Question): Promise<Answer | undefined> {
	return pick(ctx, YES_NO).then((value) => (value === undefined ? undefined : answerOf(question, "confirm", value === YES ? "yes" : "no")));
}

/** The surface of pi's own dialogs: each question a `select` or `input` titled with who asks; `place` says where they are (an RPC client's). */
export function dialogSurface(ui: DialogUI, place?: Surface["place"]): Surface {
	return {
		...(place ? { place } : {}),
		ask: (prompt: QuestionPrompt, question: Question) => {
			const ctx: AskContext = { ui, title: dialogTitle(prompt.asker, prompt.index, prompt.total, question), signal: prompt.signal, deadline: prompt.deadline };
			if (prompt.onDialog) ctx.onDialog = prompt.onDialog;
			try {
				return askQuestion(ctx, question);
			} catch (error) {
				// A UI that throws instead of rejecting fails the question the same way.
				return Promise.reject(error);
			}
		},
	};
}
