/**
 * Late requests as the human and observers see them (core/host/late.ts, core/host/dialog/late-side.ts):
 * the human's expiry notices, one per window, each word of them; a late request as observers see it;
 * which requests go late; which ends settle one; and what a settled late request tells observers and
 * sends home. Fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type LateRequest, RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { type HostEvents, Notifier } from "../../../extensions/checkpoint-bridge/core/host/dialog/events.ts";
import { type LateOutcome, LateSide } from "../../../extensions/checkpoint-bridge/core/host/dialog/late-side.ts";
import { ExpiryNotices, observedLate } from "../../../extensions/checkpoint-bridge/core/host/late.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import type { RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";
import type { RequestEnd } from "../../../extensions/checkpoint-bridge/model/result.ts";

const NOW = 1_000_000;
beforeEach(() => void vi.useFakeTimers({ now: NOW }));
afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

/** A late request of `label`, its one question `question` (none when null). */
function lateOf(label: string, question: string | null = `${label}'s question?`): LateRequest {
	const questions = question === null ? [] : [{ question, kind: "text" as const }];
	return {
		request: { v: 1, id: `${label}-id`, asker: { label, sessionId: `${label}-session` }, questions, deadline: NOW - 1, dialogTimeoutMs: 0, createdAt: 0 },
		questions,
		entries: [],
		queuedAt: NOW - 5_000,
		state: { is: "late", since: NOW, expiresAt: NOW + 60_000 },
	};
}

describe("the human's expiry notices", () => {
	it("the first of a window is told at once, naming the asker and the question, in the words of its reason", () => {
		const told: string[] = [];
		const notices = new ExpiryNotices((m) => void told.push(m), 1_000);
		notices.expired(lateOf("planner"), "expired");
		expect(told).toEqual(['checkpoint-bridge: the late question of planner ("planner\'s question?") expired; it can no longer be answered.']);
		vi.advanceTimersByTime(1_000);
		notices.expired(lateOf("coder"), "too-many");
		expect(told[1]).toBe(
			'checkpoint-bridge: the late question of coder ("coder\'s question?") was dropped to make room for newer late questions of the same asker; it can no longer be answered.',
		);
		// A request without a question is named with an empty one.
		vi.advanceTimersByTime(1_000);
		notices.expired(lateOf("blank", null), "expired");
		expect(told[2]).toBe('checkpoint-bridge: the late question of blank ("") expired; it can no longer be answered.');
	});

	it("the rest of a window is told when it closes, in one notice, the first named and the rest counted", () => {
		const told: string[] = [];
		const notices = new ExpiryNotices((m) => void told.push(m), 1_000);
		notices.expired(lateOf("a"), "expired");
		vi.advanceTimersByTime(400);
		notices.expired(lateOf("b"), "too-many");
		notices.expired(lateOf("c"), "expired");
		notices.expired(lateOf("d"), "expired");
		vi.advanceTimersByTime(599);
		expect(told).toHaveLength(1);
		vi.advanceTimersByTime(1);
		expect(told).toHaveLength(2);
		expect(told[1]).toBe(
			'checkpoint-bridge: the late question of b ("b\'s question?") was dropped to make room for newer late questions of the same asker; it can no longer be answered. 2 more late questions expired or were dropped as well.',
		);
		// One more owed: the words for one.
		notices.expired(lateOf("e"), "expired");
		notices.expired(lateOf("f"), "expired");
		vi.advanceTimersByTime(1_000);
		expect(told[2]).toBe(
			'checkpoint-bridge: the late question of e ("e\'s question?") expired; it can no longer be answered. 1 more late question expired or was dropped as well.',
		);
		expect(told).toHaveLength(3);
	});

	it("a notice told at a window's close opens a new window: what follows within it waits for its close", () => {
		const told: string[] = [];
		const notices = new ExpiryNotices((m) => void told.push(m), 1_000);
		notices.expired(lateOf("a"), "expired");
		notices.expired(lateOf("b"), "expired");
		vi.advanceTimersByTime(1_000);
		expect(told).toHaveLength(2);
		vi.advanceTimersByTime(500);
		notices.expired(lateOf("c"), "expired");
		expect(told).toHaveLength(2);
		vi.advanceTimersByTime(500);
		expect(told).toHaveLength(3);
		expect(told[2]).toContain('the late question of c ("c\'s question?") expired');
		// A quiet window: the next is told at once again.
		vi.advanceTimersByTime(1_000);
		notices.expired(lateOf("d"), "expired");
		expect(told).toHaveLength(4);
	});

	it("one that comes after its window's end while the notice owed is not yet told (its timer late) joins that notice", () => {
		const told: string[] = [];
		const notices = new ExpiryNotices((m) => void told.push(m), 1_000);
		notices.expired(lateOf("a"), "expired");
		notices.expired(lateOf("b"), "expired", NOW + 400);
		// The flush timer has not run yet (a busy event loop), though the window is over.
		notices.expired(lateOf("c"), "expired", NOW + 1_500);
		expect(told).toHaveLength(1);
		vi.advanceTimersByTime(1_000);
		expect(told).toHaveLength(2);
		expect(told[1]).toContain(
			'the late question of b ("b\'s question?") expired; it can no longer be answered. 1 more late question expired or was dropped as well.',
		);
	});

	it("a window that closes with nothing owed tells nothing; the window is of 10 s unless given", () => {
		const told: string[] = [];
		const notices = new ExpiryNotices((m) => void told.push(m));
		notices.expired(lateOf("a"), "expired");
		vi.advanceTimersByTime(9_999);
		notices.expired(lateOf("b"), "expired");
		expect(told).toHaveLength(1);
		vi.advanceTimersByTime(1);
		expect(told).toHaveLength(2);
		vi.advanceTimersByTime(60_000);
		expect(told).toHaveLength(2);
	});

	it("the timer of a notice owed does not keep the process alive", () => {
		const spy = vi.spyOn(globalThis, "setTimeout");
		const notices = new ExpiryNotices(() => {}, 1_000);
		notices.expired(lateOf("a"), "expired");
		notices.expired(lateOf("b"), "expired");
		notices.expired(lateOf("c"), "expired");
		expect(spy.mock.results.map((r) => (r.value as { hasRef(): boolean }).hasRef())).toEqual([false]);
		notices.close();
	});

	it("closed (the host goes): what was owed is never told, and the next one is owed to a new window", () => {
		const told: string[] = [];
		const notices = new ExpiryNotices((m) => void told.push(m), 1_000);
		notices.expired(lateOf("a"), "expired");
		notices.expired(lateOf("b"), "expired");
		notices.close();
		// Nothing owed is left behind, not even its timer.
		expect(vi.getTimerCount()).toBe(0);
		vi.advanceTimersByTime(5_000);
		expect(told).toHaveLength(1);
		notices.expired(lateOf("c"), "expired");
		expect(told).toHaveLength(2);
		expect(told[1]).toContain('the late question of c ("c\'s question?") expired; it can no longer be answered.');
		// Closed inside a window, a later one of that window waits for a timer set again.
		notices.expired(lateOf("d"), "expired");
		notices.close();
		notices.expired(lateOf("e"), "expired");
		vi.advanceTimersByTime(1_000);
		expect(told).toHaveLength(3);
		expect(told[2]).toContain("late question of e");
		expect(told[2]).not.toContain("more late question");
	});
});

describe("a late request as observers see it", () => {
	it("its id, asker, questions, when it was taken and its call's deadline, in the observer version", () => {
		const late = lateOf("planner");
		expect(observedLate(late)).toEqual({
			v: 1,
			requestId: "planner-id",
			asker: { label: "planner", sessionId: "planner-session" },
			questions: [{ question: "planner's question?", kind: "text" }],
			queuedAt: NOW - 5_000,
			deadline: NOW - 1,
		});
	});
});

/** A late side with the given hooks, a book with late answers on (unless `on` is false) and what it sends home. */
function lateSide(events: HostEvents = {}, on = true, ended?: (late: RequestRecord, outcome: LateOutcome) => void) {
	const home: [string, LateOutcome][] = [];
	const book = new RequestBook({ ...readLateConfig({}), on });
	const side = new LateSide(new Notifier(events), book, ended ?? ((late, outcome) => void home.push([late.request.id, outcome])));
	return { side, book, home };
}

/** A record of two questions, with the answers given (index → answer). */
function recordWith(given: Record<number, string>, dialog = false): RequestRecord {
	const questions = [
		{ question: "One?", kind: "text" as const },
		{ question: "Two?", kind: "text" as const, ...(dialog ? { dialog: { id: "x" } } : {}) },
	] as RequestRecord["questions"];
	const entries = questions.map((q, i) =>
		given[i] === undefined
			? undefined
			: { answer: { question: q.question, answer: given[i]!, kind: "text" as const, source: "dialog" as const }, place: "page" as const },
	);
	return {
		request: { v: 1, id: "r1", asker: { label: "child", sessionId: "child-session" }, questions, deadline: NOW, dialogTimeoutMs: 0, createdAt: 0 },
		questions,
		entries,
		queuedAt: NOW - 1,
		state: { is: "showing" },
	};
}

describe("the dialog host's late side", () => {
	it("goes late only with late answers on, with a question unanswered, and none of them another extension's dialog", () => {
		const { side } = lateSide();
		expect(side.goesLate(recordWith({}))).toBe(true);
		expect(side.goesLate(recordWith({ 0: "yes" }))).toBe(true);
		expect(side.goesLate(recordWith({ 1: "yes" }))).toBe(true);
		expect(side.goesLate(recordWith({ 0: "yes", 1: "no" }))).toBe(false);
		expect(side.goesLate(recordWith({}, true))).toBe(false);
		expect(lateSide({}, false).side.goesLate(recordWith({}))).toBe(false);
	});

	it("an answer, a cancel from outside, an expiry and the host's end settle a request whose call returned; every other end sends it back to late", () => {
		const { side } = lateSide();
		const settles: RequestEnd[] = ["answered", "answered-outside", "cancelled-outside", "expired", "host-gone"];
		const backToLate: RequestEnd[] = ["dismissed", "dialog-timeout", "timeout", "cancelled", "refused", "failed", "handed-over"];
		for (const end of settles) expect(side.settles(end), end).toBe(true);
		for (const end of backToLate) expect(side.settles(end), end).toBe(false);
	});

	it("keeps a record late in its book, lists the late ones, and tells observers it went late (or back to late) and that the set changed", () => {
		const heard: string[] = [];
		const { side, book } = lateSide({
			late: (request, late, again) => void heard.push(`late ${request.requestId} ${late.state.is} ${again}`),
			changed: () => void heard.push("changed"),
		});
		const record = recordWith({});
		const keeper = { deadlineCame: () => {}, lateLeft: () => {}, cancel: () => {} };
		book.add(record, keeper);
		const late = side.keep(record, keeper)!;
		expect(late).toBe(record);
		expect(book.late()).toEqual([record]);
		expect(book.keeps(record, keeper)).toBe(true);
		side.wentLate(late, false);
		side.wentLate(late, true);
		expect(heard).toEqual(["late r1 late false", "changed", "late r1 late true", "changed"]);
	});

	it("settled answered: observers learn each answer with its place and the note; the asker's message gets the answers without places", () => {
		const events: unknown[] = [];
		const { side, home } = lateSide({ settled: (request, outcome) => void events.push([request, outcome]) });
		const record = recordWith({ 1: "no" });
		side.settled(record, "answered", "a note");
		expect(events).toEqual([
			[observedLate(record), { end: "answered", answers: [{ question: "Two?", answer: "no", kind: "text", source: "dialog", place: "page" }], note: "a note" }],
		]);
		expect(home).toEqual([["r1", { end: "answered", answers: [{ question: "Two?", answer: "no", kind: "text", source: "dialog" }], note: "a note" }]]);
	});

	it("settled without a note: none is carried, to observers or home", () => {
		const events: { note?: string }[] = [];
		const { side, home } = lateSide({ settled: (_request, outcome) => void events.push(outcome) });
		side.settled(recordWith({}), "cancelled-outside");
		expect(events[0]).toEqual({ end: "cancelled-outside", answers: [] });
		expect("note" in events[0]!).toBe(false);
		expect(home).toEqual([["r1", { end: "cancelled-outside", answers: [] }]]);
		expect("note" in home[0]![1]).toBe(false);
	});

	it("settled expired or host gone: observers learn it and the set changed, and nothing goes home (the asker was told of its timeout)", () => {
		const heard: string[] = [];
		const { side, home } = lateSide({ settled: (_request, outcome) => void heard.push(outcome.end), changed: () => void heard.push("changed") });
		side.settled(recordWith({}), "expired", "It expired.");
		side.settled(recordWith({}), "host-gone", "The host quit.");
		expect(heard).toEqual(["expired", "changed", "host-gone", "changed"]);
		expect(home).toEqual([]);
	});

	it("settled while no observer takes it: no settled event is built, the set still changes, and the answer still goes home", () => {
		const heard: string[] = [];
		const { side, home } = lateSide({ settled: () => void heard.push("settled"), changed: () => void heard.push("changed"), wanted: () => false });
		side.settled(recordWith({ 0: "yes" }), "answered");
		expect(heard).toEqual(["changed"]);
		expect(home).toHaveLength(1);
	});

	it("a failing way home does not stop the host: it is the delivery's", () => {
		const { side } = lateSide({}, true, () => {
			throw new Error("the route home failed");
		});
		expect(() => side.settled(recordWith({ 0: "yes" }), "answered")).not.toThrow();
		expect(() => new LateSide(new Notifier(), new RequestBook(), undefined).settled(recordWith({}), "answered")).not.toThrow();
	});
});
