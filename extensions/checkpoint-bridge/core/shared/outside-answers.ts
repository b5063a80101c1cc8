/**
 * Answers from outside the terminal (another extension, a web or phone bridge): checked all or
 * nothing against the questions asked before anything is applied.
 *
 * Payload: `{ requestId, answers }` with one answer per question in question order, or
 * `{ requestId, cancel: true }`, either with an optional `source` ("outside", the default, or
 * "web") that the answers carry; an answer of the web page may name its `place` ("page", "link",
 * "notify-link"), a mail reply (source "outside") its place "mail", which the host records. An answer is a string (an option's label, typed text,
 * "yes"/"no"), a string array for a multi-select, or `{ answer }` / `{ values }`, either with an
 * optional `note`. The terminal form puts what the human gave through the same check (`resolveAnswer`).
 */

import { type Answer, OUTSIDE_PLACES, OUTSIDE_SOURCES, type OutsideSource, WEB_PLACES } from "../../model/answer.ts";
import { answerOf, answerProblem } from "../../model/answer-check.ts";
import type { Checked } from "../../model/check.ts";
import type { Question } from "../../model/question.ts";

/** `recommended: true` marks the answer as the question's recommendation, accepted as such (it must be that option). */
export type OutsideAnswerValue = string | boolean | string[] | { answer?: string | boolean; values?: string[]; note?: string; recommended?: boolean };

/** What an outside answer sends on the bus's `answer` event: one answer per question, or a cancel. @public */
export type OutsideAnswer = ({ requestId: string; answers: OutsideAnswerValue[] } | { requestId: string; cancel: true }) & {
	/** "outside" when left out; "web" marks answers given in a browser. */
	source?: OutsideSource;
	/** Where the answers were given: on the web page (source "web"), or by mail (source "outside"). */
	place?: (typeof WEB_PLACES)[number] | (typeof OUTSIDE_PLACES)[number];
};

/** An outside answer whose shape passed the check, its source filled in. */
export type OutsideAnswerMessage = OutsideAnswer & { source: OutsideSource };

/**
 * Why an outside answer was refused. Snake case, unlike every other code (ADR-0011): the observer
 * contract (docs/observers.md) fixed these before, and extensions outside this package read them.
 */
type OutsideAnswerErrorCode = "not_found" | "invalid_payload" | "invalid_answer";

/** The one reply every attempt gets. */
export type OutsideAnswerReply = Checked<object, { code: OutsideAnswerErrorCode; reason: string }>;

const refuse = (code: OutsideAnswerErrorCode, reason: string): OutsideAnswerReply => ({ ok: false, code, reason });

/** Checks the payload's shape; the answers' content is checked against the questions later. */
export function parseOutsideAnswer(raw: unknown): Checked<{ message: OutsideAnswerMessage }, { reply: OutsideAnswerReply }> {
	const fail = (reason: string) => ({ ok: false as const, reply: refuse("invalid_payload", reason) });
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return fail("the payload must be an object");
	const { requestId, answers, cancel, source = "outside", place } = raw as Record<string, unknown>;
	if (typeof requestId !== "string" || requestId === "") return fail("requestId must be a non-empty string");
	if (!(OUTSIDE_SOURCES as readonly unknown[]).includes(source))
		return fail(`source must be one of ${OUTSIDE_SOURCES.map((s) => JSON.stringify(s)).join(", ")} or left out`);
	const from = source as OutsideSource;
	const places: readonly string[] = from === "web" ? WEB_PLACES : OUTSIDE_PLACES;
	if (place !== undefined && !places.includes(place as string))
		return fail(
			`place must be one of ${WEB_PLACES.map((p) => JSON.stringify(p)).join(", ")} with source "web", ${OUTSIDE_PLACES.map((p) => JSON.stringify(p)).join(", ")} with source "outside", or left out`,
		);
	const where = place === undefined ? {} : { place: place as NonNullable<OutsideAnswer["place"]> };
	if (cancel !== undefined) {
		if (cancel !== true || answers !== undefined) return fail("a cancel is { requestId, cancel: true } and nothing else");
		return { ok: true, message: { requestId, cancel: true, source: from, ...where } };
	}
	if (!Array.isArray(answers)) return fail("answers must be an array with one answer per question, in question order");
	return { ok: true, message: { requestId, answers: answers as OutsideAnswerValue[], source: from, ...where } };
}

function asText(value: OutsideAnswerValue): string | undefined {
	if (typeof value === "string") return value;
	if (typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.answer === "string") return value.answer;
	return undefined;
}

function asValues(value: OutsideAnswerValue): string[] | undefined {
	const values = Array.isArray(value) ? value : typeof value === "object" && value !== null ? value.values : undefined;
	return Array.isArray(values) && values.every((v) => typeof v === "string") ? values : undefined;
}

/** The answer record `value` stands for, before it is checked; what is wrong when its shape is wrong for the question. */
function candidate(question: Question, value: OutsideAnswerValue): Checked<{ answer: Answer }, { reason: string }> {
	const wrong = (reason: string) => ({ ok: false as const, reason });
	const found = (answer: Answer) => ({ ok: true as const, answer });
	switch (question.kind) {
		case "text": {
			const text = asText(value);
			return text === undefined ? wrong("must be text") : found(answerOf(question, "text", text));
		}
		case "confirm": {
			const raw = typeof value === "object" && value !== null && !Array.isArray(value) ? value.answer : value;
			const yes = raw === true || (typeof raw === "string" && /^(yes|y|true)$/i.test(raw));
			const no = raw === false || (typeof raw === "string" && /^(no|n|false)$/i.test(raw));
			return yes || no ? found(answerOf(question, "confirm", yes ? "yes" : "no")) : wrong("must be yes or no");
		}
		case "choice": {
			const labels = (question.options ?? []).map((o) => o.label);
			if (question.multiSelect) {
				const values = asValues(value);
				if (!values || values.length === 0) return wrong("must be a non-empty array of option labels");
				// Picked options in option order, typed values last, as a dialog gives them.
				const all = [...labels.filter((l) => values.includes(l)), ...values.filter((v) => !labels.includes(v))];
				// A repeated value survives into `all` only when typed; one picked twice is counted here.
				if (new Set(values).size !== values.length) return wrong("repeats a value");
				return found(answerOf(question, all.some((v) => !labels.includes(v)) ? "other" : "option", all.join(", "), all));
			}
			const text = asText(value);
			if (text === undefined) return wrong("must be one option's label");
			return found(labels.includes(text) ? answerOf(question, "option", text) : answerOf(question, "other", question.allowOther ? text.trim() : text));
		}
	}
}

/** One answer given outside or in the terminal form, checked by the one answer check every surface uses: the record, or what is wrong (prefixed with `at`). */
export function resolveAnswer(question: Question, value: OutsideAnswerValue, at: string): Checked<{ answer: Answer }, { reason: string }> {
	const wrong = (reason: string) => ({ ok: false as const, reason: `${at}: ${reason}` });
	const built = candidate(question, value);
	if (!built.ok) return wrong(built.reason);
	const note = typeof value === "object" && value !== null && !Array.isArray(value) ? (value.note as unknown) : undefined;
	if (note !== undefined && typeof note !== "string") return wrong("note must be text");
	const recommended = typeof value === "object" && value !== null && !Array.isArray(value) ? (value.recommended as unknown) : undefined;
	if (recommended !== undefined && typeof recommended !== "boolean") return wrong("recommended must be true, false or left out");
	// A blank note is no note; the check below bounds its length.
	let answer = typeof note === "string" && note.trim() !== "" ? { ...built.answer, note: note.trim() } : built.answer;
	if (recommended === true) answer = { ...answer, recommended: true };
	const problem = answerProblem(question, answer);
	return problem === undefined ? { ok: true, answer } : wrong(problem);
}

/** Resolves every answer or none: the answers (each marked with `source`), or the reply naming each problem. */
export function resolveOutsideAnswer(
	questions: Question[],
	values: OutsideAnswerValue[],
	source: OutsideSource = "outside",
): Checked<{ answers: Answer[] }, { reply: OutsideAnswerReply }> {
	if (values.length !== questions.length)
		return { ok: false, reply: refuse("invalid_payload", `expected ${questions.length} answers, one per question, got ${values.length}`) };
	const problems: string[] = [];
	const answers: Answer[] = [];
	questions.forEach((question, i) => {
		const resolved = resolveAnswer(question, values[i] as OutsideAnswerValue, `answers[${i}]`);
		if (resolved.ok) answers.push({ ...resolved.answer, source });
		else problems.push(resolved.reason);
	});
	if (problems.length > 0) return { ok: false, reply: refuse("invalid_answer", problems.join("; ")) };
	return { ok: true, answers };
}
