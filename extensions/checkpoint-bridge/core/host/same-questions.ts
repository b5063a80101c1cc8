/**
 * "Ask the human once": which open requests ask the same question at the same time. A request of
 * another session that asks a question an open request already has joins it, and takes that
 * answer instead of showing the question again. Indexed by question key, so every operation
 * costs O(questions of the request), not a scan of everything open.
 *
 * Across trust boundaries (ADR-0003): a request joins only one of the same origin (the same
 * process, or the same connection of a transport), unless both questions say `share: "any"`; and
 * typed text (a free-text answer, "Other" typed in a choice, or a note added to any answer) never
 * crosses origins. An answer carried in the asker's own request (re-sent after a restart) is that
 * asker's word, not the human's: it is never shared (docs/security.md).
 */

import type { Answer, AnswerPlace } from "../../model/answer.ts";
import { questionKey } from "../../model/answer-check.ts";
import type { Question } from "../../model/question.ts";
import type { AskerIdentity } from "../shared/identity.ts";
import type { AnswerEntry, RequestRecord } from "../shared/request-record.ts";

/** What the index needs of an open request. */
export interface Asking {
	readonly request: { readonly asker: AskerIdentity; readonly origin?: string };
	readonly questions: readonly Question[];
	/** Answers by question index, as they come, each with where it was given as far as known. */
	readonly entries: readonly ({ readonly answer: Answer; readonly place?: AnswerPlace } | undefined)[];
}

interface Links<T> {
	/** Per question: its key. */
	keys: string[];
	/** Per question: the older request of another session this one takes the answer from. */
	joined: (T | undefined)[];
	/** Per question: the requests that joined it; made when the first one does (most requests are never joined). */
	sharedWith: (Set<T> | undefined)[];
	/** Requests that joined one of this one's questions; made when the first one does. */
	dependents?: Set<T>;
}

const sameOrigin = (a: Asking, b: Asking) => a.request.origin === b.request.origin;

/** Whether `taker` may take `owner`'s `answer`: never a carried one; always within one origin; across origins never typed text, a note included. */
const mayShare = (taker: Asking, owner: Asking, answer: Answer) =>
	answer.source !== "carried" && (sameOrigin(taker, owner) || (answer.kind !== "text" && answer.kind !== "other" && answer.note === undefined));

const NONE: readonly never[] = Object.freeze([]);

export class SameQuestions<T extends Asking> {
	/** Open requests by question key, oldest first: one request alone, or a set of them. */
	readonly #byKey = new Map<string, T | Set<T>>();
	/** Weak: a settled request's links live as long as a request that joined it can still read them. */
	readonly #links = new WeakMap<T, Links<T>>();

	/** Registers an open request: per question, it joins the oldest open request of another session asking the same. */
	add(entry: T): void {
		const keys = entry.questions.map(questionKey);
		const joined = keys.map((key, i) => this.#oldestOtherAsking(entry, key, i));
		this.#links.set(entry, { keys, joined, sharedWith: [] });
		joined.forEach((owner, i) => {
			if (!owner) return;
			const links = this.#links.get(owner)!;
			const at = links.keys.indexOf(keys[i]!);
			(links.sharedWith[at] ??= new Set()).add(entry);
			(links.dependents ??= new Set()).add(entry);
		});
		for (const key of keys) {
			const same = this.#byKey.get(key);
			if (same === undefined) this.#byKey.set(key, entry);
			else if (same instanceof Set) same.add(entry);
			else if (same !== entry) this.#byKey.set(key, new Set([same, entry]));
		}
	}

	/** Forgets a request that settled: nobody joins it any more. Its dependents keep what they joined. */
	remove(entry: T): void {
		for (const key of this.#links.get(entry)?.keys ?? []) {
			const same = this.#byKey.get(key);
			if (same === entry) this.#byKey.delete(key);
			else if (same instanceof Set) {
				same.delete(entry);
				if (same.size === 0) this.#byKey.delete(key);
			}
		}
	}

	/** The answer the joined request got for question `index`, marked as shared; undefined while it has none. */
	sharedAnswer(entry: T, index: number): Answer | undefined {
		const links = this.#links.get(entry);
		const owner = links?.joined[index];
		if (!links || !owner) return undefined;
		const answer = owner.entries[this.#links.get(owner)?.keys.indexOf(links.keys[index]!) ?? -1]?.answer;
		// Typed text stays with its origin: a joiner from elsewhere asks the human itself.
		if (!answer || !mayShare(entry, owner, answer)) return undefined;
		const question = entry.questions[index]!;
		const { id: _ownerId, ...rest } = answer;
		return {
			...rest,
			question: question.question,
			...(question.id !== undefined ? { id: question.id } : {}),
			source: "shared",
			sharedWith: [owner.request.asker.label],
		};
	}

	/** Where the answer `sharedAnswer` gives for question `index` of `entry` was given, when known. */
	sharedPlace(entry: T, index: number): AnswerPlace | undefined {
		const links = this.#links.get(entry);
		const owner = links?.joined[index];
		if (!links || !owner) return undefined;
		return owner.entries[this.#links.get(owner)?.keys.indexOf(links.keys[index]!) ?? -1]?.place;
	}

	/** `answer` to question `index` of `entry`, naming every asker that joined that question. */
	withSharers(entry: T, index: number, answer: Answer): Answer {
		const sharers = this.#links.get(entry)?.sharedWith[index];
		if (sharers === undefined) return answer;
		const joiners = [...sharers].filter((joiner) => mayShare(joiner, entry, answer));
		const others = [...new Set(joiners.map((joiner) => joiner.request.asker.label))].filter((label) => !answer.sharedWith?.includes(label));
		return others.length ? { ...answer, sharedWith: [...(answer.sharedWith ?? []), ...others] } : answer;
	}

	/** Requests that joined one of `entry`'s questions: they may be complete once it answers. */
	dependents(entry: T): readonly T[] {
		const dependents = this.#links.get(entry)?.dependents;
		return dependents ? [...dependents] : NONE;
	}

	#oldestOtherAsking(entry: T, key: string, index: number): T | undefined {
		const question = entry.questions[index]!;
		const same = this.#byKey.get(key);
		for (const other of same === undefined ? NONE : same instanceof Set ? same : [same]) {
			if (other.request.asker.sessionId === entry.request.asker.sessionId) continue;
			if (sameOrigin(entry, other)) return other;
			// Across origins only when both ask to share, and never free text.
			const theirs = other.questions[this.#links.get(other)?.keys.indexOf(key) ?? -1];
			if (question.kind !== "text" && question.share === "any" && theirs?.share === "any") return other;
		}
		return undefined;
	}
}

/** Where an answer is written into a record: the book's step (book.ts). */
interface Answering {
	answer(record: RequestRecord, index: number, entry: AnswerEntry | undefined): void;
}

/**
 * Fills every question of a queued request that has no answer yet from identical questions of other
 * askers, when each has one: how many answers it took so, or undefined (nothing taken) when any is still open.
 */
export function completeFromShared(same: SameQuestions<RequestRecord>, book: Answering, record: RequestRecord): number | undefined {
	// Asked of every request as it comes: a loop that allocates nothing finds most of them still open.
	for (let i = 0; i < record.questions.length; i++) if (record.entries[i] === undefined && same.sharedAnswer(record, i) === undefined) return undefined;
	const filled = record.questions.map((_, i) => record.entries[i]?.answer ?? same.sharedAnswer(record, i));
	if (filled.some((a) => a === undefined)) return undefined;
	filled.forEach((answer, i) => {
		if (record.entries[i] === undefined) book.answer(record, i, { answer: answer!, place: same.sharedPlace(record, i) });
	});
	return filled.filter((a) => a?.source === "shared").length;
}

/** Takes the answer of an identical question another asker already got into question `index`, when there is one; true when it did. */
export function shareAnswer(same: SameQuestions<RequestRecord>, book: Answering, record: RequestRecord, index: number): boolean {
	const shared = same.sharedAnswer(record, index);
	if (!shared) return false;
	book.answer(record, index, { answer: shared, place: same.sharedPlace(record, index) });
	return true;
}
