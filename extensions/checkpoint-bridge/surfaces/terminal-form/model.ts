/**
 * The terminal form's state and what each key does to it, without any drawing: one tab per
 * question, a Review tab when the request has more than one, a cursor per question, ticked boxes,
 * the "Other" text, a note per question. Every answer is built by the relay's one answer check
 * (`resolveAnswer`, the check outside answers go through), so the form cannot produce an answer
 * an outside answer could not.
 */
import { type OutsideAnswerValue, resolveAnswer } from "../../core/shared/outside-answers.ts";
import type { Answer } from "../../model/answer.ts";
import { type Question, shownLabels } from "../../model/question.ts";

/** One row of a question's list. */
export type Row =
	| { kind: "option"; label: string; description?: string; preview?: string; recommended: boolean }
	| { kind: "other" }
	| { kind: "yes" }
	| { kind: "no" };

/** Where typed keys go: the "Other" row or a free-text question's field, the note field, or nowhere. */
export type Field = "other" | "text" | "note" | undefined;

/** A question's state in the form. */
export interface QuestionState {
	readonly question: Question;
	readonly rows: readonly Row[];
	/** Index of the row under the cursor; -1 for none (a confirm without a recommendation). */
	cursor: number;
	/** Ticked option labels of a multi-select. */
	readonly ticked: Set<string>;
	/** Text of the "Other" row, or of a free-text question. */
	typed: string;
	note: string;
	/** The answer as it stands; `known` when it was given before the form opened (not editable). */
	answer?: Answer;
	readonly known: boolean;
	/** What the answer was built from, so a changed note can rebuild it. */
	value?: OutsideAnswerValue;
}

/** The Review tab's key that accepts every recommendation and submits (FormModel.acceptRecommended). @default "a" */
export const ACCEPT_KEY = "a";

/** What a key did to the form as a whole. */
export type Effect = "submit" | "dismiss" | undefined;

function rowsOf(question: Question): Row[] {
	if (question.kind === "confirm") return [{ kind: "yes" }, { kind: "no" }];
	if (question.kind === "text") return [];
	const rows: Row[] = shownLabels(question).map((label) => {
		const option = question.options!.find((o) => o.label === label)!;
		return {
			kind: "option",
			label,
			recommended: label === question.recommended,
			...(option.description ? { description: option.description } : {}),
			...(option.preview ? { preview: option.preview } : {}),
		};
	});
	if (question.allowOther) rows.push({ kind: "other" });
	return rows;
}

/** A short tab label: the question's header, else its first words. @default 16 characters */
export function tabLabel(question: Question, max = 16): string {
	const text = (question.header ?? question.question).replace(/\s+/g, " ").trim();
	const chars = [...text];
	return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

export class FormModel {
	readonly questions: readonly QuestionState[];
	/** Index of the tab shown: a question, or `questions.length` for Review. */
	tab: number;
	/** The field open for the note, when the note key was pressed. */
	noteOpen = false;
	/** A one-line message for the human (why Enter did nothing), cleared by the next key. */
	message: string | undefined;
	readonly #onAnswer: ((index: number, answer: Answer) => void) | undefined;

	constructor(questions: readonly Question[], known: readonly (Answer | undefined)[] = [], onAnswer?: (index: number, answer: Answer) => void) {
		this.#onAnswer = onAnswer;
		this.questions = questions.map((question, i) => {
			const rows = rowsOf(question);
			// The recommended option is listed first; a confirm, and any relayed dialog's choice, has no row under
			// the cursor until the human moves: a stray Enter must not approve another extension's "Yes".
			const cursor = question.kind === "confirm" || question.dialog !== undefined ? -1 : 0;
			const answer = known[i];
			return {
				question,
				rows,
				cursor,
				ticked: new Set<string>(),
				// A relayed editor's prefill is where its text starts.
				typed: question.initial ?? "",
				note: answer?.note ?? "",
				known: answer !== undefined,
				...(answer ? { answer } : {}),
			};
		});
		const first = this.questions.findIndex((q) => !q.answer);
		this.tab = first === -1 ? this.reviewTab : first;
	}

	/** The Review tab's index; there is none for a single question. */
	get reviewTab(): number {
		return this.questions.length > 1 ? this.questions.length : -1;
	}

	get onReview(): boolean {
		return this.tab === this.reviewTab;
	}

	/** The question on screen, or undefined on Review. */
	get current(): QuestionState | undefined {
		return this.questions[this.tab];
	}

	/** Where typed keys go now. */
	get field(): Field {
		const q = this.current;
		if (!q || q.known) return undefined;
		if (this.noteOpen) return "note";
		if (q.question.kind === "text") return "text";
		return q.rows[q.cursor]?.kind === "other" ? "other" : undefined;
	}

	/** Questions without an answer yet, by index. */
	get unanswered(): number[] {
		return this.questions.flatMap((q, i) => (q.answer ? [] : [i]));
	}

	/** Answers by question index. */
	get answers(): (Answer | undefined)[] {
		return this.questions.map((q) => q.answer);
	}

	move(delta: 1 | -1): void {
		const q = this.current;
		if (!q || q.known || this.noteOpen || q.rows.length === 0) return;
		q.cursor = q.cursor === -1 ? (delta === 1 ? 0 : q.rows.length - 1) : Math.min(q.rows.length - 1, Math.max(0, q.cursor + delta));
	}

	/** Next or previous tab; Review is the last. */
	turn(delta: 1 | -1): void {
		this.noteOpen = false;
		const last = this.reviewTab === -1 ? this.questions.length - 1 : this.reviewTab;
		this.tab = Math.min(last, Math.max(0, this.tab + delta));
	}

	/** Space: ticks or unticks the option under the cursor of a multi-select. */
	toggle(): void {
		const q = this.current;
		const row = q?.rows[q.cursor];
		if (!q || q.known || !q.question.multiSelect || row?.kind !== "option") return;
		if (q.ticked.has(row.label)) q.ticked.delete(row.label);
		else q.ticked.add(row.label);
		this.#updateMulti(q);
	}

	/** The text of the "Other" row or of a free-text question changed. */
	setTyped(text: string): void {
		const q = this.current;
		if (!q || q.known) return;
		q.typed = text;
		if (q.question.multiSelect) this.#updateMulti(q);
		else if (q.question.kind === "text") this.#answer(q, text.trim() === "" ? undefined : { answer: text });
	}

	/** Whether the question on screen takes a note: not when answered before, nor a relayed dialog, whose extension has no place for one. */
	get takesNote(): boolean {
		const q = this.current;
		return q !== undefined && !q.known && q.question.dialog === undefined;
	}

	/** Opens the note field of the question on screen, where its answer can carry one. */
	openNote(): void {
		if (this.takesNote) this.noteOpen = true;
	}

	/** Closes the note field; `note` is kept unless undefined (the human backed out). */
	closeNote(note: string | undefined): void {
		const q = this.current;
		this.noteOpen = false;
		if (!q || note === undefined) return;
		q.note = note.trim();
		if (q.value !== undefined) this.#answer(q, q.value);
	}

	/** Enter: picks or confirms the question on screen and moves on, or submits from Review. */
	enter(): Effect {
		if (this.onReview) {
			const open = this.unanswered;
			if (open.length === 0) return "submit";
			this.message = `Not answered yet: ${open.map((i) => `${i + 1}. ${tabLabel(this.questions[i]!.question, 24)}`).join(", ")}`;
			return undefined;
		}
		const q = this.current;
		if (!q) return undefined;
		if (q.known) return this.#advance();
		const row = q.rows[q.cursor];
		const { question } = q;
		let value: OutsideAnswerValue | undefined;
		if (question.kind === "text") value = { answer: q.typed };
		else if (question.kind === "confirm") {
			if (!row) this.message = "Choose Yes or No (↑/↓), then Enter.";
			else value = { answer: row.kind === "yes" ? "yes" : "no" };
		} else if (question.multiSelect) {
			// Ticks count as they are made; Enter only confirms them.
			if (q.answer) return this.#advance();
			this.message = "Tick at least one option with Space (or type one on the Other row), then Enter.";
		} else if (!row) this.message = "Choose one (↑/↓), then Enter.";
		else if (row.kind === "other") {
			if (q.typed.trim() === "") this.message = "Type your answer on the Other row, then Enter.";
			else value = { answer: q.typed.trim() };
		} else if (row.kind === "option") value = { answer: row.label };
		if (value === undefined || !this.#answer(q, value)) return undefined;
		return this.#advance();
	}

	/**
	 * The Review key: every unanswered question that has a recommended option gets it (the answer
	 * marked `recommended`), then the form submits; when questions without a recommendation are
	 * still open it stays, naming them.
	 */
	acceptRecommended(): Effect {
		if (!this.onReview) return undefined;
		for (const q of this.questions) {
			const rec = q.question.recommended;
			if (q.answer || q.known || rec === undefined) continue;
			if (q.question.multiSelect) q.ticked.add(rec);
			// The cursor on the option taken, so going back to the question shows it picked.
			q.cursor = Math.max(
				0,
				q.rows.findIndex((row) => row.kind === "option" && row.label === rec),
			);
			this.#answer(q, q.question.multiSelect ? { values: [rec], recommended: true } : { answer: rec, recommended: true });
		}
		const open = this.unanswered;
		if (open.length === 0) return "submit";
		this.message = `No recommendation to accept for: ${open.map((i) => `${i + 1}. ${tabLabel(this.questions[i]!.question, 24)}`).join(", ")}; answer ${open.length === 1 ? "it" : "them"}, then Enter`;
		return undefined;
	}

	/** After an answer: the next unanswered question, else Review, else (a single question) submit. */
	#advance(): Effect {
		if (this.reviewTab === -1) return this.unanswered.length === 0 ? "submit" : undefined;
		const n = this.questions.length;
		for (let step = 1; step < n; step++) {
			const i = (this.tab + step) % n;
			if (!this.questions[i]!.answer) {
				this.tab = i;
				return undefined;
			}
		}
		this.tab = this.reviewTab;
		return undefined;
	}

	#updateMulti(q: QuestionState): void {
		const typed = q.typed.trim();
		const labels = q.question.options!.map((o) => o.label);
		const values = [...labels.filter((l) => q.ticked.has(l)), ...(typed !== "" && !q.ticked.has(typed) ? [typed] : [])];
		this.#answer(q, values.length > 0 ? { values } : undefined);
	}

	/** Builds the answer through the relay's answer check; a refused value keeps the old answer and says why. */
	#answer(q: QuestionState, value: OutsideAnswerValue | undefined): boolean {
		const index = this.questions.indexOf(q);
		if (value === undefined) {
			delete q.value;
			delete q.answer;
			return false;
		}
		const withNote = q.note === "" ? value : { ...(typeof value === "object" && !Array.isArray(value) ? value : { answer: value as string }), note: q.note };
		const resolved = resolveAnswer(q.question, withNote, `question ${index + 1}`);
		if (!resolved.ok) {
			this.message = resolved.reason;
			return false;
		}
		q.value = value;
		q.answer = resolved.answer;
		this.#onAnswer?.(index, resolved.answer);
		return true;
	}
}
