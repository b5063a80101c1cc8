/**
 * The questions as an MCP elicitation form, for a client whose own user answers when no pi host is
 * reachable. The form is flat (MCP allows no nesting): one property per question, an `enum` for a
 * choice, an array of enums for a multi-select, a string for text, a boolean for a confirm, and a
 * string beside a choice that allows "Other". What comes back passes the one answer check.
 */
import type { Answer } from "../model/answer.ts";
import { answerOf, answerProblem, multiAnswer } from "../model/answer-check.ts";
import type { Checked } from "../model/check.ts";
import type { Question } from "../model/question.ts";

/** One property of the flat form: the primitive shapes MCP's `requestedSchema` allows. */
type FormProperty =
	| { type: "string"; title: string; description?: string; enum?: string[] }
	| { type: "boolean"; title: string; description?: string }
	| { type: "array"; title: string; description?: string; items: { type: "string"; enum: string[] }; minItems?: number };

/** The `elicitation/create` parameters of a form. */
export interface ElicitationForm {
	message: string;
	requestedSchema: { type: "object"; properties: Record<string, FormProperty>; required: string[] };
}

/** The key of question `i` in the form (1-based, so the human reads "q1"). */
const keyOf = (i: number) => `q${i + 1}`;
/** The key of the typed "Other" beside question `i`. */
const otherKeyOf = (i: number) => `${keyOf(i)}_other`;

/** A question's title in the form: its header, when it has one, before its text. */
const titleOf = (q: Question) => (q.header ? `${q.header}: ${q.question}` : q.question);

/** What the human reads under a question: its details and what each option means. */
function descriptionOf(q: Question): string | undefined {
	const lines = [q.details, ...(q.options ?? []).filter((o) => o.description).map((o) => `${o.label}: ${o.description}`)];
	if (q.recommended !== undefined) lines.push(`Recommended: ${q.recommended}`);
	if (q.placeholder !== undefined) lines.push(q.placeholder);
	const text = lines.filter((line): line is string => Boolean(line)).join("\n");
	return text === "" ? undefined : text;
}

/** The flat form for `questions` (already checked), asked on behalf of `asker`. */
export function elicitationForm(questions: readonly Question[], asker: string): ElicitationForm {
	const properties: Record<string, FormProperty> = {};
	const required: string[] = [];
	questions.forEach((q, i) => {
		const key = keyOf(i);
		const description = descriptionOf(q);
		const about = description === undefined ? {} : { description };
		const title = titleOf(q);
		if (q.kind === "confirm") {
			properties[key] = { type: "boolean", title, ...about };
			required.push(key);
		} else if (q.kind === "text") {
			properties[key] = { type: "string", title, ...about };
			required.push(key);
		} else {
			const labels = (q.options ?? []).map((o) => o.label);
			properties[key] = q.multiSelect
				? { type: "array", title, ...about, items: { type: "string", enum: labels }, minItems: q.allowOther ? 0 : 1 }
				: { type: "string", title, ...about, enum: labels };
			// With "Other" allowed the typed text may stand in for the pick, so neither is required by the form itself.
			if (q.allowOther) properties[otherKeyOf(i)] = { type: "string", title: `${key}: Other (type your own)` };
			else required.push(key);
		}
	});
	const count = questions.length === 1 ? "a question" : `${questions.length} questions`;
	return { message: `${asker} has ${count} for you (no pi session is there to show it).`, requestedSchema: { type: "object", properties, required } };
}

const typedText = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined);

/** One question's answer from the form's content, or what is missing or wrong. */
function answerFrom(q: Question, i: number, content: Record<string, unknown>): Checked<{ answer: Answer }, { problem: string }> {
	const value = content[keyOf(i)];
	const other = q.allowOther ? typedText(content[otherKeyOf(i)]) : undefined;
	// A pick is one of the labels the form offered; anything else the client sent is refused, never dropped or retyped.
	const labels = (q.options ?? []).map((o) => o.label);
	const notOffered = (Array.isArray(value) ? value : [value]).find((v) => q.kind === "choice" && v !== undefined && v !== "" && !labels.includes(v as string));
	if (notOffered !== undefined) return { ok: false, problem: `the form's answer to ${keyOf(i)} picks ${JSON.stringify(notOffered)}, which was not offered` };
	let answer: Answer | undefined;
	if (q.kind === "confirm") {
		if (typeof value === "boolean") answer = answerOf(q, "confirm", value ? "yes" : "no");
	} else if (q.kind === "text") {
		if (typeof value === "string") answer = answerOf(q, "text", value);
	} else if (q.multiSelect) {
		const picked = Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
		if (picked.length > 0 || other !== undefined) answer = multiAnswer(q, new Set(picked), other === undefined ? [] : [other]);
	} else if (typeof value === "string" && value !== "") answer = answerOf(q, "option", value);
	else if (other !== undefined) answer = answerOf(q, q.options?.some((o) => o.label === other) ? "option" : "other", other);
	if (answer === undefined) return { ok: false, problem: `the form came back without an answer to ${keyOf(i)} (${JSON.stringify(q.question)})` };
	answer.source = "dialog";
	const problem = answerProblem(q, answer);
	return problem === undefined ? { ok: true, answer } : { ok: false, problem: `the form's answer to ${keyOf(i)} ${problem}` };
}

/** The answers in an accepted form's content, in question order, or the first problem with it. */
export function answersFromForm(questions: readonly Question[], content: unknown): Checked<{ answers: Answer[] }, { problem: string }> {
	if (typeof content !== "object" || content === null || Array.isArray(content)) return { ok: false, problem: "the form came back without content" };
	const answers: Answer[] = [];
	for (const [i, q] of questions.entries()) {
		const read = answerFrom(q, i, content as Record<string, unknown>);
		if (!read.ok) return read;
		answers.push(read.answer);
	}
	return { ok: true, answers };
}
