/**
 * The mails checkpoint-bridge writes: a request (its questions, the options numbered, the one-tap links
 * when the page is reachable, how to reply), and the short ones that answer a reply or say how a
 * request ended. Plain text only: nothing in them runs, and asker text stays text.
 */
import type { Question } from "../../model/question.ts";
import type { AwayActions } from "../web/away/one-tap.ts";
import { numberedOptions } from "./reply.ts";

/** What a mail about one request needs to know. */
export interface MailedRequest {
	requestId: string;
	asker: string;
	questions: Question[];
}

const oneLine = (text: string, max = 120) => {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export const subjectOf = (request: MailedRequest) =>
	`[checkpoint-bridge] ${oneLine(request.asker, 40)} asks: ${oneLine(request.questions[0]?.question ?? "", 80)}${request.questions.length > 1 ? ` (+${request.questions.length - 1})` : ""}`;

function questionText(q: Question, index: number, count: number): string[] {
	const lines = [`${count > 1 ? `${index + 1}. ` : ""}${q.header ? `[${q.header}] ` : ""}${q.question}`];
	if (q.details) lines.push(...q.details.split("\n").map((l) => `   ${l}`));
	const options = numberedOptions(q);
	options.forEach((o, i) => {
		const description = q.options?.find((option) => option.label === o)?.description;
		lines.push(`   ${i + 1}) ${o}${o === q.recommended ? " (recommended)" : ""}${description ? `: ${oneLine(description)}` : ""}`);
	});
	if (q.kind === "choice" && q.multiSelect) lines.push("   (several: their numbers, separated by commas)");
	if (q.kind === "choice" && q.allowOther !== false && q.dialog === undefined) lines.push("   or write your own answer");
	if (q.kind === "text") lines.push(`   (your answer${q.placeholder ? `, e.g. ${oneLine(q.placeholder, 60)}` : ""})`);
	return lines;
}

/** The request's mail: its questions, then the one-tap links (when the page is reachable), then how to reply. */
export function requestBody(request: MailedRequest, actions: AwayActions | undefined): string {
	const count = request.questions.length;
	const lines = [`${request.asker} asks:`, ""];
	request.questions.forEach((q, i) => lines.push(...questionText(q, i, count), ""));
	if (actions?.buttons.length) {
		lines.push("Answer in one tap (each link opens a page with one button to press):");
		for (const b of actions.buttons) lines.push(`   ${b.label}: ${b.answer}`);
		lines.push("");
	}
	if (actions) lines.push(`Or open the request: ${actions.link}`, "");
	lines.push(
		count > 1
			? "Or reply to this mail: one line per question, in order (an option's number or text, yes or no, or your own words)."
			: "Or reply to this mail with an option's number or its text, yes or no, or your own words.",
		"Only the text above the quoted mail counts; your signature is ignored.",
	);
	return lines.join("\n");
}

/** A reply that could not be applied: why, and what there is to answer. */
export function refusalBody(request: MailedRequest | undefined, reason: string): string {
	const lines = [`Your reply was not applied: ${reason}.`, ""];
	if (request) {
		lines.push("The question is still open:", "");
		request.questions.forEach((q, i) => lines.push(...questionText(q, i, request.questions.length), ""));
		lines.push("Reply to this mail again with your answer.");
	}
	return lines.join("\n");
}

/** A request that ended: how, in the page's words. */
export const endedBody = (request: MailedRequest, how: string) =>
	`${request.asker}'s question "${oneLine(request.questions[0]?.question ?? "")}" has ended: ${how}.\nNothing more is needed; a reply to it changes nothing.`;
