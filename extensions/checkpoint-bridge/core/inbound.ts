/**
 * Answers from outside the terminal (another extension, a web or phone bridge): checked all or
 * nothing against the questions asked before anything is applied.
 *
 * Payload: `{ requestId, answers }` with one answer per question in question order, or
 * `{ requestId, cancel: true }`. An answer is a string (an option's label, typed text, "yes"/"no"),
 * a string array for a multi-select, or `{ answer }` / `{ values }`.
 */
import type { Answer } from "../tool/envelope.ts";
import { answerOf } from "../tool/answers.ts";
import type { Question } from "../tool/validate.ts";

export type InboundValue = string | boolean | string[] | { answer?: string | boolean; values?: string[] };

export type InboundMessage = { requestId: string; answers: InboundValue[] } | { requestId: string; cancel: true };

/** Why an outside answer was refused. */
export type InboundErrorCode = "not_found" | "invalid_payload" | "invalid_answer";

/** The one reply every attempt gets. */
export type InboundReply = { ok: true } | { ok: false; code: InboundErrorCode; reason: string };

const refuse = (code: InboundErrorCode, reason: string): InboundReply => ({ ok: false, code, reason });

/** Checks the payload's shape; the answers' content is checked against the questions later. */
export function parseInbound(raw: unknown): { ok: true; message: InboundMessage } | { ok: false; reply: InboundReply } {
	const fail = (reason: string) => ({ ok: false as const, reply: refuse("invalid_payload", reason) });
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return fail("the payload must be an object");
	const { requestId, answers, cancel } = raw as Record<string, unknown>;
	if (typeof requestId !== "string" || requestId === "") return fail("requestId must be a non-empty string");
	if (cancel !== undefined) {
		if (cancel !== true || answers !== undefined) return fail("a cancel is { requestId, cancel: true } and nothing else");
		return { ok: true, message: { requestId, cancel: true } };
	}
	if (!Array.isArray(answers)) return fail("answers must be an array with one answer per question, in question order");
	return { ok: true, message: { requestId, answers: answers as InboundValue[] } };
}

function asText(value: InboundValue): string | undefined {
	if (typeof value === "string") return value;
	if (typeof value === "object" && value !== null && !Array.isArray(value) && typeof value.answer === "string") return value.answer;
	return undefined;
}

function asValues(value: InboundValue): string[] | undefined {
	const values = Array.isArray(value) ? value : typeof value === "object" && value !== null ? value.values : undefined;
	return Array.isArray(values) && values.every((v) => typeof v === "string") ? values : undefined;
}

function resolveOne(question: Question, value: InboundValue, at: string): Answer | string {
	switch (question.kind) {
		case "text": {
			const text = asText(value);
			return text === undefined ? `${at}: must be text` : answerOf(question, "text", text);
		}
		case "confirm": {
			const raw = typeof value === "object" && value !== null && !Array.isArray(value) ? value.answer : value;
			const yes = raw === true || (typeof raw === "string" && /^(yes|y|true)$/i.test(raw));
			const no = raw === false || (typeof raw === "string" && /^(no|n|false)$/i.test(raw));
			return yes || no ? answerOf(question, "confirm", yes ? "yes" : "no") : `${at}: must be yes or no`;
		}
		case "choice": {
			const labels = new Set((question.options ?? []).map((o) => o.label));
			const offered = (v: string) => labels.has(v) || (question.allowOther === true && v.trim() !== "");
			if (question.multiSelect) {
				const values = asValues(value);
				if (!values || values.length === 0) return `${at}: must be a non-empty array of option labels`;
				if (new Set(values).size !== values.length) return `${at}: repeats a value`;
				const bad = values.find((v) => !offered(v));
				if (bad !== undefined) return `${at}: ${JSON.stringify(bad)} was not offered`;
				const picked = (question.options ?? []).map((o) => o.label).filter((l) => values.includes(l));
				const typed = values.filter((v) => !labels.has(v));
				const all = [...picked, ...typed];
				return answerOf(question, typed.length ? "other" : "option", all.join(", "), all);
			}
			const text = asText(value);
			if (text === undefined) return `${at}: must be one option's label`;
			if (!offered(text)) return `${at}: ${JSON.stringify(text)} was not offered`;
			return answerOf(question, labels.has(text) ? "option" : "other", labels.has(text) ? text : text.trim());
		}
	}
}

/** Resolves every answer or none: the answers, or the reply naming each problem. */
export function resolveInbound(questions: Question[], values: InboundValue[]): { ok: true; answers: Answer[] } | { ok: false; reply: InboundReply } {
	if (values.length !== questions.length)
		return { ok: false, reply: refuse("invalid_payload", `expected ${questions.length} answers, one per question, got ${values.length}`) };
	const problems: string[] = [];
	const answers: Answer[] = [];
	questions.forEach((question, i) => {
		const resolved = resolveOne(question, values[i] as InboundValue, `answers[${i}]`);
		if (typeof resolved === "string") problems.push(resolved);
		else answers.push({ ...resolved, source: "outside" });
	});
	if (problems.length > 0) return { ok: false, reply: refuse("invalid_answer", problems.join("; ")) };
	return { ok: true, answers };
}
