/**
 * Delivery of an ended request to the session that asked, as one message (ask now, answer later).
 * A request asked with `wait: false` ends after its call returned: its envelope reaches the asking
 * session through pi's `sendMessage`, with a custom type of this project. An answer starts a turn
 * when the session is idle and waits for the turn's end when it is busy; any other end joins the
 * session without waking it. Exactly once: the delivery is recorded in the session (`appendEntry`)
 * before the message is sent, and the process keeps one box for every copy of the extension (under
 * a registry symbol, as the shared handle), so a `/reload`, a resume or a second copy never
 * delivers twice. An asking session that is gone (a foreground child that finished) is given a
 * grace to come back (a `/reload` re-attaches at once); then the host's session gets the message,
 * naming the asker and the question. Where an end goes is decided in one place, the route home
 * (home.ts, route-home.ts, ADR-0034): the box asks it too, for every end it is handed.
 */
import type { Answer } from "../../model/answer.ts";
import type { Envelope } from "../../model/result.ts";
import { sanitiseText } from "../../model/sanitise.ts";
import { processSlot } from "../shared/process-slot.ts";
import type { EntryLike } from "../shared/session-entry.ts";
import { homeOf } from "./home.ts";
import { ANSWER_MESSAGE_TYPE, DELIVERY_KEY } from "./names.ts";
import { type UnsentEnds, unsentEnds } from "./unsent.ts";
import { endWaits } from "./waits.ts";

/** The message's custom type (names.ts), for those that read the box's messages. */
export { ANSWER_MESSAGE_TYPE };
/** `customType` of the entry that records a delivery in the session it went to. */
export const DELIVERED_ENTRY_TYPE = "checkpoint-bridge:delivered";
/** Version of the message's `details`, bumped on any incompatible change. @public */
export const DELIVERY_VERSION = 1;
/** How long an ended request waits for its asking session to attach again before it goes to the host's session. @default 3000 */
export const GONE_GRACE_MS = 3_000;
/** Ended requests kept unsent while neither their session nor a host session is attached; the oldest are discarded first. @default 64 */
const MAX_UNSENT_DELIVERIES = 64;
/** Request ids remembered as delivered in the process, for the wait's answer about them. @default 1024 */
const DELIVERED_REMEMBERED = 1_024;

/** A request asked with `wait: false`, from its receipt until it is delivered. @public */
export interface QueuedAsk {
	requestId: string;
	/** The asking session's id: where the message goes. */
	askerSessionId: string;
	/** Who asked, as shown to the human. */
	asker: string;
	/** The questions' texts, for a message that goes to the host's session instead. */
	questions: string[];
	/** Epoch ms of the receipt. */
	queuedAt: number;
}

/** One ended request on its way to its session. */
export interface Delivery extends QueuedAsk {
	envelope: Envelope;
	/** An answer given after the call's budget ran out (core/host/late.ts): delivered apart from the call's own end. */
	late?: true;
	/** The host session's own question asked again after a restart (own-questions.ts): asked before it, waiting or queued. */
	reopened?: true;
	/**
	 * False when, forwarded to the host's session (its asker gone), it must not start a turn of the host's model: the
	 * asker is neither the host's own session nor one of its sub-agents (wakesHost). @default true
	 */
	wakesHost?: false;
}

/** What makes two deliveries the same one: a request's own end, and its late answer, are two. */
export const keyOf = (d: { requestId: string; late?: boolean }) => (d.late ? `${d.requestId}:late` : d.requestId);

/** What the message's `details` hold (docs/tool.md pins it). @public */
export interface AnswerMessageDetails {
	v: typeof DELIVERY_VERSION;
	requestId: string;
	/** The request's envelope, as a waiting call would have returned it. */
	envelope: Envelope;
	/** Who asked. */
	asker: string;
	/** The questions' texts. */
	questions: string[];
	/** Present when the asking session was gone and the host's session got the message instead. */
	forwarded?: true;
	/** Present on an answer given after the call's budget ran out (the call itself ended `timeout`). */
	late?: true;
}

/** What the delivery record holds in the session. @public */
export interface DeliveredRecord {
	requestId: string;
	status: Envelope["status"];
	deliveredAt: number;
	forwarded?: true;
	late?: true;
	/** What was delivered: a message still queued behind a busy turn when pi died is delivered from it at the next start (own-questions.ts). */
	envelope?: Envelope;
}

/** The slice of pi's ExtensionAPI a session's poster uses. */
export interface MessageApi {
	sendMessage(
		message: { customType: string; content: string; display: boolean; details: AnswerMessageDetails },
		options?: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" },
	): void;
	appendEntry(customType: string, data?: unknown): void;
}

/** Posts ended requests into one session. */
export interface SessionPoster {
	/** Sends the message, recording the delivery first; "already" when the session holds a record of it. */
	post(delivery: Delivery, forwarded?: boolean): "posted" | "already";
	/** Records a delivery that reached the session another way (a wait's tool result). */
	record(delivery: Delivery): void;
}

/** Deliveries the session's entries record: request ids, and `<id>:late` for late answers. */
export function deliveredIn(entries: readonly EntryLike[]): Set<string> {
	const ids = new Set<string>();
	for (const entry of entries) {
		if (entry.type !== "custom" || entry.customType !== DELIVERED_ENTRY_TYPE) continue;
		const data = entry.data as Partial<DeliveredRecord> | undefined;
		if (typeof data?.requestId === "string") ids.add(keyOf({ requestId: data.requestId, late: data.late === true }));
	}
	return ids;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const quoted = (questions: readonly string[]) =>
	questions.length === 0 ? "" : ` ("${questions[0]}"${questions.length > 1 ? ` and ${plural(questions.length - 1, "more question")}` : ""})`;

const clean = (text: string) => sanitiseText(text);
/** An answer with every text it carries neutralised for the terminal (model/sanitise.ts). */
const cleanAnswer = (answer: Answer): Answer => ({
	...answer,
	question: clean(answer.question),
	answer: clean(answer.answer),
	...(answer.id !== undefined ? { id: clean(answer.id) } : {}),
	...(answer.values ? { values: answer.values.map(clean) } : {}),
	...(answer.note !== undefined ? { note: sanitiseText(answer.note, { multiline: true }) } : {}),
});
/**
 * The delivery as a session shows it: the asker's texts (its label, questions, answers, the note) reach pi's
 * message renderer, which passes escapes through, so each is neutralised here, the one place every delivery passes.
 */
function neutralised(delivery: Delivery): Delivery {
	const { envelope } = delivery;
	return {
		...delivery,
		asker: clean(delivery.asker),
		questions: delivery.questions.map(clean),
		envelope: {
			...envelope,
			answers: envelope.answers.map(cleanAnswer),
			...(envelope.note !== undefined ? { note: sanitiseText(envelope.note, { multiline: true }) } : {}),
			...(envelope.asker !== undefined ? { asker: clean(envelope.asker) } : {}),
			...(envelope.requestId !== undefined ? { requestId: clean(envelope.requestId) } : {}),
		},
	};
}

/** The text the model reads: what happened, and the envelope as JSON. */
function messageText(delivery: Delivery, forwarded = false): string {
	const { envelope, requestId, asker, questions } = delivery;
	const json = JSON.stringify(envelope);
	if (forwarded)
		return `checkpoint-bridge: ${asker} asked${quoted(questions)} (request ${requestId}) and ended before it came back; it ended "${envelope.status}": ${json}`;
	if (delivery.late && envelope.status === "ok")
		return `checkpoint-bridge: the human answered your question${questions.length === 1 ? "" : "s"} (request ${requestId}) late, after the call's budget ran out. This is the answer; do not ask again: ${json}`;
	const noun = questions.length === 1 ? "question" : "questions";
	// A reopened question may have been asked waiting: its call is gone with the restart, so it is not called queued.
	const what = delivery.reopened ? `the ${noun} you asked before the restart (request ${requestId})` : `your queued ${noun} (request ${requestId})`;
	if (envelope.status === "ok") return `checkpoint-bridge: the human answered ${what}. This is the answer; do not ask again: ${json}`;
	return `checkpoint-bridge: ${what} ended "${envelope.status}" without every answer: ${json}`;
}

/**
 * A poster for one session: `pi` sends and records, `entries` reads the session's entries (for
 * records of earlier deliveries). An answer wakes the session; any other end does not.
 */
export function sessionPoster(pi: MessageApi, entries: () => readonly EntryLike[]): SessionPoster {
	const record = (delivery: Delivery, forwarded: boolean) =>
		pi.appendEntry(DELIVERED_ENTRY_TYPE, {
			requestId: delivery.requestId,
			status: delivery.envelope.status,
			deliveredAt: Date.now(),
			...(forwarded ? { forwarded: true } : {}),
			...(delivery.late ? { late: true } : {}),
			envelope: delivery.envelope,
		} satisfies DeliveredRecord);
	return {
		post(given, forwarded = false) {
			if (deliveredIn(entries()).has(keyOf(given))) return "already";
			const delivery = neutralised(given);
			record(delivery, forwarded);
			const details: AnswerMessageDetails = {
				v: DELIVERY_VERSION,
				requestId: delivery.requestId,
				envelope: delivery.envelope,
				asker: delivery.asker,
				questions: delivery.questions,
				...(forwarded ? { forwarded: true as const } : {}),
				...(delivery.late ? { late: true as const } : {}),
			};
			const message = { customType: ANSWER_MESSAGE_TYPE, content: messageText(delivery, forwarded), display: true, details };
			// An answer starts a turn when idle and waits for the turn's end when busy; anything else only joins the transcript,
			// as does an answer forwarded for an asker the host's model has no reason to act for (wakesHost).
			const wakes = delivery.envelope.status === "ok" && !(forwarded && delivery.wakesHost === false);
			pi.sendMessage(message, wakes ? { triggerTurn: true, deliverAs: "followUp" } : { triggerTurn: false });
			return "posted";
		},
		record: (delivery) => record(delivery, false),
	};
}

/** What a wait on queued requests got. @public */
export interface WaitResult {
	/** The requests that ended during the wait (or before it, undelivered), in the order they ended. */
	ended: Delivery[];
	/** Ids still open when the wait ended. */
	open: string[];
}

/** The process's box of queued requests and their deliveries, shared by every copy of the extension. */
export interface DeliveryBox {
	/** A session's copy attaches its poster (at session_start); the returned function detaches it (at session_shutdown). */
	attach(sessionId: string, poster: SessionPoster): () => void;
	/** A request was asked with `wait: false`: it counts as open for its session until delivered. */
	expect(ask: QueuedAsk): void;
	/**
	 * The request ended: its envelope goes to its session (to a wait on it first), or, that session gone,
	 * to the host's. `gone`: the asking session is known to be gone (its process exited): straight to the host's.
	 */
	deliver(delivery: Delivery, options?: { gone?: boolean }): void;
	/** The session's queued requests not yet delivered, oldest first. */
	open(sessionId: string): QueuedAsk[];
	/** Whether `requestId` was delivered in this process already. */
	wasDelivered(requestId: string): boolean;
	/** The session that asked `requestId`, while it is queued and not yet delivered. */
	ownerOf(requestId: string): string | undefined;
	/** Whether a session of this id is attached now (it would take a message). */
	attached(sessionId: string): boolean;
	/** Whether a wait on `requestId` runs now (its end would go to the wait). Absent on a box made by an earlier release. */
	waitedFor?(requestId: string): boolean;
	/**
	 * Waits for `ids` (queued requests of `sessionId`) to end, for at most `budgetMs`: their envelopes
	 * reach the wait instead of a message. Ends early when every id ended or `signal` aborts.
	 */
	waitFor(sessionId: string, ids: readonly string[], budgetMs: number, signal?: AbortSignal): Promise<WaitResult>;
}

export interface DeliveryBoxOptions {
	/** The session holding the host role now, if any. */
	hostSessionId: () => string | undefined;
	/** @default GONE_GRACE_MS */
	graceMs?: number;
	/** @default MAX_UNSENT_DELIVERIES */
	maxUnsent?: number;
}

/** Replaces a box's way of finding the host's session; `Symbol.for`, so a box made by another copy has it under the same key. */
const HOST_SESSION_OF = Symbol.for("checkpoint-bridge.deliveries.host-session-of");
interface HostSessionOf {
	[HOST_SESSION_OF](hostSessionId: () => string | undefined): void;
}

/** The sessions' posters by session id; several when several copies of the extension serve one session, the first posting. */
class Posters {
	readonly #bySession = new Map<string, SessionPoster[]>();

	of(sessionId: string | undefined): SessionPoster | undefined {
		return sessionId === undefined ? undefined : this.#bySession.get(sessionId)?.[0];
	}

	has(sessionId: string): boolean {
		return this.#bySession.has(sessionId);
	}

	/** Adds `poster` for `sessionId`; the returned function takes it away, once. */
	add(sessionId: string, poster: SessionPoster): () => void {
		this.#bySession.set(sessionId, [...(this.#bySession.get(sessionId) ?? []), poster]);
		let attached = true;
		return () => {
			if (!attached) return;
			attached = false;
			const left = (this.#bySession.get(sessionId) ?? []).filter((p) => p !== poster);
			if (left.length > 0) this.#bySession.set(sessionId, left);
			else this.#bySession.delete(sessionId);
		};
	}
}

/** The ends of `ids` that came while `sessionId` was away and wait unsent: taken out for a wait on them. */
function takeUnsent(unsent: UnsentEnds<Delivery>, sessionId: string, ids: readonly string[]): Delivery[] {
	const taken: Delivery[] = [];
	for (const id of ids) if (unsent.get(id)?.delivery.askerSessionId === sessionId) taken.push(unsent.take(id)!.delivery);
	return taken;
}

/** A fresh box, not registered anywhere (tests make their own). */
export function createDeliveryBox(options: DeliveryBoxOptions): DeliveryBox & HostSessionOf {
	const { graceMs = GONE_GRACE_MS, maxUnsent = MAX_UNSENT_DELIVERIES } = options;
	let { hostSessionId } = options;
	const posters = new Posters();
	/** Queued requests not yet delivered, by request id, in the order asked. */
	const expected = new Map<string, QueuedAsk>();
	const waits = endWaits<Delivery>();
	const delivered = new Set<string>();

	const remember = (delivery: { requestId: string; late?: boolean }) => {
		const requestId = keyOf(delivery);
		expected.delete(delivery.requestId);
		delivered.add(requestId);
		// A Set iterates in insertion order: the first is the oldest.
		if (delivered.size > DELIVERED_REMEMBERED) delivered.delete(delivered.values().next().value!);
	};

	/** Posts where it can now; true when it went (or was there already). */
	const tryPost = (delivery: Delivery, toHost: boolean): boolean => {
		const target = toHost ? hostSessionId() : delivery.askerSessionId;
		// The host that asked itself: nothing to forward, its own session takes it.
		const forwarded = toHost && target !== delivery.askerSessionId;
		const poster = posters.of(target);
		if (!poster) return false;
		try {
			poster.post(delivery, forwarded);
		} catch {
			// A session that cannot take a message any more counts as gone.
			return false;
		}
		remember(delivery);
		return true;
	};
	/** Posts it now, or holds it until its session (or, `toHost`, the host's) attaches. */
	const post = (delivery: Delivery, toHost: boolean) => {
		if (!tryPost(delivery, toHost)) unsent.hold(keyOf(delivery), delivery, toHost);
	};
	const unsent = unsentEnds<Delivery>({ graceMs, maxUnsent, graceOver: (delivery) => post(delivery, true), discarded: (key) => expected.delete(key) });

	/** Hands what was unsent for `sessionId` (and, for the host's session, what was forwarded) to its new poster. */
	const release = (sessionId: string) => {
		const isHost = hostSessionId() === sessionId;
		for (const [key, entry] of unsent.entries()) {
			const mine = entry.delivery.askerSessionId === sessionId;
			if (!mine && !(entry.toHost && isHost)) continue;
			unsent.take(key);
			if (!tryPost(entry.delivery, !mine)) unsent.hold(key, entry.delivery, entry.toHost);
		}
	};
	/** The wait on it takes it: recorded as delivered, in the session too so a later re-delivery finds it. */
	const handToWait = (delivery: Delivery) => {
		remember(delivery);
		try {
			posters.of(delivery.askerSessionId)?.record(delivery);
		} catch {
			// The wait's result carries it; the record only guards a later re-delivery.
		}
		waits.hand(delivery.requestId, delivery);
	};

	return {
		[HOST_SESSION_OF]: (resolve) => {
			hostSessionId = resolve;
		},
		attach(sessionId, poster) {
			const detach = posters.add(sessionId, poster);
			release(sessionId);
			return detach;
		},
		expect(ask) {
			expected.set(ask.requestId, ask);
		},
		deliver(delivery, { gone = false } = {}) {
			const { askerSessionId: session } = delivery;
			// The route home decides (home.ts); an asker of this process is the only kind the box sees not gone.
			const home = homeOf({
				here: true,
				gone,
				delivered: delivered.has(keyOf(delivery)),
				waited: waits.has(delivery.requestId),
				attached: posters.has(session) || session === hostSessionId(),
				takesBack: false,
				openInStore: false,
				wakes: delivery.wakesHost !== false,
			});
			if (home.to === "wait") handToWait(delivery);
			// Its session first, held for a grace while it is away, then the host's; straight to the host's once it is known gone.
			else if (home.to === "asker" || home.to === "host") post(delivery, home.to === "host" && gone);
		},
		open: (sessionId) => [...expected.values()].filter((ask) => ask.askerSessionId === sessionId && unsent.get(ask.requestId) === undefined),
		wasDelivered: (requestId) => delivered.has(requestId),
		ownerOf: (requestId) => expected.get(requestId)?.askerSessionId,
		attached: (sessionId) => posters.has(sessionId),
		waitedFor: (requestId) => waits.has(requestId),
		waitFor(sessionId, ids, budgetMs, signal) {
			const ended = takeUnsent(unsent, sessionId, ids);
			for (const delivery of ended) remember(delivery);
			const taken = new Set(ended.map((delivery) => delivery.requestId));
			return waits.wait(ended, new Set(ids.filter((id) => !taken.has(id))), budgetMs, signal);
		},
	};
}

/** The process's box, created by the first copy that asks. Not writable, not replaceable. */
export function deliveryBox(hostSessionId: () => string | undefined, target: object = globalThis): DeliveryBox {
	const box = processSlot<DeliveryBox & Partial<HostSessionOf>>(target, DELIVERY_KEY, () => createDeliveryBox({ hostSessionId }));
	// The box outlives the copy that made it: the host's session is found the way the latest caller finds it.
	box[HOST_SESSION_OF]?.(hostSessionId);
	return box;
}
