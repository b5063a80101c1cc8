/**
 * The page's live stream as a contract: the names of its events and what each one carries, one
 * definition for the server that writes them (stream.ts) and the page that reads them
 * (static/app.js, type-checked against this file; the names are served to it at the top of its
 * script, server.ts). It imports nothing from the server's own code, so the page's type check
 * (static/tsconfig.json) sees the browser's types only.
 */
import type { FormElsewhere } from "../../core/answering/elsewhere.ts";
import type { Question } from "../../model/question.ts";
import type { RequestEnd } from "../../model/result.ts";

/** The stream's event names. Not "open" for a new card: EventSource fires its own "open" when it connects. */
export const PAGE_EVENTS = {
	/** The whole state: a stream's first message, and again after it fell behind. */
	state: "state",
	added: "added",
	update: "update",
	/** A request left the page (settled, or gone from the host). */
	gone: "gone",
	/** A session took or left the host role. */
	host: "host",
	/** A form open in the host's terminal appeared or changed. */
	form: "form",
	formGone: "form-gone",
} as const;

export type PageEvent = (typeof PAGE_EVENTS)[keyof typeof PAGE_EVENTS];

/** One open request as the page shows it. */
export interface Card {
	requestId: string;
	/** Who asks, as the dialog titles show it. */
	asker: string;
	questions: Question[];
	/** Epoch ms at which the host took it. */
	queuedAt: number;
	/** Epoch ms at which the asker's budget runs out; 0 when it has none. */
	deadline: number;
	/** While shown: epoch ms at which what the host shows closes (the time the terminal counts down); 0 when it has no limit. */
	questionDeadline?: number;
	/** "shown" while one of its questions is on screen at the host; "late" once its call's budget ran out and it stays open (core/host/late.ts). */
	state: "queued" | "shown" | "late";
	/** While late: epoch ms at which its call's budget ran out. */
	lateSince?: number;
	/**
	 * The question on screen at the host, while one is. Nothing follows about the others: the
	 * terminal form lets the human move between questions, so the page never guesses what is answered.
	 */
	question?: number;
	/** 1 for the oldest open request; late ones follow those in the queue. */
	position: number;
}

/** A card as a tab gets it: the page also gets each request's own link. */
export type CardView = Card & { link?: string };

/** How a settled request ended, as a tab reads it (board.ts keeps more: see its `Trace`). */
export interface TraceView {
	requestId: string;
	asker: string;
	/** e.g. "answered in the terminal", "answered on the page, in this tab": the words for `end`. */
	outcome: string;
	/** How it ended, typed: what the page decides its look by, never the words. */
	end: RequestEnd;
	settledAt: number;
	/** What was answered, one entry per answer given (`SQLite`, `a, b` for several values), each cut to ANSWER_IN_TRACE characters (model/answer-places.ts); absent when none was given. */
	answered?: string[];
}

/** The first message of a stream. */
export interface StateMessage {
	/** The server's clock, so a phone whose clock is off still counts down right. */
	now: number;
	/** Whose view: the whole page, or one request through its link. */
	scope: "page" | "request";
	host: boolean;
	cards: CardView[];
	traces: TraceView[];
	/** Forms open in the host's terminal (another extension's), on the page only. */
	forms: FormElsewhere[];
}

/** What each event carries (its `data`, as JSON). */
export interface PageEventData {
	[PAGE_EVENTS.state]: StateMessage;
	[PAGE_EVENTS.added]: { now: number; card: CardView };
	[PAGE_EVENTS.update]: { now: number; card: CardView };
	[PAGE_EVENTS.gone]: { requestId: string; trace?: TraceView };
	[PAGE_EVENTS.host]: { present: boolean };
	[PAGE_EVENTS.form]: { form: FormElsewhere };
	[PAGE_EVENTS.formGone]: { id: string };
}

/** One server-sent event. */
export function frame<E extends PageEvent>(event: E, data: PageEventData[E]): string {
	// JSON has no raw line breaks, so one data line always holds the whole message.
	return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
