/**
 * The answer model every surface and the relay share: how an answer record is built from what
 * the human gave, and when two questions are the same question.
 */
import type { Answer } from "./envelope.ts";
import type { Question } from "./validate.ts";

/** Builds the answer record of a question. */
export function answerOf(question: Question, kind: Answer["kind"], answer: string, values?: string[]): Answer {
	return {
		question: question.question,
		answer,
		kind,
		...(question.id !== undefined ? { id: question.id } : {}),
		...(values ? { values } : {}),
	};
}

/** The answer to a multi-select, values in option order with typed ones last. */
export function multiAnswer(question: Question, picked: ReadonlySet<string>, typed: readonly string[]): Answer {
	const values = [...(question.options ?? []).map((o) => o.label).filter((l) => picked.has(l)), ...typed];
	return answerOf(question, typed.length > 0 ? "other" : "option", values.join(", "), values);
}

/** Identical questions (same kind, text and options) are shown once to the human. */
export function questionKey(question: Question): string {
	return JSON.stringify([question.kind, question.question, question.options?.map((o) => o.label) ?? null, question.multiSelect ?? false]);
}
