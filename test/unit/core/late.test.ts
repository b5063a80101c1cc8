/**
 * A budget that runs out does not lose the question: it leaves the queue but stays open at the host,
 * marked late, answerable from outside (page, link) or shown again from /checkpoints; its answer
 * reaches the asking session as one message, once. Late questions expire and are bounded. Fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ANSWER_MESSAGE_TYPE, deliveryBox, type MessageApi, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { DialogHost } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { statusText } from "../../../extensions/checkpoint-bridge/core/host/status-line.ts";
import { DEFAULT_LATE_EXPIRY_MS, LATE_NOTE, type LateConfig, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay, track } from "../support/relay.ts";

const Q = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];
const config = (over: Partial<LateConfig> = {}): LateConfig => ({ ...readLateConfig({}), ...over });

/** A record taken into the book and sent late there, by a keeper that ends nothing itself (the book drops what leaves). */
function keepLate(book: RequestBook, record: RequestRecord): void {
	const keeper = { deadlineCame: () => {}, lateLeft: () => {}, cancel: () => {} };
	book.add(record, keeper);
	book.toLate(record, keeper);
}

/** The asking session as pi keeps it, attached to the process's box. */
function askingSession(sessionId: string) {
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	const messages: Parameters<MessageApi["sendMessage"]>[] = [];
	const pi: MessageApi = {
		sendMessage: (...args) => void messages.push(args),
		appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }),
	};
	const detach = deliveryBox(() => undefined).attach(
		sessionId,
		sessionPoster(pi, () => entries),
	);
	return { messages, detach };
}

/** Request `id`, its call's budget ending at `deadline`, handed over to a next host: what its observers heard, and that host's book. */
function handedOver(id: string, deadline: number): { ends: string[]; late: RequestBook } {
	const late = new RequestBook(config());
	const ends: string[] = [];
	const next = new DialogHost({
		ui: fakeUI().ui,
		surface: { ask: async () => undefined },
		sessionId: "next-host",
		reply: () => {},
		book: late,
		events: { settled: (_request, outcome) => void ends.push(outcome.end), late: () => void ends.push("late"), wanted: () => true },
	});
	const now = Date.now();
	const request: RelayRequest = {
		v: PROTOCOL_VERSION,
		id,
		asker: { label: "late-6", sessionId: "late-6-session" },
		questions: Q,
		deadline,
		dialogTimeoutMs: 60_000,
		createdAt: now - 3_000,
	};
	next.serve(request, { entries: [], queuedAt: now - 3_000 });
	return { ends, late };
}

describe("late questions", () => {
	beforeEach(() => void vi.useFakeTimers());
	afterEach(() => void vi.useRealTimers());

	it("reads CHECKPOINT_BRIDGE_LATE_ANSWERS=0 as off and the expiry from CHECKPOINT_BRIDGE_LATE_EXPIRY_MS (24 h by default)", () => {
		expect(readLateConfig({})).toMatchObject({ on: true, expiryMs: DEFAULT_LATE_EXPIRY_MS });
		expect(DEFAULT_LATE_EXPIRY_MS).toBe(24 * 3_600_000);
		expect(readLateConfig({ CHECKPOINT_BRIDGE_LATE_ANSWERS: "0" }).on).toBe(false);
		expect(readLateConfig({ CHECKPOINT_BRIDGE_LATE_EXPIRY_MS: "60000" }).expiryMs).toBe(60_000);
		expect(readLateConfig({ CHECKPOINT_BRIDGE_LATE_EXPIRY_MS: "soon" }).expiryMs).toBe(DEFAULT_LATE_EXPIRY_MS);
		// A late question shown again gets the host's dialog time.
		expect(readLateConfig({}).dialogTimeoutMs).toBe(180_000);
		expect(readLateConfig({ CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "0" }).dialogTimeoutMs).toBe(0);
	});

	it("a call that ends timeout leaves its question open, marked late; an answer from outside reaches the asking session as one message", async () => {
		const session = askingSession("late-1-session");
		const { ask, handle, role } = relay({}, { book: new RequestBook(config()) });
		const state = track(ask(Q, { label: "late-1", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		expect(state.envelope).toMatchObject({ status: "timeout" });
		// Whichever clock ends the call, its note says the question stays open.
		expect(state.envelope?.note).toContain(LATE_NOTE);
		// Off the queue, still open.
		expect(handle.snapshot()!.open).toHaveLength(0);
		const late = handle.snapshot()!.late!;
		expect(late).toHaveLength(1);
		expect(late[0]).toMatchObject({ asker: { label: "late-1" }, questions: [{ question: "Which database?" }] });
		expect(statusText(role.host)).toMatch(/1 late: late-1 \(0 min\)/);

		const replies: unknown[] = [];
		handle.bus.emit("answer", { requestId: late[0]!.requestId, answers: ["SQLite"], source: "web" }, (reply: unknown) => replies.push(reply));
		expect(replies).toEqual([{ ok: true }]);
		expect(handle.snapshot()!.late).toBeUndefined();
		expect(session.messages).toHaveLength(1);
		const [message, options] = session.messages[0]!;
		expect(message.customType).toBe(ANSWER_MESSAGE_TYPE);
		expect(message.details).toMatchObject({ late: true, requestId: late[0]!.requestId, envelope: { status: "ok", answers: [{ answer: "SQLite" }] } });
		expect(options).toEqual({ triggerTurn: true, deliverAs: "followUp" });
		// Answered once: a second answer finds nothing open.
		handle.bus.emit("answer", { requestId: late[0]!.requestId, answers: ["Postgres"] }, (reply: unknown) => replies.push(reply));
		expect(replies[1]).toMatchObject({ ok: false, code: "not_found" });
		expect(session.messages).toHaveLength(1);
		session.detach();
	});

	it("the host's note tells the asker its question stays open", async () => {
		const { ask, handle } = relay({}, { book: new RequestBook(config()) });
		const replies: { note?: string }[] = [];
		const state = track(ask(Q, { label: "late-2", budgetMs: 3_000 }));
		await flush(vi);
		const id = handle.snapshot()!.open[0]!.requestId;
		handle.bus.on(`reply:${id}`, (reply) => replies.push(reply as { note?: string }));
		// The host's own deadline, a hair before the asker's.
		await vi.advanceTimersByTimeAsync(3_000);
		expect(state.envelope?.status).toBe("timeout");
		expect(replies.at(-1)?.note).toContain(LATE_NOTE);
	});

	it("shown again from /checkpoints: through the queue like any other request, its answer delivered late", async () => {
		const session = askingSession("late-3-session");
		const { ask, fake, handle, role } = relay({}, { book: new RequestBook(config()) });
		track(ask(Q, { label: "late-3", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		const id = handle.snapshot()!.late![0]!.requestId;
		expect(role.host.reopenLate(id)).toBe(true);
		expect(role.host.reopenLate("nope")).toBe(false);
		await flush(vi);
		// Dismissed: it stays late.
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(handle.snapshot()!.late?.[0]?.requestId).toBe(id);
		expect(session.messages).toHaveLength(0);
		role.host.reopenLate(id);
		await flush(vi);
		fake.current()!.answer("Postgres");
		await flush(vi);
		expect(handle.snapshot()!.late).toBeUndefined();
		expect(session.messages).toHaveLength(1);
		expect(session.messages[0]![0].details).toMatchObject({ late: true, envelope: { status: "ok", answers: [{ answer: "Postgres" }] } });
		session.detach();
	});

	it("cancelled from outside (page, observer): it ends cancelled-outside, late in the book or shown again, and does not go back to the book", async () => {
		const session = askingSession("late-5-session");
		const { ask, handle, role } = relay({}, { book: new RequestBook(config()) });
		const ends: string[] = [];
		handle.bus.on(OBSERVER_EVENTS.settled, (event) => void ends.push((event as { outcome: { end: string } }).outcome.end));
		track(ask(Q, { label: "late-5", budgetMs: 3_000 }));
		track(ask([{ question: "Which region?" }], { label: "late-5", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		const [inBook, shownAgain] = handle.snapshot()!.late!.map((l) => l.requestId);
		ends.length = 0;
		handle.bus.emit("answer", { requestId: inBook, cancel: true }, () => {});
		role.host.reopenLate(shownAgain!);
		await flush(vi);
		handle.bus.emit("answer", { requestId: shownAgain, cancel: true }, () => {});
		await flush(vi);
		expect(ends).toEqual(["cancelled-outside", "cancelled-outside"]);
		expect(handle.snapshot()!.late).toBeUndefined();
		expect(session.messages.map(([message]) => message.details.envelope.status)).toEqual(["timeout-or-cancelled", "timeout-or-cancelled"]);
		session.detach();
	});

	it("a request handed over whose budget ran out during the hand-over goes late at the next host, and observers learn it went late", () => {
		const { ends, late } = handedOver("handed-1", Date.now() - 1);
		// Late, not settled: it settles once, later (ADR-0025).
		expect(ends).toEqual(["late"]);
		expect(late.late().map((l) => l.request.id)).toEqual(["handed-1"]);
	});

	it("a request handed over whose budget ends the very millisecond it arrives goes late the same way, never queued without a deadline", () => {
		const { ends, late } = handedOver("handed-2", Date.now());
		expect(ends).toEqual(["late"]);
		expect(late.late().map((l) => l.request.id)).toEqual(["handed-2"]);
	});

	it("shown again, it has the host's dialog time, not the short budget its call ran out of", async () => {
		const { ask, fake, handle, role } = relay({}, { book: new RequestBook(config({ dialogTimeoutMs: 60_000 })) });
		track(ask(Q, { label: "late-short", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		const id = handle.snapshot()!.late![0]!.requestId;
		role.host.reopenLate(id);
		await flush(vi);
		const shown = fake.current()!;
		expect(shown.timeout).toBe(60_000);
		// Still open long after the call's 3 s would have closed it.
		await vi.advanceTimersByTimeAsync(30_000);
		expect(shown.closedBy).toBeUndefined();
		await vi.advanceTimersByTimeAsync(30_000);
		expect(shown.closedBy).toBe("signal");
		// Unanswered, it is late again, and shown again with the same time.
		expect(handle.snapshot()!.late?.[0]?.requestId).toBe(id);
		role.host.reopenLate(id);
		await flush(vi);
		expect(fake.current()!.timeout).toBe(60_000);
	});

	it("CHECKPOINT_BRIDGE_LATE_ANSWERS=0: the question ends with its call, as before", async () => {
		const { ask, handle } = relay({}, { book: new RequestBook(config({ on: false })) });
		track(ask(Q, { budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		expect(handle.snapshot()!.late).toBeUndefined();
	});

	it("expires after its time, with a notice to the human", async () => {
		const { ask, fake, handle } = relay({}, { book: new RequestBook(config({ expiryMs: 60_000 })) });
		track(ask(Q, { label: "late-4", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		expect(handle.snapshot()!.late).toHaveLength(1);
		await vi.advanceTimersByTimeAsync(60_000);
		expect(handle.snapshot()!.late).toBeUndefined();
		expect(fake.notices.at(-1)?.message).toMatch(/late question of late-4 \("Which database\?"\) expired/);
	});

	it("an expiry longer than a timer can wait (about 24.8 days) is held to that, never taken as at once", () => {
		const thirtyDays = 30 * DEFAULT_LATE_EXPIRY_MS;
		const { expiryMs } = readLateConfig({ CHECKPOINT_BRIDGE_LATE_EXPIRY_MS: String(thirtyDays) });
		const book = new RequestBook(config({ expiryMs }));
		keepLate(book, {
			request: { v: 1, id: "r1", asker: { label: "x", sessionId: "s" }, questions: [], deadline: 0, dialogTimeoutMs: 0, createdAt: 0 },
			questions: [{ question: "Which database?", kind: "text" }],
			entries: [],
			queuedAt: 0,
			state: { is: "queued" },
		});
		vi.advanceTimersByTime(60_000);
		expect(book.lateCount).toBe(1);
		expect(expiryMs).toBeLessThan(thirtyDays);
		vi.advanceTimersByTime(expiryMs);
		expect(book.lateCount).toBe(0);
		expect(book.get("r1")).toBeUndefined();
	});

	it("shown again and closed unanswered, it is late since its budget ran out, and expires then too", async () => {
		const { ask, fake, handle, role } = relay({}, { book: new RequestBook(config({ expiryMs: 60_000 })) });
		track(ask(Q, { label: "late-again", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		const [first] = handle.snapshot()!.late!;
		await vi.advanceTimersByTimeAsync(30_000);
		role.host.reopenLate(first!.requestId);
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		const [again] = handle.snapshot()!.late!;
		expect(again).toMatchObject({ requestId: first!.requestId, lateSince: first!.lateSince, expiresAt: first!.expiresAt });
		await vi.advanceTimersByTimeAsync(first!.expiresAt - Date.now());
		expect(handle.snapshot()!.late).toBeUndefined();
	});

	it("bounded per asker and in all: an asker's oldest makes way for its newest, never another asker's question; it settles expired", async () => {
		const { ask, fake, handle } = relay({}, { book: new RequestBook(config({ maxPerAsker: 2, maxTotal: 3 })) });
		const settled: { id: string; end?: string }[] = [];
		handle.bus.on(OBSERVER_EVENTS.settled, (event) => void settled.push({ id: event.questions[0]!.question, end: event.outcome.end }));
		const envelopes = [];
		for (const [i, label] of ["a", "a", "a", "b", "c"].entries()) {
			envelopes.push(track(ask([{ question: `Q${i}?` }], { label, budgetMs: 3_000 })));
			await flush(vi);
			await vi.advanceTimersByTimeAsync(3_000);
		}
		const late = handle.snapshot()!.late!;
		// a's first went for a's bound; c, with nothing of its own to make room from, is not kept: b's question stays.
		expect(late.map((l) => l.questions[0]!.question)).toEqual(["Q1?", "Q2?", "Q3?"]);
		expect(settled).toEqual([
			{ id: "Q0?", end: "expired" },
			{ id: "Q4?", end: "timeout" },
		]);
		// c is not told its question stays open: it does not.
		expect(envelopes[4]!.envelope?.note).not.toContain(LATE_NOTE);
		expect(envelopes[3]!.envelope?.note).toContain(LATE_NOTE);
		expect(fake.notices.filter((n) => /dropped to make room/.test(n.message))).toHaveLength(1);
	});

	it("a late request that leaves unanswered settles expired, its note saying why: made room for its asker's newer one, or its time ran out", async () => {
		const { ask, handle } = relay({}, { book: new RequestBook(config({ maxPerAsker: 1, expiryMs: 60_000 })) });
		const settled: { question: string; end?: string; note?: string }[] = [];
		handle.bus.on(OBSERVER_EVENTS.settled, (event) =>
			settled.push({ question: event.questions[0]!.question, end: event.outcome.end, note: event.outcome.note }),
		);
		for (const question of ["Older?", "Newer?"]) {
			track(ask([{ question }], { label: "a", budgetMs: 3_000 }));
			await flush(vi);
			await vi.advanceTimersByTimeAsync(3_000);
		}
		expect(settled.filter((s) => s.end === "expired")).toEqual([
			{ question: "Older?", end: "expired", note: "It was late and left to make room for newer late questions of its asker." },
		]);
		await vi.advanceTimersByTimeAsync(60_000);
		expect(settled.filter((s) => s.end === "expired")).toEqual([
			{ question: "Older?", end: "expired", note: "It was late and left to make room for newer late questions of its asker." },
			{ question: "Newer?", end: "expired", note: "It was late and expired unanswered." },
		]);
	});

	it("one asker's flood never evicts another asker's late question, and the human gets one notice per window, not one per eviction", async () => {
		const { ask, fake, handle } = relay({}, { book: new RequestBook(config({ maxPerAsker: 8, maxTotal: 16 })) });
		track(ask([{ question: "The victim's question?" }], { label: "victim", budgetMs: 1_500 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_500);
		// 200 requests of one flooding asker, then 200 under as many session ids.
		for (let i = 0; i < 200; i++) track(ask([{ question: `Flood ${i}?` }], { label: "flood", sessionId: "flood", budgetMs: 1_500 }));
		for (let i = 0; i < 200; i++) track(ask([{ question: `Varied ${i}?` }], { label: `v${i}`, budgetMs: 1_500 }));
		await flush(vi);
		const before = fake.notices.length;
		await vi.advanceTimersByTimeAsync(1_500);
		const late = handle.snapshot()!.late!;
		expect(late[0]!.questions[0]!.question).toBe("The victim's question?");
		expect(late.length).toBeLessThanOrEqual(16);
		const drops = () => fake.notices.slice(before).filter((n) => /late question/.test(n.message));
		expect(drops()).toHaveLength(1);
		// The rest of the window's drops come in one notice when it closes, counted.
		await vi.advanceTimersByTimeAsync(10_000);
		expect(drops()).toHaveLength(2);
		expect(drops()[1]!.message).toMatch(/\d+ more late questions expired or were dropped as well/);
	});

	it("bounded in bytes", () => {
		const book = new RequestBook(config({ maxBytes: 200 }));
		const request = (id: string): RequestRecord => ({
			request: { v: 1, id, asker: { label: "x", sessionId: "s" }, questions: [], deadline: 0, dialogTimeoutMs: 0, createdAt: 0 },
			questions: [{ question: "q".repeat(80), kind: "text" as const }],
			entries: [],
			queuedAt: 0,
			state: { is: "queued" },
		});
		keepLate(book, request("1"));
		keepLate(book, request("2"));
		expect(book.late().map((l) => l.request.id)).toEqual(["2"]);
		expect(book.late().reduce((bytes, l) => bytes + Buffer.byteLength(JSON.stringify(l.questions)), 0)).toBeLessThanOrEqual(200);
	});
});
