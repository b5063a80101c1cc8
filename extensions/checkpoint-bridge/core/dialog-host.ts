/**
 * The host side: one FIFO queue of dialogs for the whole process. Every request, the host's own
 * included, goes through it, so the human never sees two dialogs at once. Identical questions
 * asked at the same time by different sessions are shown once and the answer goes to each.
 */
import PQueue from "p-queue";
import type { Answer } from "../model/answer.ts";
import { answerProblem, copyAnswer } from "../model/answer-check.ts";
import type { Question } from "../model/question.ts";
import type { Status } from "../model/result.ts";
import { sanitiseText } from "../model/sanitise.ts";
import { validateAskParams } from "../model/validate.ts";
import { ArrivalNotices } from "./arrival-notices.ts";
import { asMs, msLeft, NO_LIMIT } from "./config.ts";
import { checkedAsker } from "./identity.ts";
import { type InboundReply, parseInbound, resolveInbound } from "./inbound.ts";
import { OBSERVER_VERSION, type ObservedRequest, type Snapshot } from "./observers.ts";
import { PROTOCOL_VERSION, type RelayCancel, type RelayProgress, type RelayReply, type RelayRequest, type RelayResult } from "./protocol.ts";
import { SameQuestions } from "./same-questions.ts";
import type { HostUI, RequestOutcome, Surface } from "./surface.ts";

/** Lifecycle notifications for observers, the audit trail and the status line. */
export interface HostEvents {
	queued?(request: ObservedRequest, position: number): void;
	shown?(request: ObservedRequest, question: number): void;
	settled?(request: ObservedRequest, outcome: { status: Status; answers: Answer[]; note?: string }, settledAt: number): void;
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
}

/** Requests one asker session may have open at the host at once: a runaway asker cannot flood the queue. @default 16 */
export const MAX_OPEN_PER_ASKER = 16;
/** Longest request id the host takes; ids are nanoids (21 characters). @default 128 */
export const MAX_REQUEST_ID_LENGTH = 128;

/** A request handed from a host that is going away to the one that replaces it. */
export interface ParkedRequest {
	request: RelayRequest;
	answers: Answer[];
	queuedAt: number;
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

interface Held {
	/** The request as taken in: asker and questions neutralised for the terminal. */
	request: RelayRequest;
	/** The request's questions, normalised. */
	questions: Question[];
	/** What is open now (a dialog or a form) aborts by this: its own timeout, or any stop of the request (#stop), closes it. */
	dialog?: AbortController;
	/** Aborts only while still queued, so p-queue drops it without freeing a running slot early. */
	unqueue: AbortController;
	started: boolean;
	settled: boolean;
	/** Answers by question index. */
	answers: (Answer | undefined)[];
	/** None when the call has no budget. */
	deadlineTimer: ReturnType<typeof setTimeout> | undefined;
	queuedAt: number;
	shownAt?: number;
	/** Index of the question on screen, while one is. */
	showing?: number;
	hostEndedNote?: string;
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
/** The answers a re-sent request says were given before (NATS, ADR-0009); anything that is not an answer is dropped. */
const givenAnswers = (request: RelayRequest): Answer[] =>
	Array.isArray(request.answers)
		? request.answers.filter((a): a is Answer => typeof a === "object" && a !== null && typeof a.question === "string" && typeof a.answer === "string")
		: [];
/** Whose open requests count together against the cap: one asker session of one origin. */
const askerKey = (request: RelayRequest) => `${request.origin ?? ""}\n${request.asker.sessionId}`;

export class DialogHost {
	readonly #ui: HostUI;
	readonly #surface: Surface;
	readonly #sessionId: string;
	readonly #reply: (reply: RelayReply) => void;
	readonly #events: HostEvents;
	readonly #bell: (() => void) | undefined;
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

	constructor(options: DialogHostOptions) {
		this.#ui = options.ui;
		this.#surface = options.surface;
		this.#sessionId = options.sessionId;
		this.#reply = options.reply;
		this.#events = guarded(options.events ?? {});
		this.#bell = options.bell;
		this.#arrivals = new ArrivalNotices((message) => this.#notify(message));
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
			open: [...this.#held.values()].map((held) => ({
				...this.#observed(held),
				state: held.showing === undefined ? "queued" : "shown",
				...(held.showing !== undefined ? { question: held.showing } : {}),
			})),
		};
	}

	/** Takes a request off the bus and queues its dialogs. Malformed requests get an `error` result when they can be addressed. */
	serve(raw: RelayRequest, carried?: { answers: Answer[]; queuedAt: number }): void {
		if (typeof raw !== "object" || raw === null || typeof raw.id !== "string" || raw.id === "" || this.#held.has(raw.id)) return;
		const checked = this.#checkRequest(raw);
		if (typeof checked === "string") return this.#replyResult(raw.id, "error", [], checked);
		const request = checked;
		const { questions } = checked;
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
		const carriedAnswers = (carried?.answers ?? givenAnswers(raw)).map((a) => copyAnswer(a));
		const remaining = msLeft(request.deadline);
		if (remaining <= 0) return this.#replyResult(request.id, "timeout", carriedAnswers, "The call's budget had run out before it reached the host.");
		const answers: (Answer | undefined)[] = questions.map((q) => carriedAnswers.find((a) => a.question === q.question && a.id === q.id));
		const held: Held = {
			request,
			questions,
			unqueue: new AbortController(),
			started: false,
			settled: false,
			answers,
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
		this.#queue.add(() => this.#run(held), { signal: held.unqueue.signal }).catch(ignore);
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
		if (!held || held.settled)
			return { ok: false, code: "not_found", reason: `no open request ${JSON.stringify(parsed.message.requestId)} (unknown, or already settled)` };
		if ("cancel" in parsed.message) {
			this.#stop(held, "answered-outside");
			this.#settle(held, "timeout-or-cancelled", "The question was cancelled from outside the terminal.");
			return { ok: true };
		}
		const resolved = resolveInbound(held.questions, parsed.message.answers, parsed.message.source);
		if (!resolved.ok) return resolved.reply;
		// Answers already given in a dialog stand: the first answer wins.
		resolved.answers.forEach((answer, i) => (held.answers[i] ??= answer));
		this.#stop(held, "answered-outside");
		this.#settle(held, "ok");
		return { ok: true };
	}

	/** The host session is going away for good: every held request settles now with `no-host`. */
	shutdown(note: string): void {
		for (const held of [...this.#held.values()]) {
			held.hostEndedNote = note;
			this.#stop(held, "host-ended");
		}
		this.#queue.clear();
	}

	/** The host session is being replaced: closes every dialog and hands the unsettled requests over, oldest first. */
	handOver(): ParkedRequest[] {
		const parked = [...this.#held.values()].map((held) => ({ request: held.request, answers: answered(held), queuedAt: held.queuedAt }));
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
		if (held.settled || held.started) return held.settled;
		const filled = held.questions.map((_, i) => held.answers[i] ?? this.#same.sharedAnswer(held, i));
		if (filled.some((a) => a === undefined)) return false;
		held.answers = filled;
		this.#stats.sharedAnswers += filled.filter((a) => a?.source === "shared").length;
		held.unqueue.abort("answered");
		this.#settle(held, "ok");
		return true;
	}

	/**
	 * The request as the host keeps it, or what is wrong with it. Everything the asker wrote that
	 * reaches a dialog, a notice, the status line, the audit trail or an observer is neutralised here
	 * (sanitise.ts), by the same validation the asker applied to its own questions.
	 */
	#checkRequest(request: RelayRequest): (RelayRequest & { questions: Question[] }) | string {
		if (request.v !== PROTOCOL_VERSION) return `The asker speaks checkpoint-bridge protocol v${String(request.v)}; the host speaks v${PROTOCOL_VERSION}.`;
		if (request.id.length > MAX_REQUEST_ID_LENGTH || sanitiseText(request.id) !== request.id)
			return `The request id must be at most ${MAX_REQUEST_ID_LENGTH} characters, none of them control or bidi characters.`;
		const checked = validateAskParams({ questions: request.questions });
		if (!checked.ok) return `Invalid parameters: ${checked.problems.join("; ")}.`;
		const asker = checkedAsker(request.asker);
		if (typeof asker === "string") return asker;
		if (!Number.isFinite(request.deadline) || !Number.isFinite(request.dialogTimeoutMs)) return "The request has no valid deadline.";
		if (request.origin !== undefined && typeof request.origin !== "string") return "The request's origin must be a string.";
		const { v, id, deadline, dialogTimeoutMs, createdAt, origin } = request;
		return { v, id, asker, questions: checked.questions, deadline, dialogTimeoutMs, createdAt, ...(origin !== undefined ? { origin } : {}) };
	}

	#progress(held: Held, stage: "queued" | "shown" | "answered", question?: number, position?: number): void {
		const progress: RelayProgress = { v: PROTOCOL_VERSION, id: held.request.id, kind: "progress", stage, answers: answered(held) };
		if (question !== undefined) progress.question = question;
		if (position !== undefined) progress.position = position;
		this.#reply(progress);
	}

	#replyResult(id: string, status: Status, answers: Answer[], note?: string): void {
		const result: RelayResult = { v: PROTOCOL_VERSION, id, kind: "result", status, answers };
		if (note) result.note = note;
		this.#reply(result);
	}

	#settle(held: Held, status: Status, note?: string): void {
		if (held.settled) return;
		held.settled = true;
		held.showing = undefined;
		this.#forget(held);
		const answers: Answer[] = [];
		held.answers.forEach((answer, i) => answer && answers.push(this.#same.withSharers(held, i, answer)));
		if (this.#wants("settled")) this.#events.settled!(this.#observed(held), note ? { status, answers, note } : { status, answers }, Date.now());
		this.#events.changed?.();
		// Nobody listens any more for a cancelled or handed-over request.
		if (status !== "cancelled") this.#replyResult(held.request.id, status, answers, note);
		// Askers that joined this request's questions may now have everything they need.
		for (const other of this.#same.dependents(held)) this.#completeFromShared(other);
	}

	#stop(held: Held, reason: StopReason): void {
		if (held.settled) return;
		if (!held.started) held.unqueue.abort(reason);
		held.dialog?.abort(reason);
		if (reason === "timeout") this.#settle(held, "timeout", "The call's budget ran out before every question was answered.");
		else if (reason === "host-ended") this.#settle(held, "no-host", held.hostEndedNote);
		else if (reason === "cancelled") this.#settle(held, "cancelled");
		else if (reason === "handed-over") {
			// Silent: the request lives on with the next host.
			held.settled = true;
			this.#forget(held);
			this.#events.changed?.();
		}
	}

	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	#takeShared(held: Held, index: number): boolean {
		const shared = this.#same.sharedAnswer(held, index);
		if (!shared) return false;
		held.answers[index] = shared;
		this.#stats.sharedAnswers++;
		this.#progress(held, "answered", index);
		return true;
	}

	async #run(held: Held): Promise<void> {
		held.started = true;
		if (this.#surface.askRequest) return this.#runWhole(held);
		const { request, questions } = held;
		const total = questions.length;
		for (const [index, question] of questions.entries()) {
			if (held.settled) return;
			if (held.answers[index]) continue;
			if (this.#takeShared(held, index)) continue;
			let answer: Answer | undefined;
			// When the call has less time left than a dialog gets, the dialog's own timeout is the call's.
			const cappedByCall = request.deadline !== NO_LIMIT && msLeft(request.deadline) <= asMs(request.dialogTimeoutMs);
			try {
				answer = await this.#ask(held, index);
			} catch (error) {
				this.#settle(held, "error", `The host dialog failed: ${errorText(error)}`);
				return;
			}
			if (held.settled) return;
			if (answer === undefined) {
				// The dialog's time was capped by the call's: closing at the call's deadline is the call's timeout.
				if (cappedByCall && Date.now() >= request.deadline - DEADLINE_TOLERANCE_MS) return this.#stop(held, "timeout");
				const n = answered(held).length;
				this.#settle(held, "timeout-or-cancelled", `The user dismissed question ${index + 1} of ${total}, or its dialog timed out; ${n} answered.`);
				return;
			}
			// A surface is passed in: what it hands back passes the same check as any other answer.
			const problem = answerProblem(question, answer);
			if (problem !== undefined) return this.#settle(held, "error", `The host dialog's answer to question ${index + 1} ${problem}.`);
			// A copy: the surface keeps no reference into what is sealed and sent.
			held.answers[index] = copyAnswer(answer, "dialog");
			this.#progress(held, "answered", index);
			// Other askers waiting on this very question may be complete now.
			for (const other of this.#same.dependents(held)) this.#completeFromShared(other);
		}
		this.#settle(held, "ok");
	}

	/**
	 * A surface that shows whole requests (the terminal form): one task of the queue for the whole
	 * request, open for the per-dialog limit once per open question (never beyond the call's budget).
	 * Answers count as the human gives them (progress, and what a timeout returns); the outcome's
	 * answers are final. The same endings as the per-question path.
	 */
	async #runWhole(held: Held): Promise<void> {
		const { request, questions } = held;
		questions.forEach((_, index) => held.answers[index] ?? this.#takeShared(held, index));
		const open = held.answers.filter((a) => a === undefined).length;
		if (open === 0) return this.#settle(held, "ok");
		const limit = request.dialogTimeoutMs === NO_LIMIT ? NO_LIMIT : request.dialogTimeoutMs * open;
		const cappedByCall = request.deadline !== NO_LIMIT && msLeft(request.deadline) <= asMs(limit);
		// A surface is passed in: what it hands back passes the same check as any other answer, or the call ends with error and the form closes.
		const refused = (index: number, answer: Answer) => {
			const problem = answerProblem(questions[index]!, answer);
			if (problem === undefined) return false;
			held.dialog?.abort("refused");
			this.#settle(held, "error", `The host dialog's answer to question ${index + 1} ${problem}.`);
			return true;
		};
		let outcome: RequestOutcome | undefined;
		try {
			outcome = await this.#withBudget(
				held,
				questions.findIndex((_, i) => !held.answers[i]),
				limit,
				(signal, deadline) =>
					this.#surface.askRequest!({
						asker: request.asker.label,
						questions,
						known: [...held.answers],
						signal,
						deadline,
						onDialog: () => void this.#stats.dialogsShown++,
						onShown: (index) => {
							if (held.settled || !questions[index]) return;
							held.showing = index;
							this.#progress(held, "shown", index);
							if (this.#wants("shown")) this.#events.shown!(this.#observed(held), index);
						},
						onAnswer: (index, answer) => {
							if (held.settled || !questions[index] || refused(index, answer)) return;
							held.answers[index] = copyAnswer(answer, "dialog");
							this.#progress(held, "answered", index);
						},
					}),
			);
		} catch (error) {
			return this.#settle(held, "error", `The host dialog failed: ${errorText(error)}`);
		}
		if (held.settled) return;
		// The form's answers are final (the human may have changed or withdrawn one); shared answers stand.
		for (const [i] of questions.entries()) {
			const answer = outcome?.answers[i];
			if (!outcome || held.answers[i]?.source === "shared") continue;
			// Shared answers were skipped above: whatever else the form hands back is checked, whatever source it names.
			if (answer && refused(i, answer)) return;
			// Only the host marks an answer as shared (with whom): one the form marks so was given in the form.
			held.answers[i] = answer ? copyAnswer(answer, answer.source === undefined || answer.source === "shared" ? "dialog" : answer.source) : undefined;
		}
		if (outcome?.ended === "submitted" && held.answers.every((a) => a !== undefined)) return this.#settle(held, "ok");
		if (cappedByCall && Date.now() >= request.deadline - DEADLINE_TOLERANCE_MS) return this.#stop(held, "timeout");
		const n = answered(held).length;
		this.#settle(
			held,
			"timeout-or-cancelled",
			`The user dismissed the form of ${questions.length} question${questions.length === 1 ? "" : "s"}, or it timed out; ${n} answered.`,
		);
	}

	/** Runs what is shown within its budget (never more than `limit` or what is left of the call; NO_LIMIT for none), with the shown event and the bell; undefined when no time is left. */
	async #withBudget<T>(held: Held, index: number, limit: number, show: (signal: AbortSignal, deadline: number) => Promise<T>): Promise<T | undefined> {
		const budget = Math.min(asMs(limit), msLeft(held.request.deadline));
		if (budget <= 0) return undefined;
		// One controller for what is shown, aborted by its timer or by #stop: cheaper than AbortSignal.any of two.
		const dialog = new AbortController();
		held.dialog = dialog;
		// Without any limit the dialog stays until the human, the asker or the host ends it.
		const timer = Number.isFinite(budget) ? setTimeout(() => dialog.abort("dialog-timeout"), budget) : undefined;
		const firstShown = held.shownAt === undefined;
		held.shownAt ??= Date.now();
		held.showing = index;
		this.#progress(held, "shown", index);
		if (this.#wants("shown")) this.#events.shown!(this.#observed(held), index);
		if (firstShown && this.#isRelayed(held)) this.#bell?.();
		try {
			return await show(dialog.signal, Number.isFinite(budget) ? Date.now() + budget : NO_LIMIT);
		} finally {
			clearTimeout(timer);
			held.dialog = undefined;
			held.showing = undefined;
		}
	}

	/** One question within its own budget: never more than the per-dialog limit or what is left of the call. */
	async #ask(held: Held, index: number): Promise<Answer | undefined> {
		return this.#withBudget(held, index, held.request.dialogTimeoutMs, (signal, deadline) =>
			this.#surface.ask(
				{
					asker: held.request.asker.label,
					index,
					total: held.questions.length,
					signal,
					deadline,
					onDialog: () => void this.#stats.dialogsShown++,
				},
				held.questions[index]!,
			),
		);
	}
}
