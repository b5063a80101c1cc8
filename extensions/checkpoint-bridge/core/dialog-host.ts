/**
 * The host side: one FIFO queue of dialogs for the whole process. Every request, the host's own
 * included, goes through it, so the human never sees two dialogs at once. Identical questions
 * asked at the same time by different sessions are shown once and the answer goes to each.
 */
import PQueue from "p-queue";
import type { Answer, AnswerPlace } from "../model/answer.ts";
import { answerProblem, copyAnswer } from "../model/answer-check.ts";
import type { Checked } from "../model/check.ts";
import { MAX_REQUEST_ID_LENGTH } from "../model/limits.ts";
import type { Question } from "../model/question.ts";
import type { EndReason, Status } from "../model/result.ts";
import { sanitiseText, shownValue } from "../model/sanitise.ts";
import { validateAskParams } from "../model/validate.ts";
import { ArrivalNotices } from "./arrival-notices.ts";
import { msLeft } from "./config.ts";
import { checkedAsker } from "./identity.ts";
import { type InboundReply, parseInbound, resolveInbound } from "./inbound.ts";
import { LATE_NOTE, type LateBook, type LateRequest } from "./late.ts";
import { OBSERVER_VERSION, type ObservedRequest, type Snapshot } from "./observers.ts";
import { PROTOCOL_VERSION, type RelayCancel, type RelayProgress, type RelayReply, type RelayRequest, type RelayResult } from "./protocol.ts";
import { SameQuestions } from "./same-questions.ts";
import { type Show, type ShowOutcome, showFor } from "./show.ts";
import type { HostUI, Surface } from "./surface.ts";

/** Lifecycle notifications for observers, the audit trail and the status line. */
export interface HostEvents {
	queued?(request: ObservedRequest, position: number): void;
	shown?(request: ObservedRequest, question: number): void;
	settled?(request: ObservedRequest, outcome: { status: Status; answers: Answer[]; note?: string; reason?: EndReason }, settledAt: number): void;
	/** The set of waiting requests changed. */
	changed?(): void;
	/**
	 * Whether anything takes the lifecycle notification `name` right now: when false, the host
	 * neither builds nor sends it. A hook that throws counts as true. @default true for every hook given
	 */
	wanted?(name: "queued" | "shown" | "settled"): boolean;
}

export interface DialogHostOptions {
	/** Notices and the footer status. */
	ui: HostUI;
	/** Where each question is shown. */
	surface: Surface;
	/** The host session's id: its own requests get no arrival receipt and no bell. */
	sessionId: string;
	/** Sends a reply to the one asker it is addressed to. */
	reply: (reply: RelayReply) => void;
	/** Lifecycle notifications. @default none */
	events?: HostEvents;
	/** Rings for the human's attention when a relayed question is first shown. @default none */
	bell?: () => void;
	/** Where a request whose budget ran out stays open, marked late (core/late.ts). @default none: it ends with its call */
	late?: LateBook;
	/** A late request ended (answered, or dismissed): its end goes to the asker as a message (core/delivery.ts). @default none */
	lateEnded?: (late: LateRequest, outcome: { status: Status; answers: Answer[]; note?: string; reason?: EndReason }) => void;
}

/** Requests one asker session may have open at the host at once: a runaway asker cannot flood the queue. @default 16 */
export const MAX_OPEN_PER_ASKER = 16;

/** A request handed from a host that is going away to the one that replaces it. */
export interface ParkedRequest {
	request: RelayRequest;
	answers: Answer[];
	queuedAt: number;
	/** Where each of `answers` was given, in its order. @default none known */
	places?: (AnswerPlace | undefined)[];
}

/** Figures for "ask the human once": how many dialogs the human saw for how many questions. */
export interface HostStats {
	/** Questions in every request taken. */
	questionsAsked: number;
	/** Dialogs opened (a re-asked or multi-step question counts each time). */
	dialogsShown: number;
	/** Questions answered from another asker's identical question, without a dialog. */
	sharedAnswers: number;
}

/** Why a held request stopped before its questions were done. */
type StopReason = "timeout" | "cancelled" | "host-ended" | "answered-outside" | "handed-over";

/** Where a held request is in its life: one value, so no two flags can disagree. */
type HeldState =
	/** Waiting in the queue; aborting `unqueue` drops it there (never once it runs, so p-queue frees no running slot early). */
	| { phase: "queued"; unqueue: AbortController }
	/** Its task runs: whatever is open closes by `open` (any stop of the request aborts it); `question` is on screen, while one is, until `closesAt`. */
	| { phase: "running"; open: AbortController; question?: number; closesAt?: number }
	/** Settled or handed over: nothing more happens to it. */
	| { phase: "settled" };

interface Held {
	/** The request as taken in: asker and questions neutralised for the terminal. */
	request: RelayRequest;
	/** The request's questions, normalised. */
	questions: Question[];
	state: HeldState;
	/** Answers by question index. */
	answers: (Answer | undefined)[];
	/** Where each answer was given, by question index (kept beside the answers: the asker's result does not carry it). */
	places: (AnswerPlace | undefined)[];
	/** None when the call has no budget. */
	deadlineTimer: ReturnType<typeof setTimeout> | undefined;
	queuedAt: number;
	shownAt?: number;
}

/** Timers may fire a millisecond early by the wall clock: a capped dialog closing this close to the call's deadline timed out with it. */
export const DEADLINE_TOLERANCE_MS = 2;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));
/** Hooks run inside the relay's own flow: one that throws must not stall or settle anything. */
function guarded(events: HostEvents): HostEvents {
	const wrapped: HostEvents = {};
	const { wanted, ...hooks } = events;
	// Fixed arity, no rest arguments: these run several times per request.
	for (const [name, hook] of Object.entries(hooks) as [keyof HostEvents, (a?: unknown, b?: unknown, c?: unknown) => void][])
		(wrapped as Record<string, unknown>)[name] = (a?: unknown, b?: unknown, c?: unknown) => {
			try {
				hook(a, b, c);
			} catch {
				// An observer's or the audit trail's failure is theirs; the human's answer still goes through.
			}
		};
	if (wanted)
		wrapped.wanted = (name) => {
			try {
				return wanted(name);
			} catch {
				return true;
			}
		};
	return wrapped;
}

/** The answers of a request without one yet: shared, frozen, like every array a reply carries once sealed. */
const NO_ANSWERS: readonly Answer[] = Object.freeze([]);
const answered = (held: Held): Answer[] => {
	const given: Answer[] = [];
	for (const answer of held.answers) if (answer !== undefined) given.push(answer);
	return given.length === 0 ? (NO_ANSWERS as Answer[]) : given;
};
/** Dropped while queued: #stop has already settled it. */
const ignore = () => {};
/**
 * The answers a re-sent request says were given before (NATS, ADR-0009; the local endpoint after a
 * restart): only those that pass the one answer check for a question of the request count, the rest
 * is asked again, never guessed.
 */
const givenAnswers = (request: RelayRequest, questions: readonly Question[]): Answer[] =>
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
/** A late request as observers see a request. */
const observedLate = (late: LateRequest): ObservedRequest => ({
	v: OBSERVER_VERSION,
	requestId: late.request.id,
	asker: late.request.asker,
	questions: late.questions,
	queuedAt: late.queuedAt,
	deadline: late.request.deadline,
});
/** How a request sent again after its host went away is marked wherever its asker is shown. */
const RESENT_MARK = "asked before the restart";
/** Whose open requests count together against the cap: one asker session of one origin. */
const askerKey = (request: RelayRequest) => `${request.origin ?? ""}\n${request.asker.sessionId}`;

export class DialogHost {
	readonly #ui: HostUI;
	/** Every request is shown through this, whichever kind the surface is. */
	readonly #show: Show;
	readonly #sessionId: string;
	readonly #reply: (reply: RelayReply) => void;
	readonly #events: HostEvents;
	readonly #bell: (() => void) | undefined;
	/** Where the surface's answers are given. */
	readonly #place: AnswerPlace | undefined;
	readonly #queue = new PQueue({ concurrency: 1 });
	readonly #held = new Map<string, Held>();
	/** Identical questions of different sessions, shown once. */
	readonly #same = new SameQuestions<Held>();
	/** Held requests per asker label, oldest asker first, for the status line. */
	readonly #askers = new Map<string, number>();
	readonly #stats: HostStats = { questionsAsked: 0, dialogsShown: 0, sharedAnswers: 0 };
	/** Held requests per asker session and origin, for the cap. */
	readonly #openByAsker = new Map<string, number>();
	readonly #arrivals: ArrivalNotices<Held>;
	readonly #late: LateBook | undefined;
	readonly #lateEnded: DialogHostOptions["lateEnded"];
	/** Late requests shown again from `/checkpoints`: their end is a late one. */
	readonly #reopened = new Set<string>();

	constructor(options: DialogHostOptions) {
		this.#ui = options.ui;
		this.#show = showFor(options.surface);
		this.#sessionId = options.sessionId;
		this.#reply = options.reply;
		this.#events = guarded(options.events ?? {});
		this.#bell = options.bell;
		this.#place = options.surface.place;
		this.#arrivals = new ArrivalNotices((message) => this.#notify(message));
		this.#late = options.late;
		this.#lateEnded = options.lateEnded;
	}

	/** Late requests (their budget ran out, still open), oldest first. */
	lateRequests(): LateRequest[] {
		return this.#late?.list() ?? [];
	}

	/** Shows a late request again, through the queue like any other (no budget of its own); false when it is not late. */
	reopenLate(requestId: string): boolean {
		const late = this.#late?.take(requestId);
		if (!late) return false;
		this.#reopened.add(requestId);
		const answers = late.answers.filter((a): a is Answer => a !== undefined);
		this.serve({ ...late.request, deadline: 0 }, { answers, queuedAt: late.queuedAt, places: late.places.filter((_, i) => late.answers[i] !== undefined) });
		if (!this.#held.has(requestId)) this.#reopened.delete(requestId);
		return true;
	}

	/** Requests held: shown or waiting in the queue. */
	get heldCount(): number {
		return this.#held.size;
	}

	/** Tasks in the dialog queue, the running one included. */
	get queueLength(): number {
		return this.#queue.size + this.#queue.pending;
	}

	/** How many dialogs were shown for how many questions. */
	get stats(): Readonly<HostStats> {
		return { ...this.#stats };
	}

	/** Askers of the requests held, oldest first, each once; at most `limit` of them. */
	waitingAskers(limit = Number.POSITIVE_INFINITY): string[] {
		const labels: string[] = [];
		for (const label of this.#askers.keys()) {
			if (labels.length >= limit) break;
			labels.push(label);
		}
		return labels;
	}

	/** How many different askers are waiting. */
	get waitingAskerCount(): number {
		return this.#askers.size;
	}

	/** What is open, oldest first. */
	snapshot(): Snapshot {
		return {
			v: OBSERVER_VERSION,
			takenAt: Date.now(),
			open: [...this.#held.values()].map((held) => {
				const showing = held.state.phase === "running" ? held.state.question : undefined;
				const closesAt = held.state.phase === "running" ? held.state.closesAt : undefined;
				return {
					...this.#observed(held),
					state: showing === undefined ? "queued" : "shown",
					...(showing !== undefined ? { question: showing, ...(closesAt !== undefined ? { questionDeadline: closesAt } : {}) } : {}),
				};
			}),
			...(this.#late && this.#late.size > 0
				? {
						late: this.#late.list().map((late) => ({ ...observedLate(late), lateSince: late.lateSince, expiresAt: late.expiresAt })),
					}
				: {}),
		};
	}

	/** Takes a request off the bus and queues its dialogs. Malformed requests get an `error` result when they can be addressed. */
	serve(raw: RelayRequest, carried?: { answers: Answer[]; queuedAt: number; places?: (AnswerPlace | undefined)[] }): void {
		if (typeof raw !== "object" || raw === null || typeof raw.id !== "string" || raw.id === "" || this.#held.has(raw.id)) return;
		const checked = this.#checkRequest(raw);
		if (!checked.ok) return this.#replyResult(raw.id, "error", [], checked.reason);
		const { request } = checked;
		const { questions } = request;
		const key = askerKey(request);
		const open = this.#openByAsker.get(key) ?? 0;
		// Requests carried over from a replaced host were counted there; they are never refused here.
		if (!carried && open >= MAX_OPEN_PER_ASKER)
			return this.#replyResult(
				request.id,
				"error",
				[],
				`The asker already has ${open} requests open at the host, the most one asker session may have (${MAX_OPEN_PER_ASKER}); ask again once one has settled.`,
			);
		// Carried answers come through the shared handle: copied, so every reply is built of the host's own data (see sealBuilt).
		// A re-sent request's own answers (NATS, ADR-0009) count like a parked one's: those questions are not asked again.
		const carriedAnswers = (carried?.answers ?? givenAnswers(raw, questions)).map((a) => copyAnswer(a));
		const remaining = msLeft(request.deadline);
		if (remaining <= 0) return this.#replyResult(request.id, "timeout", carriedAnswers, "The call's budget had run out before it reached the host.");
		const carriedAt = questions.map((q) => carriedAnswers.findIndex((a) => a.question === q.question && a.id === q.id));
		const answers: (Answer | undefined)[] = carriedAt.map((at) => carriedAnswers[at]);
		const places = carriedAt.map((at) => carried?.places?.[at]);
		const unqueue = new AbortController();
		const held: Held = {
			request,
			questions,
			state: { phase: "queued", unqueue },
			answers,
			places,
			deadlineTimer: Number.isFinite(remaining) ? setTimeout(() => this.#stop(held, "timeout"), remaining) : undefined,
			queuedAt: carried?.queuedAt ?? Date.now(),
		};
		this.#same.add(held);
		this.#held.set(request.id, held);
		this.#openByAsker.set(key, open + 1);
		this.#askers.set(request.asker.label, (this.#askers.get(request.asker.label) ?? 0) + 1);
		if (!carried) this.#stats.questionsAsked += questions.length;
		const position = this.#held.size;
		this.#progress(held, "queued", undefined, position);
		if (this.#wants("queued")) this.#events.queued!(this.#observed(held), position);
		this.#events.changed?.();
		if (this.#isRelayed(held) && !carried) this.#arrivals.arrived(held, request.asker.label, questions.length, position - 1);
		// Everything may already be answerable from identical questions of other askers.
		if (this.#completeFromShared(held)) return;
		this.#queue.add(() => this.#run(held), { signal: unqueue.signal }).catch(ignore);
	}

	/** The asker gave up (its budget or its abort): dismiss the dialog or drop the queued request. */
	cancel(message: RelayCancel): void {
		const held = typeof message?.id === "string" ? this.#held.get(message.id) : undefined;
		if (held) this.#stop(held, message.reason === "timeout" ? "timeout" : "cancelled");
	}

	/** An answer from outside the terminal: applied whole or not at all; the first answer wins. */
	answerFromOutside(raw: unknown): InboundReply {
		const parsed = parseInbound(raw);
		if (!parsed.ok) return parsed.reply;
		const held = this.#held.get(parsed.message.requestId);
		const late = held ? undefined : this.#late?.get(parsed.message.requestId);
		if (late) return this.#answerLate(late, parsed.message);
		// `not_found` keeps the observer contract's snake case (docs/observers.md), as inbound.ts says.
		if (!held || held.state.phase === "settled")
			return { ok: false, code: "not_found", reason: `no open request ${JSON.stringify(parsed.message.requestId)} (unknown, or already settled)` };
		if ("cancel" in parsed.message) {
			this.#stop(held, "answered-outside");
			this.#settle(held, "timeout-or-cancelled", "The question was cancelled from outside the terminal.", "dismissed");
			return { ok: true };
		}
		const resolved = resolveInbound(held.questions, parsed.message.answers, parsed.message.source);
		if (!resolved.ok) return resolved.reply;
		// Answers already given in a dialog stand: the first answer wins.
		const place = parsed.message.place ?? (parsed.message.source === "outside" ? "outside" : undefined);
		resolved.answers.forEach((answer, i) => {
			if (held.answers[i] !== undefined) return;
			held.answers[i] = answer;
			held.places[i] = place;
		});
		this.#stop(held, "answered-outside");
		this.#settle(held, "ok");
		return { ok: true };
	}

	/** An answer (or a cancel) from outside for a late request: applied whole, then its end goes to the asker. */
	#answerLate(late: LateRequest, message: Extract<ReturnType<typeof parseInbound>, { ok: true }>["message"]): InboundReply {
		const id = late.request.id;
		if ("cancel" in message) {
			this.#late!.take(id);
			this.#endLate(late, "timeout-or-cancelled", "The human dismissed the late question.", "dismissed");
			return { ok: true };
		}
		const resolved = resolveInbound(late.questions, message.answers, message.source);
		if (!resolved.ok) return resolved.reply;
		const place = message.place ?? (message.source === "outside" ? "outside" : undefined);
		resolved.answers.forEach((answer, i) => {
			if (late.answers[i] !== undefined) return;
			late.answers[i] = answer;
			late.places[i] = place;
		});
		this.#late!.take(id);
		this.#endLate(late, "ok");
		return { ok: true };
	}

	/** A late request ended: observers and the audit trail learn it, and the asker gets it as a message. */
	#endLate(late: LateRequest, status: Status, note?: string, reason?: EndReason): void {
		const answers = late.answers.filter((a): a is Answer => a !== undefined);
		const outcome = { status, answers, ...(note ? { note } : {}), ...(reason ? { reason } : {}) };
		if (this.#wants("settled")) this.#events.settled!(observedLate(late), outcome, Date.now());
		this.#events.changed?.();
		try {
			this.#lateEnded?.(late, outcome);
		} catch {
			// The delivery's failure is the delivery's; the host goes on.
		}
	}

	/** The host session is going away for good: every held request settles now with `no-host`. */
	shutdown(note: string): void {
		for (const held of [...this.#held.values()]) this.#stop(held, "host-ended", note);
		this.#queue.clear();
	}

	/** The host session is being replaced: closes every dialog and hands the unsettled requests over, oldest first. */
	handOver(): ParkedRequest[] {
		// A late request shown again goes back to the late book (which outlives this host), not to the next host's queue.
		for (const held of [...this.#held.values()])
			if (this.#reopened.delete(held.request.id)) {
				this.#stop(held, "handed-over");
				this.#late?.keep({ request: held.request, questions: held.questions, answers: held.answers, places: held.places, queuedAt: held.queuedAt });
			}
		const parked = [...this.#held.values()].map((held) => ({
			request: held.request,
			answers: answered(held),
			queuedAt: held.queuedAt,
			places: held.places.filter((_, i) => held.answers[i] !== undefined),
		}));
		for (const held of [...this.#held.values()]) this.#stop(held, "handed-over");
		this.#queue.clear();
		return parked;
	}

	/** A receipt is a courtesy: a UI whose notify fails must not fail the request. */
	#notify(message: string): void {
		try {
			this.#ui.notify(message, "info");
		} catch {
			// The dialogs themselves will show whether the UI works.
		}
	}

	/** Drops every trace of a settled request from the host's indexes. */
	#forget(held: Held): void {
		clearTimeout(held.deadlineTimer);
		this.#held.delete(held.request.id);
		this.#same.remove(held);
		this.#arrivals.gone(held);
		const key = askerKey(held.request);
		const open = (this.#openByAsker.get(key) ?? 1) - 1;
		if (open > 0) this.#openByAsker.set(key, open);
		else this.#openByAsker.delete(key);
		const label = held.request.asker.label;
		const left = (this.#askers.get(label) ?? 1) - 1;
		if (left > 0) this.#askers.set(label, left);
		else this.#askers.delete(label);
	}

	#isRelayed(held: Held): boolean {
		return held.request.asker.sessionId !== this.#sessionId;
	}

	/** Whether the lifecycle notification `name` has a hook, and anything takes it now. */
	#wants(name: "queued" | "shown" | "settled"): boolean {
		return this.#events[name] !== undefined && (this.#events.wanted?.(name) ?? true);
	}

	#observed(held: Held): ObservedRequest {
		const { request } = held;
		const observed: ObservedRequest = {
			v: OBSERVER_VERSION,
			requestId: request.id,
			asker: request.asker,
			questions: held.questions,
			queuedAt: held.queuedAt,
			deadline: request.deadline,
		};
		if (held.shownAt !== undefined) observed.shownAt = held.shownAt;
		return observed;
	}

	/** Settles a request whose every question has an answer already (its own or shared); true when it did. */
	#completeFromShared(held: Held): boolean {
		const { state } = held;
		if (state.phase !== "queued") return state.phase === "settled";
		const filled = held.questions.map((_, i) => held.answers[i] ?? this.#same.sharedAnswer(held, i));
		if (filled.some((a) => a === undefined)) return false;
		held.places = filled.map((_, i) => (held.answers[i] !== undefined ? held.places[i] : this.#same.sharedPlace(held, i)));
		held.answers = filled;
		this.#stats.sharedAnswers += filled.filter((a) => a?.source === "shared").length;
		state.unqueue.abort("answered");
		this.#settle(held, "ok");
		return true;
	}

	/**
	 * The request as the host keeps it, or what is wrong with it. Everything the asker wrote that
	 * reaches a dialog, a notice, the status line, the audit trail or an observer is neutralised here
	 * (sanitise.ts), by the same validation the asker applied to its own questions.
	 */
	#checkRequest(request: RelayRequest): Checked<{ request: RelayRequest & { questions: Question[] } }, { reason: string }> {
		const refuse = (reason: string) => ({ ok: false as const, reason });
		if (request.v !== PROTOCOL_VERSION)
			return refuse(`The asker speaks checkpoint-bridge protocol v${shownValue(request.v)}; the host speaks v${PROTOCOL_VERSION}.`);
		if (request.id.length > MAX_REQUEST_ID_LENGTH || sanitiseText(request.id) !== request.id)
			return refuse(`The request id must be at most ${MAX_REQUEST_ID_LENGTH} characters, none of them control or bidi characters.`);
		// Relayed dialogs of other extensions come over every transport (interop/dialog-relay.ts).
		const checked = validateAskParams({ questions: request.questions }, { dialogs: true });
		if (!checked.ok) return refuse(`Invalid parameters: ${checked.problems.join("; ")}.`);
		const who = checkedAsker(request.asker);
		if (!who.ok) return refuse(who.reason);
		if (!Number.isFinite(request.deadline) || !Number.isFinite(request.dialogTimeoutMs)) return refuse("The request has no valid deadline.");
		if (request.origin !== undefined && typeof request.origin !== "string") return refuse("The request's origin must be a string.");
		const { v, id, deadline, dialogTimeoutMs, createdAt, origin } = request;
		// A re-sent request is shown marked, wherever its asker is named.
		const asker = request.resent === true ? { ...who.asker, label: `${who.asker.label} · ${RESENT_MARK}` } : who.asker;
		const kept = {
			v,
			id,
			asker,
			questions: checked.questions,
			deadline,
			dialogTimeoutMs,
			createdAt,
			...(origin !== undefined ? { origin } : {}),
			...(request.later === true ? { later: true as const } : {}),
			...(request.resent === true ? { resent: true } : {}),
		};
		return { ok: true, request: kept };
	}

	#progress(held: Held, stage: "queued" | "shown" | "answered", question?: number, position?: number): void {
		const progress: RelayProgress = { v: PROTOCOL_VERSION, id: held.request.id, kind: "progress", stage, answers: answered(held) };
		if (question !== undefined) progress.question = question;
		if (position !== undefined) progress.position = position;
		this.#reply(progress);
	}

	#replyResult(id: string, status: Status, answers: Answer[], note?: string, reason?: EndReason): void {
		const result: RelayResult = { v: PROTOCOL_VERSION, id, kind: "result", status, answers };
		if (note) result.note = note;
		if (reason) result.reason = reason;
		this.#reply(result);
	}

	#settle(held: Held, status: Status, note?: string, reason?: EndReason): void {
		if (held.state.phase === "settled") return;
		if (this.#reopened.delete(held.request.id)) return this.#settleReopened(held, status, note, reason);
		held.state = { phase: "settled" };
		this.#forget(held);
		const answers: Answer[] = [];
		const places: (AnswerPlace | undefined)[] = [];
		held.answers.forEach((answer, i) => {
			if (!answer) return;
			answers.push(this.#same.withSharers(held, i, answer));
			places.push(held.places[i]);
		});
		if (this.#wants("settled")) {
			// Observers and the audit trail learn where each answer was given; the asker's result does not carry it.
			const observed = answers.map((answer, i) => (places[i] === undefined ? answer : { ...answer, place: places[i] }));
			this.#events.settled!(this.#observed(held), { status, answers: observed, ...(note ? { note } : {}), ...(reason ? { reason } : {}) }, Date.now());
		}
		this.#events.changed?.();
		// Nobody listens any more for a cancelled or handed-over request.
		if (status !== "cancelled") this.#replyResult(held.request.id, status, answers, note, reason);
		// Askers that joined this request's questions may now have everything they need.
		for (const other of this.#same.dependents(held)) this.#completeFromShared(other);
	}

	/** A late request shown again ended: answered, its end goes to the asker; otherwise it stays late. */
	#settleReopened(held: Held, status: Status, note?: string, reason?: EndReason): void {
		held.state = { phase: "settled" };
		this.#forget(held);
		const late = { request: held.request, questions: held.questions, answers: held.answers, places: held.places, queuedAt: held.queuedAt };
		if (status === "ok") {
			const kept = { ...late, lateSince: held.queuedAt, expiresAt: 0, bytes: 0 };
			this.#endLate(kept, status, note, reason);
		} else if (this.#late) {
			this.#late.keep(late);
			this.#events.changed?.();
		}
	}

	/** Whether a request whose budget ran out stays open, marked late: not when answered, nor for other extensions' dialogs. */
	#goesLate(held: Held): boolean {
		return this.#late?.on === true && held.questions.some((_, i) => held.answers[i] === undefined) && !held.questions.some((q) => q.dialog);
	}

	/** Stops a held request: drops it from the queue or closes what is open, and settles it as `reason` says (`note`: the host's, when it ended). */
	#stop(held: Held, reason: StopReason, note?: string): void {
		const { state } = held;
		if (state.phase === "settled") return;
		if (state.phase === "queued") state.unqueue.abort(reason);
		else state.open.abort(reason);
		if (reason === "timeout") {
			const late = this.#goesLate(held);
			this.#settle(held, "timeout", `The call's budget ran out before every question was answered.${late ? ` ${LATE_NOTE}` : ""}`);
			if (late) {
				this.#late!.keep({ request: held.request, questions: held.questions, answers: held.answers, places: held.places, queuedAt: held.queuedAt });
				this.#events.changed?.();
			}
		} else if (reason === "host-ended") this.#settle(held, "no-host", note);
		else if (reason === "cancelled") this.#settle(held, "cancelled");
		else if (reason === "handed-over") {
			// Silent: the request lives on with the next host.
			held.state = { phase: "settled" };
			this.#forget(held);
			this.#events.changed?.();
		}
	}

	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	#takeShared(held: Held, index: number): boolean {
		const shared = this.#same.sharedAnswer(held, index);
		if (!shared) return false;
		held.answers[index] = shared;
		held.places[index] = this.#same.sharedPlace(held, index);
		this.#stats.sharedAnswers++;
		this.#progress(held, "answered", index);
		return true;
	}

	/** Shows the request, one way for every surface, and ends it as its showing ended. */
	async #run(held: Held): Promise<void> {
		const { request, questions } = held;
		const state: HeldState & { phase: "running" } = { phase: "running", open: new AbortController() };
		held.state = state;
		let outcome: ShowOutcome;
		try {
			outcome = await this.#show({
				asker: request.asker.label,
				questions,
				known: (index) => held.answers[index],
				takeShared: (index) => this.#takeShared(held, index),
				signal: state.open.signal,
				callDeadline: request.deadline,
				dialogTimeoutMs: request.dialogTimeoutMs,
				onDialog: () => void this.#stats.dialogsShown++,
				onShown: (index, deadline) => this.#shown(held, index, deadline),
				onAnswer: (index, answer, final) => this.#answered(held, index, answer, final),
			});
		} catch (error) {
			return this.#settle(held, "error", `The host dialog failed: ${errorText(error)}`);
		} finally {
			state.question = undefined;
			state.closesAt = undefined;
		}
		this.#ended(held, outcome);
	}

	/** Question `index` of a running request is on screen: progress, the shown event, and the bell the first time a relayed request shows. */
	#shown(held: Held, index: number, deadline?: number): void {
		const { state } = held;
		if (state.phase !== "running" || !held.questions[index]) return;
		const firstShown = held.shownAt === undefined;
		held.shownAt ??= Date.now();
		state.question = index;
		if (deadline !== undefined) state.closesAt = deadline;
		this.#progress(held, "shown", index);
		if (this.#wants("shown")) this.#events.shown!(this.#observed(held), index);
		if (firstShown && this.#isRelayed(held)) this.#bell?.();
	}

	/**
	 * Takes a surface's answer: a surface is passed in, so what it hands back passes the same check
	 * as any other answer, or the call ends with error and what is open closes. False when refused.
	 */
	#refused(held: Held, index: number, answer: Answer): boolean {
		const problem = answerProblem(held.questions[index]!, answer);
		if (problem === undefined) return false;
		if (held.state.phase === "running") held.state.open.abort("refused");
		this.#settle(held, "error", `The host dialog's answer to question ${index + 1} ${problem}.`);
		return true;
	}

	/** The human answered question `index` (again, on a form): it counts from now on; a final one may complete the requests that joined it. */
	#answered(held: Held, index: number, answer: Answer, final: boolean): boolean {
		const { state } = held;
		if (state.phase !== "running" || !held.questions[index]) return false;
		if (final) state.question = undefined;
		if (this.#refused(held, index, answer)) return false;
		// A copy: the surface keeps no reference into what is sealed and sent.
		held.answers[index] = copyAnswer(answer, "dialog");
		held.places[index] = this.#place;
		this.#progress(held, "answered", index);
		// Other askers waiting on this very question may be complete now.
		if (final) for (const other of this.#same.dependents(held)) this.#completeFromShared(other);
		return true;
	}

	/** How a shown request ended, decided in one place: ok, the call's timeout, or dismissed; an answer the surface hands back last is checked like the others. */
	#ended(held: Held, outcome: ShowOutcome): void {
		if (held.state.phase === "settled") return;
		const { request, questions } = held;
		if (outcome.answers) {
			const final = outcome.answers;
			// The form's answers are final (the human may have changed or withdrawn one); shared answers stand.
			for (const [i] of questions.entries()) {
				if (held.answers[i]?.source === "shared") continue;
				const answer = final[i];
				// Shared answers were skipped above: whatever else the form hands back is checked, whatever source it names.
				if (answer && this.#refused(held, i, answer)) return;
				// An answer the host did not hold yet was given in the form; one it held keeps the place it was given in.
				if (!answer) held.places[i] = undefined;
				else if (held.answers[i] === undefined) held.places[i] = this.#place;
				// Only the host marks an answer as shared (with whom): one the form marks so was given in the form.
				held.answers[i] = answer ? copyAnswer(answer, answer.source === undefined || answer.source === "shared" ? "dialog" : answer.source) : undefined;
			}
		}
		if (outcome.ended === "submitted" && held.answers.every((a) => a !== undefined)) return this.#settle(held, "ok");
		// What was open had its time capped by the call's: closing at the call's deadline is the call's timeout.
		if (outcome.cappedByCall && Date.now() >= request.deadline - DEADLINE_TOLERANCE_MS) return this.#stop(held, "timeout");
		const n = answered(held).length;
		const total = questions.length;
		const what = outcome.question !== undefined ? `question ${outcome.question + 1} of ${total}` : `the form of ${total} question${total === 1 ? "" : "s"}`;
		// Why it ended, and the note's words with it: the human said no, or nobody was there. (A host that goes or is
		// replaced stops the request first: it is handed over, or ends no-host; see #stop.)
		const reason: EndReason = outcome.timedOut ? "dialog-timeout" : "dismissed";
		const notes: Record<typeof reason, string> = {
			dismissed: `The user dismissed ${what}; ${n} answered.`,
			"dialog-timeout": `Nobody answered ${what} within its own time limit (the user may not be there); ${n} answered.`,
		};
		this.#settle(held, "timeout-or-cancelled", notes[reason], reason);
	}
}
