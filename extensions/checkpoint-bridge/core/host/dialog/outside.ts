/**
 * Answers from outside the terminal (the web page, a request link, mail, another extension over the
 * bus's `answer` event): checked by the one answer check, applied whole or not at all, the first
 * answer wins.
 */
import type { Answer, AnswerPlace } from "../../../model/answer.ts";
import { answeredWhere } from "../../../model/answer-places.ts";
import type { RequestEnd } from "../../../model/result.ts";
import { type OutsideAnswerReply, parseOutsideAnswer, resolveOutsideAnswer } from "../../shared/outside-answers.ts";
import type { RequestRecord } from "../../shared/request-record.ts";
import type { RequestBook } from "../book.ts";

/** The note of a request cancelled from outside. */
const OUTSIDE_CANCEL_NOTE = "The question was cancelled from outside the terminal.";

/** What an outside answer needs of the dialog host: its one end. */
interface OutsideTarget {
	end(record: RequestRecord, end: RequestEnd, note?: string): void;
}

/**
 * An answer from outside the terminal to a request of the book (queued, showing or late): applied
 * whole or not at all; the first answer wins.
 */
export function answerFromOutside(book: Pick<RequestBook, "get" | "answer">, target: OutsideTarget, raw: unknown): OutsideAnswerReply {
	const parsed = parseOutsideAnswer(raw);
	if (!parsed.ok) return parsed.reply;
	const { message } = parsed;
	const found = book.get(message.requestId);
	// Parked, it belongs to the next host (or ends at the grace's end): not answerable in between.
	const record = found?.state.is === "parked" ? undefined : found;
	// `not_found` keeps the observer contract's snake case (docs/observers.md), as core/shared/outside-answers.ts says.
	if (!record) return { ok: false, code: "not_found", reason: `no open request ${JSON.stringify(message.requestId)} (unknown, or already settled)` };
	if ("cancel" in message) {
		// A cancel that names its place is a human's Decline (the page, a phone): the asker is told where, as Esc tells it.
		const note = message.place ? `The user declined the question ${answeredWhere([{ source: message.source, place: message.place }])}.` : OUTSIDE_CANCEL_NOTE;
		target.end(record, "cancelled-outside", note);
		return { ok: true };
	}
	const resolved = resolveOutsideAnswer(record.questions, message.answers, message.source);
	if (!resolved.ok) return resolved.reply;
	fillEntries(book, record, resolved.answers, message);
	target.end(record, "answered-outside");
	return { ok: true };
}

/** Takes an outside answer's answers for the questions that have none yet (the first answer wins), each with the place it names. */
function fillEntries(
	book: Pick<RequestBook, "answer">,
	record: RequestRecord,
	answers: readonly (Answer | undefined)[],
	message: { place?: AnswerPlace; source?: string },
): void {
	const place = message.place ?? (message.source === "outside" ? "outside" : undefined);
	answers.forEach((answer, i) => {
		if (record.entries[i] !== undefined || answer === undefined) return;
		book.answer(record, i, { answer, ...(place !== undefined ? { place } : {}) });
	});
}
