/**
 * The questions as an MCP elicitation form, for a client whose own user answers when no pi host is
 * reachable. The form is flat (MCP allows no nesting): one property per question, an `enum` for a
 * choice, an array of enums for a multi-select, a string for text, a boolean for a confirm, and a
 * string beside a choice that allows "Other". Every question is required. What comes back passes the
 * one answer check; a question left without an answer is named, never a reason to drop the others.
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

/** The value a choice that allows Other offers for it: "Other", unless an option is called that. */
const otherValueOf = (q: Question) => ((q.options ?? []).some((o) => o.label === OTHER) ? `${OTHER} (type below)` : OTHER);
const OTHER = "Other";

/**
 * The flat form for `questions` (already checked), asked on behalf of `asker`: every question is
 * required; a choice that allows Other offers it as a value, whose text goes in the field beside it.
 */
export function elicitationForm(questions: readonly Question[], asker: string): ElicitationForm {
	const properties: Record<string, FormProperty> = {};
	const required: string[] = [];
	questions.forEach((q, i) => {
		const key = keyOf(i);
		const description = descriptionOf(q);
		const about = description === undefined ? {} : { description };
		const title = titleOf(q);
		required.push(key);
		if (q.kind === "confirm") properties[key] = { type: "boolean", title, ...about };
		else if (q.kind === "text") properties[key] = { type: "string", title, ...about };
		else {
			const labels = [...(q.options ?? []).map((o) => o.label), ...(q.allowOther ? [otherValueOf(q)] : [])];
			properties[key] = q.multiSelect
				? { type: "array", title, ...about, items: { type: "string", enum: labels }, minItems: 1 }
				: { type: "string", title, ...about, enum: labels };
			if (q.allowOther) properties[otherKeyOf(i)] = { type: "string", title: `${key}: your own answer, when you pick ${otherValueOf(q)}` };
		}
	});
	const count = questions.length === 1 ? "a question" : `${questions.length} questions`;
	return { message: `${asker} has ${count} for you (no pi session is there to show it).`, requestedSchema: { type: "object", properties, required } };
}

const typedText = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined);

/** One question read from the form: its answer, nothing (left out), or a value the form never offered. */
type Read = { ok: true; answer?: Answer } | { ok: false; problem: string };

/** One question's answer from the form's content. */
function answerFrom(q: Question, i: number, content: Record<string, unknown>): Read {
	const value = content[keyOf(i)];
	const other = q.allowOther ? typedText(content[otherKeyOf(i)]) : undefined;
	const otherValue = otherValueOf(q);
	// A pick is one of the values the form offered; anything else the client sent is refused, never dropped or retyped.
	const offered = [...(q.options ?? []).map((o) => o.label), ...(q.allowOther ? [otherValue] : [])];
	const notOffered = (Array.isArray(value) ? value : [value]).find((v) => q.kind === "choice" && v !== undefined && v !== "" && !offered.includes(v as string));
	if (notOffered !== undefined) return { ok: false, problem: `the form's answer to ${keyOf(i)} picks ${JSON.stringify(notOffered)}, which was not offered` };
	let answer: Answer | undefined;
	if (q.kind === "confirm") {
		if (typeof value === "boolean") answer = answerOf(q, "confirm", value ? "yes" : "no");
	} else if (q.kind === "text") {
		if (typeof value === "string" && value.trim() !== "") answer = answerOf(q, "text", value);
	} else if (q.multiSelect) {
		const picked = new Set(Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
		// Other picked wants its text; text typed without picking Other is taken as meant.
		const typed = other === undefined ? [] : [other];
		const wantsText = picked.delete(otherValue) && other === undefined;
		if (!wantsText && (picked.size > 0 || typed.length > 0)) answer = multiAnswer(q, picked, typed);
	} else if (typeof value === "string" && value !== "" && value !== otherValue) answer = answerOf(q, "option", value);
	else if (other !== undefined) answer = answerOf(q, q.options?.some((o) => o.label === other) ? "option" : "other", other);
	if (answer === undefined) return { ok: true };
	answer.source = "dialog";
	const problem = answerProblem(q, answer);
	return problem === undefined ? { ok: true, answer } : { ok: false, problem: `the form's answer to ${keyOf(i)} ${problem}` };
}

/** What an accepted form gave: the answers in question order, and the questions it left without one. */
export interface FormAnswers {
	answers: Answer[];
	/** `q<n> ("question")` of each question left without an answer (Other picked with no text counts). */
	missing: string[];
}

/** The answers in an accepted form's content, or the first value it carries that was never offered. */
export function answersFromForm(questions: readonly Question[], content: unknown): Checked<FormAnswers, { problem: string }> {
	if (typeof content !== "object" || content === null || Array.isArray(content)) return { ok: false, problem: "the form came back without content" };
	const answers: Answer[] = [];
	const missing: string[] = [];
	for (const [i, q] of questions.entries()) {
		const read = answerFrom(q, i, content as Record<string, unknown>);
		if (!read.ok) return read;
		if (read.answer) answers.push(read.answer);
		else missing.push(`${keyOf(i)} (${JSON.stringify(q.question)})`);
	}
	return { ok: true, answers, missing };
}
