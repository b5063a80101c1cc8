/**
 * The observer contract: events on the process-global bus for anything that watches the relay
 * (another extension, a web or phone bridge, a status line). See docs/observers.md for the
 * stability policy: within a version, fields are only added, never renamed, removed or retyped.
 */
import type { Answer } from "../../model/answer.ts";
import type { Question } from "../../model/question.ts";
import type { EndReason, RequestEnd, Status } from "../../model/result.ts";
import type { AskerIdentity } from "./identity.ts";

/** Version of the observer contract; every event and snapshot carries it as `v`. */
export const OBSERVER_VERSION = 1;

/** Bus event names of the observer contract. */
export const OBSERVER_EVENTS = {
	/** A request entered the host's queue. */
	queued: "observe:queued",
	/** One of a request's questions is now shown (or answered from a shared answer). */
	shown: "observe:shown",
	/** A request ended, with its outcome: exactly once per request, whatever way it took (ADR-0025). */
	settled: "observe:settled",
	/** The call's budget ran out and the request stays open, marked late; or, shown again and closed unanswered, it is late again. Added in v1. */
	late: "observe:late",
	/** A late request is shown again (`/checkpoints answer <n>`): `observe:queued` and `observe:shown` follow. Added in v1. */
	reopened: "observe:reopened",
} as const;

/** What every observer event says about a request. */
export interface ObservedRequest {
	v: typeof OBSERVER_VERSION;
	requestId: string;
	asker: AskerIdentity;
	questions: Question[];
	/** Epoch ms at which the host took the request. */
	queuedAt: number;
	/** Epoch ms at which the asker's call budget runs out (the request then settles as `timeout`); 0 when the call has no budget. */
	deadline: number;
	/** Epoch ms at which its first question was shown, if it has been. */
	shownAt?: number;
}

export interface QueuedEvent extends ObservedRequest {
	/** 1 when nothing is ahead of it. */
	position: number;
}

export interface ShownEvent extends ObservedRequest {
	/** 0-based index of the question shown. */
	question: number;
	shownAt: number;
}

export interface SettledEvent extends ObservedRequest {
	settledAt: number;
	/**
	 * `reason` on every `timeout-or-cancelled` outcome (see EndReason). `end`: how the request ended,
	 * typed (RequestEnd): what a surface reads, never the note's wording (absent from a host before it).
	 */
	outcome: { status: Status; answers: Answer[]; note?: string; reason?: EndReason; end?: RequestEnd };
}

/** A request that went late (or back to late): no settled event yet, it is still answerable. */
export interface LateEvent extends ObservedRequest {
	/** Epoch ms at which its call's budget ran out (the same each time it goes back to late). */
	lateSince: number;
	/** Epoch ms at which it expires: it then settles with `end: "expired"`. */
	expiresAt: number;
	/** Answers given before it went late, each with its place. */
	answers: Answer[];
	/** True when it had been shown again and was closed unanswered. @default absent */
	again?: true;
}

/** A late request shown again: it is queued like any other, with no budget of its own. */
export interface ReopenedEvent extends ObservedRequest {
	lateSince: number;
	expiresAt: number;
}

/** What is open right now, oldest first, for an observer that connects late. */
export interface Snapshot {
	v: typeof OBSERVER_VERSION;
	takenAt: number;
	/**
	 * `questionDeadline`, while shown: epoch ms at which what is on screen closes (its own time,
	 * never past `deadline`; 0 when it has no limit), the time the terminal form counts down.
	 */
	open: (ObservedRequest & { state: "queued" | "shown"; question?: number; questionDeadline?: number })[];
	/** Requests whose call's budget ran out, still open and answerable, oldest first (core/host/late.ts); absent when there are none. */
	late?: (ObservedRequest & { lateSince: number; expiresAt: number })[];
}
