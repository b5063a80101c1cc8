/**
 * The host side: one queue of dialogs for the whole process (p-queue, concurrency 1). Every
 * request, the host's own included, goes through it, so the human never sees two dialogs at once.
 * The order is fair (ADR-0024): the host session's own questions first, then round robin by asker
 * session. Identical questions asked at the same time by different sessions are shown once and the
 * answer goes to each. Each request is held as one request record (core/shared/request-record.ts,
 * ADR-0022) with one timer, its deadline's, and ends through one function, `#end`, whatever the reason.
 */
import PQueue, { type Queue, type QueueAddOptions, type RunFunction } from "p-queue";
import type { Answer, AnswerPlace } from "../../model/answer.ts";
import { answerProblem, copyAnswer } from "../../model/answer-check.ts";
import type { Checked } from "../../model/check.ts";
import { MAX_OPEN_PER_ASKER, MAX_REQUEST_ID_LENGTH } from "../../model/limits.ts";
import type { Question } from "../../model/question.ts";
import type { EndReason, Status } from "../../model/result.ts";
import { sanitiseText, shownValue } from "../../model/sanitise.ts";
import { validateAskParams } from "../../model/validate.ts";
import type { HostUI, Surface } from "../answering/surface.ts";
import { CLOCK_TOLERANCE_MS, msLeft, NO_LIMIT } from "../shared/config.ts";
import { checkedAsker } from "../shared/identity.ts";
import { LATE_NOTE } from "../shared/late-config.ts";
import { OBSERVER_VERSION, type ObservedRequest, type Snapshot } from "../shared/observers.ts";
import { type InboundReply, parseInbound, resolveInbound } from "../shared/outside-answers.ts";
import { PROTOCOL_VERSION, type RelayCancel, type RelayProgress, type RelayReply, type RelayRequest, type RelayResult } from "../shared/protocol.ts";
import {
	type AnswerEntry,
	endedState,
	givenAnswers,
	type HeldRequest,
	hasEnded,
	type ParkedRequest,
	placedAnswers,
	type RecordState,
	type RequestEnd,
	type RequestRecord,
	storedRecord,
} from "../shared/request-record.ts";
import { ArrivalNotices } from "./arrival-notices.ts";
import { type LateBook, type LateDrop, type LateRequest, observedLate } from "./late.ts";
import { SameQuestions } from "./same-questions.ts";
import { type Show, type ShowOutcome, type ShowPrompt, showFor } from "./show.ts";

/** How a request ended, as observers, the audit trail and the page learn it: `end` is the typed reason (request-record.ts). */
export interface SettledOutcome {
	status: Status;
	answers: Answer[];
	note?: string;
	reason?: EndReason;
	end: RequestEnd;
}

/** Lifecycle notifications for observers, the audit trail and the status line. */
export interface HostEvents {
	queued?(request: ObservedRequest, position: number): void;
	shown?(request: ObservedRequest, question: number): void;
	settled?(request: ObservedRequest, outcome: SettledOutcome, settledAt: number): void;
	/** The set of waiting requests changed. */
	changed?(): void;
	/**
	 * Whether anything takes the lifecycle notification `name` right now: when false, the host
	 * neither builds nor sends it. A hook that throws counts as true. @default true for every hook given
	 */
	wanted?(name: "queued" | "shown" | "settled" | "late" | "reopened"): boolean;
	/** A request went late (its budget ran out, it stays open) or, shown again and closed unanswered, back to late: it has not settled. */
	late?(request: ObservedRequest, late: LateRequest, again: boolean): void;
	/** A late request is shown again: it is queued and shown as any other, and settles once, later. */
	reopened?(request: ObservedRequest, late: LateRequest): void;
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
	/** Where a request whose budget ran out stays open, marked late (core/host/late.ts). @default none: it ends with its call */
	late?: LateBook;
	/** A late request ended (answered, or cancelled from outside): its end goes home, by the route home (core/delivery/delivery.ts). @default none */
	lateEnded?: (late: LateRequest, outcome: { status: Status; answers: Answer[]; note?: string; reason?: EndReason }) => void;
}

/** What a request brings that the host did not take from an asker just now: a hand-over's record, or a late request shown again. */
interface Carried {
	entries: readonly (AnswerEntry | null | undefined)[];
	queuedAt: number;
	/** A late request shown again from `/checkpoints`: its end is a late one. @default false */
	reopened?: boolean;
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

/** A held request: its record, and what lives only as long as this host holds it. */
interface Held {
	readonly record: RequestRecord;
	/**
	 * The one timer: due at the request's deadline, or sooner when what is on screen closes sooner (its
	 * question deadline). None while neither is set.
	 */
	timer: ReturnType<typeof setTimeout> | undefined;
	/** Epoch ms the timer is due at. */
	dueAt: number;
	/** While it shows: whatever is open closes by this (any end of the request aborts it). The controller `leave` was: p-queue no longer knows it. */
	open?: AbortController;
	/** Its task's signal while it waits its turn: a request that ends then leaves the dialog queue by it (p-queue's `signal`); `open` once its task starts. */
	leave?: AbortController;
	/** Its turn among its asker's requests (round robin, ADR-0024); 0 for the host's own, which go first. */
	round: number;
	/** Whose open requests it counts among (`askerKey`), worked out once. */
	readonly asker: string;
	/** A late request shown again: unanswered, it goes back to the late book. */
	readonly reopened: boolean;
}

/** The wire's status, and the reason a `timeout-or-cancelled` one carries, of each way a request ends (handed-over: none, it lives on). */
const STATUS_OF: Record<Exclude<RequestEnd, "handed-over">, Status> = {
	answered: "ok",
	"answered-outside": "ok",
	dismissed: "timeout-or-cancelled",
	"cancelled-outside": "timeout-or-cancelled",
	"dialog-timeout": "timeout-or-cancelled",
	timeout: "timeout",
	cancelled: "cancelled",
	refused: "error",
	failed: "error",
	"host-gone": "no-host",
	expired: "timeout",
};
const REASON_OF: Partial<Record<RequestEnd, EndReason>> = { dismissed: "dismissed", "cancelled-outside": "dismissed", "dialog-timeout": "dialog-timeout" };
const OUTSIDE_CANCEL_NOTE = "The question was cancelled from outside the terminal.";

const errorText = (error: unknown) => {
	if (error instanceof Error) return error.message;
	try {
		return String(error);
	} catch {
		// A thrown value with a broken toString must not keep the request from ending.
		return "a value that cannot be shown as text";
	}
};
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
const answered = (record: Pick<RequestRecord, "entries">): Answer[] => {
	const given = givenAnswers(record);
	return given.length === 0 ? (NO_ANSWERS as Answer[]) : given;
};
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
/** Who asked a request, and when it was queued, as the status line names it. */
interface AskedBy {
	label: string;
	at: number;
}
const askedBy = (record: RequestRecord): AskedBy => ({ label: record.request.asker.label, at: record.queuedAt });
/** What the late book keeps of a record. */
const lateOf = ({ request, questions, entries, queuedAt }: RequestRecord) => ({ request, questions, entries, queuedAt });
/** Relayed dialogs of other extensions come over every transport (interop/dialog-relay.ts). */
const WITH_DIALOGS = { dialogs: true } as const;
/** No answer yet, for every question of a request that brings none. */
const none = () => undefined;
const ignore = () => {};
/** The host session's own questions go ahead of every relayed one (p-queue runs the highest priority first). */
const OWN_FIRST = Number.POSITIVE_INFINITY;
/** How a request sent again after its host went away is marked wherever its asker is shown. */
const RESENT_MARK = "asked before the restart";
/**
 * Whose open requests count together against the cap: one asker session over every connection of
 * one transport (an origin's part before its colon, protocol.ts). A pooled client opens another
 * connection, a new origin, every 128 calls: counted per origin, 10,000 calls put 1,264 in the queue.
 */
const askerKey = (request: RelayRequest) => `${request.origin?.split(":", 1)[0] ?? ""}\n${request.asker.sessionId}`;

/** Adds one to a count, or takes one away and drops it at zero. */
function count(counts: Map<string, number>, key: string, by: 1 | -1): void {
	const n = (counts.get(key) ?? 0) + by;
	if (n > 0) counts.set(key, n);
	else counts.delete(key);
}

/** One asker session's held requests: how many, and the round its latest one was given. */
interface AskerTurns {
	open: number;
	round: number;
}

/** Every index the host keeps of its held requests, kept in step in one place: a request goes into all of them and out of all of them. */
class Holding {
	/** By request id, oldest first. */
	readonly byId = new Map<string, Held>();
	/** Identical questions of different sessions, shown once. */
	readonly same = new SameQuestions<RequestRecord>();
	/** Held requests per asker label, oldest asker first, for the status line. */
	readonly askers = new Map<string, number>();
	/** Held requests per asker session and transport, for the cap and the round robin. */
	readonly #byAsker = new Map<string, AskerTurns>();
	readonly arrivals: ArrivalNotices<RequestRecord>;

	constructor(notify: (message: string) => void) {
		this.arrivals = new ArrivalNotices(notify);
	}

	openOf(asker: string): number {
		return this.#byAsker.get(asker)?.open ?? 0;
	}

	/**
	 * The round of a held request's turn: one after its asker's latest, and never before the round
	 * being shown (`served`). So an asker's next request goes ahead of every other asker's later
	 * ones, and one that has waited is not overtaken by a newcomer's whole backlog (ADR-0024).
	 */
	nextRound(asker: string, served: number): number {
		const turns = this.#byAsker.get(asker)!;
		turns.round = Math.max(turns.round, served) + 1;
		return turns.round;
	}

	add(held: Held): void {
		const { request } = held.record;
		this.same.add(held.record);
		this.byId.set(request.id, held);
		const turns = this.#byAsker.get(held.asker);
		if (turns) turns.open++;
		else this.#byAsker.set(held.asker, { open: 1, round: 0 });
		count(this.askers, request.asker.label, 1);
	}

	/** Drops every trace of an ended request, its timer included. */
	remove(held: Held): void {
		const { record } = held;
		clearTimeout(held.timer);
		this.byId.delete(record.request.id);
		this.same.remove(record);
		this.arrivals.gone(record);
		const turns = this.#byAsker.get(held.asker)!;
		// An asker with nothing held starts again at the round being shown.
		if (--turns.open === 0) this.#byAsker.delete(held.asker);
		count(this.askers, record.request.asker.label, -1);
	}
}

/** What the dialog host does for the request it shows, given the request. */
interface ShowHooks {
	takeShared(record: RequestRecord, index: number): boolean;
	shown(held: Held, index: number, deadline?: number): void;
	answered(held: Held, index: number, answer: Answer, final: boolean): boolean;
	countDialog(): void;
}

/** The prompt of a request being shown: its methods on the prototype, reading the held request. */
class HeldPrompt implements ShowPrompt {
	readonly asker: string;
	readonly questions: readonly Question[];
	readonly callDeadline: number;
	readonly dialogTimeoutMs: number;
	readonly onDialog: () => void;
	readonly held: Held;
	readonly hooks: ShowHooks;
	readonly signal: AbortSignal;

	constructor(held: Held, hooks: ShowHooks, signal: AbortSignal) {
		this.held = held;
		this.hooks = hooks;
		this.signal = signal;
		const { request, questions } = held.record;
		this.asker = request.asker.label;
		this.questions = questions;
		this.callDeadline = request.deadline;
		this.dialogTimeoutMs = request.dialogTimeoutMs;
		this.onDialog = hooks.countDialog;
	}

	known(index: number): Answer | undefined {
		return this.held.record.entries[index]?.answer;
	}

	takeShared(index: number): boolean {
		return this.hooks.takeShared(this.held.record, index);
	}

	onShown(index: number, deadline?: number): void {
		this.hooks.shown(this.held, index, deadline);
	}

	onAnswer(index: number, answer: Answer, final: boolean): boolean {
		return this.hooks.answered(this.held, index, answer, final);
	}
}

/** A waiting task as the dialog queue keeps it: the options p-queue hands over with it (its own copy), and the task. */
type WaitingTask = { -readonly [K in keyof QueueAddOptions]: QueueAddOptions[K] } & { run: RunFunction };

/**
 * p-queue's queue class for the dialog queue: its order is p-queue's own (highest priority first,
 * first come first served within one), and a task keeps its `signal` only while it waits. p-queue
 * reads the signal from the options it handed over when the task starts; without it p-queue neither
 * races the running task against it nor listens to it: the slot is held until what was open has
 * closed (ADR-0024), and a running task costs no abort listener, race or wrapper promise.
 */
export class DialogOrder implements Queue<RunFunction, QueueAddOptions> {
	/** Sorted, the next first; the slots before `#head` are taken already. */
	#tasks: (WaitingTask | undefined)[] = [];
	#head = 0;

	get size(): number {
		return this.#tasks.length - this.#head;
	}

	enqueue(run: RunFunction, options?: Partial<QueueAddOptions>): void {
		// The options object itself is kept: it is p-queue's copy, made for this task.
		const task = (options ?? {}) as WaitingTask;
		task.run = run;
		const priority = task.priority ?? 0;
		const tasks = this.#tasks;
		if (this.size === 0) {
			tasks.length = 0;
			this.#head = 0;
		}
		if (tasks.length === this.#head || (tasks.at(-1)!.priority ?? 0) >= priority) {
			tasks.push(task);
			return;
		}
		// After the last task of at least its priority.
		let low = this.#head;
		let high = tasks.length;
		while (low < high) {
			const middle = (low + high) >>> 1;
			if ((tasks[middle]!.priority ?? 0) >= priority) low = middle + 1;
			else high = middle;
		}
		tasks.splice(low, 0, task);
	}

	dequeue(): RunFunction | undefined {
		if (this.size === 0) return undefined;
		const task = this.#tasks[this.#head]!;
		this.#tasks[this.#head++] = undefined;
		if (this.#head > 100 && this.#head > this.#tasks.length / 2) {
			this.#tasks.splice(0, this.#head);
			this.#head = 0;
		}
		// Started, the task has no signal any more (p-queue stopped listening to it while it waited).
		task.signal = undefined;
		return task.run;
	}

	remove(id: string): void {
		const index = this.#indexOf(id);
		if (index === this.#head) void this.dequeue();
		else if (index !== -1) this.#tasks.splice(index, 1);
	}

	setPriority(id: string, priority: number): void {
		const index = this.#indexOf(id);
		if (index === -1) throw new ReferenceError(`No task with the id "${id}" waits in the dialog queue.`);
		const [task] = this.#tasks.splice(index, 1);
		task!.priority = priority;
		this.enqueue(task!.run, task);
	}

	filter(options: Readonly<Partial<QueueAddOptions>>): RunFunction[] {
		const runs: RunFunction[] = [];
		for (let i = this.#head; i < this.#tasks.length; i++) if (this.#tasks[i]!.priority === options.priority) runs.push(this.#tasks[i]!.run);
		return runs;
	}

	#indexOf(id: string): number {
		for (let i = this.#head; i < this.#tasks.length; i++) if (this.#tasks[i]!.id === id) return i;
		return -1;
	}
}

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
	readonly #holding: Holding;
	readonly #stats: HostStats = { questionsAsked: 0, dialogsShown: 0, sharedAnswers: 0 };
	readonly #late: LateBook | undefined;
	readonly #lateEnded: DialogHostOptions["lateEnded"];
	/**
	 * What the human is shown, one at a time: a task per queued request, carrying only its record.
	 * A task runs until what was open has closed, even when its request ended before (a UI that
	 * ignores the abort keeps the slot); a request that ends while waiting leaves by its task's signal.
	 */
	readonly #queue = new PQueue<DialogOrder, QueueAddOptions>({ concurrency: 1, queueClass: DialogOrder });
	/** The request whose task runs, for the status line: the one being shown. */
	#showing: Held | undefined;
	/** The round of the relayed request shown last (ADR-0024): a newcomer's first request is due in the next one. */
	#round = 0;
	/** Counts a dialog the human saw. */
	readonly #countDialog = () => void this.#stats.dialogsShown++;
	/** What a request being shown calls back, made once: each request's prompt is one object, no closures of its own. */
	readonly #hooks: ShowHooks = {
		takeShared: (record, index) => this.#takeShared(record, index),
		shown: (held, index, deadline) => this.#shown(held, index, deadline),
		answered: (held, index, answer, final) => this.#answered(held, index, answer, final),
		countDialog: this.#countDialog,
	};

	constructor(options: DialogHostOptions) {
		this.#ui = options.ui;
		this.#show = showFor(options.surface);
		this.#sessionId = options.sessionId;
		this.#reply = options.reply;
		this.#events = guarded(options.events ?? {});
		this.#bell = options.bell;
		this.#place = options.surface.place;
		this.#holding = new Holding((message) => this.#notify(message));
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
		if (this.#wants("reopened")) this.#events.reopened!(observedLate(late), late);
		this.serve({ ...late.request, deadline: 0 }, { entries: late.entries, queuedAt: late.queuedAt, reopened: true });
		return true;
	}

	/** Requests held: shown or waiting in the queue. */
	get heldCount(): number {
		return this.#holding.byId.size;
	}

	/** Requests in the dialog queue, the one being shown included (until what was open has closed). */
	get queueLength(): number {
		return this.#queue.size + this.#queue.pending;
	}

	/** Requests waiting their turn in the dialog queue (not the one on screen). */
	get waitingCount(): number {
		return this.#queue.size;
	}

	/** Whether new dialogs are held (`/checkpoints pause`); what is on screen stays. */
	get paused(): boolean {
		return this.#queue.isPaused;
	}

	/**
	 * Holds new dialogs while the human works: what is on screen stays, the rest waits its turn.
	 * Budgets keep running; the page, request links and outside answers still answer what waits.
	 */
	pause(): void {
		if (this.#queue.isPaused) return;
		this.#queue.pause();
		this.#events.changed?.();
	}

	/** Shows what waits again, in its turn. */
	resume(): void {
		if (!this.#queue.isPaused) return;
		this.#queue.start();
		this.#events.changed?.();
	}

	/** How many dialogs were shown for how many questions. */
	get stats(): Readonly<HostStats> {
		return { ...this.#stats };
	}

	/** Askers of the requests held, oldest first, each once; at most `limit` of them. */
	waitingAskers(limit = Number.POSITIVE_INFINITY): string[] {
		const labels: string[] = [];
		for (const label of this.#holding.askers.keys()) {
			if (labels.length >= limit) break;
			labels.push(label);
		}
		return labels;
	}

	/** How many different askers are waiting. */
	get waitingAskerCount(): number {
		return this.#holding.askers.size;
	}

	/**
	 * The status line's view of what is held, without building a snapshot (it is redrawn at every
	 * change: a snapshot each time made a round of N requests cost N² in memory): the request on
	 * screen, if one is, and the first `limit` of those waiting their turn, oldest first, each with
	 * who asked and when it was queued; `queuedCount` counts every one waiting.
	 */
	waiting(limit: number): { shown?: AskedBy; queued: AskedBy[]; queuedCount: number } {
		const running = this.#showing?.record;
		const shown = running?.state.is === "showing" && running.state.question !== undefined ? running : undefined;
		const queued: AskedBy[] = [];
		for (const { record } of this.#holding.byId.values()) {
			if (queued.length >= limit) break;
			if (record !== shown) queued.push(askedBy(record));
		}
		// The records, not the queue's size: a request just taken is counted before its task is added.
		const queuedCount = this.#holding.byId.size - (shown ? 1 : 0);
		return { ...(shown ? { shown: askedBy(shown) } : {}), queued, queuedCount };
	}

	/** What is open, oldest first. */
	snapshot(): Snapshot {
		return {
			v: OBSERVER_VERSION,
			takenAt: Date.now(),
			open: [...this.#holding.byId.values()].map(({ record }) => {
				const { state } = record;
				const showing = state.is === "showing" ? state.question : undefined;
				const closesAt = state.is === "showing" ? state.closesAt : undefined;
				return {
					...this.#observed(record),
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
	serve(raw: RelayRequest, carried?: Carried): void {
		if (typeof raw !== "object" || raw === null || typeof raw.id !== "string" || raw.id === "" || this.#holding.byId.has(raw.id)) return;
		const checked = this.#checkRequest(raw);
		if (!checked.ok) return this.#replyResult(raw.id, "error", [], checked.reason);
		const { request } = checked;
		const { questions } = request;
		const asker = askerKey(request);
		const open = this.#holding.openOf(asker);
		// Requests carried over from a replaced host were counted there; they are never refused here.
		if (!carried && open >= MAX_OPEN_PER_ASKER)
			return this.#replyResult(
				request.id,
				"error",
				[],
				`The asker already has ${open} requests open at the host, the most one asker session may have (${MAX_OPEN_PER_ASKER}); ask again once one has settled.`,
			);
		const entries = this.#carriedEntries(raw, questions, carried);
		const remaining = msLeft(request.deadline);
		if (remaining <= 0 && !carried)
			return this.#replyResult(request.id, "timeout", answered({ entries }), "The call's budget had run out before it reached the host.");
		// Sent again after a restart, it was asked when its call started: every wait counts from then, as the asker's own does (never from the future).
		const asked = request.resent === true && Number.isFinite(request.createdAt) ? request.createdAt : Number.POSITIVE_INFINITY;
		const queuedAt = carried?.queuedAt ?? Math.min(Date.now(), asked);
		const record: RequestRecord = { request, questions, entries, queuedAt, state: { is: "queued" } };
		const held: Held = { record, timer: undefined, dueAt: NO_LIMIT, reopened: carried?.reopened === true, round: 0, asker };
		if (remaining > 0) this.#arm(held, request.deadline);
		this.#holding.add(held);
		// Handed over, its budget ran out on the way: it ends as any request out of time does (late, observed), not bare.
		if (remaining <= 0) return this.#end(held, "timeout");
		if (!carried) this.#stats.questionsAsked += questions.length;
		const position = this.#holding.byId.size;
		this.#progress(record, "queued", undefined, position);
		if (this.#wants("queued")) this.#events.queued!(this.#observed(record), position);
		this.#events.changed?.();
		if (this.#isRelayed(record) && !carried) this.#holding.arrivals.arrived(record, request.asker.label, questions.length, position - 1);
		// Everything may already be answerable from identical questions of other askers.
		if (this.#completeFromShared(record)) return;
		this.#enqueue(held);
	}

	/**
	 * Puts the request in the dialog queue: the host's own first of all, the others round robin by
	 * asker session (ADR-0024), in the order taken within a round.
	 */
	#enqueue(held: Held): void {
		const leave = new AbortController();
		held.leave = leave;
		const own = !this.#isRelayed(held.record);
		if (!own) held.round = this.#holding.nextRound(held.asker, this.#round);
		// Rejected only when the request ended while it waited (its signal): it has left the queue, nothing to do.
		// Its request's id as the task's: p-queue makes none, and the queue class finds it by it when it leaves.
		this.#queue.add(() => this.#run(held), { signal: leave.signal, priority: own ? OWN_FIRST : -held.round, id: held.record.request.id }).catch(ignore);
	}

	/** Sets the request's one timer due at `at` (epoch ms; NO_LIMIT: none). */
	#arm(held: Held, at: number): void {
		if (held.dueAt === at) return;
		clearTimeout(held.timer);
		held.dueAt = at;
		held.timer = at === NO_LIMIT ? undefined : setTimeout(this.#dueOf, Math.max(0, at - Date.now()), held);
	}

	/** The timers' one function (the request comes as the timer's argument, not in a closure of its own). */
	readonly #dueOf = (held: Held) => this.#due(held);

	/** The request's timer is due: what is on screen closes at its question deadline, or the request's own deadline has come. */
	#due(held: Held): void {
		// `#shown` arms it for anything but the request's deadline only for a question deadline that comes first.
		const questionDeadline = held.dueAt !== held.record.request.deadline;
		held.timer = undefined;
		held.dueAt = NO_LIMIT;
		if (questionDeadline) return void held.open?.abort("dialog-timeout");
		this.#end(held, "timeout");
	}

	/**
	 * The answers a request brings, by question index: a carried record's (copied, so every reply is
	 * built of the host's own data, see sealBuilt), or those a re-sent request says were given (NATS,
	 * ADR-0009): those questions are not asked again.
	 */
	#carriedEntries(raw: RelayRequest, questions: readonly Question[], carried: Carried | undefined): (AnswerEntry | undefined)[] {
		if (carried)
			return questions.map((q, i) => {
				const entry = carried.entries[i];
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

	/** The asker gave up (its budget or its abort): dismiss the dialog or drop the queued request. */
	cancel(message: RelayCancel): void {
		const held = typeof message?.id === "string" ? this.#holding.byId.get(message.id) : undefined;
		if (held) this.#end(held, message.reason === "timeout" ? "timeout" : "cancelled");
	}

	/** An answer from outside the terminal: applied whole or not at all; the first answer wins. */
	answerFromOutside(raw: unknown): InboundReply {
		const parsed = parseInbound(raw);
		if (!parsed.ok) return parsed.reply;
		const held = this.#holding.byId.get(parsed.message.requestId);
		const late = held ? undefined : this.#late?.get(parsed.message.requestId);
		if (late) return this.#answerLate(late, parsed.message);
		// `not_found` keeps the observer contract's snake case (docs/observers.md), as inbound.ts says.
		if (!held) return { ok: false, code: "not_found", reason: `no open request ${JSON.stringify(parsed.message.requestId)} (unknown, or already settled)` };
		if ("cancel" in parsed.message) {
			this.#end(held, "cancelled-outside", OUTSIDE_CANCEL_NOTE);
			return { ok: true };
		}
		const resolved = resolveInbound(held.record.questions, parsed.message.answers, parsed.message.source);
		if (!resolved.ok) return resolved.reply;
		fillEntries(held.record, resolved.answers, parsed.message);
		this.#end(held, "answered-outside");
		return { ok: true };
	}

	/** An answer (or a cancel) from outside for a late request: applied whole, then its end goes to the asker. */
	#answerLate(late: LateRequest, message: Extract<ReturnType<typeof parseInbound>, { ok: true }>["message"]): InboundReply {
		const id = late.request.id;
		if ("cancel" in message) {
			this.#late!.take(id);
			this.#endLate(late, "cancelled-outside", OUTSIDE_CANCEL_NOTE);
			return { ok: true };
		}
		const resolved = resolveInbound(late.questions, message.answers, message.source);
		if (!resolved.ok) return resolved.reply;
		fillEntries(late, resolved.answers, message);
		this.#late!.take(id);
		this.#endLate(late, "answered-outside");
		return { ok: true };
	}

	/**
	 * A late request settles (answered, cancelled from outside, or expired): observers and the audit trail learn it,
	 * once; an answer or a cancel goes home (lateEnded), an expiry or the host's end does not (the asker was told of its timeout).
	 */
	#endLate(late: LateRequest, end: "answered" | "answered-outside" | "cancelled-outside" | "expired" | "host-gone", note?: string): void {
		const status = STATUS_OF[end];
		const reason = REASON_OF[end];
		const outcome = { status, answers: givenAnswers(late), ...(note ? { note } : {}), ...(reason ? { reason } : {}) };
		// Observers and the audit trail learn where each answer was given (the page's trace says "in this tab"); the asker's message does not carry it.
		if (this.#wants("settled")) this.#events.settled!(observedLate(late), { ...outcome, answers: placedAnswers(late), end }, Date.now());
		this.#events.changed?.();
		if (end === "expired" || end === "host-gone") return;
		try {
			this.#lateEnded?.(late, outcome);
		} catch {
			// The delivery's failure is the delivery's; the host goes on.
		}
	}

	/** The host goes for good (quit): every late request settles `host-gone`, once, and leaves the book. */
	endLateRequests(note: string): void {
		for (const late of this.lateRequests()) {
			this.#late!.take(late.request.id);
			this.#endLate(late, "host-gone", note);
		}
	}

	/** A late request left the book unanswered (it expired, or its asker's newer ones made it leave): it settles, `expired`. */
	lateDropped(late: LateRequest, why: LateDrop): void {
		this.#endLate(
			late,
			"expired",
			why === "expired" ? "It was late and expired unanswered." : "It was late and left to make room for newer late questions of its asker.",
		);
	}

	/** The host session is going away for good: every held request ends now with `no-host`. */
	shutdown(note: string): void {
		for (const held of [...this.#holding.byId.values()]) this.#end(held, "host-gone", note);
	}

	/** The host session is being replaced: closes every dialog and hands the requests over, oldest first, as records written down. */
	handOver(): ParkedRequest[] {
		const parked: ParkedRequest[] = [];
		const showing = this.#showing;
		// The one on screen first, so the next host shows it again before anything else; then in the order taken.
		const all = showing && this.#holding.byId.get(showing.record.request.id) === showing ? [showing] : [];
		for (const other of this.#holding.byId.values()) if (other !== showing) all.push(other);
		// A late request shown again goes back to the late book (which outlives this host), not to the next host's queue.
		for (const held of all) {
			if (!held.reopened) parked.push(storedRecord(held.record));
			this.#end(held, "handed-over");
		}
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

	#isRelayed(record: RequestRecord): boolean {
		return record.request.asker.sessionId !== this.#sessionId;
	}

	/** Whether the lifecycle notification `name` has a hook, and anything takes it now. */
	#wants(name: "queued" | "shown" | "settled" | "late" | "reopened"): boolean {
		return this.#events[name] !== undefined && (this.#events.wanted?.(name) ?? true);
	}

	#observed(record: RequestRecord): ObservedRequest {
		const { request } = record;
		const observed: ObservedRequest = {
			v: OBSERVER_VERSION,
			requestId: request.id,
			asker: request.asker,
			questions: record.questions,
			queuedAt: record.queuedAt,
			deadline: request.deadline,
		};
		if (record.shownAt !== undefined) observed.shownAt = record.shownAt;
		return observed;
	}

	/** Ends a queued request whose every question has an answer already (its own or shared); true when it has ended. */
	#completeFromShared(record: RequestRecord): boolean {
		if (record.state.is !== "queued") return hasEnded(record);
		const same = this.#holding.same;
		// Asked of every request as it comes: a loop that allocates nothing finds most of them still open.
		for (let i = 0; i < record.questions.length; i++) if (record.entries[i] === undefined && same.sharedAnswer(record, i) === undefined) return false;
		const filled = record.questions.map((_, i) => record.entries[i]?.answer ?? same.sharedAnswer(record, i));
		if (filled.some((a) => a === undefined)) return false;
		record.entries = filled.map((answer, i) => record.entries[i] ?? { answer: answer!, place: same.sharedPlace(record, i) });
		this.#stats.sharedAnswers += filled.filter((a) => a?.source === "shared").length;
		this.#end(this.#holding.byId.get(record.request.id)!, "answered");
		return true;
	}

	/**
	 * The request as the host keeps it, or what is wrong with it. Everything the asker wrote that
	 * reaches a dialog, a notice, the status line, the audit trail or an observer is neutralised here
	 * (sanitise.ts), by the same validation the asker applied to its own questions.
	 */
	#checkRequest(request: RelayRequest): Checked<{ request: HeldRequest }, { reason: string }> {
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
		const { v, id, deadline, dialogTimeoutMs, createdAt, origin } = request;
		// A re-sent request is shown marked, wherever its asker is named; once, however often it is handed over.
		const marked = request.resent === true && !who.asker.label.endsWith(` · ${RESENT_MARK}`);
		const asker = marked ? { ...who.asker, label: `${who.asker.label} · ${RESENT_MARK}` } : who.asker;
		// Field by field, no spreads: this runs for every request.
		const kept: HeldRequest = { v, id, asker, questions: checked.questions, deadline, dialogTimeoutMs, createdAt };
		if (origin !== undefined) kept.origin = origin;
		if (request.later === true) kept.later = true;
		if (request.resent === true) kept.resent = true;
		return { ok: true, request: kept };
	}

	#progress(record: RequestRecord, stage: "queued" | "shown" | "answered", question?: number, position?: number): void {
		const progress: RelayProgress = { v: PROTOCOL_VERSION, id: record.request.id, kind: "progress", stage, answers: answered(record) };
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

	/**
	 * Ends a held request, for every reason (request-record.ts, RequestEnd), exactly once: closes
	 * what is open or drops it from the queue, leaves every index, and tells the asker, observers and
	 * the audit trail how it ended. `note`: the host's words, when the reason's own are not enough.
	 */
	#end(held: Held, end: RequestEnd, note?: string): void {
		const { record } = held;
		if (hasEnded(record)) return;
		const waiting = record.state.is === "queued";
		held.open?.abort(end);
		let late: LateRequest | undefined;
		if (end === "timeout") {
			// Kept before observers hear of it: they find it late in the snapshot (the page keeps its card and link).
			late = this.#goesLate(record) ? this.#late!.keep(lateOf(record)) : undefined;
			note = `The call's budget ran out before every question was answered.${late ? ` ${LATE_NOTE}` : ""}`;
		}
		record.state = endedState(end);
		this.#holding.remove(held);
		// Waiting its turn, it leaves the dialog queue (once ended, so that nothing started now sees it held).
		if (waiting) held.leave?.abort(end);
		if (held.reopened) return this.#endReopened(record, end, note);
		// Silent: a handed-over request lives on with the next host.
		if (end === "handed-over") return void this.#events.changed?.();
		const status = STATUS_OF[end];
		const reason = REASON_OF[end];
		const same = this.#holding.same;
		const answers: Answer[] = [];
		const { entries } = record;
		for (let i = 0; i < entries.length; i++) {
			const entry = entries[i];
			if (entry) answers.push(same.withSharers(record, i, entry.answer));
		}
		// Gone late, it has not settled: it settles once, when it is answered, cancelled or expires (ADR-0025).
		if (late) this.#wentLate(record, late, false);
		else if (this.#wants("settled")) {
			// Observers and the audit trail learn where each answer was given; the asker's result does not carry it.
			const observed: Answer[] = [];
			for (let i = 0, k = 0; i < entries.length; i++) {
				const place = entries[i]?.place;
				if (entries[i] === undefined) continue;
				const answer = answers[k++]!;
				observed.push(place === undefined ? answer : { ...answer, place });
			}
			// Its keys in the order observers have always had them.
			const outcome = { status, answers: observed } as SettledOutcome;
			if (note) outcome.note = note;
			if (reason) outcome.reason = reason;
			outcome.end = end;
			this.#events.settled!(this.#observed(record), outcome, Date.now());
		}
		this.#events.changed?.();
		// Nobody listens any more for a cancelled request.
		if (status !== "cancelled") this.#replyResult(record.request.id, status, answers, note, reason);
		// Askers that joined this request's questions may now have everything they need.
		for (const other of same.dependents(record)) this.#completeFromShared(other);
	}

	/** A late request shown again ended: answered or cancelled from outside, it settles; otherwise it is late again. */
	#endReopened(record: RequestRecord, end: RequestEnd, note?: string): void {
		const times = this.#late?.lateTimes(record.request.id) ?? { lateSince: record.queuedAt, expiresAt: Date.now() };
		const late = { ...lateOf(record), ...times, bytes: 0 };
		if (end === "answered" || end === "answered-outside" || end === "cancelled-outside") return this.#endLate(late, end, note);
		const kept = this.#late?.keep(lateOf(record));
		// No room left for it (other askers' late questions filled the book meanwhile): it ends as one that expired.
		if (!kept) return this.#endLate(late, "expired", "It was late, and no room was left to keep it open.");
		this.#wentLate(record, kept, true);
	}

	/** Observers hear that a request went late (or back to late), and the status line shows it. */
	#wentLate(record: RequestRecord, late: LateRequest, again: boolean): void {
		if (this.#wants("late")) this.#events.late!(this.#observed(record), late, again);
		this.#events.changed?.();
	}

	/** Whether a request whose budget ran out stays open, marked late: not when answered, nor for other extensions' dialogs. */
	#goesLate(record: RequestRecord): boolean {
		return this.#late?.on === true && record.questions.some((_, i) => record.entries[i] === undefined) && !record.questions.some((q) => q.dialog);
	}

	/** Takes the answer of an identical question another asker already got, when there is one; true when it did. */
	#takeShared(record: RequestRecord, index: number): boolean {
		const same = this.#holding.same;
		const shared = same.sharedAnswer(record, index);
		if (!shared) return false;
		record.entries[index] = { answer: shared, place: same.sharedPlace(record, index) };
		this.#stats.sharedAnswers++;
		this.#progress(record, "answered", index);
		return true;
	}

	/** Shows the request, one way for every surface, and ends it as its showing ended. */
	async #run(held: Held): Promise<void> {
		const { record } = held;
		this.#showing = held;
		if (held.round > this.#round) this.#round = held.round;
		// One controller per request: the queue class took its signal from p-queue as the task started, so aborting it now closes what is open and nothing else.
		const open = held.leave ?? new AbortController();
		held.leave = undefined;
		held.open = open;
		const showing: RecordState & { is: "showing" } = { is: "showing" };
		record.state = showing;
		let outcome: ShowOutcome;
		try {
			outcome = await this.#show(new HeldPrompt(held, this.#hooks, open.signal));
		} catch (error) {
			return this.#end(held, "failed", `The host dialog failed: ${errorText(error)}`);
		} finally {
			showing.question = undefined;
			showing.closesAt = undefined;
			// What was shown has closed: nothing is left to abort when the request ends, and the slot is free.
			held.open = undefined;
			this.#showing = undefined;
		}
		this.#ended(held, outcome);
	}

	/** Question `index` of a showing request is on screen: progress, the shown event, and the bell the first time a relayed request shows. */
	#shown(held: Held, index: number, deadline?: number): void {
		const { record } = held;
		const { state } = record;
		if (state.is !== "showing" || !record.questions[index]) return;
		const firstShown = record.shownAt === undefined;
		record.shownAt ??= Date.now();
		state.question = index;
		if (deadline !== undefined) {
			state.closesAt = deadline;
			// What is open closes by its question deadline when that comes before the request's.
			const { deadline: callDeadline } = record.request;
			this.#arm(held, deadline !== NO_LIMIT && (callDeadline === NO_LIMIT || deadline < callDeadline) ? deadline : callDeadline);
		}
		this.#progress(record, "shown", index);
		// The status line names the request on screen apart from those waiting their turn.
		this.#events.changed?.();
		if (this.#wants("shown")) this.#events.shown!(this.#observed(record), index);
		if (firstShown && this.#isRelayed(record)) this.#bell?.();
	}

	/**
	 * Ends the request as `refused` when a surface's answer to question `index` fails the answer
	 * check: a surface is passed in, so what it hands back passes the same check as any other answer.
	 * Whether it was taken: false when refused (the request has ended).
	 */
	#takeChecked(held: Held, index: number, answer: Answer): boolean {
		const problem = answerProblem(held.record.questions[index]!, answer);
		if (problem === undefined) return true;
		this.#end(held, "refused", `The host dialog's answer to question ${index + 1} ${problem}.`);
		return false;
	}

	/** The human answered question `index` (again, on a form): it counts from now on; a final one may complete the requests that joined it. */
	#answered(held: Held, index: number, answer: Answer, final: boolean): boolean {
		const { record } = held;
		const { state } = record;
		if (state.is !== "showing" || !record.questions[index]) return false;
		if (final) state.question = undefined;
		if (!this.#takeChecked(held, index, answer)) return false;
		// A copy: the surface keeps no reference into what is sealed and sent.
		record.entries[index] = { answer: copyAnswer(answer, "dialog"), place: this.#place };
		this.#progress(record, "answered", index);
		// Other askers waiting on this very question may be complete now.
		if (final) for (const other of this.#holding.same.dependents(record)) this.#completeFromShared(other);
		return true;
	}

	/** How a shown request ended, decided in one place: answered, the call's timeout, or dismissed; an answer the surface hands back last is checked like the others. */
	#ended(held: Held, outcome: ShowOutcome): void {
		const { record } = held;
		if (hasEnded(record)) return;
		const { request, questions, entries } = record;
		if (outcome.answers) {
			const final = outcome.answers;
			// The form's answers are final (the human may have changed or withdrawn one); shared answers stand.
			for (const [i] of questions.entries()) {
				if (entries[i]?.answer.source === "shared") continue;
				const answer = final[i];
				// Shared answers were skipped above: whatever else the form hands back is checked, whatever source it names.
				if (answer && !this.#takeChecked(held, i, answer)) return;
				// Only the host marks an answer as shared (with whom): one the form marks so was given in the form.
				// An answer the host did not hold yet was given in the form; one it held keeps the place it was given in.
				entries[i] = answer
					? {
							answer: copyAnswer(answer, answer.source === undefined || answer.source === "shared" ? "dialog" : answer.source),
							place: entries[i] === undefined ? this.#place : entries[i].place,
						}
					: undefined;
			}
		}
		if (outcome.ended === "submitted" && entries.every((entry) => entry !== undefined)) return this.#end(held, "answered");
		// What was open had its time capped by the call's: closing at the call's deadline is the call's timeout.
		if (outcome.cappedByCall && Date.now() >= request.deadline - CLOCK_TOLERANCE_MS) return this.#end(held, "timeout");
		const n = answered(record).length;
		const total = questions.length;
		const what = outcome.question !== undefined ? `question ${outcome.question + 1} of ${total}` : `the form of ${total} question${total === 1 ? "" : "s"}`;
		// Why it ended, and the note's words with it: the human said no, or nobody was there. (A host that goes or is
		// replaced ends the request first: it is handed over, or ends host-gone.)
		if (outcome.timedOut) this.#end(held, "dialog-timeout", `Nobody answered ${what} within its own time limit (the user may not be there); ${n} answered.`);
		else this.#end(held, "dismissed", `The user dismissed ${what}; ${n} answered.`);
	}
}

/** Takes an outside answer's answers for the questions that have none yet (the first answer wins), each with the place it names. */
function fillEntries(
	record: Pick<RequestRecord, "entries">,
	answers: readonly (Answer | undefined)[],
	message: { place?: AnswerPlace; source?: string },
): void {
	const place = message.place ?? (message.source === "outside" ? "outside" : undefined);
	answers.forEach((answer, i) => {
		if (record.entries[i] !== undefined || answer === undefined) return;
		record.entries[i] = { answer, ...(place !== undefined ? { place } : {}) };
	});
}
