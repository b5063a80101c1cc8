/**
 * How the terminal form looks: lines for a width, in the current theme. Every line is fitted to
 * the width with pi-tui's own width handling, so nothing is drawn wider than the terminal.
 */
import { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { OTHER_ENTRY } from "../dialogs.ts";
import { ACCEPT_KEY, type FormModel, type QuestionState, type Row, tabLabel } from "./model.ts";

/** The slice of pi's Theme the form uses. */
export interface FormTheme {
	fg(color: "accent" | "borderAccent" | "muted" | "dim" | "success" | "warning" | "error" | "text", text: string): string;
	bold(text: string): string;
}

/** Terminal width from which a preview is shown beside the list instead of below it. @default 100 */
const PREVIEW_BESIDE_MIN_WIDTH = 100;
/** Preview rows shown at most; the rest is counted on a last row. @default 16 */
const PREVIEW_ROWS = 16;
/** Rows of a list shown at once; a longer list (a relayed select may have hundreds) scrolls with the cursor. @default 12 */
const LIST_ROWS = 12;
/** Rows of a question's title shown at most (a relayed dialog's title may be long); the rest is counted on a last row. @default 24 */
const TITLE_ROWS = 24;
/** Time left under which the countdown turns to a warning. @default 30000 */
const COUNTDOWN_WARNING_MS = 30_000;

/** What the form needs to draw besides its model. */
export interface FormView {
	asker: string;
	/** Milliseconds left before the form closes; Infinity when it has no time limit. */
	remainingMs: number;
	/** The time left as the web page says it too (model/time-left.ts): `question 3:00 left · call 4:59`. */
	timeLeft: string;
	/** The text field being typed in, drawn by its component at `width` (one line). */
	field(width: number): string;
	/** The form does not take keys yet (just opened): the key help starts with "…". @default false */
	keysLater?: boolean;
}

/** Text from an asker, safe to draw: no escape sequences or control characters; tabs as spaces. */
function plain(text: string): string {
	return text
		.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?/g, "")
		.replace(/\t/g, "  ")
		.replace(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/g, "");
}

const wrap = (text: string, width: number, indent = "") =>
	plain(text)
		.split("\n")
		.flatMap((line) => wrapTextWithAnsi(line, Math.max(1, width - visibleWidth(indent))).map((row) => indent + row));

const pad = (line: string, width: number) => {
	const fitted = truncateToWidth(line, width);
	return fitted + " ".repeat(Math.max(0, width - visibleWidth(fitted)));
};

/** The mark in front of a row: radio, box, or nothing. */
function mark(q: QuestionState, row: Row, theme: FormTheme): string {
	if (row.kind === "other") {
		if (q.question.multiSelect) return q.typed.trim() ? theme.fg("success", "☑ ") : "☐ ";
		return q.answer?.kind === "other" ? theme.fg("success", "● ") : "○ ";
	}
	if (q.question.multiSelect && row.kind === "option") return q.ticked.has(row.label) ? theme.fg("success", "☑ ") : "☐ ";
	const chosen = row.kind === "option" ? q.answer?.kind === "option" && q.answer.answer === row.label : q.answer?.answer === row.kind;
	return chosen ? theme.fg("success", "● ") : "○ ";
}

function rowLines(model: FormModel, q: QuestionState, view: FormView, theme: FormTheme, width: number): string[] {
	if (q.rows.length <= LIST_ROWS) return rowsFrom(model, q, view, theme, width, 0, q.rows.length);
	// A window around the cursor, with what lies above and below it counted.
	const start = Math.min(q.rows.length - LIST_ROWS, Math.max(0, q.cursor - Math.floor(LIST_ROWS / 2)));
	const end = start + LIST_ROWS;
	const more = (n: number, arrow: string) => (n > 0 ? [theme.fg("dim", truncateToWidth(`  ${arrow} ${n} more`, width))] : []);
	return [...more(start, "↑"), ...rowsFrom(model, q, view, theme, width, start, end), ...more(q.rows.length - end, "↓")];
}

function rowsFrom(model: FormModel, q: QuestionState, view: FormView, theme: FormTheme, width: number, start: number, end: number): string[] {
	return q.rows.slice(start, end).map((row, k) => {
		const i = start + k;
		const here = i === q.cursor && !q.known;
		const pointer = here ? theme.fg("accent", "→ ") : "  ";
		const lead = pointer + mark(q, row, theme);
		let body: string;
		if (row.kind === "other") {
			const label = "Other: ";
			if (here && model.field === "other") body = label + view.field(Math.max(1, width - visibleWidth(lead) - label.length));
			else body = q.typed ? label + plain(q.typed) : theme.fg("dim", OTHER_ENTRY);
		} else if (row.kind === "option") {
			body =
				(here ? theme.bold(plain(row.label)) : plain(row.label)) +
				(row.recommended ? theme.fg("success", " (recommended)") : "") +
				(row.description ? theme.fg("muted", ` — ${plain(row.description)}`) : "");
		} else body = row.kind === "yes" ? "Yes" : "No";
		return truncateToWidth(lead + body, width);
	});
}

/** A question's title, wrapped: a relayed dialog's keeps its line breaks, and a long one is cut at TITLE_ROWS rows with a count of the rest. */
function titleLines(text: string, width: number): string[] {
	const rows = wrap(text, width, " ");
	if (rows.length <= TITLE_ROWS) return rows;
	return [...rows.slice(0, TITLE_ROWS - 1), ` … ${rows.length - TITLE_ROWS + 1} more lines`];
}

function previewLines(text: string, width: number, theme: FormTheme): string[] {
	const rows = wrap(text, width);
	const shown = rows.slice(0, PREVIEW_ROWS);
	if (rows.length > shown.length) shown.push(theme.fg("dim", `… ${rows.length - shown.length} more lines`));
	return shown.map((row) => truncateToWidth(row, width));
}

function hint(model: FormModel, q: QuestionState | undefined, single: boolean): string {
	const turn = single ? [] : ["Tab/→ next", "⇧Tab/← back"];
	if (model.noteOpen) return "type a note · Enter keep · Esc back";
	if (!q) {
		// Named only while it would fill something: an open question with a recommended option.
		const accept = model.questions.some((s) => !s.answer && s.question.recommended !== undefined) ? [`${ACCEPT_KEY} accept recommended & submit`] : [];
		return ["Enter submit", ...accept, "⇧Tab/← back", "Esc dismiss"].join(" · ");
	}
	if (q.known) return [...turn, "Esc dismiss"].join(" · ");
	const keys = ["↑↓ move"];
	if (q.question.kind === "text") keys.splice(0, 1, "type your answer", "Enter confirm");
	else if (q.question.multiSelect) keys.push(model.field === "other" ? "type a value" : "Space tick", "Enter confirm");
	else keys.push(model.field === "other" ? "type, Enter pick" : "Enter pick");
	return [...keys, ...turn, ...(model.takesNote ? ["ctrl+n note"] : []), "Esc dismiss"].join(" · ");
}

function questionBody(model: FormModel, q: QuestionState, view: FormView, theme: FormTheme, width: number): string[] {
	const lines = titleLines(q.question.question, width).map((l) => theme.bold(l));
	if (q.question.details) lines.push(...wrap(q.question.details, width, " ").map((l) => theme.fg("muted", l)));
	lines.push("");
	if (q.known) {
		const from =
			q.answer?.source === "shared"
				? ` (answered for ${q.answer.sharedWith?.join(", ") ?? "another asker"})`
				: q.answer?.source === "carried"
					? " (carried from before the restart)"
					: " (answered before)";
		lines.push(` ${theme.fg("success", "✓")} ${plain(q.answer?.answer ?? "")}${theme.fg("dim", from)}`);
		return lines;
	}
	if (q.question.kind === "text") {
		const lead = " > ";
		lines.push(lead + (model.field === "text" ? view.field(Math.max(1, width - lead.length)) : plain(q.typed)));
		if (q.question.placeholder && q.typed === "") lines.push(theme.fg("dim", `   ${plain(q.question.placeholder)}`));
	} else {
		const row = q.rows[q.cursor];
		const shown = row?.kind === "option" && row.preview ? { label: plain(row.label), preview: row.preview } : undefined;
		if (shown && width >= PREVIEW_BESIDE_MIN_WIDTH) {
			const left = Math.floor((width - 3) / 2);
			const right = width - left - 3;
			const list = rowLines(model, q, view, theme, left);
			const side = [theme.fg("dim", truncateToWidth(`preview: ${shown.label}`, right)), ...previewLines(shown.preview, right, theme)];
			for (let i = 0; i < Math.max(list.length, side.length); i++) lines.push(`${pad(list[i] ?? "", left)}${theme.fg("dim", " │ ")}${side[i] ?? ""}`);
		} else {
			lines.push(...rowLines(model, q, view, theme, width));
			if (shown) {
				const ruler = `─ preview: ${shown.label} `;
				lines.push(theme.fg("dim", ruler + "─".repeat(Math.max(0, width - visibleWidth(ruler)))));
				lines.push(...previewLines(shown.preview, Math.max(1, width - 2), theme).map((l) => `  ${l}`));
			}
		}
	}
	if (model.noteOpen) lines.push(` note: ${view.field(Math.max(1, width - 7))}`);
	else if (q.note) lines.push(...wrap(`note: ${q.note}`, width, " ").map((l) => theme.fg("muted", l)));
	return lines;
}

function review(model: FormModel, theme: FormTheme, width: number): string[] {
	const lines = [theme.bold(" Review"), ""];
	model.questions.forEach((q, i) => {
		const head = ` ${i + 1}. ${plain(tabLabel(q.question, 40))} → `;
		lines.push(q.answer ? `${head}${theme.fg("success", plain(q.answer.answer))}` : `${head}${theme.fg("warning", "not answered")}`);
		if (q.answer?.note) lines.push(...wrap(`note: ${q.answer.note}`, width, "      ").map((l) => theme.fg("muted", l)));
	});
	return lines;
}

function tabs(model: FormModel, theme: FormTheme): string {
	const labels = model.questions.map((q, i) => {
		const text = `${q.answer ? "✓" : "☐"} ${plain(tabLabel(q.question))}`;
		return i === model.tab ? theme.fg("accent", theme.bold(`[${text}]`)) : q.answer ? theme.fg("success", ` ${text} `) : ` ${text} `;
	});
	const last = model.onReview ? theme.fg("accent", theme.bold("[Review]")) : " Review ";
	return ` ${[...labels, last].join(theme.fg("dim", "│"))}`;
}

/** The whole form, every line at most `width` columns wide. */
export function renderForm(model: FormModel, view: FormView, theme: FormTheme, width: number): string[] {
	const w = Math.max(1, width);
	const n = model.questions.length;
	const left = view.timeLeft;
	const header = ` ${theme.fg("accent", theme.bold(`[${plain(view.asker)}]`))} · ${theme.fg(view.remainingMs < COUNTDOWN_WARNING_MS ? "warning" : "muted", left)} · ${n === 1 ? "1 question" : `${n} questions`}`;
	const lines = [theme.fg("borderAccent", "─".repeat(w)), header];
	if (n > 1) lines.push(...wrapTextWithAnsi(tabs(model, theme), w));
	lines.push("");
	const q = model.current;
	lines.push(...(q ? questionBody(model, q, view, theme, w) : review(model, theme, w)));
	lines.push("");
	if (model.message) lines.push(...wrap(model.message, w, " ").map((l) => theme.fg("warning", l)));
	const keys = hint(model, q, n === 1);
	lines.push(...wrap(view.keysLater ? `… ${keys}` : keys, w, " ").map((l) => theme.fg("dim", l)));
	lines.push(theme.fg("borderAccent", "─".repeat(w)));
	return lines.map((line) => truncateToWidth(line, w, "…"));
}
