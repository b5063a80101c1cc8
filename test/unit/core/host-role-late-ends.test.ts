/**
 * Late requests at the host role (core/host/host-role.ts): the end of one goes home with the late
 * answer's note, its id, asker, wait and reason, as a message in its session or a late frame to its
 * process; the audit trail records a call that went late once; late requests outlive the host that
 * let go, which hears nothing of them any more, and notices owed when it lets go are not sent.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deliveryBox, type MessageApi, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { endTakers } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole, type SettledRecord } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { LATE_NOTE, type LateConfig, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { CANCEL_WINDOW_MS, NOTICE_WINDOW_MS } from "../../../extensions/checkpoint-bridge/core/shared/notice-window.ts";
import type { RelayLate } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay, relayRequest, track } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const Q = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];
const lateBook = (over: Partial<LateConfig> = {}) => new RequestBook({ ...readLateConfig({}), ...over });
const LATE_ANSWER_NOTE = "Answered late, after the call's budget ran out.";

/** The asking session as pi keeps it, attached to the process's box: the envelopes of the late ends it gets. */
function askingSession(sessionId: string) {
	const envelopes: Envelope[] = [];
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	const pi: MessageApi = {
		sendMessage: (message) => void envelopes.push((message.details as { envelope: Envelope }).envelope),
		appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }),
	};
	const detach = deliveryBox(() => undefined).attach(
		sessionId,
		sessionPoster(pi, () => entries),
	);
	return { envelopes, detach };
}

/** A request of `label`'s session whose 3 s budget ran out: it is late at the host. */
async function goneLate(label: string) {
	const session = askingSession(`${label}-session`);
	const { ask, handle } = relay({}, { book: lateBook() });
	track(ask(Q, { label, budgetMs: 3_000 }));
	await flush(vi);
	await vi.advanceTimersByTimeAsync(3_000);
	const [late] = handle.snapshot()!.late!;
	return { session, handle, late };
}

describe("the end of a late request, home in its asker's session", () => {
	it("answered late: status ok with the late answer's note, its request id, its asker and how long it waited, no reason", async () => {
		const { session, handle, late } = await goneLate("late-a");
		await vi.advanceTimersByTimeAsync(2_000);
		handle.bus.emit("answer", { requestId: late!.requestId, answers: ["SQLite"], source: "web" }, () => {});
		expect(session.envelopes).toEqual([
			{
				status: "ok",
				answers: [expect.objectContaining({ answer: "SQLite" })],
				note: LATE_ANSWER_NOTE,
				requestId: late!.requestId,
				asker: "late-a",
				waitedMs: 5_000,
			},
		]);
		session.detach();
	});

	it("cancelled from outside while late: dismissed, with no late answer's note", async () => {
		const { session, handle, late } = await goneLate("late-b");
		handle.bus.emit("answer", { requestId: late!.requestId, cancel: true }, () => {});
		expect(session.envelopes).toHaveLength(1);
		expect(session.envelopes[0]).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", requestId: late!.requestId, asker: "late-b" });
		expect(session.envelopes[0]!.note).not.toContain(LATE_ANSWER_NOTE);
		session.detach();
	});
});

describe("the end of a late request of another process", () => {
	it("goes back as a late frame over the transport that registered for it, with the late answer's note", async () => {
		const { handle } = relay({}, { book: lateBook() });
		const frames: RelayLate[] = [];
		const close = endTakers(handle.bus).register("far-1", (frame, taken) => {
			frames.push(frame);
			taken(true);
		});
		handle.bus.emit("request", relayRequest("far-1", { origin: "local:far", questions: Q, deadline: Date.now() + 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		expect(handle.snapshot()!.late?.map((l) => l.requestId)).toEqual(["far-1"]);
		handle.bus.emit("answer", { requestId: "far-1", answers: ["Postgres"], source: "web" }, () => {});
		expect(frames).toEqual([expect.objectContaining({ id: "far-1", kind: "late", status: "ok", note: LATE_ANSWER_NOTE })]);
		close();
	});
});

describe("the audit trail of a call that went late", () => {
	it("records its timeout once, with the note that its question stays open, however often it goes back to late; then its answer", async () => {
		const records: SettledRecord[] = [];
		const { ask, fake, handle, role } = relay({}, { book: lateBook(), onSettled: (record) => void records.push(record) });
		track(ask(Q, { label: "late-c", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		const [late] = handle.snapshot()!.late!;
		// Shown again and closed unanswered: back to late, which the audit trail has already.
		role.host.reopenLate(late!.requestId);
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(handle.snapshot()!.late?.map((l) => l.requestId)).toEqual([late!.requestId]);
		handle.bus.emit("answer", { requestId: late!.requestId, answers: ["SQLite"], source: "web" }, () => {});
		expect(records.map((r) => [r.status, r.note])).toEqual([
			["timeout", `The call's budget ran out before every question was answered. ${LATE_NOTE}`],
			["ok", undefined],
		]);
	});
});

describe("late requests when the host lets go", () => {
	it("outlive it: the next host hears of their expiry, and a second release of the one that let go leaves them open", async () => {
		const book = lateBook({ expiryMs: 60_000 });
		const { ask, fake, handle, role } = relay({}, { book });
		track(ask(Q, { label: "late-d", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		role.release("new", "The host session ended (new).");
		const next = fakeUI();
		const nextRole = claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "next-host", book })!;
		role.release("quit", "The host session ended (quit).");
		const [late] = handle.snapshot()!.late!;
		expect(late).toMatchObject({ asker: { label: "late-d" } });
		expect(nextRole.whereLate(late!.requestId)).toBeDefined();
		const before = fake.notices.length;
		await vi.advanceTimersByTimeAsync(60_000);
		expect(handle.snapshot()!.late).toBeUndefined();
		expect(next.notices.map((n) => n.message)).toEqual([expect.stringMatching(/late question of late-d \("Which database\?"\) expired/)]);
		expect(fake.notices.slice(before)).toEqual([]);
		nextRole.release("quit", "bye");
	});

	it("the summary of expiries owed at its window's end is not sent once the host has let go", async () => {
		const { ask, fake, role } = relay({}, { book: lateBook({ expiryMs: 60_000 }) });
		track(ask(Q, { label: "late-e", budgetMs: 3_000 }));
		track(ask([{ question: "Which region?" }], { label: "late-f", budgetMs: 3_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(3_000);
		await vi.advanceTimersByTimeAsync(60_000);
		const expiries = () => fake.notices.filter((n) => /late question/.test(n.message));
		expect(expiries()).toHaveLength(1);
		role.release("quit", "bye");
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS);
		expect(expiries()).toHaveLength(1);
	});

	it("the summary of cancels owed at its window's end is not sent once the host has let go", async () => {
		const { ask, fake, role } = relay();
		const first = new AbortController();
		const second = new AbortController();
		void ask([{ question: "Ship it?" }], { label: "a", signal: first.signal });
		void ask([{ question: "Which day?" }], { label: "b", signal: second.signal });
		await flush(vi);
		first.abort();
		second.abort();
		await flush(vi);
		const cancels = () => fake.notices.filter((n) => n.message.includes("cancelled"));
		expect(cancels()).toHaveLength(1);
		role.release("quit", "bye");
		await vi.advanceTimersByTimeAsync(CANCEL_WINDOW_MS);
		expect(cancels()).toHaveLength(1);
	});
});
