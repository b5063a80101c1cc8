/**
 * The request record (core/shared/request-record.ts, ADR-0022): written down and read back whole, and the
 * dialog host's one end for every reason, each seen where it is observed: the state the record
 * reaches (through the settled event's typed `end`), the asker's reply, and the one timer left
 * behind (none). Fake timers throughout.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { DialogHost, type HostEvents, type SettledOutcome } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import {
	endedState,
	givenAnswers,
	hasEnded,
	placedAnswers,
	type RequestEnd,
	type RequestRecord,
} from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";
import type { Answer, AnswerPlace } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { endWire } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { propertyRun } from "../support/property-policy.ts";
import { flush, relayRequest } from "../support/relay.ts";

const text = fc.string({ maxLength: 12 });
const question: fc.Arbitrary<Question> = fc.record({ question: text, kind: fc.constant("text" as const) }, { noNullPrototype: true });
const answer = (q: Question): fc.Arbitrary<Answer> =>
	fc.record(
		{ question: fc.constant(q.question), answer: text, kind: fc.constant("text" as const), source: fc.constantFrom("dialog" as const, "shared" as const) },
		{ noNullPrototype: true },
	);
const ENDS: RequestEnd[] = [
	"answered",
	"answered-outside",
	"dismissed",
	"cancelled-outside",
	"dialog-timeout",
	"timeout",
	"cancelled",
	"refused",
	"failed",
	"host-gone",
	"handed-over",
];
const PLACES: AnswerPlace[] = ["terminal", "rpc", "page", "link", "notify-link", "outside"];
const time = fc.integer({ min: 0, max: 2 ** 42 });
const record: fc.Arbitrary<RequestRecord> = fc.array(question, { minLength: 1, maxLength: 4 }).chain((questions) =>
	fc.record(
		{
			request: fc.record(
				{
					v: fc.constant(PROTOCOL_VERSION),
					id: text,
					asker: fc.record({ label: text, sessionId: text }, { noNullPrototype: true }),
					questions: fc.constant(questions),
					deadline: time,
					dialogTimeoutMs: time,
					createdAt: time,
				},
				{ noNullPrototype: true },
			),
			questions: fc.constant(questions),
			entries: fc.tuple(
				...questions.map((q) =>
					fc.option(fc.record({ answer: answer(q), place: fc.constantFrom(...PLACES) }, { requiredKeys: ["answer"], noNullPrototype: true }), {
						nil: undefined,
					}),
				),
			),
			queuedAt: time,
			shownAt: time,
			state: fc.oneof(
				fc.constant({ is: "queued" as const }),
				fc.record({ is: fc.constant("showing" as const), question: fc.nat(3), questionDeadline: time }, { requiredKeys: ["is"], noNullPrototype: true }),
				fc.constantFrom(...ENDS).map(endedState),
			),
		},
		{ requiredKeys: ["request", "questions", "entries", "queuedAt", "state"], noNullPrototype: true },
	),
);

describe("the answers of a request record", () => {
	it("for any record, its placed answers are its given answers in question order, each with the place it was given", () => {
		fc.assert(
			fc.property(record, (r) => {
				const answered = r.entries.filter((entry) => entry !== undefined);
				expect(givenAnswers(r)).toEqual(answered.map((entry) => entry.answer));
				expect(placedAnswers(r).map(({ place, ...answer }) => [answer, place])).toEqual(answered.map((entry) => [entry.answer, entry.place]));
			}),
			propertyRun(200),
		);
	});

	it("gives its answers, and its answers with their places, in question order, skipping unanswered questions", () => {
		const q: Question[] = [
			{ question: "A?", kind: "text" },
			{ question: "B?", kind: "text" },
		];
		const given: Answer = { question: "B?", answer: "b", kind: "text", source: "dialog" };
		const r: RequestRecord = {
			request: { v: PROTOCOL_VERSION, id: "r", asker: { label: "p", sessionId: "s" }, questions: q, deadline: 0, dialogTimeoutMs: 0, createdAt: 0 },
			questions: q,
			entries: [undefined, { answer: given, place: "page" }],
			queuedAt: 1,
			state: { is: "queued" },
		};
		expect(givenAnswers(r)).toEqual([given]);
		expect(givenAnswers({ entries: [null, { answer: given }] })).toEqual([given]);
		expect(placedAnswers(r)).toEqual([{ ...given, place: "page" }]);
		expect(placedAnswers({ entries: [{ answer: given }] })).toEqual([given]);
	});

	it("is ended in exactly the answered and ended states", () => {
		const of = (state: RequestRecord["state"]) => hasEnded({ state } as RequestRecord);
		expect(of({ is: "queued" })).toBe(false);
		expect(of({ is: "showing" })).toBe(false);
		for (const end of ENDS) expect(of(endedState(end))).toBe(true);
		expect(endedState("answered")).toEqual({ is: "answered", end: "answered" });
		expect(endedState("answered-outside")).toEqual({ is: "answered", end: "answered-outside" });
		expect(endedState("dismissed")).toEqual({ is: "ended", end: "dismissed" });
	});
});

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const request = (id: string, over: Partial<RelayRequest> = {}) => relayRequest(id, { dialogTimeoutMs: 30_000, ...over });

function host(options: { surface?: (ui: ReturnType<typeof fakeUI>["ui"]) => Surface; book?: RequestBook } = {}) {
	const fake = fakeUI();
	const replies: RelayReply[] = [];
	const ends: { id: string; outcome: SettledOutcome }[] = [];
	const events: HostEvents = { settled: (request, outcome) => ends.push({ id: request.requestId, outcome }) };
	const dialogHost = new DialogHost({
		ui: fake.ui,
		surface: options.surface?.(fake.ui) ?? dialogSurface(fake.ui),
		sessionId: "host-session",
		reply: (reply) => replies.push(reply),
		events,
		...(options.book ? { book: options.book } : {}),
	});
	const result = (id: string) => replies.find((r) => r.id === id && r.kind === "result");
	return { host: dialogHost, fake, ends, result };
}

describe("one end for every reason", () => {
	it("answered: in the dialog, ok, and no timer is left", async () => {
		const { host: h, fake, ends, result } = host();
		h.serve(request("r"));
		await flush(vi);
		expect(vi.getTimerCount()).toBe(1); // one per request: due when the dialog's own time ends, before the request's deadline
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(ends).toEqual([{ id: "r", outcome: expect.objectContaining({ end: "answered" }) }]);
		expect(endWire("answered").status).toBe("ok");
		expect(result("r")).toMatchObject({ status: "ok", answers: [{ answer: "atlas" }] });
		expect(vi.getTimerCount()).toBe(0);
		expect(h.snapshot().open.length).toBe(0);
	});

	it("dismissed and dialog-timeout: timeout-or-cancelled with the reason each names", async () => {
		const { host: h, fake, ends, result } = host();
		h.serve(request("dismissed"));
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		h.serve(request("own-time"));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(30_000);
		expect(ends.map((e) => [e.id, e.outcome.end, endWire(e.outcome.end).reason])).toEqual([
			["dismissed", "dismissed", "dismissed"],
			["own-time", "dialog-timeout", "dialog-timeout"],
		]);
		expect(result("dismissed")).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed" });
		expect(result("own-time")).toMatchObject({ status: "timeout-or-cancelled", reason: "dialog-timeout" });
		expect(vi.getTimerCount()).toBe(0);
	});

	it("timeout: the one deadline timer ends it, queued or shown, with the budget's note", async () => {
		const { host: h, ends, result } = host();
		h.serve(request("shown", { deadline: Date.now() + 5_000, dialogTimeoutMs: 60_000 }));
		h.serve(request("queued", { deadline: Date.now() + 1_000, asker: { label: "other", sessionId: "other-session" } }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		expect(ends.map((e) => [e.id, e.outcome.end])).toEqual([["queued", "timeout"]]);
		await vi.advanceTimersByTimeAsync(4_000);
		expect(ends.map((e) => [e.id, e.outcome.end])).toEqual([
			["queued", "timeout"],
			["shown", "timeout"],
		]);
		for (const id of ["shown", "queued"])
			expect(result(id)).toMatchObject({ status: "timeout", note: "The call's budget ran out before every question was answered." });
		expect(vi.getTimerCount()).toBe(0);
	});

	it("timeout with late answers on: kept late, the note says so; it has not settled (ADR-0025)", async () => {
		const late = new RequestBook({ ...readLateConfig({}), expiryMs: 10_000 });
		const { host: h, ends, result } = host({ book: late });
		h.serve(request("r", { deadline: Date.now() + 1_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		expect(ends).toEqual([]);
		expect(result("r")).toMatchObject({ status: "timeout", note: expect.stringContaining("marked late") });
		expect(h.lateRequests().map((l) => l.request.id)).toEqual(["r"]);
		expect(h.lateRequests()[0]!.entries).toEqual([undefined]);
		h.endLateRequests("gone");
	});

	it("late is a state of the one record: late with since and expiry, shown again as itself with no call deadline, back to late as late as it was, and ended once", async () => {
		const late = new RequestBook({ ...readLateConfig({}), expiryMs: 10_000 });
		const { host: h, fake, ends } = host({ book: late });
		const deadline = Date.now() + 1_000;
		h.serve(request("r", { deadline }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		const record = late.get("r")!;
		expect(record.state).toEqual({ is: "late", since: deadline, expiresAt: deadline + 10_000 });
		expect(record.request.deadline).toBe(deadline);
		expect(h.reopenLate("r")).toBe(true);
		await flush(vi);
		// The same record, shown: no call deadline closes it, its late state kept for its way back.
		expect(record.state).toMatchObject({ is: "showing" });
		expect(record.wasLate).toEqual({ is: "late", since: deadline, expiresAt: deadline + 10_000 });
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(late.get("r")).toBe(record);
		expect(record.state).toEqual({ is: "late", since: deadline, expiresAt: deadline + 10_000 });
		expect(ends).toEqual([]);
		expect(h.answerFromOutside({ requestId: "r", answers: ["atlas"] })).toEqual({ ok: true });
		expect(record.state).toEqual({ is: "answered", end: "answered-outside" });
		expect(ends.map((e) => [e.id, e.outcome.end])).toEqual([["r", "answered-outside"]]);
		expect(vi.getTimerCount()).toBe(0);
	});

	it("cancelled: the asker gave up; nothing is replied, the dialog closes", async () => {
		const { host: h, fake, ends, result } = host();
		h.serve(request("r"));
		await flush(vi);
		h.cancel({ v: PROTOCOL_VERSION, id: "r", reason: "cancelled" });
		await flush(vi);
		expect(ends.map((e) => [endWire(e.outcome.end).status, e.outcome.end])).toEqual([["cancelled", "cancelled"]]);
		expect(result("r")).toBeUndefined();
		expect(fake.current()).toBeUndefined();
		expect(vi.getTimerCount()).toBe(0);
	});

	it("answered outside and cancelled outside: typed, whatever the note says", async () => {
		const { host: h, ends, result } = host();
		h.serve(request("answered"));
		h.serve(request("cancelled", { asker: { label: "other", sessionId: "other-session" } }));
		await flush(vi);
		expect(h.answerFromOutside({ v: 1, requestId: "cancelled", cancel: true })).toEqual({ ok: true });
		expect(h.answerFromOutside({ v: 1, requestId: "answered", answers: ["atlas"], source: "web", place: "page" })).toEqual({ ok: true });
		expect(h.answerFromOutside({ v: 1, requestId: "answered", answers: ["again"] })).toMatchObject({ ok: false, code: "not_found" });
		expect(ends.map((e) => [e.id, endWire(e.outcome.end).status, e.outcome.end])).toEqual([
			["cancelled", "timeout-or-cancelled", "cancelled-outside"],
			["answered", "ok", "answered-outside"],
		]);
		expect(ends[1]!.outcome.answers).toEqual([expect.objectContaining({ answer: "atlas", place: "page" })]);
		expect(result("cancelled")).toMatchObject({ reason: "dismissed", note: expect.stringContaining("cancelled from outside the terminal") });
		// Only the arrival notice's window was left; no request timer.
		await vi.advanceTimersByTimeAsync(2_000);
		expect(vi.getTimerCount()).toBe(0);
	});

	it("refused and failed: error, with the surface's fault in the note", async () => {
		const wrong: Answer = { question: "Something else?", answer: "x", kind: "text", source: "dialog" };
		const refusing = host({ surface: () => ({ ask: async () => wrong }) });
		refusing.host.serve(request("refused"));
		await flush(vi);
		const failing = host({
			surface: () => ({
				ask: async () => {
					throw new Error("broken screen");
				},
			}),
		});
		failing.host.serve(request("failed"));
		await flush(vi);
		expect(refusing.ends.map((e) => e.outcome.end)).toEqual(["refused"]);
		expect(refusing.result("refused")).toMatchObject({ status: "error", note: expect.stringContaining("answer to question 1") });
		expect(failing.ends.map((e) => e.outcome.end)).toEqual(["failed"]);
		expect(failing.result("failed")).toMatchObject({ status: "error", note: "The host dialog failed: broken screen" });
		expect(vi.getTimerCount()).toBe(0);
	});

	it("host gone and handed over: no-host with the host's note, or parked in the book for the next host, and host-gone once when none takes it", async () => {
		const gone = host();
		gone.host.serve(request("gone"));
		await flush(vi);
		gone.host.shutdown("The host session ended.");
		expect(gone.ends.map((e) => [endWire(e.outcome.end).status, e.outcome.end])).toEqual([["no-host", "host-gone"]]);
		expect(gone.result("gone")).toMatchObject({ status: "no-host", note: "The host session ended." });
		const book = new RequestBook();
		const replaced = host({ book });
		replaced.host.serve(request("shown", { questions: [{ question: "Name?" }, { question: "City?" }] }));
		replaced.host.serve(request("queued", { asker: { label: "other", sessionId: "other-session" }, questions: [{ question: "Licence?" }] }));
		await flush(vi);
		replaced.fake.current()!.answer("atlas");
		await flush(vi);
		replaced.host.handOver(1_000, "The host was replaced.");
		expect(replaced.ends).toEqual([]);
		expect(replaced.result("shown")).toBeUndefined();
		const parked = book.parked();
		expect(parked.map((p) => [p.request.id, p.state.is, p.entries.map((e) => e?.answer.answer ?? null)])).toEqual([
			["shown", "parked", ["atlas", null]],
			["queued", "parked", [null]],
		]);
		await vi.advanceTimersByTimeAsync(999);
		expect(replaced.ends).toEqual([]);
		// No next host took them within the grace: each ends here, once, host-gone with the note.
		await vi.advanceTimersByTimeAsync(1);
		expect(replaced.ends.map((e) => [e.id, e.outcome.end, e.outcome.note])).toEqual([
			["shown", "host-gone", "The host was replaced."],
			["queued", "host-gone", "The host was replaced."],
		]);
		expect(replaced.result("shown")).toMatchObject({ status: "no-host", note: "The host was replaced." });
		expect(book.parked()).toEqual([]);
		expect(book.get("shown")).toBeUndefined();
		expect(vi.getTimerCount()).toBe(0);
	});

	it("ends once: a second reason after the first changes nothing", async () => {
		const { host: h, fake, ends, result } = host();
		h.serve(request("r"));
		await flush(vi);
		h.cancel({ v: PROTOCOL_VERSION, id: "r", reason: "timeout" });
		h.shutdown("gone");
		fake.current()?.answer("late");
		await vi.advanceTimersByTimeAsync(120_000);
		expect(ends.map((e) => e.outcome.end)).toEqual(["timeout"]);
		expect(result("r")).toMatchObject({ status: "timeout" });
	});
});
