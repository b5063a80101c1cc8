/**
 * The envelope as pi takes a tool result: JSON text for the model, and the same value as `details`.
 * Each answer that is exactly its question's recommended option says so (`recommended: true`),
 * however the human took it: picked by hand, or with every recommendation at once.
 */
import type { Answer } from "../model/answer.ts";
import type { Question } from "../model/question.ts";
import type { Envelope } from "../model/result.ts";

/** The question `answer` answers: by its id when it has one, else by its text. */
const askedFor = (answer: Answer, asked: readonly Question[]) =>
	asked.find((q) => (answer.id !== undefined ? q.id === answer.id : q.id === undefined && q.question === answer.question));

/** Whether `answer` is its question's recommended option and nothing else (model/answer-check.ts holds a marked answer to the same). */
function isRecommendation(answer: Answer, asked: readonly Question[]): boolean {
	if (answer.kind !== "option" || (answer.values !== undefined && answer.values.length !== 1)) return false;
	const question = askedFor(answer, asked);
	return question?.recommended !== undefined && answer.answer === question.recommended;
}

/** `envelope` with every answer that is its question's recommended option marked `recommended: true`. */
function markRecommendations(envelope: Envelope, asked: readonly Question[]): Envelope {
	if (!asked.some((q) => q.recommended !== undefined) || !envelope.answers.some((a) => a.recommended === undefined && isRecommendation(a, asked)))
		return envelope;
	return { ...envelope, answers: envelope.answers.map((a) => (a.recommended === undefined && isRecommendation(a, asked) ? { ...a, recommended: true } : a)) };
}

/** The tool result pi expects: the envelope as JSON text for the model, and as details for renderers; with `asked`, its recommendations marked. */
export function toToolResult(envelope: Envelope, asked?: readonly Question[]): { content: [{ type: "text"; text: string }]; details: Envelope } {
	const shown = asked ? markRecommendations(envelope, asked) : envelope;
	return { content: [{ type: "text", text: JSON.stringify(shown) }], details: shown };
}
