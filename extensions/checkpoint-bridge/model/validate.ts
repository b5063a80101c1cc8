/**
 * Checks a call's parameters before anything is shown, and names every problem at once.
 * Accepts the v1 form (options as strings) and the v2 form (options as `{label, description, preview}`,
 * header, details, multiSelect, allowOther, recommended, kind "confirm"). The input is `unknown`:
 * pi validates against the schema, but the relay is also reachable from code that does not.
 * Every text is neutralised for the terminal (sanitise.ts) before its limits are checked, so the
 * asker and the host, which both validate, agree on every label.
 */
import { LIMITS } from "./limits.ts";
import type { Option, Question, QuestionKind } from "./question.ts";
import { sanitiseText } from "./sanitise.ts";

export type ValidationResult = { ok: true; questions: Question[]; timeoutMs?: number } | { ok: false; problems: string[] };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks an optional string field with a length bound; returns it, neutralised, when valid. Only details and previews keep line breaks. */
function optionalText(raw: Record<string, unknown>, key: string, max: number, at: string, problems: string[]): string | undefined {
	const value = raw[key];
	if (value === undefined) return undefined;
	if (typeof value !== "string") {
		problems.push(`${at}.${key}: must be a string`);
		return undefined;
	}
	const text = sanitiseText(value, { multiline: key === "details" || key === "preview" });
	if (text.length > max) problems.push(`${at}.${key}: is ${text.length} characters, at most ${max}`);
	else return text;
	return undefined;
}

function optionalBoolean(raw: Record<string, unknown>, key: string, at: string, problems: string[]): boolean | undefined {
	const value = raw[key];
	if (value === undefined || typeof value === "boolean") return value;
	problems.push(`${at}.${key}: must be true or false`);
	return undefined;
}

function checkOptions(options: unknown, at: string, problems: string[]): Option[] | undefined {
	if (!Array.isArray(options)) {
		problems.push(`${at}.options: must be an array of strings or {label, description} objects`);
		return undefined;
	}
	if (options.length < LIMITS.options.min || options.length > LIMITS.options.max)
		problems.push(`${at}.options: has ${options.length}, needs ${LIMITS.options.min} to ${LIMITS.options.max} (omit it for a free-text question)`);
	const seen = new Set<string>();
	const checked: Option[] = [];
	// Indexed, so a hole in a sparse array reads as undefined and is reported, not skipped.
	for (let j = 0; j < options.length; j++) {
		const raw: unknown = options[j];
		const where = () => `${at}.options[${j}]`;
		const label = typeof raw === "string" ? raw : isRecord(raw) ? raw.label : undefined;
		if (typeof raw !== "string" && !isRecord(raw)) {
			problems.push(`${where()}: must be a string or a {label, description} object`);
			continue;
		}
		if (typeof label !== "string") {
			problems.push(`${where()}.label: must be a string`);
			continue;
		}
		const clean = sanitiseText(label);
		const problem =
			clean.trim() === ""
				? "is empty"
				: clean.length > LIMITS.label
					? `label is ${clean.length} characters, at most ${LIMITS.label}`
					: seen.has(clean)
						? `duplicates ${JSON.stringify(clean)}`
						: undefined;
		if (problem !== undefined) {
			problems.push(`${where()}: ${problem}`);
			continue;
		}
		seen.add(clean);
		const option: Option = { label: clean };
		if (typeof raw !== "string") {
			const description = optionalText(raw as Record<string, unknown>, "description", LIMITS.description, where(), problems);
			if (description !== undefined) option.description = description;
			const preview = optionalText(raw as Record<string, unknown>, "preview", LIMITS.preview, where(), problems);
			if (preview !== undefined) option.preview = preview;
		}
		checked.push(option);
	}
	return checked;
}

function checkQuestion(raw: unknown, at: string, problems: string[]): Question | undefined {
	if (!isRecord(raw)) {
		problems.push(`${at}: must be an object with a "question" text`);
		return undefined;
	}
	const before = problems.length;
	const { options, kind, share } = raw;
	const question = typeof raw.question === "string" ? sanitiseText(raw.question) : raw.question;
	if (typeof question !== "string") problems.push(`${at}.question: must be a string`);
	else if (question.trim() === "") problems.push(`${at}.question: is empty`);
	else if (question.length > LIMITS.question) problems.push(`${at}.question: is ${question.length} characters, at most ${LIMITS.question}`);
	const id = optionalText(raw, "id", LIMITS.id, at, problems);
	if (id !== undefined && id.trim() === "") problems.push(`${at}.id: is empty`);
	const header = optionalText(raw, "header", LIMITS.header, at, problems);
	const details = optionalText(raw, "details", LIMITS.details, at, problems);
	const placeholder = optionalText(raw, "placeholder", LIMITS.placeholder, at, problems);
	const multiSelect = optionalBoolean(raw, "multiSelect", at, problems);
	const allowOther = optionalBoolean(raw, "allowOther", at, problems);
	const recommended = optionalText(raw, "recommended", LIMITS.label, at, problems);
	if (kind !== undefined && kind !== "confirm" && kind !== "choice" && kind !== "text")
		problems.push(`${at}.kind: must be "confirm" (or "choice" / "text", which the options imply) or left out`);
	if (share !== undefined && share !== "any" && share !== "origin") problems.push(`${at}.share: must be "any" or "origin" (the default)`);
	const checkedOptions = options === undefined ? undefined : checkOptions(options, at, problems);
	const resolvedKind: QuestionKind = kind === "confirm" ? "confirm" : options !== undefined ? "choice" : "text";
	if (resolvedKind === "confirm" && options !== undefined) problems.push(`${at}.options: a confirm question has its own yes/no options`);
	if (kind === "choice" && options === undefined) problems.push(`${at}.options: a choice needs options`);
	if (kind === "text" && options !== undefined) problems.push(`${at}.options: a text question has no options`);
	if (resolvedKind !== "choice") {
		for (const key of ["multiSelect", "allowOther", "recommended"] as const)
			if (raw[key] !== undefined) problems.push(`${at}.${key}: only applies to a question with options`);
	}
	if (recommended !== undefined && checkedOptions && !checkedOptions.some((o) => o.label === recommended))
		problems.push(`${at}.recommended: ${JSON.stringify(recommended)} is not one of the options`);
	if (problems.length > before) return undefined;
	// Field by field, in this order (no spreads: this runs for every request, on both sides).
	const checked: Question = { question: question as string, kind: resolvedKind };
	if (id !== undefined) checked.id = id;
	if (header !== undefined) checked.header = header;
	if (details !== undefined) checked.details = details;
	if (checkedOptions) checked.options = checkedOptions;
	if (resolvedKind === "choice") {
		checked.multiSelect = multiSelect ?? false;
		checked.allowOther = allowOther ?? true;
	}
	if (recommended !== undefined) checked.recommended = recommended;
	if (placeholder !== undefined) checked.placeholder = placeholder;
	if (share === "any") checked.share = share;
	return checked;
}

/** Validates the tool's parameters; on failure lists every problem, each naming where it is. */
export function validateAskParams(raw: unknown): ValidationResult {
	const problems: string[] = [];
	if (!isRecord(raw)) return { ok: false, problems: ['parameters: must be an object with a "questions" array'] };
	const { questions, timeoutMs } = raw;
	const checked: Question[] = [];
	if (!Array.isArray(questions)) problems.push("questions: must be an array");
	else if (questions.length < LIMITS.questions.min) problems.push("questions: at least one question is required");
	else if (questions.length > LIMITS.questions.max) problems.push(`questions: has ${questions.length}, at most ${LIMITS.questions.max} in one call`);
	else {
		// Indexed, so a hole in a sparse array reads as undefined and is reported, not skipped.
		for (let i = 0; i < questions.length; i++) {
			const question = checkQuestion(questions[i], `questions[${i}]`, problems);
			if (question) checked.push(question);
		}
		const reported: string[] = [];
		for (let i = 0; i < checked.length; i++) {
			const id = checked[i]!.id;
			if (id === undefined || reported.includes(id) || !checked.some((q, k) => k < i && q.id === id)) continue;
			reported.push(id);
			problems.push(`questions: id ${JSON.stringify(id)} is used more than once`);
		}
	}
	if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs)))
		problems.push("timeoutMs: must be a finite number of milliseconds");
	if (problems.length > 0) return { ok: false, problems };
	return { ok: true, questions: checked, ...(typeof timeoutMs === "number" ? { timeoutMs } : {}) };
}
