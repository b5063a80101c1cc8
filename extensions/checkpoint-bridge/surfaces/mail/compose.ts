/**
 * The mails checkpoint-bridge writes: a request (its questions, the options numbered in the order
 * every surface shows them, how to reply, then the one-tap links when the page is reachable), and the short ones that answer a reply or say how a
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

/** `text` on one line, cut at a word's end to at most `max` characters, never inside a parenthesis such as `(pid 7334)`. */
export function cutAtWord(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	if (flat.length <= max) return flat;
	let shown = "";
	for (const word of flat.split(" ")) {
		if (shown.length + (shown ? 1 : 0) + word.length > max - 1) break;
		shown = shown ? `${shown} ${word}` : word;
	}
	// One word longer than the room: cut inside it, as nothing else fits.
	if (!shown) return `${flat.slice(0, max - 1)}…`;
	const open = shown.lastIndexOf("(");
	if (open > shown.lastIndexOf(")")) shown = shown.slice(0, open).trimEnd();
	return `${shown}…`;
}

export const subjectOf = (request: MailedRequest) =>
	`[checkpoint-bridge] ${cutAtWord(request.asker, 64)} asks: ${cutAtWord(request.questions[0]?.question ?? "", 80)}${request.questions.length > 1 ? ` (+${request.questions.length - 1})` : ""}`;

function questionText(q: Question, index: number, count: number): string[] {
	const lines = [`${count > 1 ? `${index + 1}. ` : ""}${q.header ? `[${q.header}] ` : ""}${q.question}`];
	if (q.details) lines.push(...q.details.split("\n").map((l) => `   ${l}`));
	const options = numberedOptions(q);
	options.forEach((o, i) => {
		const description = q.options?.find((option) => option.label === o)?.description;
		lines.push(`   ${i + 1}) ${o}${o === q.recommended ? " (recommended)" : ""}${description ? `: ${cutAtWord(description, 120)}` : ""}`);
	});
	if (q.kind === "choice" && q.multiSelect) lines.push("   (several: their numbers, separated by commas)");
	if (q.kind === "choice" && q.allowOther !== false && q.dialog === undefined) lines.push("   or write your own answer");
	if (q.kind === "text") lines.push(`   (your answer${q.placeholder ? `, e.g. ${cutAtWord(q.placeholder, 60)}` : ""})`);
	return lines;
}

/** The request's mail: who asks, its questions with their options, how to reply, then the one-tap links and the request's page when a phone can reach it. */
export function requestBody(request: MailedRequest, actions: AwayActions | undefined): string {
	const count = request.questions.length;
	const lines = [`${request.asker} asks:`, ""];
	request.questions.forEach((q, i) => lines.push(...questionText(q, i, count), ""));
	lines.push(
		count > 1
			? "To answer, reply to this mail: one line per question, in order (an option's number or text, yes or no, or your own words)."
			: "To answer, reply to this mail with an option's number or its text, yes or no, or your own words.",
		"Only the text above the quoted mail counts; your signature is ignored.",
	);
	if (actions?.buttons.length) {
		lines.push("", "Or answer in one tap (each link opens a page with one button to press):");
		for (const b of actions.buttons) lines.push(`   ${b.label}: ${b.answer}`);
	}
	if (actions) lines.push("", `Or open the request: ${actions.link}`);
	return lines.join("\n");
}

/** A reply that could not be applied: why, and what there is to answer. */
export function refusalBody(request: MailedRequest, reason: string): string {
	const lines = [`Your reply was not applied: ${reason}.`, "", "The question is still open:", ""];
	request.questions.forEach((q, i) => lines.push(...questionText(q, i, request.questions.length), ""));
	lines.push("Reply to this mail again with your answer.");
	return lines.join("\n");
}

/** A request that ended: how, in the page's words. */
export const endedBody = (request: MailedRequest, how: string) =>
	`${request.asker}'s question "${cutAtWord(request.questions[0]?.question ?? "", 120)}" has ended: ${how}.\nNothing more is needed; a reply to it changes nothing.`;
