/**
 * How a question is shown with pi's dialog primitives (select and input, which every pi UI has:
 * the TUI and RPC clients), and how what the human picked becomes an answer.
 *
 * - free text: `input`
 * - confirm: `select` of Yes / No (pi's `confirm` cannot tell "no" from a dismissed dialog)
 * - choice: `select` of the options in the one shown order (model/question.ts: the recommended
 *   one first, marked), descriptions after a dash, and "Other (type your own)" last when allowed, which leads to an `input`
 * - multi-select: a `select` loop; each pick toggles an option (☐/☑), "Other" adds a typed value,
 *   and "Done" ends it. An RPC client may also send an option's bare label to toggle it.
 */
import { type Question, shownLabels } from "../model/question.ts";

export const OTHER_ENTRY = "Other (type your own)";
export const YES = "Yes";
export const NO = "No";
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
export function dialogTitle(asker: string, index: number, total: number, question: Pick<Question, "question" | "header" | "details" | "options">): string {
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
export const DONE = "\u0000done";
const doneEntry = (count: number) => `Done (${count} selected)`;

/** Maps what a select returned to the label behind it: the entry itself, or an option's bare label (RPC clients may send that). */
export function entryValue(entries: ReadonlyMap<string, string>, value: string): string | undefined {
	return entries.get(value) ?? (new Set(entries.values()).has(value) && value !== DONE ? value : undefined);
}
