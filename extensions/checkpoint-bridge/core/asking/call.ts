/**
 * One call's life on the asking side, whatever carries it (the in-process bus or the local socket):
 * its id and request, the answers so far, its budget, its abort, and settling exactly once. Every
 * reply's answers are checked against the call's own questions before they are taken.
 */
import { nanoid } from "nanoid";
import type { Answer } from "../../model/answer.ts";
import { answerProblem, copyAnswer } from "../../model/answer-check.ts";
import type { Question, QuestionInput } from "../../model/question.ts";
import { END_REASONS, type EndReason, type Envelope, makeEnvelope, type Status } from "../../model/result.ts";
import { validateAskParams } from "../../model/validate.ts";
import { NO_LIMIT, shorterLimit } from "../shared/config.ts";
import type { AskerIdentity } from "../shared/identity.ts";
import { LATE_NOTE, lateAnswersOn } from "../shared/late-config.ts";
import { PROTOCOL_VERSION, type RelayLate, type RelayProgress, type RelayReply, type RelayRequest } from "../shared/protocol.ts";

export interface CallOptions {
	asker: AskerIdentity;
	questions: QuestionInput[];
	/** The call's whole budget in ms, queue wait included; NO_LIMIT (0) for none. */
	budgetMs: number;
	/** Longest one dialog may stay open, in ms; NO_LIMIT (0) for no limit of its own. */
	dialogTimeoutMs: number;
	/** The tool call's own abort signal: aborting settles the call as `cancelled` and closes its dialog. */
	signal?: AbortSignal;
	/** Called for every progress reply: queued, shown, answered. */
	onProgress?: (progress: RelayProgress) => void;
	/** The request is asked again after its host restarted: shown marked as asked before the restart. @default false */
	resent?: boolean;
	/** The request's id, when the caller needs it before the call ends (a `wait: false` receipt). @default a fresh nanoid */
	id?: string;
	/** Asked with `wait: false`: the request says so to the host (RelayRequest.later). @default false */
	later?: boolean;
	/**
	 * The call ended `timeout`, its question stayed open at a host in another process, marked late,
	 * and has ended there since: its envelope (`late` answers, or a dismissal), at most once, while
	 * this process still holds the connection it asked on. Only transports to other processes call
	 * it; a host in this process delivers to the asking session itself. Returns false when the end
	 * is not recorded in the asking session (it is gone): the transport acks the late frame as
	 * recorded only otherwise, and the host's session takes one that is not. @default none: a late end goes to the host's session
	 */
	onLate?: (envelope: Envelope) => boolean | void;
	/**
	 * Asked with `wait: false`: records the call's end in the asking session when a transport to another
	 * process brings it back in a frame to ack (core/bridge/frames.ts AckFrame), before the call's promise
	 * settles; whether it is recorded there now. The transport acks it only then: an end not recorded
	 * (the session is gone) goes to the host's session instead, and the caller must not deliver it
	 * again. @default none: the caller delivers the call's end from its promise
	 */
	recordEnd?: (envelope: Envelope) => boolean;
}

/**
 * How long a call whose budget ran out waits for the verdict of a host that holds its request (it
 * said so with a progress reply): the host's clock decides (ADR-0019), and an answer it took at the
 * deadline, or its own timeout, is on its way. Without a verdict within this long the call ends
 * with `timeout` itself. @default 1000
 */
export const VERDICT_GRACE_MS = 1_000;

/** What a transport gets to drive one call. */
export interface CallControl {
	readonly id: string;
	/** The request to deliver to the host. */
	readonly request: RelayRequest;
	/**
	 * A reply from the host: progress is passed on, a result settles the call. `settling` gets the
	 * envelope the reply settles the call with, before the transport's cleanup runs (an ack must leave
	 * before the connection the call had is let go).
	 */
	reply(reply: RelayReply, settling?: (envelope: Envelope) => void): void;
	/** Settles the call; later calls do nothing. */
	end(status: Status, note?: string): void;
}

/**
 * What is wrong with a reply's answers, measured against the questions asked: each must answer a
 * question of the call, in question order, each question at most once, with a value it offered; an
 * `ok` result answers every question. Undefined when they fit.
 */
export function replyAnswersProblem(questions: readonly Question[], reply: Pick<RelayReply, "kind" | "answers"> & { status?: Status }): string | undefined {
	const { answers } = reply;
	if (!Array.isArray(answers)) return "it carries no answers";
	let next = 0;
	// Indexed: every reply of every call comes through here.
	for (let k = 0; k < answers.length; k++) {
		const answer = answers[k]!;
		let problem: string | undefined;
		let fits = false;
		for (let i = next; i < questions.length && !fits; i++) {
			const found = answerProblem(questions[i]!, answer);
			if (found === undefined) {
				fits = true;
				next = i + 1;
			} else if (answer?.question === questions[i]!.question) problem ??= found;
		}
		if (!fits) return `answer ${k + 1} ${problem ?? `answers ${JSON.stringify(answer?.question)}, which this call did not ask (or not in its place)`}`;
	}
	if (reply.kind === "result" && reply.status === "ok" && answers.length !== questions.length)
		return `it is ok with ${answers.length} answers for ${questions.length} questions`;
	return undefined;
}

/** Relayed dialogs of other extensions are asked through calls too (interop/dialog-relay.ts). */
const WITH_DIALOGS = { dialogs: true } as const;

/** What a transport's `start` hands back: what to do when the call ends (`cancelHost`: the asker gave up, the host should drop the request or close its dialog). */
type Cleanup = (cancelHost: boolean, status: Status) => void;

/**
 * One call while it runs: the control a transport drives, its timers and its settling, in one object
 * (methods on the prototype, no closures of its own: every question asked is one of these).
 */
class Call implements CallControl {
	readonly id: string;
	readonly request: RelayRequest;
	readonly #options: CallOptions;
	readonly #questions: readonly Question[];
	readonly #resolve: (envelope: Envelope) => void;
	#answers: readonly Answer[] = NO_ANSWERS;
	/** Set once it has settled: whether the asker gave up, and with which status. */
	#settled: { status: Status; cancelHost: boolean } | undefined;
	#cleanup: Cleanup | void = undefined;
	/** The host holds the request: at the deadline its verdict, not this side's timer, ends the call. */
	#openAtHost = false;
	#budgetTimer: ReturnType<typeof setTimeout> | undefined;
	#graceTimer: ReturnType<typeof setTimeout> | undefined;
	#onAbort: (() => void) | undefined;

	constructor(options: CallOptions, id: string, startedAt: number, questions: Question[], resolve: (envelope: Envelope) => void) {
		const { budgetMs, signal } = options;
		this.id = id;
		this.#options = options;
		this.#questions = questions;
		this.#resolve = resolve;
		// Without a budget the call ends only when answered, dismissed, aborted, or its host goes. With one, a host that
		// holds the request settles it at the deadline itself: a result it sent at the last instant is not lost on the way.
		if (budgetMs !== NO_LIMIT) {
			this.#budgetTimer = setTimeout(Call.#atDeadline, budgetMs, this);
			// Asked with wait: false, nobody waits on the call: its budget does not keep an asker's process alive either.
			if (options.later) this.#budgetTimer.unref?.();
		}
		if (signal) {
			this.#onAbort = () => this.#settle("cancelled", "The tool call was aborted.", true);
			signal.addEventListener("abort", this.#onAbort, { once: true });
		}
		const request: RelayRequest = {
			v: PROTOCOL_VERSION,
			id,
			asker: options.asker,
			questions,
			deadline: budgetMs === NO_LIMIT ? NO_LIMIT : startedAt + budgetMs,
			dialogTimeoutMs: shorterLimit(options.dialogTimeoutMs, budgetMs),
			createdAt: startedAt,
		};
		if (options.resent === true) request.resent = true;
		if (options.later) request.later = true;
		this.request = request;
	}

	/** Hands the call to its transport; runs the transport's cleanup at once when it settled the call before handing one back. */
	start(start: (call: CallControl) => Cleanup | void): void {
		this.#cleanup = start(this);
		if (this.#settled) this.#cleanup?.(this.#settled.cancelHost, this.#settled.status);
	}

	reply(reply: RelayReply, settling?: (envelope: Envelope) => void): void {
		if (this.#settled) return;
		// Answers to questions not asked, or values not offered, are never passed on: the call ends in error.
		const problem = replyAnswersProblem(this.#questions, reply);
		if (problem !== undefined) return this.#settle("error", `The host's reply was refused: ${problem}.`, true, undefined, settling);
		this.#answers = reply.answers;
		if (reply.kind === "result") return this.#settle(reply.status, reply.note, false, reply.reason, settling);
		this.#openAtHost = true;
		try {
			this.#options.onProgress?.(reply);
		} catch {
			// A failing progress listener must not break the call.
		}
	}

	end(status: Status, note?: string): void {
		// A host that goes away while its verdict is awaited changes nothing: the budget had already run out.
		if (this.#graceTimer !== undefined && status === "no-host") this.#ranOut();
		else this.#settle(status, note, false);
	}

	/** The budget's timer (the call comes as its argument: no closure per call). */
	static readonly #atDeadline = (call: Call) => {
		if (call.#openAtHost) call.#graceTimer = setTimeout(Call.#graceOver, VERDICT_GRACE_MS, call);
		else call.#ranOut();
	};
	static readonly #graceOver = (call: Call) => call.#ranOut();

	#ranOut(): void {
		// The host keeps a timed-out request open, marked late (core/host/late.ts), unless turned off; never another extension's dialog.
		const staysLate = lateAnswersOn() && !this.#questions.some((q) => q.dialog);
		this.#settle(
			"timeout",
			`The call's budget of ${this.#options.budgetMs} ms ran out before every question was answered.${staysLate ? ` ${LATE_NOTE}` : ""}`,
			true,
		);
	}

	#settle(status: Status, note: string | undefined, cancelHost: boolean, reason?: EndReason, settling?: (envelope: Envelope) => void): void {
		if (this.#settled) return;
		this.#settled = { status, cancelHost };
		clearTimeout(this.#budgetTimer);
		clearTimeout(this.#graceTimer);
		if (this.#onAbort) this.#options.signal?.removeEventListener("abort", this.#onAbort);
		const envelope = envelopeFor(this.#options, this.id, Date.now() - this.request.createdAt, this.#answers, status, note, reason);
		settling?.(envelope);
		this.#cleanup?.(cancelHost, status);
		this.#resolve(envelope);
	}
}

/** A call's answers before any reply carried some: shared, never written to. */
const NO_ANSWERS: readonly Answer[] = Object.freeze([]);

/** The envelope a call settles with. Its answers are copied once, here: a sealed reply is frozen, and the envelope is the caller's to keep. */
function envelopeFor(
	options: Pick<CallOptions, "asker">,
	id: string,
	waitedMs: number,
	answers: readonly Answer[],
	status: Status,
	note?: string,
	reason?: EndReason,
): Envelope {
	const copies: Answer[] = [];
	for (let i = 0; i < answers.length; i++) copies.push(copyAnswer(answers[i]!));
	// Every timeout-or-cancelled envelope says why; a host that names no known reason (an older one) counts as the human's.
	const meta: Pick<Envelope, "requestId" | "asker" | "waitedMs" | "reason"> = { requestId: id, asker: options.asker.label, waitedMs };
	if (status === "timeout-or-cancelled") meta.reason = reason && END_REASONS.includes(reason) ? reason : "dismissed";
	return makeEnvelope(status, copies, note, meta);
}

/**
 * Runs a call. `start` delivers the request and returns what to do when the call ends; `cancelHost`
 * is true when the asker gave up (budget, abort) and the host should drop the request or close
 * its dialog. Resolves with the envelope; never rejects.
 */
export function runCall(options: CallOptions, start: (call: CallControl) => Cleanup | void): Promise<Envelope> {
	const startedAt = Date.now();
	const id = options.id ?? nanoid();
	if (options.signal?.aborted)
		return Promise.resolve(envelopeFor(options, id, Date.now() - startedAt, NO_ANSWERS, "cancelled", "The tool call was aborted before it was asked."));
	// The same check and neutralisation the host applies, so the answers can be checked against the very labels it shows.
	const checked = validateAskParams({ questions: options.questions }, WITH_DIALOGS);
	if (!checked.ok)
		return Promise.resolve(makeEnvelope("error", [], `Invalid parameters: ${checked.problems.join("; ")}.`, { asker: options.asker.label, waitedMs: 0 }));
	return new Promise<Envelope>((resolve) => new Call(options, id, startedAt, checked.questions, resolve).start(start));
}

/**
 * Turns a call's late end (RelayLate, as a transport to another process brings it back) into the
 * envelope its `onLate` gets: its answers checked against the call's questions, as every reply's
 * are (one that does not fit ends it in `error`, naming why).
 */
export function lateEnd(call: Pick<CallControl, "id" | "request">, options: Pick<CallOptions, "asker" | "onLate">): (frame: RelayLate) => boolean {
	return (frame) => {
		const problem = replyAnswersProblem(call.request.questions as Question[], { kind: "result", status: frame.status, answers: frame.answers });
		const meta = { requestId: call.id, asker: options.asker.label, waitedMs: Date.now() - call.request.createdAt };
		// Every timeout-or-cancelled envelope says why, as runCall's do; an unknown reason counts as the human's.
		const reason = END_REASONS.includes(frame.reason as EndReason) ? (frame.reason as EndReason) : "dismissed";
		const envelope =
			problem === undefined
				? makeEnvelope(frame.status, [...frame.answers], frame.note, { ...meta, ...(frame.status === "timeout-or-cancelled" ? { reason } : {}) })
				: makeEnvelope("error", [], `The host's late reply was refused: ${problem}.`, meta);
		if (!options.onLate) return false;
		try {
			return options.onLate(envelope) !== false;
		} catch {
			// The delivery's failure is the delivery's: unrecorded, the host's session takes it.
			return false;
		}
	};
}

/**
 * The end a transport brought back for a call asked with `wait: false`, in a frame to ack: recorded
 * through `recordEnd` (the envelope `reply` settled the call with); whether it is recorded. One
 * `recordEnd` fails on is not.
 */
export function recordedEnd(envelope: Envelope, options: Pick<CallOptions, "recordEnd">): boolean {
	if (!options.recordEnd) return false;
	try {
		return options.recordEnd(envelope);
	} catch {
		return false;
	}
}
