/**
 * The host session's own questions across a crash or a quit (issue 33, ADR-0021). A question the
 * host session's model asks is recorded in the session before it is shown, and its end after; a
 * session continued or resumed (`pi --continue`, `/resume`) finds the ones recorded but never ended
 * and asks them again through its host, marked as asked before the restart. The original tool call
 * no longer exists, so the envelope arrives as one message (core/delivery/delivery.ts), recorded first: a
 * second start of the same session neither asks nor delivers it again. A dismissal is delivered
 * (and so recorded) like any end: a dismissed question does not open again. An end delivered while
 * the model was in a turn waits as a follow-up that pi writes only when the turn ends: the record
 * carries its envelope, and a start that finds the record without its message delivers it from there
 * (issue 45, ADR-0028), the human not asked again.
 */
import { nanoid } from "nanoid";
import {
	ANSWER_MESSAGE_TYPE,
	type AnswerMessageDetails,
	DELIVERED_ENTRY_TYPE,
	type DeliveredRecord,
	type DeliveryBox,
	deliveredIn,
	type MessageApi,
	sessionPoster,
} from "./core/delivery/delivery.ts";
import { readConfig } from "./core/shared/config.ts";
import type { AskerIdentity } from "./core/shared/identity.ts";
import { processSlot } from "./core/shared/process-slot.ts";
import type { EntryLike } from "./core/shared/session-entry.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";
import type { QuestionInput } from "./model/question.ts";
import type { Envelope } from "./model/result.ts";
import { askHere } from "./route.ts";

/** `customType` of the entry recording an own question before it is shown. @public */
export const OWN_ASKED_ENTRY_TYPE = "checkpoint-bridge:own-asked";
/** `customType` of the entry recording that an own question's call ended (its tool result carries the envelope). @public */
export const OWN_ENDED_ENTRY_TYPE = "checkpoint-bridge:own-ended";

/** What the session records of an own question. */
export interface OwnAsked {
	requestId: string;
	asker: AskerIdentity;
	/** The validated questions, as they were asked. */
	questions: QuestionInput[];
	askedAt: number;
}

const isOwnAsked = (data: unknown): data is OwnAsked => {
	const d = data as Partial<OwnAsked> | undefined;
	return typeof d?.requestId === "string" && typeof d.asker?.label === "string" && Array.isArray(d.questions) && d.questions.length > 0;
};

/** Own questions the entries record as asked and neither ended nor delivered, oldest first. */
export function unendedOwn(entries: readonly EntryLike[]): OwnAsked[] {
	const asked = new Map<string, OwnAsked>();
	const ended = deliveredIn(entries);
	for (const entry of entries) {
		if (entry.type !== "custom") continue;
		if (entry.customType === OWN_ASKED_ENTRY_TYPE && isOwnAsked(entry.data)) asked.set(entry.data.requestId, entry.data);
		else if (entry.customType === OWN_ENDED_ENTRY_TYPE) ended.add(String((entry.data as { requestId?: unknown } | undefined)?.requestId));
	}
	return [...asked.values()].filter((own) => !ended.has(own.requestId));
}

/** An own question whose end was delivered and recorded, with its envelope, but whose message the session never got. */
export interface Unwritten {
	own: OwnAsked;
	record: DeliveredRecord & { envelope: Envelope };
}

/** What makes a delivery and its message the same: a request's end, and its late answer, are two. */
const keyOf = (d: { requestId?: unknown; late?: unknown }) => `${String(d.requestId)}${d.late === true ? ":late" : ""}`;

/**
 * Own questions the entries record as delivered, envelope included, with no answer message for that
 * delivery: pi died while the message waited behind a busy turn (a follow-up is written when the turn
 * ends). Oldest first.
 */
export function unwrittenOwn(entries: readonly EntryLike[]): Unwritten[] {
	const asked = new Map<string, OwnAsked>();
	const records = new Map<string, DeliveredRecord & { envelope: Envelope }>();
	const written = new Set<string>();
	for (const entry of entries) {
		if (entry.type === "custom_message" && entry.customType === ANSWER_MESSAGE_TYPE) written.add(keyOf((entry.details ?? {}) as Partial<AnswerMessageDetails>));
		if (entry.type !== "custom") continue;
		if (entry.customType === OWN_ASKED_ENTRY_TYPE && isOwnAsked(entry.data)) asked.set(entry.data.requestId, entry.data);
		const record = entry.data as Partial<DeliveredRecord> | undefined;
		if (entry.customType === DELIVERED_ENTRY_TYPE && typeof record?.requestId === "string" && typeof record.envelope?.status === "string")
			records.set(keyOf(record), record as DeliveredRecord & { envelope: Envelope });
	}
	const unwritten: Unwritten[] = [];
	for (const [key, record] of records) {
		const own = asked.get(record.requestId);
		if (own && !written.has(key)) unwritten.push({ own, record });
	}
	return unwritten;
}

/**
 * How long the end of an aborted own call waits before it is recorded. pi aborts the running turn
 * before it tells the session it shuts down (a quit, `/resume`, `/new`): an abort followed by the
 * shutdown within this time leaves the question open for the next start; an abort alone (the human
 * stopped the turn) ends it. @default 1000
 */
export const ABORT_SETTLE_MS = 1_000;

/**
 * Records an own question before it is shown. `ended` records its end unless the session is
 * shutting down (`stillHere()` false): a quit leaves the question open, as a crash does. A queued
 * one (`wait: false`) is asked under the returned `requestId`: its delivery's record ends it.
 */
export function recordOwn(
	pi: Pick<MessageApi, "appendEntry">,
	asker: AskerIdentity,
	questions: QuestionInput[],
	stillHere: () => boolean,
): { requestId: string; ended(status: Envelope["status"], aborted: boolean): void } {
	const requestId = nanoid();
	pi.appendEntry(OWN_ASKED_ENTRY_TYPE, { requestId, asker, questions, askedAt: Date.now() } satisfies OwnAsked);
	const end = (status: Envelope["status"]) => {
		if (stillHere()) pi.appendEntry(OWN_ENDED_ENTRY_TYPE, { requestId, status });
	};
	return {
		requestId,
		ended(status, aborted) {
			if (!aborted) return end(status);
			setTimeout(() => end(status), ABORT_SETTLE_MS).unref?.();
		},
	};
}

/** Request ids reopened in this process, shared by every copy of the extension: a question opens once per process. */
const REOPENED_KEY = Symbol.for("checkpoint-bridge.own-reopened");
const reopenedHere = (): Set<string> => processSlot(globalThis, REOPENED_KEY, () => new Set<string>());

/** How a reopened question is asked: the host's normal path, marked as asked before the restart. */
export type AskAgain = (own: OwnAsked, options: { budgetMs: number; dialogTimeoutMs: number }) => Promise<Envelope>;

/** What a message about a question asked before the restart says of it, whatever its envelope. */
const reopenedFrom = (own: OwnAsked, sessionId: string) => ({
	requestId: own.requestId,
	askerSessionId: sessionId,
	asker: own.asker.label,
	questions: own.questions.map((q) => q.question),
	queuedAt: own.askedAt,
	reopened: true as const,
});

/**
 * At the start of a continued or resumed host session: asks every unended own question again and
 * delivers each envelope as one message. `stillHere()` turning false (the session is shutting down)
 * leaves the question open for the next start. `liveHere(id)`: a queued question this process still
 * holds or delivered already (a `/resume` within the process hands its request over) is not asked
 * twice. Resolves when every reopened question has ended.
 */
export async function reopenOwn(
	pi: MessageApi,
	entries: () => readonly EntryLike[],
	sessionId: string,
	ask: AskAgain,
	stillHere: () => boolean,
	liveHere: (requestId: string) => boolean = () => false,
): Promise<void> {
	const poster = sessionPoster(pi, entries);
	const reopened = reopenedHere();
	const config = readConfig();
	for (const { own, record } of unwrittenOwn(entries())) {
		const key = keyOf(record);
		if (reopened.has(key) || liveHere(own.requestId)) continue;
		reopened.add(key);
		// Its record says delivered: the poster that sends it again reads the entries without that record.
		const without = () => entries().filter((entry) => !(entry.customType === DELIVERED_ENTRY_TYPE && keyOf((entry.data ?? {}) as object) === key));
		sessionPoster(pi, without).post({ ...reopenedFrom(own, sessionId), ...(record.late ? { late: true as const } : {}), envelope: record.envelope });
	}
	await Promise.all(
		unendedOwn(entries())
			.filter((own) => !reopened.has(own.requestId) && !liveHere(own.requestId))
			.map(async (own) => {
				reopened.add(own.requestId);
				const envelope = await ask(own, { budgetMs: config.callTimeoutMs, dialogTimeoutMs: config.dialogTimeoutMs });
				if (!stillHere()) return void reopened.delete(own.requestId);
				// The wait counts from when the question was first asked, the restart included.
				const waitedMs = Number.isFinite(own.askedAt) ? { waitedMs: Math.max(0, Date.now() - own.askedAt) } : {};
				poster.post({ ...reopenedFrom(own, sessionId), envelope: { ...envelope, requestId: own.requestId, ...waitedMs } });
			}),
	);
}

/**
 * The host session's own questions as the extension wires them: `record` while the session runs,
 * `reopen` at its next start (through this process's host, under the recorded id its end is
 * delivered with, a late answer's too), `close` at session_shutdown: handed over to the next host
 * instead, a reopened question's answer would reach no session, so it leaves the screen and stays
 * open in the session for its next start. `stillHere()` is false once the session shuts down.
 */
export function ownQuestions(pi: MessageApi, handle: SharedHandle, box: Pick<DeliveryBox, "ownerOf" | "wasDelivered">, stillHere: () => boolean) {
	let reopening: AbortController | undefined;
	// A queued one this process still holds (handed over at /resume) or delivered is not asked again.
	const liveHere = (requestId: string) => box.ownerOf(requestId) !== undefined || box.wasDelivered(requestId);
	return {
		record: (asker: AskerIdentity, questions: QuestionInput[]) => recordOwn(pi, asker, questions, stillHere),
		reopen(entries: () => readonly EntryLike[], sessionId: string): void {
			reopening = new AbortController();
			const { signal } = reopening;
			const again: AskAgain = (own, budget) =>
				// The asking side loads here: a session with nothing to ask again loads none of it.
				askHere({ id: own.requestId, asker: own.asker, questions: own.questions, ...budget, resent: true, signal }, handle);
			void reopenOwn(pi, entries, sessionId, again, stillHere, liveHere);
		},
		close(): void {
			reopening?.abort();
			reopening = undefined;
		},
	};
}
