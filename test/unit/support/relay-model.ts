/**
 * The reference model of the relay for the property tests (test/unit/core/relay-properties.test.ts):
 * actions an interleaving is made of (calls of 1–3 questions, choice or free text, random budgets,
 * sometimes the very questions another session is asking; answers, refused picks, dismissals, UI
 * failures, tool-call aborts, elapsed time, host shutdown, hand-over and re-claim, answers from outside
 * the terminal, junk on every bus channel), a relay that runs them against the real modules while
 * keeping what it expects of each call, and the invariants it checks after every step and at the end.
 *
 * Questions are passed as a caller writes them (checked valid first), and answers are compared on
 * `question` and `answer`, so the checks hold whatever else a question or an answer carries.
 */
import fc from "fast-check";
import { afterEach, beforeEach, expect, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { VERDICT_GRACE_MS } from "../../../extensions/checkpoint-bridge/core/asking/call.ts";
import { claimHostRole, HANDOVER_GRACE_MS, type HostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { STATUS_KEY } from "../../../extensions/checkpoint-bridge/core/host/status-line.ts";
import { CLOCK_TOLERANCE_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { OBSERVER_EVENTS, type SettledEvent } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { type Envelope, NEEDS_INPUT_ADVICE, STATUSES, type Status } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { type Dialog, PropertyUI } from "./property-ui.ts";

// Captured before any fake timers: a real macrotask boundary drains every pending microtask.
const realSetImmediate = setImmediate;
export const drain = () => new Promise<void>((resolve) => realSetImmediate(resolve));

const T0 = Date.UTC(2025, 0, 1);
export const HOST_ID = "host-session-0001";
/** Who asks: the host's own model (no receipt) and two other sessions. */
const SESSIONS = [
	{ label: "host-own", sessionId: HOST_ID },
	{ label: "subagent-planner", sessionId: "planner-session-0002" },
	{ label: "subagent-reviewer", sessionId: "reviewer-session-0003" },
] as const;

/** Written here, not imported: the title format is part of the contract. */
export const titleOf = (label: string, index: number, total: number, question: string) =>
	`[${label}] ${total > 1 ? `(${index + 1}/${total}) ` : ""}${question}`;

/** The contract's part of an answer. */
export const plain = (answers: readonly { question: string; answer: string }[]) => answers.map(({ question, answer }) => ({ question, answer }));

type AskedQuestions = Parameters<typeof askViaHost>[0]["questions"];

/** Questions as a caller writes them, checked valid first. A choice offers no "Other" entry here, so every pick is a listed option. */
function questionsOf(specs: readonly { question: string; options?: readonly string[]; placeholder?: string }[]): AskedQuestions {
	const raw = specs.map((q) => (q.options ? { ...q, options: [...q.options], allowOther: false } : { ...q }));
	const result = validateAskParams({ questions: raw });
	if (!result.ok) throw new Error(`test questions rejected: ${result.problems.join("; ")}`);
	return raw as unknown as AskedQuestions;
}

/** Rejections nobody handled while a property ran: every property expects none. */
export const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

/** Fake timers from T0 and a fresh record of unhandled rejections for every test of the calling file. */
export function useRelayClock(): void {
	beforeEach(() => {
		vi.useFakeTimers();
		vi.setSystemTime(T0);
		unhandled.length = 0;
		process.on("unhandledRejection", onUnhandled);
	});
	afterEach(() => {
		process.off("unhandledRejection", onUnhandled);
		vi.useRealTimers();
	});
}

type QuestionSpec = { kind: "select"; options: number } | { kind: "input"; placeholder?: string };

export type Action =
	| { t: "ask"; session: number; questions: QuestionSpec[]; budgetMs: number; dialogTimeoutMs: number; preAborted: boolean; copy?: number }
	| { t: "answer"; pick: number }
	| { t: "notOffered"; variant: "borrowed" | "padded" | "trailing" | "upper" | "text"; text: string; pick: number }
	| { t: "nonString"; value: unknown }
	| { t: "dismiss" }
	| { t: "fail"; sync: boolean; error: unknown }
	| { t: "flakyNotify"; on: boolean }
	| { t: "abort"; pick: number }
	| { t: "advance"; ms: number }
	| { t: "shutdown" }
	| { t: "handover" }
	| { t: "reclaim" }
	| { t: "outside"; variant: "valid" | "not-offered" | "cancel" | "unknown" | "wrong-count"; pick: number }
	| {
			t: "junk";
			channel: "request" | "cancel" | "answer" | "reply-random" | "reply-foreign" | "cancel-live" | "replay-live";
			pick: number;
			payload: unknown;
			respond: boolean;
	  }
	| { t: "junk-request"; v: number; deadlineOffset: number; dialogTimeoutMs: number; options: number };

const questionSpec: fc.Arbitrary<QuestionSpec> = fc.oneof(
	fc.record({ kind: fc.constant("select" as const), options: fc.integer({ min: 2, max: 4 }) }),
	fc.record({ kind: fc.constant("input" as const), placeholder: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }) }, { requiredKeys: ["kind"] }),
);

const junkPayload = fc.oneof(
	fc.anything(),
	fc.record(
		{
			v: fc.oneof(fc.constant(PROTOCOL_VERSION), fc.anything()),
			id: fc.oneof(fc.string(), fc.anything()),
			requestId: fc.oneof(fc.string(), fc.anything()),
			kind: fc.oneof(fc.constantFrom("progress", "result"), fc.anything()),
			status: fc.oneof(fc.constantFrom(...STATUSES), fc.anything()),
			answers: fc.anything(),
			cancel: fc.anything(),
			asker: fc.anything(),
			questions: fc.anything(),
			deadline: fc.anything(),
			dialogTimeoutMs: fc.anything(),
			reason: fc.anything(),
		},
		{ requiredKeys: [] },
	),
);

export const action: fc.Arbitrary<Action> = fc.oneof(
	{
		weight: 4,
		arbitrary: fc.record(
			{
				t: fc.constant("ask" as const),
				session: fc.integer({ min: 0, max: SESSIONS.length - 1 }),
				questions: fc.array(questionSpec, { minLength: 1, maxLength: 3 }),
				budgetMs: fc.integer({ min: 1, max: 20_000 }),
				dialogTimeoutMs: fc.integer({ min: 1, max: 20_000 }),
				preAborted: fc.integer({ min: 0, max: 15 }).map((n) => n === 0),
				// Sometimes the very questions another session is asking right now.
				copy: fc.nat(),
			},
			{ requiredKeys: ["t", "session", "questions", "budgetMs", "dialogTimeoutMs", "preAborted"] },
		),
	},
	{ weight: 5, arbitrary: fc.record({ t: fc.constant("answer" as const), pick: fc.nat() }) },
	{
		weight: 2,
		arbitrary: fc.record({
			t: fc.constant("notOffered" as const),
			variant: fc.constantFrom("borrowed", "padded", "trailing", "upper", "text"),
			text: fc.string(),
			pick: fc.nat(),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			t: fc.constant("nonString" as const),
			value: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.object(), fc.array(fc.string())),
		}),
	},
	{ weight: 2, arbitrary: fc.constant({ t: "dismiss" as const }) },
	{
		weight: 2,
		arbitrary: fc.record({
			t: fc.constant("fail" as const),
			sync: fc.boolean(),
			error: fc.oneof(
				fc.string().map((m) => new Error(m)),
				fc.anything(),
			),
		}),
	},
	{ weight: 2, arbitrary: fc.record({ t: fc.constant("abort" as const), pick: fc.nat() }) },
	{ weight: 1, arbitrary: fc.record({ t: fc.constant("flakyNotify" as const), on: fc.boolean() }) },
	{
		weight: 3,
		arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.oneof(fc.integer({ min: 1, max: 8_000 }), fc.integer({ min: 900, max: 1_100 })) }),
	},
	{ weight: 1, arbitrary: fc.constant({ t: "shutdown" as const }) },
	{ weight: 1, arbitrary: fc.constant({ t: "handover" as const }) },
	{ weight: 2, arbitrary: fc.constant({ t: "reclaim" as const }) },
	{
		weight: 2,
		arbitrary: fc.record({
			t: fc.constant("outside" as const),
			variant: fc.constantFrom("valid", "valid", "not-offered", "cancel", "unknown", "wrong-count"),
			pick: fc.nat(),
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({
			t: fc.constant("junk" as const),
			channel: fc.constantFrom("request", "cancel", "answer", "reply-random", "reply-foreign", "cancel-live", "replay-live"),
			pick: fc.nat(),
			payload: junkPayload,
			respond: fc.boolean(),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			t: fc.constant("junk-request" as const),
			v: fc.constantFrom(PROTOCOL_VERSION, PROTOCOL_VERSION, 0, PROTOCOL_VERSION + 1),
			deadlineOffset: fc.integer({ min: -5_000, max: 30_000 }),
			dialogTimeoutMs: fc.integer({ min: -10, max: 30_000 }),
			options: fc.constantFrom(0, 2, 3),
		}),
	},
);

interface Spec {
	question: string;
	options?: string[];
	placeholder?: string;
}

export interface Call {
	no: number;
	label: string;
	sessionId: string;
	specs: Spec[];
	titles: string[];
	budgetMs: number;
	/** Longest one dialog may stay open, as asked. */
	dialogTimeoutMs: number;
	askedAt: number;
	controller: AbortController;
	request?: RelayRequest;
	arrival?: number;
	hostAtAsk: boolean;
	/** The host quit while this call was held. */
	hostEnded: boolean;
	/** Parked by a host being replaced, since this (fake) time; cleared once adopted. */
	parkedAt?: number;
	/** Ever parked: a host may then have let it go without an outcome of its own. */
	everParked: boolean;
	/** Parked, and no host took it over in time. */
	parkExpired: boolean;
	/** A foreign cancel made the host drop it: it can now only end by its own budget or abort. */
	dropped: boolean;
	/** Answers accepted from outside the terminal. */
	outside?: string[];
	outsideCancelled: boolean;
	/** How often the call's promise settled: at most once by construction, so it says only whether it has. */
	settlements: number;
	/** Sealed results sent on the call's reply channel: a call that settled twice would have two. */
	results: number;
	/** Progress that reached the asker after a result had been sent to it. */
	lateProgress: number;
	envelope?: Envelope;
	settledAt?: number;
	rejection?: unknown;
}

const isPending = (call: Call) => call.settlements === 0;

/** A dialog capped by the call's budget that closes this close to the deadline counts as the call's timeout. */
const nearDeadline = (call: Call, at = Date.now()) => at >= call.askedAt + call.budgetMs - CLOCK_TOLERANCE_MS;
type Reply = { ok: boolean; code?: string };

export class Relay {
	readonly handle: SharedHandle = createHandle();
	readonly ui = new PropertyUI({ respond: (dialog) => this.#onOpen(dialog) });
	role: HostRole | undefined;
	readonly calls: Call[] = [];
	readonly byTitle = new Map<string, { call: Call; index: number }>();
	readonly violations: string[] = [];
	#arrivals = 0;
	#capturing: Call | undefined;
	#junk = 0;
	#outsideNo = 0;
	/** Removes the per-call result counters. */
	readonly #counters: (() => void)[] = [];
	/** Observer events of a settled request, by request id. */
	readonly settledEvents = new Map<string, SettledEvent[]>();
	readonly #recordSettled = (event: SettledEvent) => this.settledEvents.set(event.requestId, [...(this.settledEvents.get(event.requestId) ?? []), event]);
	readonly #recordRequest = (request: RelayRequest) => {
		if (!this.#capturing) return;
		this.#capturing.request = request;
		this.#capturing.arrival = this.#arrivals++;
		this.#capturing = undefined;
	};

	constructor() {
		this.handle.bus.on("request", this.#recordRequest);
		this.handle.bus.on(OBSERVER_EVENTS.settled, this.#recordSettled);
		this.role = claimHostRole(this.handle, { ui: this.ui, surface: dialogSurface(this.ui), sessionId: HOST_ID });
	}

	/** When the host began each call's current question: its first dialog under the current host. */
	readonly #questionStart = new Map<Call, { index: number; role: HostRole | undefined; at: number }>();

	/**
	 * The host's rule for a dismissed dialog: the call's `timeout` only when, as its question began,
	 * the call had no more time left than one dialog gets (the call's budget capped the dialog), and
	 * the deadline is at hand; otherwise `timeout-or-cancelled`.
	 */
	dismissalIsTimeout(call: Call): boolean {
		const start = this.#questionStart.get(call);
		const left = start ? call.askedAt + call.budgetMs - start.at : 0;
		return left <= Math.min(call.dialogTimeoutMs, call.budgetMs) && nearDeadline(call);
	}

	#onOpen(dialog: Dialog): void {
		const owner = this.byTitle.get(dialog.title);
		if (owner) {
			const start = this.#questionStart.get(owner.call);
			if (!start || start.index !== owner.index || start.role !== this.role)
				this.#questionStart.set(owner.call, { index: owner.index, role: this.role, at: Date.now() });
		}
		if (owner && !isPending(owner.call))
			this.violations.push(
				`dialog ${dialog.seq} "${dialog.title}" opened for call ${owner.call.no}, which had already settled (${owner.call.envelope?.status})`,
			);
	}

	/** Emits on the bus as a foreign copy would; the emit must never throw. */
	emit(channel: string, ...args: unknown[]): void {
		try {
			(this.handle.bus.emit as (event: string, ...rest: unknown[]) => boolean)(channel, ...args);
		} catch (error) {
			this.violations.push(`bus.emit(${JSON.stringify(channel)}) threw: ${String(error)}`);
		}
	}

	pending(): Call[] {
		return this.calls.filter(isPending);
	}

	/** Held by the current host: asked or adopted, not dropped, not parked. */
	held(call: Call): boolean {
		return (
			this.role !== undefined &&
			isPending(call) &&
			call.request !== undefined &&
			!call.dropped &&
			call.parkedAt === undefined &&
			!call.parkExpired &&
			!call.hostEnded
		);
	}

	/** After any step: the invariants that must hold at every quiet moment. */
	checkQuiet(): void {
		expect(this.violations).toEqual([]);
		expect(this.ui.overlaps).toEqual([]);
		expect(unhandled).toEqual([]);
		for (const call of this.calls) {
			expect(call.rejection, `call ${call.no} rejected`).toBeUndefined();
			expect(call.results, `call ${call.no} was sent more than one result`).toBeLessThanOrEqual(1);
			expect(call.lateProgress, `call ${call.no} got progress after its result`).toBe(0);
			// The asker listens on its reply channel exactly while it waits (beside this model's own counter).
			if (call.request) expect(this.handle.bus.listenerCount(replyChannel(call.request.id))).toBe(isPending(call) ? 2 : 1);
		}
		for (const dialog of this.ui.open) {
			const owner = this.byTitle.get(dialog.title);
			if (owner) expect(isPending(owner.call), `dialog "${dialog.title}" still open after its call settled`).toBe(true);
		}
		if (this.role) {
			// What the host says it holds: every call the model says it holds, no settled one; the status line agrees.
			const snapshot = this.handle.snapshot()!;
			const open = snapshot.open.map((o) => o.requestId);
			// The status line's view counts what the snapshot lists: the request on screen and those waiting their turn.
			const waiting = this.role.host.queued(0);
			expect(open).toHaveLength(waiting.queuedCount + (waiting.shown ? 1 : 0));
			for (const call of this.calls) if (call.request) expect(open.includes(call.request.id), `call ${call.no} held`).toBe(this.held(call));
			expect(this.ui.status.has(STATUS_KEY)).toBe(open.length > 0);
		}
	}

	/** Whether one of the call's dialogs opened since `seq` threw at once (an armed synchronous UI failure). */
	threwFor(call: Call, seq: number): boolean {
		return this.ui.dialogs.some((d) => d.seq > seq && d.outcome?.kind === "threw" && this.byTitle.get(d.title)?.call === call);
	}

	expectSettled(call: Call, status: Status): void {
		expect(call.settlements, `call ${call.no} should have settled with ${status}`).toBe(1);
		expect(call.envelope?.status).toBe(status);
	}

	async run(a: Action): Promise<void> {
		switch (a.t) {
			case "ask":
				return this.ask(a);
			case "answer":
			case "notOffered":
			case "nonString":
			case "dismiss":
				return this.respond(a);
			case "fail":
				return this.fail(a);
			case "flakyNotify":
				// From now on the UI's notify throws (or works again): receipts and refusals are courtesies.
				this.ui.notifyThrows = a.on ? new Error("notify failed") : undefined;
				return;
			case "abort":
				return this.abort(a.pick);
			case "advance":
				return this.advance(a.ms);
			case "shutdown":
				return this.shutdown();
			case "handover":
				return this.handover();
			case "reclaim":
				return this.reclaim();
			case "outside":
				return this.outside(a);
			case "junk":
				return this.junk(a);
			case "junk-request": {
				const n = this.#junk++;
				const options = Array.from({ length: a.options }, (_, k) => `junk${n}o${k}`);
				this.emit("request", {
					v: a.v,
					id: `junk-request-${n}`,
					asker: { label: "junk", sessionId: "junk-session" },
					questions: questionsOf([{ question: `junk${n}`, ...(options.length ? { options } : {}) }]),
					deadline: Date.now() + a.deadlineOffset,
					dialogTimeoutMs: a.dialogTimeoutMs,
					createdAt: Date.now(),
				});
				await drain();
				return;
			}
		}
	}

	async ask(a: Extract<Action, { t: "ask" }>): Promise<void> {
		const noticesBefore = this.ui.notices.length;
		const seqBefore = this.ui.opened;
		const call = this.launch(a);
		await drain();
		if (a.preAborted) return this.expectSettled(call, "cancelled");
		if (!call.hostAtAsk) return this.expectSettled(call, "no-host");
		if (this.threwFor(call, seqBefore)) return this.expectSettled(call, "error");
		expect(isPending(call)).toBe(true);
		expect(call.request?.id).toMatch(/^[\w-]{16,}$/);
		// The host's human gets a receipt for batches from other sessions only; receipts are coalesced
		// (arrival-notices.ts), so an asker's second batch within a notice window waits for the summary.
		const receipts = this.ui.notices.slice(noticesBefore).filter((n) => n.type === "info" && n.message.includes(`[${call.label}]`));
		expect(receipts.length).toBeLessThanOrEqual(call.sessionId === HOST_ID ? 0 : 1);
	}

	/** Starts a call and tracks how it settles. */
	launch(a: Extract<Action, { t: "ask" }>): Call {
		const no = this.calls.length;
		const { label, sessionId } = SESSIONS[a.session]!;
		// Texts unique per call and question, so a title, an option or a typed answer names its one call;
		// except for a copy: the same questions as another session's live call, which may share answers.
		const fresh: Spec[] = a.questions.map((spec, i) =>
			spec.kind === "select"
				? { question: `c${no}q${i} choose`, options: Array.from({ length: spec.options }, (_, k) => `c${no}q${i}o${k}`) }
				: { question: `c${no}q${i} type`, ...(spec.placeholder !== undefined ? { placeholder: spec.placeholder } : {}) },
		);
		const originals = this.pending().filter((c) => c.sessionId !== sessionId && c.request);
		const original = a.copy === undefined ? undefined : originals[a.copy % Math.max(1, originals.length)];
		const copied = original?.specs.map((q) => ({ ...q }));
		const titlesOf = (specs: Spec[]) => specs.map((q, i) => titleOf(label, i, specs.length, q.question));
		const specs = copied && !titlesOf(copied).some((t) => this.byTitle.has(t)) ? copied : fresh;
		const controller = new AbortController();
		if (a.preAborted) controller.abort();
		const call: Call = {
			no,
			label,
			sessionId,
			specs,
			titles: titlesOf(specs),
			budgetMs: a.budgetMs,
			dialogTimeoutMs: a.dialogTimeoutMs,
			askedAt: Date.now(),
			controller,
			hostAtAsk: this.handle.host() !== undefined,
			hostEnded: false,
			parkExpired: false,
			everParked: false,
			dropped: false,
			outsideCancelled: false,
			settlements: 0,
			results: 0,
			lateProgress: 0,
		};
		this.calls.push(call);
		call.titles.forEach((title, index) => this.byTitle.set(title, { call, index }));
		this.#capturing = call;
		try {
			askViaHost({
				handle: this.handle,
				asker: { label, sessionId },
				questions: questionsOf(specs),
				budgetMs: a.budgetMs,
				dialogTimeoutMs: a.dialogTimeoutMs,
				signal: controller.signal,
				onProgress: () => void (call.results > 0 && call.lateProgress++),
			}).then(
				(envelope) => {
					call.settlements++;
					call.envelope = envelope;
					call.settledAt = Date.now();
				},
				(error: unknown) => {
					call.settlements++;
					call.rejection = error;
				},
			);
		} catch (error) {
			this.violations.push(`askViaHost threw: ${String(error)}`);
		} finally {
			this.#capturing = undefined;
		}
		// Counted after the asker's own listener, so a result it takes is counted before any later progress.
		if (call.request) {
			const channel = replyChannel(call.request.id);
			const count = (reply: RelayReply) => void (reply?.kind === "result" && this.handle.isFromHost(reply, channel.slice("reply:".length)) && call.results++);
			this.handle.bus.on(channel, count);
			this.#counters.push(() => this.handle.bus.off(channel, count));
		}
		return call;
	}

	async respond(a: Extract<Action, { t: "answer" | "notOffered" | "nonString" | "dismiss" }>): Promise<void> {
		const dialog = this.ui.current();
		if (!dialog) return;
		const owner = this.byTitle.get(dialog.title);
		const last = owner ? owner.index === owner.call.specs.length - 1 : false;
		let value: unknown;
		let expected: "next" | "again" | Status;
		if (a.t === "dismiss") {
			value = undefined;
			// At the very end of a budget that capped the dialog, a dismissal cannot be told from the budget running out.
			expected = owner && this.dismissalIsTimeout(owner.call) ? "timeout" : "timeout-or-cancelled";
		} else if (a.t === "nonString") {
			value = a.value;
			expected = "error";
		} else if (dialog.kind === "input") {
			// Any text is a valid answer; the seq makes it traceable to this one dialog.
			value = a.t === "answer" ? `typed ${dialog.title} #${dialog.seq}` : `${a.text}⟨${dialog.seq}⟩`;
			expected = last ? "ok" : "next";
		} else if (a.t === "answer") {
			value = dialog.options![a.pick % dialog.options!.length];
			expected = last ? "ok" : "next";
		} else {
			value = this.notOffered(dialog, a);
			if (value === undefined) return;
			expected = "again";
		}
		const noticesBefore = this.ui.notices.length;
		const seqBefore = this.ui.opened;
		this.ui.answer(dialog, value);
		await drain();
		if (!owner) return; // a junk request's dialog: nobody waits for it
		const { call, index } = owner;
		if ((expected === "next" || expected === "again") && this.threwFor(call, seqBefore)) this.expectSettled(call, "error");
		else if (expected === "next") {
			// The next question not already answered by another asker's identical one; or done.
			if (isPending(call)) expect(call.titles.slice(index + 1)).toContain(this.ui.current()?.title);
			else this.expectSettled(call, "ok");
		} else if (expected === "again") {
			// Refused with a warning, and the same question asked again.
			expect(isPending(call)).toBe(true);
			expect(this.ui.current()?.title).toBe(dialog.title);
			expect(this.ui.notices.slice(noticesBefore).map((n) => n.type)).toEqual(["warning"]);
		} else this.expectSettled(call, expected);
	}

	/** A string the select did not offer: another call's option, or a near miss of one of its own. */
	notOffered(dialog: Dialog, a: Extract<Action, { t: "notOffered" }>): string | undefined {
		const offered = dialog.options!;
		const own = offered[a.pick % offered.length]!;
		const foreign = this.calls.flatMap((c) => c.specs.flatMap((q) => q.options ?? [])).filter((o) => !offered.includes(o));
		const candidate = {
			borrowed: foreign[a.pick % Math.max(1, foreign.length)],
			padded: ` ${own}`,
			trailing: `${own} `,
			upper: own.toUpperCase(),
			text: a.text,
		}[a.variant];
		return candidate !== undefined && !offered.includes(candidate) ? candidate : undefined;
	}

	async fail(a: Extract<Action, { t: "fail" }>): Promise<void> {
		if (a.sync) {
			// The next dialog to open, whoever's it is, throws instead of opening.
			this.ui.throwOnNextOpen = { error: a.error };
			return;
		}
		const dialog = this.ui.current();
		if (!dialog) return;
		const owner = this.byTitle.get(dialog.title);
		this.ui.fail(dialog, a.error);
		await drain();
		if (owner) this.expectSettled(owner.call, "error");
	}

	async abort(pick: number): Promise<void> {
		const call = this.calls[pick % Math.max(1, this.calls.length)];
		if (!call) return;
		const wasPending = isPending(call);
		const before = call.envelope;
		try {
			call.controller.abort();
		} catch (error) {
			this.violations.push(`abort threw: ${String(error)}`);
		}
		await drain();
		if (wasPending) this.expectSettled(call, "cancelled");
		else expect(call.envelope).toBe(before);
	}

	async advance(ms: number): Promise<void> {
		await vi.advanceTimersByTimeAsync(ms);
		await drain();
		for (const call of this.calls) {
			// Nothing outlives its budget (and the wait for a holding host's verdict, ADR-0019), and nothing stays parked past the grace period.
			if (call.askedAt + call.budgetMs + VERDICT_GRACE_MS <= Date.now()) expect(call.settlements, `call ${call.no} outlived its budget`).toBe(1);
			if (call.parkedAt !== undefined && call.parkedAt + HANDOVER_GRACE_MS <= Date.now()) {
				call.parkedAt = undefined;
				call.parkExpired = true;
				expect(call.settlements, `call ${call.no} stayed parked past the grace period`).toBe(1);
			}
		}
	}

	async shutdown(): Promise<void> {
		if (!this.role) return;
		const held = this.calls.filter((call) => this.held(call));
		for (const call of held) call.hostEnded = true;
		this.role.release("quit", "The host session ended.");
		this.role = undefined;
		await drain();
		for (const call of held) this.expectSettled(call, "no-host");
		this.expectNoHostListening();
	}

	/** The host is being replaced (/new, /resume, /fork, /reload): what it holds waits for the next host. */
	async handover(): Promise<void> {
		if (!this.role) return;
		const held = this.calls.filter((call) => this.held(call));
		this.role.release("reload", "The host session was replaced.");
		this.role = undefined;
		await drain();
		// Parking again restarts the grace period of everything parked.
		for (const call of this.calls)
			if (held.includes(call) || call.parkedAt !== undefined) {
				call.parkedAt = Date.now();
				call.everParked = true;
			}
		for (const call of held) expect(isPending(call), `call ${call.no} settled at a handover`).toBe(true);
		expect(this.ui.open).toEqual([]);
		this.expectNoHostListening(1);
	}

	async reclaim(): Promise<void> {
		if (this.role) {
			// The role is taken: a second claimant gets nothing and adds no listener.
			const before = this.handle.bus.listenerCount("request");
			const intruder = new PropertyUI();
			expect(claimHostRole(this.handle, { ui: intruder, surface: dialogSurface(intruder), sessionId: "intruder-session" })).toBeUndefined();
			expect(this.handle.bus.listenerCount("request")).toBe(before);
			return;
		}
		this.role = claimHostRole(this.handle, { ui: this.ui, surface: dialogSurface(this.ui), sessionId: HOST_ID });
		expect(this.role).toBeDefined();
		// The new host adopts what was parked.
		for (const call of this.calls) call.parkedAt = undefined;
		await drain();
	}

	/** No host listens any more; `parked` cancel listeners at most, one that drops a parked request its asker gave up on. */
	expectNoHostListening(parked = 0): void {
		expect(this.handle.host()).toBeUndefined();
		expect(this.handle.bus.listenerCount("request")).toBe(1); // only the test's recorder
		expect(this.handle.bus.listenerCount("cancel")).toBeLessThanOrEqual(parked);
	}

	/** An answer from outside the terminal, addressed by request id; the host replies exactly once. */
	async outside(a: Extract<Action, { t: "outside" }>): Promise<void> {
		const live = this.pending().filter((call) => call.request);
		const target = live[a.pick % Math.max(1, live.length)];
		if (!target && a.variant !== "unknown") return;
		const values = target?.specs.map((q, i) => (q.options ? q.options[(a.pick + i) % q.options.length]! : `outside ${q.question} #${this.#outsideNo++}`)) ?? [];
		const select = target?.specs.findIndex((q) => q.options) ?? -1;
		let payload: unknown;
		switch (a.variant) {
			case "valid":
				payload = { requestId: target!.request!.id, answers: values };
				break;
			case "not-offered":
				if (select < 0) return;
				payload = { requestId: target!.request!.id, answers: values.with(select, `${values[select]} (not offered)`) };
				break;
			case "wrong-count":
				payload = { requestId: target!.request!.id, answers: [...values, "one too many"] };
				break;
			case "cancel":
				payload = { requestId: target!.request!.id, cancel: true };
				break;
			case "unknown":
				payload = { requestId: "no-such-request", answers: ["x"] };
				break;
		}
		const held = target ? this.held(target) : false;
		const replies: Reply[] = [];
		this.emit("answer", payload, (reply: Reply) => replies.push(reply));
		await drain();
		if (!this.role) return expect(replies).toEqual([]);
		expect(replies).toHaveLength(1);
		const [reply] = replies;
		if (!held || a.variant === "unknown") {
			expect(reply).toMatchObject({ ok: false, code: "not_found" });
			if (target) expect(isPending(target)).toBe(true);
		} else if (a.variant === "valid") {
			expect(reply).toEqual({ ok: true });
			target!.outside = values;
			this.expectSettled(target!, "ok");
		} else if (a.variant === "cancel") {
			expect(reply).toEqual({ ok: true });
			target!.outsideCancelled = true;
			this.expectSettled(target!, "timeout-or-cancelled");
		} else {
			expect(reply).toMatchObject({ ok: false, code: a.variant === "not-offered" ? "invalid_answer" : "invalid_payload" });
			expect(isPending(target!)).toBe(true);
		}
	}

	async junk(a: Extract<Action, { t: "junk" }>): Promise<void> {
		const live = this.pending().filter((call) => call.request);
		const target = live[a.pick % Math.max(1, live.length)];
		switch (a.channel) {
			case "request":
			case "cancel":
				this.emit(a.channel, a.payload);
				break;
			case "answer": {
				// Anything at all: refused with a reason when a host listens, and never more than one reply.
				const replies: Reply[] = [];
				this.emit("answer", a.payload, a.respond ? (reply: Reply) => replies.push(reply) : a.payload);
				await drain();
				if (a.respond && this.role) expect(replies).toMatchObject([{ ok: false }]);
				else expect(replies).toEqual([]);
				return;
			}
			case "reply-random":
				this.emit(`reply:junk-${a.pick}`, a.payload);
				break;
			case "reply-foreign": {
				// A live channel, but messages addressed to someone else: the asker must ignore them.
				if (!target) return;
				const other = this.calls.find((c) => c !== target && c.request)?.request?.id ?? "someone-else";
				const base = typeof a.payload === "object" && a.payload !== null && !Array.isArray(a.payload) ? a.payload : {};
				this.emit(replyChannel(target.request!.id), { ...base, id: other });
				this.emit(replyChannel(target.request!.id), {
					v: PROTOCOL_VERSION,
					id: other,
					kind: "result",
					status: "ok",
					answers: [{ question: "forged", answer: "forged", kind: "text" }],
				});
				break;
			}
			case "cancel-live":
				// Someone else cancels a live call: the host (or the hand-over park) drops it; the asker keeps waiting for its own budget.
				if (!target) return;
				if (this.held(target) || target.parkedAt !== undefined) {
					target.dropped = true;
					target.parkedAt = undefined;
				}
				this.emit("cancel", { v: PROTOCOL_VERSION, id: target.request!.id, reason: "cancelled" });
				break;
			case "replay-live": {
				// The same request again while the host holds it: ignored, no second batch.
				if (!target || !this.held(target)) return;
				const shownBefore = this.ui.opened;
				this.emit("request", target.request);
				await drain();
				expect(this.ui.opened).toBe(shownBefore);
				return;
			}
		}
		await drain();
	}

	/** Ends the run: every budget runs out, the host leaves, and nothing is left behind. */
	async finish(): Promise<void> {
		await this.advance(120_000);
		this.checkQuiet();
		for (const call of this.calls) expect(call.settlements, `call ${call.no} never settled`).toBe(1);
		expect(this.ui.open).toEqual([]);
		if (this.role) {
			expect(this.role.host.snapshot().open).toEqual([]);
			expect(this.role.host.queued(0).queuedCount).toBe(0);
			this.role.release("quit", "end of run");
			this.role = undefined;
		}
		this.handle.bus.off("request", this.#recordRequest);
		this.handle.bus.off(OBSERVER_EVENTS.settled, this.#recordSettled);
		for (const off of this.#counters) off();
		expect(this.handle.bus.eventNames()).toEqual([]);
		expect(this.ui.status.size).toBe(0);
		expect(vi.getTimerCount()).toBe(0);
		this.checkOutcomes();
		this.checkOrder();
	}

	/** Each call's envelope against what happened to it: its answers and its status. */
	checkOutcomes(): void {
		// Every value the human gave a question, by question text, and to which call.
		const given = new Map<string, { call: Call; value: string }[]>();
		const give = (call: Call, question: string, value: string) => given.set(question, [...(given.get(question) ?? []), { call, value }]);
		for (const d of this.ui.dialogs) {
			const owner = this.byTitle.get(d.title);
			if (!owner || d.outcome?.kind !== "value" || typeof d.outcome.value !== "string") continue;
			const spec = owner.call.specs[owner.index]!;
			if (!spec.options || spec.options.includes(d.outcome.value)) give(owner.call, spec.question, d.outcome.value);
		}
		for (const call of this.calls) call.outside?.forEach((value, i) => give(call, call.specs[i]!.question, value));

		for (const call of this.calls) {
			const envelope = call.envelope!;
			expect(Array.isArray(envelope.answers)).toBe(true);
			// Each answer is for one of the call's own questions, in order, and is a value given for that very question:
			// to this call, or (marked shared) to another session's call that asked the identical question.
			let next = 0;
			for (const answer of envelope.answers) {
				const index = call.specs.findIndex((q, i) => i >= next && q.question === answer.question);
				expect(index, `call ${call.no}: answer to a question it did not ask (${answer.question})`).toBeGreaterThanOrEqual(0);
				next = index + 1;
				const spec = call.specs[index]!;
				if (spec.options) expect(spec.options).toContain(answer.answer);
				const candidates = (given.get(spec.question) ?? []).filter((g) => (answer.source === "shared" ? g.call.sessionId !== call.sessionId : g.call === call));
				expect(
					candidates.map((g) => g.value),
					`call ${call.no}: answer ${JSON.stringify(answer)} was not given to it`,
				).toContain(answer.answer);
			}
			// Its own answers: at most one accepted per question, and every one of them reported.
			const own = call.specs.map((q) => (given.get(q.question) ?? []).filter((g) => g.call === call));
			for (const values of own) expect(values.length).toBeLessThanOrEqual(call.outside ? 2 : 1);
			if (call.request) expect(envelope.requestId).toBe(call.request.id);
			// Observers see one outcome per request a host took, the asker's own unless someone else's cancel dropped it;
			// a request a replaced host parked may end with no host at all, and then with no event.
			const events = call.request ? (this.settledEvents.get(call.request.id) ?? []) : [];
			if (!call.request || !call.hostAtAsk) expect(events).toEqual([]);
			else if (call.everParked) expect(events.length).toBeLessThanOrEqual(1);
			else expect(events, `call ${call.no}: observer outcomes`).toHaveLength(1);
			if (events.length === 1 && !call.dropped) {
				expect(events[0]!.outcome.status).toBe(envelope.status);
				expect(plain(events[0]!.outcome.answers)).toEqual(plain(envelope.answers));
			}
			expect(envelope.asker).toBe(call.label);
			expect(envelope.waitedMs).toBe(call.settledAt! - call.askedAt);
			if (envelope.status === "ok") expect(envelope.note).toBeUndefined();
			else expect(envelope.note).toContain(NEEDS_INPUT_ADVICE);

			const mine = this.ui.dialogs.filter((d) => this.byTitle.get(d.title)?.call === call);
			const ended = mine.at(-1)?.outcome;
			switch (envelope.status) {
				case "ok":
					expect(plain(envelope.answers).map((x) => x.question)).toEqual(call.specs.map((q) => q.question));
					break;
				case "cancelled":
					expect(call.controller.signal.aborted).toBe(true);
					break;
				case "no-host":
					expect(!call.hostAtAsk || call.hostEnded || call.parkExpired, `call ${call.no}: no-host while a host held it`).toBe(true);
					break;
				case "timeout":
					expect(nearDeadline(call, call.settledAt), `call ${call.no}: timeout before its budget ran out`).toBe(true);
					break;
				case "timeout-or-cancelled":
					expect(
						call.outsideCancelled ||
							(ended?.kind === "value" && ended.value === undefined) ||
							ended?.kind === "timed-out" ||
							(ended?.kind === "aborted" && ended.reason === "dialog-timeout"),
						`call ${call.no}: timeout-or-cancelled without a dismissal or an expired dialog (${JSON.stringify(ended)})`,
					).toBe(true);
					break;
				case "error":
					expect(
						ended?.kind === "rejected" || ended?.kind === "threw" || (ended?.kind === "value" && ended.value !== undefined && typeof ended.value !== "string"),
						`call ${call.no}: error without a failed dialog (${JSON.stringify(ended)})`,
					).toBe(true);
					break;
				default:
					throw new Error(`call ${call.no}: unknown status ${String(envelope.status)}`);
			}
			// And the converse: how its last dialog ended decides the status.
			if (mine.some((d) => d.outcome?.kind === "threw")) expect(envelope.status).toBe("error");
			if (ended?.kind === "rejected") expect(envelope.status).toBe("error");
			// A dismissal is the call's timeout only when its dialog closed at the call's deadline.
			if (ended?.kind === "value" && ended.value === undefined)
				expect(nearDeadline(call, call.settledAt) ? ["timeout", "timeout-or-cancelled"] : ["timeout-or-cancelled"]).toContain(envelope.status);
		}
	}

	/**
	 * One batch at a time, each asker's in the order it arrived (the order across askers is the fair
	 * queue's, ADR-0024: the host's own first, then round robin, pinned in test/unit/core/fair-queue.test.ts):
	 * calls are never shown again once another's dialog opened.
	 */
	checkOrder(): void {
		const sequence: (Call | "junk")[] = [];
		for (const dialog of this.ui.dialogs) {
			const owner = this.byTitle.get(dialog.title)?.call;
			if (!owner) {
				expect(dialog.title, "a dialog nobody asked for").toMatch(/^\[junk\] /);
				sequence.push("junk");
				continue;
			}
			if (sequence.at(-1) !== owner) {
				expect(sequence.includes(owner), `call ${owner.no} shown again after another batch`).toBe(false);
				sequence.push(owner);
			}
		}
		for (const { sessionId } of SESSIONS) {
			const arrivals = sequence.flatMap((entry) => (entry === "junk" || entry.sessionId !== sessionId ? [] : [entry.arrival!]));
			expect(arrivals).toEqual([...arrivals].sort((x, y) => x - y));
		}
	}
}

/** Runs a sequence of actions on a fresh relay, checking the quiet invariants after each and everything at the end. */
export async function play(actions: Action[]): Promise<void> {
	vi.clearAllTimers();
	vi.setSystemTime(T0);
	unhandled.length = 0;
	const relay = new Relay();
	try {
		for (const a of actions) {
			await relay.run(a);
			relay.checkQuiet();
		}
		await relay.finish();
	} finally {
		relay.role?.release("quit", "cleanup");
	}
}
