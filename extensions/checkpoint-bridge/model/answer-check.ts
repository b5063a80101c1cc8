/**
 * The answer model every surface and the relay share: how an answer record is built from what
 * the human gave, whether a record fits its question (the one answer check: the asker, the host's
 * dialogs and outside answers all use `answerProblem`), and when two questions are the same question.
 */
import type { Answer } from "./answer.ts";
import { LIMITS } from "./limits.ts";
import type { Option, Question } from "./question.ts";

/** Builds the answer record of a question. */
export function answerOf(question: Question, kind: Answer["kind"], answer: string, values?: string[]): Answer {
	// Field by field, in this order (no spreads: every answer given in a dialog is built here).
	const record: Answer = { question: question.question, answer, kind };
	if (question.id !== undefined) record.id = question.id;
	if (values) record.values = values;
	return record;
}

/**
 * A plain copy of an answer record with arrays of its own, `source` set when given: nothing in it is
 * shared with the original (every field of an answer is a string or an array of strings).
 */
export function copyAnswer(answer: Answer, source: Answer["source"] = answer.source): Answer {
	const copy: Answer = { ...answer };
	if (answer.values !== undefined) copy.values = [...answer.values];
	if (answer.sharedWith !== undefined) copy.sharedWith = [...answer.sharedWith];
	if (source !== undefined) copy.source = source;
	return copy;
}

/** The answer to a multi-select, values in option order with typed ones last. */
export function multiAnswer(question: Question, picked: ReadonlySet<string>, typed: readonly string[]): Answer {
	const values = [...(question.options ?? []).map((o) => o.label).filter((l) => picked.has(l)), ...typed];
	return answerOf(question, typed.length > 0 ? "other" : "option", values.join(", "), values);
}

/** Identical questions (same kind, text and options) are shown once to the human. */
export function questionKey(question: Question): string {
	const key: unknown[] = [question.kind, question.question, question.options?.map((o) => o.label) ?? null, question.multiSelect ?? false];
	// A child's screen is its own (its token): never the same question as another child's.
	if (question.dialog === "custom") key.push(question.id);
	return JSON.stringify(key);
}

const NO_OPTIONS: readonly Option[] = Object.freeze([]);

/** Whether `label` is one of `options`' labels (a loop: no closure per check). */
function hasOption(options: readonly Option[], label: string): boolean {
	for (let i = 0; i < options.length; i++) if (options[i]!.label === label) return true;
	return false;
}

/**
 * What is wrong with `answer` as the answer to `question`, or undefined when it fits: it names the
 * question and its id, its kind is the question's, its value was offered (an option label, typed
 * text only where "Other" is allowed, yes/no for a confirm), and its note (if any) is text within
 * LIMITS.note. The one answer check.
 */
export function answerProblem(question: Question, answer: Answer): string | undefined {
	if (typeof answer !== "object" || answer === null) return "is not an answer record";
	if (answer.question !== question.question) return `answers ${JSON.stringify(answer.question)}, which was not asked`;
	if (answer.id !== question.id) return `carries id ${JSON.stringify(answer.id)}, the question has ${JSON.stringify(question.id)}`;
	if (typeof answer.answer !== "string") return "has no answer text";
	// The extension's select, confirm or input has no place for a note: one would be dropped unseen.
	if (answer.note !== undefined && question.dialog !== undefined) return "carries a note, which a relayed dialog's answer cannot pass on";
	// A child's own screen is answered where it is drawn: the host's terminal.
	if (question.dialog === "custom" && answer.source !== "dialog") return "answers a child's own screen, which is answered in the host's terminal only";
	if (answer.note !== undefined && (typeof answer.note !== "string" || answer.note.length > LIMITS.note))
		return `note must be text of at most ${LIMITS.note} characters`;
	const values = answer.values;
	if (values !== undefined && !(question.kind === "choice" && question.multiSelect)) return "has several values, but the question takes one";
	if (answer.recommended !== undefined) {
		if (answer.recommended !== true) return "recommended must be true or left out";
		// Marked as the recommendation only when it is exactly that: the recommended option and nothing else.
		const isRecommendation = question.recommended !== undefined && answer.kind === "option" && answer.answer === question.recommended;
		if (!isRecommendation || (values !== undefined && values.length !== 1)) return "is marked recommended, but is not the question's recommended option";
	}
	switch (question.kind) {
		case "text":
			return answer.kind === "text" ? undefined : `is of kind ${JSON.stringify(answer.kind)}, the question takes text`;
		case "confirm":
			if (answer.kind !== "confirm") return `is of kind ${JSON.stringify(answer.kind)}, the question takes yes or no`;
			return answer.answer === "yes" || answer.answer === "no" ? undefined : "must be yes or no";
		case "choice": {
			if (answer.kind !== "option" && answer.kind !== "other") return `is of kind ${JSON.stringify(answer.kind)}, the question takes a choice`;
			// At most 12 options: a scan costs less than a Set, and this runs for every reply an asker takes.
			const options = question.options ?? NO_OPTIONS;
			if (!question.multiSelect) {
				const offered = hasOption(options, answer.answer);
				if (!offered && (question.allowOther !== true || answer.answer.trim() === "")) return `${JSON.stringify(answer.answer)} was not offered`;
				return offered === (answer.kind === "option")
					? undefined
					: `is of kind ${JSON.stringify(answer.kind)}, but ${offered ? "every value is an option" : "a value was typed"}`;
			}
			return multiSelectProblem(question, answer, options);
		}
	}
}

/** answerProblem's check of a multi-select's values: apart, so its closures cost the other kinds nothing (every reply is checked). */
function multiSelectProblem(question: Question, answer: Answer, options: readonly Option[]): string | undefined {
	const isOption = (v: string) => hasOption(options, v);
	const picked = answer.values;
	if (!Array.isArray(picked) || picked.length === 0 || !picked.every((v) => typeof v === "string")) return "must be a non-empty array of option labels";
	if (new Set(picked).size !== picked.length) return "repeats a value";
	const bad = picked.find((v) => !isOption(v) && (question.allowOther !== true || v.trim() === ""));
	if (bad !== undefined) return `${JSON.stringify(bad)} was not offered`;
	if (answer.answer !== picked.join(", ")) return "its text is not its values joined";
	const typed = picked.some((v) => !isOption(v));
	return typed === (answer.kind === "other")
		? undefined
		: `is of kind ${JSON.stringify(answer.kind)}, but ${typed ? "a value was typed" : "every value is an option"}`;
}
