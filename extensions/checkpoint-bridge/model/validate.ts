/**
 * Checks a call's parameters before anything is shown, and names every problem at once.
 * Accepts the v1 form (options as strings) and the v2 form (options as `{label, description, preview}`,
 * header, details, multiSelect, allowOther, recommended, kind "confirm"). The input is `unknown`:
 * pi validates against the schema, but the relay is also reachable from code that does not.
 * Every text is neutralised for the terminal (sanitise.ts) before its limits are checked, so the
 * asker and the host, which both validate, agree on every label.
 */
import type { Checked } from "./check.ts";
import { DIALOG_LIMITS, LIMITS } from "./limits.ts";
import type { Option, Question, QuestionKind, RelayedDialog } from "./question.ts";
import { cutText, sanitiseText } from "./sanitise.ts";

/** Whether questions may be relayed dialogs of other extensions (Question.dialog): the relay's own paths only, never the tool. @default false */
export interface ValidateOptions {
	dialogs?: boolean;
}

/** The question kind each relayed dialog is. */
const DIALOG_KINDS: Record<RelayedDialog, QuestionKind> = { select: "choice", confirm: "confirm", input: "text", editor: "text", custom: "confirm" };

/** The bounds a question is checked against: the tool's, or a relayed dialog's. */
type Bounds = { options: { min: number; max: number }; question: number; label: number; details: number; placeholder: number };

/** The checked questions (and the call's own timeout and wait, when it gives them), or every problem found. */
export type ValidationResult = Checked<{ questions: Question[]; timeoutMs?: number; wait?: boolean }, { problems: string[] }>;

/** The call's parameters; any other is refused by name, never ignored. */
const PARAMETERS = ["questions", "timeoutMs", "wait"];
/** Unknown parameters named in one refusal; the rest are counted. @default 8 */
const NAMED_UNKNOWN = 8;
/** Longest unknown parameter name echoed, in code points: a caller's megabyte of name is cut, not sent back. @default 40 */
const UNKNOWN_NAME_CHARS = 40;

const lineCount = (text: string) => text.split("\n").length;

/**
 * The questions this check has passed in this process, frozen, with whether relayed dialogs were
 * taken. A request is validated once, where it enters the process: the asker's call and the host's
 * intake in every copy of the extension (a child's too, hence the registry key) know the very array
 * again and take it as it is. A copy whose rules change takes a new key.
 */
const CHECKED: WeakMap<readonly Question[], boolean> = ((globalThis as Record<symbol, unknown>)[Symbol.for("checkpoint-bridge.checked-questions.v1")] ??=
	new WeakMap()) as WeakMap<readonly Question[], boolean>;

/** Questions passed before, for a check that takes relayed dialogs or not: one passed without them passes either. */
function checkedBefore(questions: unknown, dialogs: boolean): Question[] | undefined {
	if (!Array.isArray(questions)) return undefined;
	const tookDialogs = CHECKED.get(questions);
	return tookDialogs === false || (tookDialogs === true && dialogs) ? (questions as Question[]) : undefined;
}

/** Freezes what passed, down to each option, so that nothing can change it after it is known again. */
function keepChecked(questions: Question[], dialogs: boolean): void {
	for (const question of questions) {
		if (question.options) {
			for (const option of question.options) Object.freeze(option);
			Object.freeze(question.options);
		}
		Object.freeze(question);
	}
	CHECKED.set(Object.freeze(questions), dialogs);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Sanitising options of the fields that keep line breaks, and of the rest: one object each, not one per field checked. */
const MULTILINE = { multiline: true } as const;
const ONE_LINE = { multiline: false } as const;

/**
 * Checks an optional string field with a length bound; returns it, neutralised, when valid. Only
 * details and previews keep line breaks. `option`: the field is option `option`'s of the question at
 * `at` (where a problem says it is, built only for a problem: both sides check every option).
 */
function optionalText(value: unknown, key: string, max: number, at: string, problems: string[], option?: number): string | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== "string") {
		problems.push(`${fieldAt(at, option)}.${key}: must be a string`);
		return undefined;
	}
	const text = sanitiseText(value, key === "details" || key === "preview" || key === "initial" ? MULTILINE : ONE_LINE);
	if (text.length > max) problems.push(`${fieldAt(at, option)}.${key}: is ${text.length} characters, at most ${max}`);
	else return text;
	return undefined;
}

function optionalBoolean(value: unknown, key: string, at: string, problems: string[]): boolean | undefined {
	if (value === undefined || typeof value === "boolean") return value;
	problems.push(`${at}.${key}: must be true or false`);
	return undefined;
}

/** Whether `label` is among the first `count` of `options` (a loop, not a closure: this runs for every option of every request). */
function hasLabel(options: readonly Option[], count: number, label: string): boolean {
	for (let i = 0; i < count; i++) if (options[i]!.label === label) return true;
	return false;
}

/** Where option `j` of the question at `at` is, as a problem names it. */
const optionAt = (at: string, j: number) => `${at}.options[${j}]`;

/** Where a field is: of the question at `at`, or of its option `option`. */
const fieldAt = (at: string, option: number | undefined) => (option === undefined ? at : optionAt(at, option));

function checkOptions(options: unknown, at: string, problems: string[], bounds: Bounds): Option[] | undefined {
	if (!Array.isArray(options)) {
		problems.push(`${at}.options: must be an array of strings or {label, description} objects`);
		return undefined;
	}
	if (options.length < bounds.options.min || options.length > bounds.options.max)
		problems.push(`${at}.options: has ${options.length}, needs ${bounds.options.min} to ${bounds.options.max} (omit it for a free-text question)`);
	// This runs for every request, on both sides: a set of labels only for lists longer than a tool's.
	const seen = options.length > LIMITS.options.max ? new Set<string>() : undefined;
	// Sized up front and filled in order: a checked list lives as long as its request, and one grown by push keeps room for 17.
	const checked = new Array<Option>(options.length);
	let count = 0;
	// Indexed, so a hole in a sparse array reads as undefined and is reported, not skipped.
	for (let j = 0; j < options.length; j++) {
		const raw: unknown = options[j];
		const label = typeof raw === "string" ? raw : isRecord(raw) ? raw.label : undefined;
		if (typeof raw !== "string" && !isRecord(raw)) {
			problems.push(`${optionAt(at, j)}: must be a string or a {label, description} object`);
			continue;
		}
		if (typeof label !== "string") {
			problems.push(`${optionAt(at, j)}.label: must be a string`);
			continue;
		}
		const clean = sanitiseText(label);
		const problem =
			clean.trim() === ""
				? "is empty"
				: clean.length > bounds.label
					? `label is ${clean.length} characters, at most ${bounds.label}`
					: (seen ? seen.has(clean) : hasLabel(checked, count, clean))
						? `duplicates ${JSON.stringify(clean)}`
						: undefined;
		if (problem !== undefined) {
			problems.push(`${optionAt(at, j)}: ${problem}`);
			continue;
		}
		seen?.add(clean);
		const option: Option = { label: clean };
		if (typeof raw !== "string") {
			const description = optionalText(raw.description, "description", LIMITS.description, at, problems, j);
			if (description !== undefined) option.description = description;
			const preview = optionalText(raw.preview, "preview", LIMITS.preview, at, problems, j);
			if (preview !== undefined) option.preview = preview;
		}
		checked[count++] = option;
	}
	// Shorter only when some were refused: then the question is refused too.
	return count === checked.length ? checked : checked.slice(0, count);
}

function checkQuestion(raw: unknown, at: string, problems: string[], dialogs: boolean): Question | undefined {
	if (!isRecord(raw)) {
		problems.push(`${at}: must be an object with a "question" text`);
		return undefined;
	}
	const before = problems.length;
	const { options, kind, share } = raw;
	const dialog = raw.dialog === undefined ? undefined : checkDialog(raw, at, problems, dialogs);
	const bounds: Bounds = dialog ? DIALOG_LIMITS : LIMITS;
	// A relayed dialog's title keeps its line breaks (a permission gate puts the command on a line of its own).
	const question = typeof raw.question === "string" ? sanitiseText(raw.question, dialog !== undefined ? MULTILINE : ONE_LINE) : raw.question;
	if (typeof question !== "string") problems.push(`${at}.question: must be a string`);
	else if (question.trim() === "") problems.push(`${at}.question: is empty`);
	else if (question.length > bounds.question) problems.push(`${at}.question: is ${question.length} characters, at most ${bounds.question}`);
	else if (dialog !== undefined && lineCount(question) > DIALOG_LIMITS.titleLines)
		problems.push(`${at}.question: has ${lineCount(question)} lines, at most ${DIALOG_LIMITS.titleLines}`);
	const id = optionalText(raw.id, "id", LIMITS.id, at, problems);
	if (id !== undefined && id.trim() === "") problems.push(`${at}.id: is empty`);
	const header = optionalText(raw.header, "header", LIMITS.header, at, problems);
	const details = optionalText(raw.details, "details", bounds.details, at, problems);
	const placeholder = optionalText(raw.placeholder, "placeholder", bounds.placeholder, at, problems);
	const initial = optionalText(raw.initial, "initial", DIALOG_LIMITS.initial, at, problems);
	const multiSelect = optionalBoolean(raw.multiSelect, "multiSelect", at, problems);
	const allowOther = optionalBoolean(raw.allowOther, "allowOther", at, problems);
	const recommended = optionalText(raw.recommended, "recommended", LIMITS.label, at, problems);
	if (kind !== undefined && kind !== "confirm" && kind !== "choice" && kind !== "text")
		problems.push(`${at}.kind: must be "confirm" (or "choice" / "text", which the options imply) or left out`);
	if (share !== undefined && share !== "any" && share !== "origin") problems.push(`${at}.share: must be "any" or "origin" (the default)`);
	const checkedOptions = options === undefined ? undefined : checkOptions(options, at, problems, bounds);
	const resolvedKind: QuestionKind = kind === "confirm" ? "confirm" : options !== undefined ? "choice" : "text";
	if (resolvedKind === "confirm" && options !== undefined) problems.push(`${at}.options: a confirm question has its own yes/no options`);
	if (kind === "choice" && options === undefined) problems.push(`${at}.options: a choice needs options`);
	if (kind === "text" && options !== undefined) problems.push(`${at}.options: a text question has no options`);
	if (resolvedKind !== "choice") {
		for (const key of ["multiSelect", "allowOther", "recommended"] as const)
			if (raw[key] !== undefined) problems.push(`${at}.${key}: only applies to a question with options`);
	}
	if (initial !== undefined && !(dialog && resolvedKind === "text")) problems.push(`${at}.initial: only a relayed editor or input starts with text`);
	if (dialog && DIALOG_KINDS[dialog] !== resolvedKind) problems.push(`${at}.dialog: a relayed ${dialog} is a ${DIALOG_KINDS[dialog]} question`);
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
		// A relayed select offers exactly its extension's options.
		checked.allowOther = dialog ? false : (allowOther ?? true);
	}
	if (recommended !== undefined) checked.recommended = recommended;
	if (placeholder !== undefined) checked.placeholder = placeholder;
	if (share === "any") checked.share = share;
	if (dialog) checked.dialog = dialog;
	if (initial !== undefined) checked.initial = initial;
	return checked;
}

/**
 * The relayed dialog a question says it is, when relayed dialogs are taken here and the rest of
 * the question is what such a dialog can be: its options exactly (no multiSelect, "Other",
 * recommended option or descriptions), no sharing across origins.
 */
function checkDialog(raw: Record<string, unknown>, at: string, problems: string[], dialogs: boolean): RelayedDialog | undefined {
	const { dialog } = raw;
	if (!dialogs) {
		problems.push(`${at}.dialog: only the relay of other extensions' dialogs sets it`);
		return undefined;
	}
	if (typeof dialog !== "string" || !Object.hasOwn(DIALOG_KINDS, dialog)) {
		problems.push(`${at}.dialog: must be one of ${Object.keys(DIALOG_KINDS).join(", ")}`);
		return undefined;
	}
	// What validation itself fills in (multiSelect and allowOther false, options as {label}) passes again: the host re-validates.
	for (const key of ["multiSelect", "allowOther", "recommended", "share", "header"] as const)
		if (raw[key] !== undefined && raw[key] !== false) problems.push(`${at}.${key}: a relayed dialog has none`);
	if (Array.isArray(raw.options) && raw.options.some((o) => isRecord(o) && (o.description !== undefined || o.preview !== undefined)))
		problems.push(`${at}.options: a relayed select's options are plain labels`);
	return dialog as RelayedDialog;
}

/**
 * One problem per parameter of `raw` not among `known`: named, cut short, up to NAMED_UNKNOWN, the
 * rest counted. Both sides check every request, so no list of keys is built unless one is unknown.
 */
function unknownParameters(raw: Record<string, unknown>, known: readonly string[], problems: string[]): void {
	let unknown = 0;
	for (const key in raw) {
		if (!Object.hasOwn(raw, key) || known.includes(key)) continue;
		if (++unknown <= NAMED_UNKNOWN)
			problems.push(`parameters: ${JSON.stringify(cutText(key, UNKNOWN_NAME_CHARS))} is not a parameter (known: ${known.join(", ")})`);
	}
	if (unknown > NAMED_UNKNOWN) problems.push(`parameters: ${unknown - NAMED_UNKNOWN} more are not parameters either`);
}

/** The ids and the budget a wait names (each when it names it), or every problem found. */
export type WaitValidation = Checked<{ requestIds?: string[]; timeoutMs?: number }, { problems: string[] }>;

/** The wait's parameters (pi's wait_for_host_answers and the MCP server's); any other is refused by name. */
const WAIT_PARAMETERS = ["requestIds", "timeoutMs"];

/** Validates a wait's parameters, worded as the ask tool's; none at all is a wait for every open request. */
export function validateWaitParams(raw: unknown): WaitValidation {
	if (raw === undefined) return { ok: true };
	if (!isRecord(raw)) return { ok: false, problems: ["parameters: must be an object"] };
	const problems: string[] = [];
	unknownParameters(raw, WAIT_PARAMETERS, problems);
	const { requestIds, timeoutMs } = raw;
	if (requestIds !== undefined && (!Array.isArray(requestIds) || !requestIds.every((id) => typeof id === "string")))
		problems.push("requestIds: must be an array of request ids (strings)");
	if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs)))
		problems.push("timeoutMs: must be a finite number of milliseconds");
	if (problems.length > 0) return { ok: false, problems };
	return {
		ok: true,
		...(requestIds === undefined ? {} : { requestIds: requestIds as string[] }),
		...(timeoutMs === undefined ? {} : { timeoutMs: timeoutMs as number }),
	};
}

/** Validates the tool's parameters; on failure lists every problem, each naming where it is. */
export function validateAskParams(raw: unknown, options: ValidateOptions = {}): ValidationResult {
	const problems: string[] = [];
	if (!isRecord(raw)) return { ok: false, problems: ['parameters: must be an object with a "questions" array'] };
	const { questions, timeoutMs, wait } = raw;
	let checked: Question[] = [];
	const before = checkedBefore(questions, options.dialogs === true);
	unknownParameters(raw, PARAMETERS, problems);
	if (before) checked = before;
	else if (!Array.isArray(questions)) problems.push("questions: must be an array");
	else if (questions.length < LIMITS.questions.min) problems.push("questions: at least one question is required");
	else if (questions.length > LIMITS.questions.max) problems.push(`questions: has ${questions.length}, at most ${LIMITS.questions.max} in one call`);
	else {
		// Sized up front, as checkOptions' list: it lives as long as the request.
		checked = new Array<Question>(questions.length);
		let count = 0;
		// Indexed, so a hole in a sparse array reads as undefined and is reported, not skipped.
		for (let i = 0; i < questions.length; i++) {
			const question = checkQuestion(questions[i], `questions[${i}]`, problems, options.dialogs === true);
			if (question) checked[count++] = question;
		}
		if (count < checked.length) checked = checked.slice(0, count);
		let reported: string[] | undefined;
		for (let i = 0; i < checked.length; i++) {
			const id = checked[i]!.id;
			if (id === undefined || reported?.includes(id) || !checked.some((q, k) => k < i && q.id === id)) continue;
			(reported ??= []).push(id);
			problems.push(`questions: id ${JSON.stringify(id)} is used more than once`);
		}
	}
	if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs)))
		problems.push("timeoutMs: must be a finite number of milliseconds");
	if (wait !== undefined && typeof wait !== "boolean") problems.push("wait: must be true or false");
	if (problems.length > 0) return { ok: false, problems };
	if (!before) keepChecked(checked, options.dialogs === true);
	const valid: ValidationResult & { ok: true } = { ok: true, questions: checked };
	if (typeof timeoutMs === "number") valid.timeoutMs = timeoutMs;
	if (typeof wait === "boolean") valid.wait = wait;
	return valid;
}
