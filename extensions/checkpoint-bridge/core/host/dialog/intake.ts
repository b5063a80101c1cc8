/**
 * Taking a request in: the checks every request passes, the cap of requests one asker may have open,
 * the budget left, and the answers it brings (a hand-over's record, or a re-sent request's); and the
 * open requests it goes into: each one's record, which the book keeps, what lives only while this
 * host queues or shows it, and every index of them, kept in step in one place.
 */
import type { Answer } from "../../../model/answer.ts";
import { answerProblem, copyAnswer } from "../../../model/answer-check.ts";
import type { Checked } from "../../../model/check.ts";
import { MAX_OPEN_PER_ASKER, MAX_REQUEST_ID_LENGTH } from "../../../model/limits.ts";
import type { Question } from "../../../model/question.ts";
import { sanitiseText, shownValue } from "../../../model/sanitise.ts";
import { validateAskParams } from "../../../model/validate.ts";
import { msLeft } from "../../shared/config.ts";
import { checkedAsker } from "../../shared/identity.ts";
import { PROTOCOL_VERSION, type RelayRequest, replyChannel } from "../../shared/protocol.ts";
import { type AnswerEntry, type CheckedRequest, givenAnswers, type RequestRecord } from "../../shared/request-record.ts";
import { ArrivalNotices } from "../arrival-notices.ts";
import { SameQuestions } from "../same-questions.ts";

/** What a request brings that the host did not take from an asker just now: a hand-over's record, written down. */
export interface Prior {
	entries: readonly (AnswerEntry | null | undefined)[];
	queuedAt: number;
}

/** A request taken in (its record, queued, whose open requests it counts among, the ms its budget has left), or the result it is refused with. */
export type Intake =
	| { ok: true; record: RequestRecord; asker: string; remaining: number }
	| { ok: false; end: "refused" | "timeout"; answers: Answer[]; note: string };

/** Relayed dialogs of other extensions come over every transport (interop/dialog-relay.ts). */
const WITH_DIALOGS = { dialogs: true } as const;
/** No answer yet, for every question of a request that brings none. */
const none = () => undefined;
/** How a request sent again after its host went away is marked wherever its asker is shown. */
const RESENT_MARK = "asked before the restart";

/** `label` without the mark a hand-over gave it, whole or cut with the label (a written-down label comes back through the cut). */
function unmarked(label: string): string {
	const at = label.lastIndexOf(" · ");
	if (at < 0) return label;
	const tail = label.slice(at + 3).replace(/…$/, "");
	return tail.length > 0 && RESENT_MARK.startsWith(tail) ? label.slice(0, at) : label;
}

/**
 * Takes a request in, or says why not. `openOf`: how many requests an asker has open here; requests
 * taken over from a replaced host were counted there, and are never refused.
 */
export function takeIn(raw: RelayRequest, prior: Prior | undefined, openOf: (asker: string) => number): Intake {
	const checked = checkRequest(raw);
	if (!checked.ok) return { ok: false, end: "refused", answers: [], note: checked.reason };
	const { request } = checked;
	const { questions } = request;
	const asker = askerKey(request);
	const open = openOf(asker);
	if (!prior && open >= MAX_OPEN_PER_ASKER)
		return {
			ok: false,
			end: "refused",
			answers: [],
			note: `The asker already has ${open} requests open at the host, the most one asker session may have (${MAX_OPEN_PER_ASKER}); ask again once one has settled.`,
		};
	const entries = broughtEntries(raw, questions, prior);
	const remaining = msLeft(request.deadline);
	if (remaining <= 0 && !prior)
		return { ok: false, end: "timeout", answers: givenAnswers({ entries }), note: "The call's budget had run out before it reached the host." };
	// Sent again after a restart, it was asked when its call started: every wait counts from then, as the asker's own does (never from the future).
	const asked = request.resent === true && Number.isFinite(request.createdAt) ? request.createdAt : Number.POSITIVE_INFINITY;
	const queuedAt = prior?.queuedAt ?? Math.min(Date.now(), asked);
	return { ok: true, record: { request, questions, entries, queuedAt, state: { is: "queued" } }, asker, remaining };
}

/**
 * The request as the host keeps it, or what is wrong with it. Everything the asker wrote that
 * reaches a dialog, a notice, the status line, the audit trail or an observer is neutralised here
 * (sanitise.ts), by the same validation the asker applied to its own questions.
 */
function checkRequest(request: RelayRequest): Checked<{ request: CheckedRequest }, { reason: string }> {
	const refuse = (reason: string) => ({ ok: false as const, reason });
	if (request.v !== PROTOCOL_VERSION)
		return refuse(`The asker speaks checkpoint-bridge protocol v${shownValue(request.v)}; the host speaks v${PROTOCOL_VERSION}.`);
	if (request.id.length > MAX_REQUEST_ID_LENGTH || sanitiseText(request.id) !== request.id)
		return refuse(`The request id must be at most ${MAX_REQUEST_ID_LENGTH} characters, none of them control or bidi characters.`);
	const checked = validateAskParams({ questions: request.questions }, WITH_DIALOGS);
	if (!checked.ok) return refuse(`Invalid parameters: ${checked.problems.join("; ")}.`);
	const who = checkedAsker(request.asker);
	if (!who.ok) return refuse(who.reason);
	if (!Number.isFinite(request.deadline) || !Number.isFinite(request.dialogTimeoutMs)) return refuse("The request has no valid deadline.");
	if (request.origin !== undefined && typeof request.origin !== "string") return refuse("The request's origin must be a string.");
	if (request.askerId !== undefined && (typeof request.askerId !== "string" || request.askerId.length > MAX_REQUEST_ID_LENGTH))
		return refuse(`The asker's request id must be a string of at most ${MAX_REQUEST_ID_LENGTH} characters.`);
	const { v, id, deadline, dialogTimeoutMs, createdAt, origin } = request;
	// A re-sent request is shown marked, wherever its asker is named; once, however often it is handed over.
	const asker = request.resent === true ? { ...who.asker, label: `${unmarked(who.asker.label)} · ${RESENT_MARK}` } : who.asker;
	// Field by field, no spreads: this runs for every request.
	const taken: CheckedRequest = { v, id, asker, questions: checked.questions, deadline, dialogTimeoutMs, createdAt };
	if (origin !== undefined) taken.origin = origin;
	if (request.askerId !== undefined) taken.askerId = request.askerId;
	if (request.later === true) taken.later = true;
	if (request.resent === true) taken.resent = true;
	return { ok: true, request: taken };
}

/**
 * The answers a re-sent request says were given before (NATS, ADR-0009; the local endpoint after a
 * restart): only those that pass the one answer check for a question of the request count, the rest
 * is asked again, never guessed.
 */
const resentAnswers = (request: RelayRequest, questions: readonly Question[]): Answer[] =>
	Array.isArray(request.answers)
		? request.answers.filter(
				(a): a is Answer =>
					typeof a === "object" &&
					a !== null &&
					typeof a.question === "string" &&
					typeof a.answer === "string" &&
					questions.some((q) => q.question === a.question && q.id === a.id && answerProblem(q, a) === undefined),
			)
		: [];

/**
 * The answers a request brings, by question index: a prior record's (copied, so every reply is
 * built of the host's own data, see sealBuilt), or those a re-sent request says were given (NATS,
 * ADR-0009): those questions are not asked again.
 */
function broughtEntries(raw: RelayRequest, questions: readonly Question[], prior: Prior | undefined): (AnswerEntry | undefined)[] {
	if (prior)
		return questions.map((q, i) => {
			const entry = prior.entries[i];
			if (!entry || entry.answer.question !== q.question || entry.answer.id !== q.id) return undefined;
			return { answer: copyAnswer(entry.answer), ...(entry.place !== undefined ? { place: entry.place } : {}) };
		});
	if (!Array.isArray(raw.answers)) return questions.map(none);
	const given = resentAnswers(raw, questions);
	return questions.map((q) => {
		const answer = given.find((a) => a.question === q.question && a.id === q.id);
		// The asker's word, not the human's: carried, whatever source it names, and never shared (same-questions.ts).
		return answer ? { answer: copyAnswer(answer, "carried") } : undefined;
	});
}

/** An open request as the dialog host keeps it: its record, and what lives only while this host queues or shows it. */
export interface DialogRequest {
	/** Its record, in the book (core/host/book.ts), which keeps its one timer. */
	readonly record: RequestRecord;
	/** While it shows: whatever is open closes by this (any end of the request aborts it). The controller `dequeue` was: p-queue no longer knows it. */
	open?: AbortController;
	/** Its task's signal while it waits its turn: a request that ends then leaves the dialog queue by it (p-queue's `signal`); `open` once its task starts. */
	dequeue?: AbortController;
	/** Its turn among its asker's requests (round robin, ADR-0024); 0 for the host's own, which go first. */
	round: number;
	/** Whose open requests it counts among (`askerKey`), worked out once. */
	readonly asker: string;
	/** Its reply channel, built once: one string the bus keys on for every reply, not a new one per reply. */
	readonly channel: `reply:${string}`;
}

/** A request just taken in, or shown again from late: no timer yet, its reply channel built once. */
export const dialogRequest = (record: RequestRecord, asker: string, requestId: string): DialogRequest => ({
	record,
	round: 0,
	asker,
	channel: replyChannel(requestId),
});

/**
 * Whose open requests count together against the cap: one asker session over every connection of
 * one transport (an origin's part before its colon, protocol.ts). A pooled client opens another
 * connection, a new origin, every 128 calls: counted per origin, 10,000 calls put 1,264 in the queue.
 */
export const askerKey = (request: RelayRequest) => `${request.origin?.split(":", 1)[0] ?? ""}\n${request.asker.sessionId}`;

/** One asker session's open requests: how many, and the round its latest one was given. */
interface AskerTurns {
	open: number;
	round: number;
}

/** Every index the host keeps of its open requests, kept in step in one place: a request goes into all of them and out of all of them. */
export class OpenRequests {
	/** By request id, oldest first. */
	readonly byId = new Map<string, DialogRequest>();
	/** Identical questions of different sessions, shown once. */
	readonly same = new SameQuestions<RequestRecord>();
	/** Open requests per asker session and transport, for the cap and the round robin. */
	readonly #byAsker = new Map<string, AskerTurns>();
	readonly arrivals: ArrivalNotices<RequestRecord>;

	constructor(notify: (message: string) => void) {
		this.arrivals = new ArrivalNotices(notify);
	}

	openOf(asker: string): number {
		return this.#byAsker.get(asker)?.open ?? 0;
	}

	/**
	 * The round of an open request's turn: one after its asker's latest, and never before the round
	 * being shown (`served`). So an asker's next request goes ahead of every other asker's later
	 * ones, and one that has waited is not overtaken by a newcomer's whole backlog (ADR-0024).
	 */
	nextRound(asker: string, served: number): number {
		const turns = this.#byAsker.get(asker)!;
		turns.round = Math.max(turns.round, served) + 1;
		return turns.round;
	}

	add(entry: DialogRequest): void {
		this.same.add(entry.record);
		this.byId.set(entry.record.request.id, entry);
		const turns = this.#byAsker.get(entry.asker);
		if (turns) turns.open++;
		else this.#byAsker.set(entry.asker, { open: 1, round: 0 });
	}

	/** Every open request, the one on screen (`showing`) first, so the next host shows it again before anything else; then in the order taken. */
	showingFirst(showing: DialogRequest | undefined): DialogRequest[] {
		const all = showing && this.byId.get(showing.record.request.id) === showing ? [showing] : [];
		for (const other of this.byId.values()) if (other !== showing) all.push(other);
		return all;
	}

	/** Deletes every trace of a request this host no longer has open. */
	remove(entry: DialogRequest): void {
		const { record } = entry;
		this.byId.delete(record.request.id);
		this.same.remove(record);
		this.arrivals.gone(record);
		const turns = this.#byAsker.get(entry.asker)!;
		// An asker with nothing open starts again at the round being shown.
		if (--turns.open === 0) this.#byAsker.delete(entry.asker);
	}
}
