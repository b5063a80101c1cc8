/**
 * A reply mail's answer: the text above the quote and the signature, read as the mail asked for it
 * (an option's number or its text, yes or no, free text, several numbers for a multi-select; with
 * several questions, one line per question in order). The result goes through the core's one
 * answer check like any outside answer; this only says what the human meant, or why it fits nothing.
 */
import EmailReplyParser from "email-reply-parser";
import type { OutsideAnswerValue } from "../../core/shared/outside-answers.ts";
import type { Checked } from "../../model/check.ts";
import { type Question, shownLabels } from "../../model/question.ts";

/** Characters and lines of a reply read for its answer, which is at its top: the reply parser's patterns take time growing faster than the text, the lines most. @default 8000 and 100 */
const REPLY_READ = { chars: 8_000, lines: 100 };
/** Outlook's quote header: a quote without `>` lines, which the reply parser takes for the reply's own text. */
const OUTLOOK_QUOTE = /^-{2,}\s*(original message|forwarded message)/i;

/**
 * The part of a reply that is the human's: email-reply-parser (maintained, knows the quote headers and
 * signatures of the common mail programs in several languages) drops the quote and the signature.
 * What it is given is bounded first: long runs of blanks and of empty lines are shortened.
 */
export function ownText(text: string): string {
	const lines: string[] = [];
	for (const line of text.slice(0, REPLY_READ.chars * 4).split(/\r\n?|\n/)) {
		if (OUTLOOK_QUOTE.test(line.trim()) || lines.length === REPLY_READ.lines) break;
		const short = line.trimEnd().replace(/[ \t\u00a0]{8,}/g, "        ");
		if (short || lines.at(-1)) lines.push(short);
	}
	const read = new EmailReplyParser().read(lines.join("\n").slice(0, REPLY_READ.chars));
	return read
		.getVisibleText()
		.split("\n")
		.map((line) => line.trimEnd())
		.join("\n")
		.trim();
}

/** The options of a question as the mail numbers them, in the order every surface shows them (the recommended one first); a confirm's are Yes and No. */
export function numberedOptions(q: Question): string[] {
	if (q.kind === "confirm") return ["Yes", "No"];
	return shownLabels(q);
}

/** How the mail lists a question's options, for a reply that fits none. */
function optionsText(q: Question): string {
	const options = numberedOptions(q);
	const own = q.kind === "choice" && q.allowOther !== false ? "; or your own words" : "";
	return options.length ? `${options.map((o, i) => `${i + 1}. ${o}`).join(", ")}${own}` : "any text";
}

type One = Checked<{ value: OutsideAnswerValue }, { reason: string }>;

const YES = /^(y|yes|yep|ok|okay|sure|1)[.!]?$/i;
const NO = /^(n|no|nope|2)[.!]?$/i;

function pick(q: Question, given: string): One {
	const options = numberedOptions(q);
	const number = /^#?(\d{1,3})[.)]?$/.exec(given);
	if (number) {
		const index = Number(number[1]) - 1;
		if (options[index] !== undefined) return { ok: true, value: options[index] };
		return { ok: false, reason: `there is no option ${number[1]}: ${optionsText(q)}` };
	}
	const label = options.find((o) => o.toLowerCase() === given.toLowerCase());
	if (label !== undefined) return { ok: true, value: label };
	if (q.allowOther !== false && q.dialog === undefined) return { ok: true, value: given };
	return { ok: false, reason: `"${given.slice(0, 80)}" is none of the options: ${optionsText(q)}` };
}

function answerOne(q: Question, given: string): One {
	if (q.dialog === "custom") return { ok: false, reason: "this question is a form of its own: answer it in the terminal" };
	if (!given) return { ok: false, reason: `no answer: ${optionsText(q)}` };
	if (q.kind === "text") return { ok: true, value: given };
	if (q.kind === "confirm") {
		if (YES.test(given)) return { ok: true, value: true };
		if (NO.test(given)) return { ok: true, value: false };
		return { ok: false, reason: `"${given.slice(0, 80)}" is neither yes nor no: 1. Yes, 2. No` };
	}
	if (!q.multiSelect) return pick(q, given);
	// Several numbers ("1, 3", "1 3", "1 and 3") or several labels separated by commas.
	const parts = /^[\d\s,;#.]+(and[\d\s,;#.]+)*$/i.test(given) ? given.split(/[\s,;]+|and/i) : given.split(/[,;\n]/);
	const values: string[] = [];
	for (const part of parts.map((p) => p.trim()).filter(Boolean)) {
		const one = pick(q, part);
		if (!one.ok) return one;
		if (!values.includes(one.value as string)) values.push(one.value as string);
	}
	return values.length ? { ok: true, value: values } : { ok: false, reason: `no answer: ${optionsText(q)}` };
}

/** The answers a reply gives, one per question, or why it gives none (naming the options there are). */
export function answersFromReply(questions: Question[], text: string): Checked<{ answers: OutsideAnswerValue[] }, { reason: string }> {
	const own = ownText(text);
	if (!own) return { ok: false, reason: "the reply has no answer above the quoted mail" };
	if (questions.length === 1) {
		const q = questions[0]!;
		// Free text keeps its lines; anything else is its first line.
		const given =
			q.kind === "text"
				? own
				: own
						.split("\n")
						.find((l) => l.trim())!
						.trim();
		const one = answerOne(q, given);
		return one.ok ? { ok: true, answers: [one.value] } : { ok: false, reason: one.reason };
	}
	const lines = own
		.split("\n")
		.map((l) => l.trim())
		.filter(Boolean);
	if (lines.length !== questions.length)
		return { ok: false, reason: `${questions.length} questions need ${questions.length} lines, one answer each in order; the reply has ${lines.length}` };
	const answers: OutsideAnswerValue[] = [];
	for (const [i, q] of questions.entries()) {
		// "2. sqlite" or "2) sqlite" names the question; the rest is its answer.
		const line = lines[i]!.replace(new RegExp(`^${i + 1}[.):]\\s+(?=\\S)`), "");
		const one = answerOne(q, line);
		if (!one.ok) return { ok: false, reason: `question ${i + 1}: ${one.reason}` };
		answers.push(one.value);
	}
	return { ok: true, answers };
}
