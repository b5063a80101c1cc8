/**
 * Holding the host role: claiming it on the shared handle, listening on the bus, and giving it
 * back. The first session with a UI claims it; the role is free again once its holder releases it.
 * A host that is being replaced (/new, /resume, /fork, /reload) parks what it holds in the book for
 * a moment, and the next host to claim takes it on.
 */

import type { Answer } from "../../model/answer.ts";
import { endWire, makeEnvelope, type Status } from "../../model/result.ts";
import { cutText } from "../../model/sanitise.ts";
import type { HostUI, Surface } from "../answering/surface.ts";
import { noticeOnce } from "../asking/tool-missing.ts";
import type { Home } from "../delivery/home.ts";
import { endTakers, type HomeRoute, homeRoute } from "../delivery/route-home.ts";
import { checkedAsker } from "../shared/identity.ts";
import { LATE_NOTE } from "../shared/late-config.ts";
import { CancelNotices, NoticeWindow } from "../shared/notice-window.ts";
import { OBSERVER_EVENTS, type ObservedRequest, type SettledEvent } from "../shared/observers.ts";
import { lateChannel, PROTOCOL_VERSION, type RelayCancel, type RelayLate, type RelayNotice, type RelayRequest, replyChannel } from "../shared/protocol.ts";
import { givenAnswers, placedAnswers, type RequestRecord } from "../shared/request-record.ts";
import type { ReplySeal, SharedHandle } from "../shared/shared-handle.ts";
import { currentStore, type StoreOutcome, useStore } from "../store/open.ts";
import { answeredElsewhere } from "./arrival-notices.ts";
import { type RequestBook, requestBook } from "./book.ts";
import { DialogHost, type DialogHostOptions, type HostEvents, type SettledOutcome } from "./dialog-host.ts";
import { ExpiryNotices } from "./late.ts";
import { statusLine } from "./status-line.ts";

/** How long requests of a host being replaced wait for the next host. @default 1000 */
export const HANDOVER_GRACE_MS = 1_000;

/** What the audit trail records of a settled request. */
export interface SettledRecord {
	requestId: string;
	asker: string;
	askerSessionId: string;
	questions: string[];
	answers: Answer[];
	status: Status;
	note?: string;
	queuedAt: number;
	shownAt?: number;
	settledAt: number;
	waitedMs: number;
}

export interface HostRoleOptions {
	/** Notices and the footer status. */
	ui: HostUI;
	/**
	 * Where each question is shown. None: a host with no screen (ADR-0035): nothing is shown here, every
	 * request waits in the queue, open, for the places that answer from outside (the page, one-tap, mail),
	 * under the same budgets and late rules. @default none
	 */
	surface?: Surface;
	/** The host session's id. */
	sessionId: string;
	/** Rings for attention when a relayed question is first shown. @default none */
	bell?: () => void;
	/** Called for every settled request (the audit trail). @default none */
	onSettled?: (record: SettledRecord) => void;
	/** The book of the process (book.ts): where requests live from taken to gone, late and parked ones included. @default the handle's book, made without late answers when this host is the first to ask */
	book?: RequestBook;
	/** Where an end goes once its call has returned (core/delivery/delivery.ts). @default the route over the process's box */
	home?: HomeRoute;
	/**
	 * The store of the host's directory (core/store/open.ts, ADR-0033): requests of other processes are
	 * written down in it, and those a host before this one wrote are taken back. A refused store's
	 * warning is shown once. @default none: everything lives in memory
	 */
	store?: StoreOutcome;
}

export interface HostRole {
	/** The dialog queue this role serves. */
	readonly host: DialogHost;
	/**
	 * Stops listening and frees the role. `quit`: every open request settles now with `no-host`
	 * and `note`. Any other reason: a replacement is on its way, so open requests wait up to
	 * HANDOVER_GRACE_MS for the next host, then settle with `no-host`.
	 */
	release(reason: string, note: string): void;
	/** Where the end of late request `requestId` would go now (the route home), undefined when it is not late here. */
	whereLate(requestId: string): Home | undefined;
}

/** What a host with no screen shows with: never reached, since its queue is paused for good. */
const NO_SCREEN: Surface = {
	ask: () => Promise.reject(new Error("this host has no screen: its questions are answered from outside")),
};

/** Characters of a relayed notice shown to the human; the rest is cut with a mark. @default 2000 */
const MAX_RELAYED_NOTICE_LENGTH = 2_000;

/** A relayed notice as the human sees it, `[asker] message`, neutralised and cut; undefined when it is not one. */
function noticeText(notice: unknown): { text: string; type: RelayNotice["type"] } | undefined {
	if (typeof notice !== "object" || notice === null) return undefined;
	const { v, asker, message, type } = notice as Partial<RelayNotice>;
	const who = checkedAsker(asker);
	if (v !== PROTOCOL_VERSION || !who.ok || typeof message !== "string") return undefined;
	const text = cutText(message, MAX_RELAYED_NOTICE_LENGTH);
	return { text: `[${who.asker.label}] ${text}`, type: type === "warning" || type === "error" ? type : "info" };
}

/** What the audit trail says of a call whose budget ran out while its question stays open, marked late. */
const WENT_LATE_NOTE = `The call's budget ran out before every question was answered. ${LATE_NOTE}`;

/** The note of a late answer that carries none of its own. */
const LATE_ANSWER_NOTE = "Answered late, after the call's budget ran out.";

const settledRecord = (request: ObservedRequest, outcome: { status: Status; answers: Answer[]; note?: string }, settledAt: number): SettledRecord => ({
	requestId: request.requestId,
	asker: request.asker.label,
	askerSessionId: request.asker.sessionId,
	questions: request.questions.map((q) => q.question),
	answers: outcome.answers,
	status: outcome.status,
	...(outcome.note ? { note: outcome.note } : {}),
	queuedAt: request.queuedAt,
	...(request.shownAt !== undefined ? { shownAt: request.shownAt } : {}),
	settledAt,
	waitedMs: settledAt - request.queuedAt,
});

/** The end of a late request goes home by the one route (core/delivery/route-home.ts): its session, its process (a late frame), or the host's session. */
function lateEndsHome(bus: SharedHandle["bus"], home: HomeRoute, sealBuilt: ReplySeal): DialogHostOptions["lateEnded"] {
	return (request, outcome) => {
		const { id, origin, asker } = request.request;
		// The edge: the end becomes the wire's status and reason here.
		const { status, reason: why } = endWire(outcome.end);
		const note = outcome.note ?? (status === "ok" ? LATE_ANSWER_NOTE : undefined);
		const reason = why ? { reason: why } : {};
		const envelope = makeEnvelope(status, outcome.answers, note, {
			requestId: id,
			asker: asker.label,
			waitedMs: Date.now() - request.queuedAt,
			...reason,
		});
		const questions = request.questions.map((q) => q.question);
		const delivery = {
			requestId: id,
			askerSessionId: asker.sessionId,
			asker: asker.label,
			questions,
			queuedAt: request.queuedAt,
			late: true as const,
			envelope,
		};
		const message: RelayLate = {
			v: PROTOCOL_VERSION,
			id,
			kind: "late",
			status,
			answers: outcome.answers,
			...(note ? { note } : {}),
			...reason,
		};
		// An asker of another process takes it back on its connection while its transport registered for it (the route's takers).
		const sendBack = origin === undefined ? undefined : (taken: (sent: boolean) => void) => void bus.emit(lateChannel(id), sealBuilt(message), taken);
		home.send(delivery, request.request, sendBack ? { sendBack } : {});
	};
}

/**
 * The store's side of a host that claims the role: the store the book writes to (its refusal told to
 * the human once), and the records a host before this process's wrote down, taken back. The end of
 * one asked with `wait: false` whose asker does not come back for it (nothing hears its result) goes
 * home by the route, as its asker's is gone; every end stays in the store for a later wait.
 */
function takenBack(book: RequestBook, home: HomeRoute, warn: (message: string) => void, store: StoreOutcome | undefined) {
	if (store?.ok === false) warn(store.warning);
	else if (store?.ok) {
		useStore(store.store);
		book.useStore(store.store, (problem) => warn(`checkpoint-bridge: writing the store failed (${problem}); questions live only in this host from now on.`));
	} else if (!book.store && currentStore()) book.useStore(currentStore());
	/** Restored requests asked with `wait: false`, until their result: heard by nobody, it goes home. */
	const awaited = new Map<string, RequestRecord>();
	return {
		takeBack(host: DialogHost): void {
			for (const record of book.takeBack(host.keeper)) if (record.request.later && record.state.is === "parked") awaited.set(record.request.id, record);
		},
		ended(hostId: string, heard: boolean): void {
			const record = awaited.get(hostId);
			if (!record) return;
			awaited.delete(hostId);
			if (heard) return;
			const { request } = record;
			const { status, reason } = endWire(record.state.is === "answered" || record.state.is === "ended" ? record.state.end : "host-gone");
			const requestId = request.askerId ?? hostId;
			const envelope = makeEnvelope(status, givenAnswers(record), undefined, {
				requestId,
				asker: request.asker.label,
				waitedMs: Date.now() - record.queuedAt,
				...(reason ? { reason } : {}),
			});
			const questions = record.questions.map((q) => q.question);
			home.send({ requestId, askerSessionId: request.asker.sessionId, asker: request.asker.label, questions, queuedAt: record.queuedAt, envelope }, request, {
				gone: true,
			});
		},
	};
}

/**
 * The dialog host's lifecycle hooks as observer events on the bus, the audit trail and the status line.
 * Each hook gets an object built for it alone, so it completes that object into its event.
 */
function observerEvents(
	bus: SharedHandle["bus"],
	settle: NonNullable<HostEvents["settled"]>,
	onSettled: ((record: SettledRecord) => void) | undefined,
	changed: () => void,
): HostEvents {
	return {
		queued: (request, position) => bus.emit(OBSERVER_EVENTS.queued, Object.assign(request, { position })),
		shown: (request, question) => bus.emit(OBSERVER_EVENTS.shown, Object.assign(request, { question, shownAt: Date.now() })),
		settled: settle,
		late: (request, lateRecord, again) => {
			const answers = placedAnswers(lateRecord);
			// The audit trail records the call's end, as the asker got it; the request settles later, once.
			const record = onSettled && !again ? settledRecord(request, { status: "timeout", answers, note: WENT_LATE_NOTE }, lateRecord.state.since) : undefined;
			const late = { lateSince: lateRecord.state.since, expiresAt: lateRecord.state.expiresAt, answers, ...(again ? { again: true as const } : {}) };
			bus.emit(OBSERVER_EVENTS.late, Object.assign(request, late));
			if (record) onSettled!(record);
		},
		reopened: (request, lateRecord) =>
			bus.emit(OBSERVER_EVENTS.reopened, Object.assign(request, { lateSince: lateRecord.state.since, expiresAt: lateRecord.state.expiresAt })),
		changed,
		// Observer events are built only while somebody listens; a settled one always, as the human's notices come from it, and a
		// late one while the audit trail records it.
		wanted: (name) => name === "settled" || (name === "late" && onSettled !== undefined) || bus.listenerCount(OBSERVER_EVENTS[name]) > 0,
	};
}

/** A notice to the human of `ui`: a courtesy, so a UI whose notify fails fails nothing. */
const courtesy =
	(ui: HostUI, type: "info" | "warning") =>
	(message: string): void => {
		try {
			ui.notify(message, type);
		} catch {
			// A notice is a courtesy.
		}
	};

/** Listens on the bus for what the host takes: requests, cancels, outside answers and notices; returns how to stop. */
function listen(bus: SharedHandle["bus"], served: DialogHost, ui: HostUI): () => void {
	const onRequest = (request: RelayRequest) => served.serve(request);
	const onCancel = (cancel: RelayCancel) => served.cancel(cancel);
	const onAnswer = (payload: unknown, respond?: (reply: ReturnType<DialogHost["answerFromOutside"]>) => void) => {
		const reply = served.answerFromOutside(payload);
		if (typeof respond === "function") respond(reply);
	};
	const onNotice = noticeOnce(courtesy(ui, "warning"));
	// Notices from sessions of this process (foreground children) have no transport to limit them: the host does, as the endpoint and the room do theirs.
	const inProcess = new NoticeWindow();
	// A notice of another extension in a session without UI (interop/dialog-relay.ts); a failing notify is the UI's.
	const onRelayedNotice = (notice: RelayNotice) => {
		if (notice?.origin === undefined && !inProcess.take()) return;
		const shown = noticeText(notice);
		try {
			if (shown) ui.notify(shown.text, shown.type);
		} catch {
			// Nothing to fall back to.
		}
	};
	bus.on("request", onRequest);
	bus.on("cancel", onCancel);
	bus.on("answer", onAnswer);
	bus.on("notice", onNotice);
	bus.on("relay:notice", onRelayedNotice);
	return () => {
		bus.off("request", onRequest);
		bus.off("cancel", onCancel);
		bus.off("answer", onAnswer);
		bus.off("notice", onNotice);
		bus.off("relay:notice", onRelayedNotice);
	};
}

/** Claims the host role for a session with a UI; undefined when another session holds it. */
export function claimHostRole(handle: SharedHandle, options: HostRoleOptions): HostRole | undefined {
	const { ui, surface, sessionId, bell, onSettled } = options;
	const book = options.book ?? requestBook(handle);
	let host: DialogHost | undefined;
	let released = false;
	/** Released and its footer cleared: what ends here now (a hand-over nobody took) is not drawn or written in this session any more. */
	let gone = false;
	const home = options.home ?? homeRoute(() => handle.host()?.sessionId, undefined, endTakers(handle.bus));
	// An asker's cancel closes its form or drops its queued question: the human is told, not left wondering (the host's own model's are the human's doing).
	const cancels = new CancelNotices(courtesy(ui, "info"));
	/** Every request settles here, once (ADR-0025): observers hear it, the audit trail records it; the end becomes the wire's status and reason here. */
	const settle = (request: ObservedRequest, { end, answers, note }: SettledOutcome, settledAt: number) => {
		const { status, reason } = endWire(end);
		// Its keys in the order observers have always had them; no spreads: this runs for every request.
		const outcome = { status, answers } as SettledEvent["outcome"];
		if (note) outcome.note = note;
		if (reason) outcome.reason = reason;
		outcome.end = end;
		if (end === "cancelled" && request.asker.sessionId !== sessionId && !gone)
			cancels.cancelled(
				request.asker.label,
				request.questions.map((q) => q.question.replace(/\s+/g, " ")),
			);
		// Answered away from the terminal (the page, one-tap, mail): the terminal says where and when.
		const elsewhere = gone || (end !== "answered" && end !== "answered-outside") ? undefined : answeredElsewhere(request.asker.label, answers, settledAt);
		if (elsewhere) courtesy(ui, "info")(elsewhere);
		const record = onSettled && !gone ? settledRecord(request, outcome, settledAt) : undefined;
		handle.bus.emit(OBSERVER_EVENTS.settled, Object.assign(request, { settledAt, outcome }));
		if (record) onSettled!(record);
	};
	const status = statusLine(ui, () => host!);
	const claim = handle.claimHost({ sessionId, protocol: PROTOCOL_VERSION, snapshot: () => host!.snapshot() });
	if (!claim) return undefined;
	if (typeof claim.seal !== "function") {
		// A handle made by a 0.1.0 copy hands out a bare seal, and releases by claim id: this claim
		// has none, so releasing with none gives the role back. Hosting there would fail on the first reply.
		(handle as unknown as { releaseHost?: (claimId?: string) => boolean }).releaseHost?.(undefined);
		return undefined;
	}
	// The dialog host builds every reply afresh from data of its own: frozen where it is, not copied.
	const sealBuilt = claim.sealBuilt ?? claim.seal;
	const { bus } = handle;
	const expiries = new ExpiryNotices(courtesy(ui, "warning"));
	const restored = takenBack(book, home, courtesy(ui, "warning"), options.store);
	host = new DialogHost({
		ui,
		surface: surface ?? NO_SCREEN,
		sessionId,
		reply: (reply, channel = replyChannel(reply.id)) => {
			const heard = bus.emit(channel, sealBuilt(reply));
			if (reply.kind === "result") restored.ended(reply.id, heard);
		},
		...(bell ? { bell } : {}),
		book,
		lateEnded: lateEndsHome(bus, home, sealBuilt),
		// Late questions that leave unanswered: the human hears of them in one notice per window.
		lateLeft: (request, why) => expiries.expired(request, why),
		events: observerEvents(bus, settle, onSettled, () => void (gone || status.changed())),
	});
	const served = host;
	// With no screen nothing is shown: every request stays queued, for the outside answers, until it ends.
	if (!surface) served.pause();
	const closeListening = listen(bus, served, ui);
	// The late requests of the process are this host's to end now: it hears of their expiry.
	book.keepLate(served.keeper);
	// What a host of an earlier process wrote down comes back parked (late ones late), under the same ids: an asker that sends it again finds it.
	restored.takeBack(served);
	// Requests a replaced host parked go on here as the records they were, in their original order.
	for (const parked of book.parked()) served.adopt(parked);
	return {
		host: served,
		whereLate(requestId) {
			const lateRecord = book.get(requestId);
			if (lateRecord?.state.is !== "late") return undefined;
			// Its late end: the call's own end may have been delivered already (a `wait: false` request's timeout).
			return home.where(lateRecord.request, undefined, { late: true });
		},
		release(reason: string, note: string) {
			if (released) return;
			released = true;
			cancels.close();
			closeListening();
			expiries.close();
			if (reason === "quit") {
				claim.release();
				// Written down, a request asked with wait: false or late outlives this process: the next host of the directory takes it back.
				book.letGoWrittenDown();
				served.shutdown(note);
				// Nobody will answer its late questions in this process any more: each settles, host-gone.
				served.endLateRequests(note);
			} else {
				served.handOver(HANDOVER_GRACE_MS, `${note} No new host took over within ${HANDOVER_GRACE_MS} ms.`);
				claim.release();
			}
			// The footer clears itself: handOver() and shutdown() report the emptied queue through `changed`; drawn now,
			// so that nothing of this host is drawn over the next one's.
			status.flush();
			status.close();
			gone = true;
		},
	};
}
