/**
 * The dialog host as an asker and the human see it, driven directly: what it takes and refuses,
 * what it replies, when its single dialog slot frees, its own deadline, the per-asker cap and the
 * status line. Fake timers throughout; deadlines are the relay's own.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { DialogHost, type HostEvents } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { statusText } from "../../../extensions/checkpoint-bridge/core/host/status-line.ts";
import { PROTOCOL_VERSION, type RelayCancel, type RelayReply, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import { answerOf } from "../../../extensions/checkpoint-bridge/model/answer-check.ts";
import { MAX_OPEN_PER_ASKER, MAX_REQUEST_ID_LENGTH } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { type FakeUI, fakeUI } from "../support/fake-ui.ts";
import { flush } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const BUDGET_NOTE = "The call's budget ran out before every question was answered.";
const SPENT_NOTE = "The call's budget had run out before it reached the host.";
const name = { question: "Project name?" };
const city = { question: "Which city?" };

/** A request as an asker sends it: 60 s of budget, 60 s per dialog, unless `over` says otherwise. */
function request(id: string, over: Partial<RelayRequest> & { label?: string } = {}): RelayRequest {
	const { label = "planner", ...rest } = over;
	return {
		v: PROTOCOL_VERSION,
		id,
		asker: { label, sessionId: `${label}-session` },
		questions: [name],
		deadline: Date.now() + 60_000,
		dialogTimeoutMs: 60_000,
		createdAt: Date.now(),
		...rest,
	};
}

/** A surface that leaves its dialog open when told to close it: only the human (the test) closes it. */
function deafSurface(fake: FakeUI): Surface {
	return {
		ask: async (prompt, question) => {
			prompt.onDialog?.();
			const value = await fake.ui.input(`[${prompt.asker}] ${question.question}`, undefined, { signal: prompt.signal });
			return value === undefined ? undefined : answerOf(question, "text", value);
		},
	};
}

/** A dialog host on a fake UI that collects every reply; `deaf` puts it behind a surface that ignores aborts. */
function host(options: { events?: HostEvents; deaf?: boolean; onReply?: (reply: RelayReply, host: DialogHost) => void; book?: RequestBook } = {}) {
	const fake = fakeUI({ ignoreSignal: options.deaf ?? false });
	const replies: RelayReply[] = [];
	const dialogHost: DialogHost = new DialogHost({
		ui: fake.ui,
		surface: options.deaf ? deafSurface(fake) : dialogSurface(fake.ui),
		sessionId: "host-session",
		reply: (reply) => {
			replies.push(reply);
			options.onReply?.(reply, dialogHost);
		},
		...(options.events ? { events: options.events } : {}),
		...(options.book ? { book: options.book } : {}),
	});
	const to = (id: string) => replies.filter((r) => r.id === id);
	const results = (id: string) => to(id).filter((r) => r.kind === "result");
	return { host: dialogHost, fake, replies, to, results };
}

const cancel = (id: string, reason: RelayCancel["reason"] = "cancelled"): RelayCancel => ({ v: PROTOCOL_VERSION, id, reason });

describe("what the host does not take", () => {
	it("ignores what is not a request, or repeats a held id, without a reply and without throwing", async () => {
		const { host: h, fake, replies } = host();
		h.serve(request("r1"));
		await flush(vi);
		const before = replies.length;
		for (const junk of [undefined, null, "r2", 42, {}, { id: 1 }, { id: "" }, { ...request(""), id: "" }])
			expect(() => h.serve(junk as unknown as RelayRequest)).not.toThrow();
		h.serve(request("r1", { questions: [city], label: "other" }));
		await flush(vi);
		expect(replies.length).toBe(before);
		expect(h.snapshot().open.length).toBe(1);
		expect(h.queued(9).queuedCount).toBe(0);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[planner] Project name?"]);
	});

	it("ignores a cancel without a string id, and the held request stays open", async () => {
		const { host: h, fake, replies } = host();
		h.serve(request("r1"));
		await flush(vi);
		for (const junk of [undefined, null, {}, { id: 1 }, "r1"]) expect(() => h.cancel(junk as unknown as RelayCancel)).not.toThrow();
		await flush(vi);
		expect(h.snapshot().open.length).toBe(1);
		expect(fake.open).toHaveLength(1);
		expect(replies.filter((r) => r.kind === "result")).toEqual([]);
	});

	it("answers a request whose budget ran out on the way with timeout and shows no dialog", async () => {
		const { host: h, fake, replies } = host();
		const given: Answer = { question: name.question, answer: "atlas", kind: "text", source: "dialog" };
		h.serve(request("spent", { deadline: Date.now(), questions: [name, city], answers: [given] }));
		await flush(vi);
		// The carried answer is the asker's word, marked so (issue 45): never "dialog", whatever it said.
		expect(replies).toStrictEqual([
			{ v: PROTOCOL_VERSION, id: "spent", kind: "result", status: "timeout", answers: [{ ...given, source: "carried" }], note: SPENT_NOTE },
		]);
		expect(fake.dialogs).toHaveLength(0);
		expect(h.snapshot().open.length).toBe(0);
	});

	it(`takes a request id of exactly ${MAX_REQUEST_ID_LENGTH} characters and refuses a longer one or one with a control character`, async () => {
		const { host: h, to } = host();
		const longest = "a".repeat(MAX_REQUEST_ID_LENGTH);
		const refusal = `The request id must be at most ${MAX_REQUEST_ID_LENGTH} characters, none of them control or bidi characters.`;
		h.serve(request(longest));
		h.serve(request(`${longest}a`));
		h.serve(request("bell\u0007"));
		await flush(vi);
		expect(to(longest)[0]).toMatchObject({ kind: "progress", stage: "queued" });
		for (const id of [`${longest}a`, "bell\u0007"])
			expect(to(id)).toStrictEqual([{ v: PROTOCOL_VERSION, id, kind: "result", status: "error", answers: [], note: refusal }]);
		expect(h.snapshot().open.length).toBe(1);
	});

	it("refuses invalid questions naming every problem", async () => {
		const { host: h, results } = host();
		h.serve(request("bad", { questions: [{ question: "" }, { question: 5 } as unknown as QuestionInput] }));
		expect(results("bad")).toMatchObject([
			{ status: "error", note: "Invalid parameters: questions[0].question: is empty; questions[1].question: must be a string." },
		]);
	});

	it("refuses a request without a finite deadline or dialog time, and one whose origin is not text", async () => {
		const { host: h, results, fake } = host();
		const cases: [string, Partial<RelayRequest>][] = [
			["nan", { deadline: Number.NaN }],
			["infinite", { deadline: Number.POSITIVE_INFINITY }],
			["dialog", { dialogTimeoutMs: Number.NaN }],
		];
		for (const [id, over] of cases) h.serve(request(id, over));
		h.serve(request("origin", { origin: 5 as unknown as string }));
		await flush(vi);
		for (const [id] of cases) expect(results(id)).toMatchObject([{ status: "error", note: "The request has no valid deadline." }]);
		expect(results("origin")).toMatchObject([{ status: "error", note: "The request's origin must be a string." }]);
		expect(fake.dialogs).toHaveLength(0);
		expect(h.snapshot().open.length).toBe(0);
	});
});

describe("what the host replies", () => {
	it("sends position only with queued, question only with shown and answered, and no note with ok", async () => {
		const { host: h, fake, to } = host();
		h.serve(request("r1"));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		const answer = { question: name.question, answer: "atlas", kind: "text", source: "dialog" };
		const base = { v: PROTOCOL_VERSION, id: "r1" };
		expect(to("r1")).toStrictEqual([
			{ ...base, kind: "progress", stage: "queued", answers: [], position: 1 },
			{ ...base, kind: "progress", stage: "shown", answers: [], question: 0 },
			{ ...base, kind: "progress", stage: "answered", answers: [answer], question: 0 },
			{ ...base, kind: "result", status: "ok", answers: [answer] },
		]);
	});

	it("names the question and the answers so far when a dialog is dismissed", async () => {
		const { host: h, fake, results } = host();
		h.serve(request("first", { questions: [name, city] }));
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		h.serve(request("second", { questions: [name, city] }));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(results("first")).toMatchObject([{ status: "timeout-or-cancelled", note: "The user dismissed question 1 of 2; 0 answered.", reason: "dismissed" }]);
		expect(results("second")).toMatchObject([{ status: "timeout-or-cancelled", note: "The user dismissed question 2 of 2; 1 answered.", reason: "dismissed" }]);
		expect(fake.dialogs).toHaveLength(3);
	});

	it("lists a queued request in the snapshot without a question, and a shown one with the question on screen", async () => {
		const { host: h } = host();
		h.serve(request("shown"));
		h.serve(request("queued", { label: "reviewer" }));
		await flush(vi);
		const open = h.snapshot().open;
		expect(open.map((r) => [r.requestId, r.state, "question" in r ? r.question : "none"])).toEqual([
			["shown", "shown", 0],
			["queued", "queued", "none"],
		]);
	});

	it("gives a shown question's deadline in the snapshot, 0 when it has none", async () => {
		const { host: h } = host();
		h.serve(request("timed", { dialogTimeoutMs: 30_000 }));
		h.serve(request("untimed", { label: "reviewer", questions: [city], deadline: 0, dialogTimeoutMs: 0 }));
		await flush(vi);
		expect(h.snapshot().open[0]).toMatchObject({ requestId: "timed", state: "shown", questionDeadline: Date.now() + 30_000 });
		h.cancel(cancel("timed"));
		await flush(vi);
		expect(h.snapshot().open).toMatchObject([{ requestId: "untimed", state: "shown", question: 0, questionDeadline: 0 }]);
	});

	it("tells observers when a request was first shown only once it was", async () => {
		const queued = vi.fn();
		const shown = vi.fn();
		const { host: h } = host({ events: { queued, shown } });
		h.serve(request("r1"));
		await flush(vi);
		expect("shownAt" in queued.mock.calls[0]![0]).toBe(false);
		expect(shown.mock.calls[0]![0]).toMatchObject({ requestId: "r1", shownAt: Date.now() });
	});

	it("serves requests without any lifecycle hooks", async () => {
		const { host: h, fake, results } = host();
		expect(() => h.serve(request("r1"))).not.toThrow();
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(results("r1")).toMatchObject([{ status: "ok" }]);
	});
});

describe("the host's own deadline", () => {
	it("settles a request still queued with timeout when its budget runs out, though no asker sends a cancel", async () => {
		const { host: h, fake, results } = host();
		h.serve(request("holder"));
		h.serve(request("waiting", { label: "reviewer", deadline: Date.now() + 5_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(4_999);
		expect(results("waiting")).toEqual([]);
		await vi.advanceTimersByTimeAsync(1);
		expect(results("waiting")).toStrictEqual([{ v: PROTOCOL_VERSION, id: "waiting", kind: "result", status: "timeout", answers: [], note: BUDGET_NOTE }]);
		expect(h.snapshot().open.length).toBe(1);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(fake.dialogs).toHaveLength(1);
	});

	it("closes an open dialog at the deadline with timeout and the note", async () => {
		const { host: h, fake, results } = host();
		h.serve(request("r1", { deadline: Date.now() + 5_000, dialogTimeoutMs: 60_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(5_000);
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(results("r1")).toMatchObject([{ status: "timeout", note: BUDGET_NOTE }]);
	});

	it("counts a dialog the call's budget capped, dismissed 2 ms before the deadline, as the call's timeout; 3 ms before as the human's", async () => {
		for (const [early, status] of [
			[2, "timeout"],
			[3, "timeout-or-cancelled"],
		] as const) {
			const { host: h, fake, results } = host();
			// Exactly as much budget left as a dialog gets: the call's budget caps the dialog.
			h.serve(request("r1", { deadline: Date.now() + 10_000, dialogTimeoutMs: 10_000 }));
			await flush(vi);
			await vi.advanceTimersByTimeAsync(10_000 - early);
			fake.current()!.answer(undefined);
			await flush(vi);
			expect(results("r1")).toMatchObject([{ status }]);
			vi.clearAllTimers();
		}
	});
});

describe("cancels and the single dialog slot", () => {
	it("drops a request cancelled while queued from the queue at once", async () => {
		const { host: h, fake, results } = host();
		h.serve(request("shown"));
		h.serve(request("queued", { label: "reviewer" }));
		await flush(vi);
		expect(h.snapshot().open).toHaveLength(2);
		h.cancel(cancel("queued"));
		expect(h.snapshot().open.map((o) => o.requestId)).toEqual(["shown"]);
		expect(h.queued(9).queuedCount).toBe(0);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(fake.dialogs).toHaveLength(1);
		expect(results("queued")).toEqual([]);
	});

	it("frees the slot of a request cancelled while shown only when its dialog closes, on a UI that ignores the abort", async () => {
		const { host: h, fake, to } = host({ deaf: true });
		h.serve(request("shown"));
		h.serve(request("next", { label: "reviewer" }));
		await flush(vi);
		const sent = to("shown").length;
		h.cancel(cancel("shown"));
		await vi.advanceTimersByTimeAsync(1_000);
		// The slot stays taken: the next request is held, not shown.
		expect(h.snapshot().open.map((o) => o.requestId)).toEqual(["next"]);
		expect(fake.dialogs).toHaveLength(1);
		// The human answers the dialog nobody waits for any more: the asker hears nothing of it.
		fake.dialogs[0]!.answer("late");
		await flush(vi);
		expect(to("shown")).toHaveLength(sent);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[planner] Project name?", "[reviewer] Project name?"]);
		expect(fake.maxOpen).toBe(1);
	});

	it("sends one result only when a dialog fails after its request timed out", async () => {
		const { host: h, fake, results } = host({ deaf: true });
		h.serve(request("r1", { deadline: Date.now() + 5_000 }));
		await flush(vi);
		await vi.advanceTimersByTimeAsync(5_000);
		fake.dialogs[0]!.fail(new Error("terminal gone"));
		await flush(vi);
		expect(results("r1")).toMatchObject([{ status: "timeout", note: BUDGET_NOTE }]);
	});

	it("shows no further dialog and sends no result to an asker that gives up as its first answer arrives", async () => {
		const giveUp = (reply: RelayReply, h: DialogHost) => {
			if (reply.kind === "progress" && reply.stage === "answered") h.cancel(cancel(reply.id));
		};
		const { host: h, fake, results } = host({ onReply: giveUp });
		h.serve(request("two", { questions: [name, city] }));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		h.serve(request("one", { label: "reviewer" }));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[planner] (1/2) Project name?", "[reviewer] Project name?"]);
		expect([...results("two"), ...results("one")]).toEqual([]);
		expect(h.snapshot().open.length).toBe(0);
	});

	it("shows no second dialog of a request cancelled from outside while its first is open", async () => {
		const { host: h, fake, results } = host();
		h.serve(request("r1", { questions: [name, city] }));
		await flush(vi);
		expect(h.answerFromOutside({ requestId: "r1", cancel: true })).toEqual({ ok: true });
		await flush(vi);
		expect(fake.dialogs).toHaveLength(1);
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(results("r1")).toMatchObject([{ status: "timeout-or-cancelled", note: "The question was cancelled from outside the terminal." }]);
	});
});

describe(`the cap of ${MAX_OPEN_PER_ASKER} open requests per asker`, () => {
	const refusal = `The asker already has ${MAX_OPEN_PER_ASKER} requests open at the host, the most one asker session may have (${MAX_OPEN_PER_ASKER}); ask again once one has settled.`;

	it("takes exactly one more after one settles, and a full set again once all have", async () => {
		const { host: h, to } = host();
		const accepted = (id: string) => to(id)[0]?.kind === "progress";
		const serveMany = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => (h.serve(request(`${prefix}${i}`)), `${prefix}${i}`));
		const first = serveMany("a", MAX_OPEN_PER_ASKER);
		h.serve(request("over"));
		expect(first.every(accepted)).toBe(true);
		expect(to("over")).toMatchObject([{ kind: "result", status: "error", note: refusal }]);
		h.cancel(cancel(first.at(-1)!));
		h.serve(request("one-more"));
		h.serve(request("over-again"));
		expect(accepted("one-more")).toBe(true);
		expect(to("over-again")).toMatchObject([{ kind: "result", status: "error", note: refusal }]);
		for (const id of [...first.slice(0, -1), "one-more"]) h.cancel(cancel(id));
		await flush(vi);
		expect(h.snapshot().open.length).toBe(0);
		const second = serveMany("b", MAX_OPEN_PER_ASKER);
		h.serve(request("over-last"));
		expect(second.every(accepted)).toBe(true);
		expect(to("over-last")).toMatchObject([{ status: "error", note: refusal }]);
	});

	it("counts one asker session over every connection of a transport: the same session id in this process, on the endpoint and in the room are three askers", () => {
		const { host: h, to } = host();
		const origins = ["local:1", "nats:_INBOX.a", undefined];
		for (const origin of origins) for (let i = 0; i < MAX_OPEN_PER_ASKER; i++) h.serve(request(`${origin}-${i}`, origin === undefined ? {} : { origin }));
		for (const origin of origins) for (let i = 0; i < MAX_OPEN_PER_ASKER; i++) expect(to(`${origin}-${i}`)[0]?.kind, `${origin}-${i}`).toBe("progress");
		// Another connection of the endpoint, another inbox in the room: the same askers, already at the cap.
		h.serve(request("over-local", { origin: "local:2" }));
		h.serve(request("over-nats", { origin: "nats:_INBOX.b" }));
		expect(to("over-local")).toMatchObject([{ kind: "result", status: "error", note: refusal }]);
		expect(to("over-nats")).toMatchObject([{ kind: "result", status: "error", note: refusal }]);
	});
});

describe("the status line and a hand-over", () => {
	it("keeps naming an asker while any of its requests waits", async () => {
		const { host: h, fake } = host();
		// Different questions: identical ones would be answered together.
		h.serve(request("p1"));
		h.serve(request("p2", { questions: [city] }));
		h.serve(request("r1", { label: "reviewer", questions: [{ question: "Which port?" }] }));
		await flush(vi);
		expect(statusText(h)).toBe("checkpoint-bridge: shown: planner (0 min) · 2 queued: planner (0 min), reviewer (0 min)");
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(statusText(h)).toBe("checkpoint-bridge: shown: planner (0 min) · 1 queued: reviewer (0 min)");
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(statusText(h)).toBe("checkpoint-bridge: shown: reviewer (0 min)");
	});

	it("hands over every request as it was taken in and holds nothing after", async () => {
		const book = new RequestBook();
		const { host: h, replies } = host({ book });
		h.serve(request("plain"));
		h.serve(request("remote", { origin: "local:7", label: "reviewer" }));
		await flush(vi);
		const sent = replies.length;
		h.handOver(1_000, "replaced");
		const parked = book.parked();
		expect(parked.map((p) => Object.keys(p.request).sort())).toEqual([
			["asker", "createdAt", "deadline", "dialogTimeoutMs", "id", "questions", "v"],
			["asker", "createdAt", "deadline", "dialogTimeoutMs", "id", "origin", "questions", "v"],
		]);
		expect(h.snapshot().open.length).toBe(0);
		expect(h.queued(9)).toEqual({ queued: [], queuedCount: 0 });
		expect(statusText(h)).toBeUndefined();
		expect(replies.length).toBe(sent);
	});
});

describe("a request sent again after a restart", () => {
	it("is marked once, however often it is handed over", async () => {
		const book = new RequestBook();
		const first = host({ book });
		first.host.serve(request("again", { resent: true, label: "reviewer" }));
		await flush(vi);
		first.host.handOver(1_000, "replaced");
		const second = host({ book });
		for (const p of book.parked()) second.host.adopt(p);
		await flush(vi);
		second.host.handOver(1_000, "replaced");
		const third = host({ book });
		for (const p of book.parked()) third.host.adopt(p);
		await flush(vi);
		expect(third.fake.dialogs.map((d) => d.title)).toEqual(["[reviewer · asked before the restart] Project name?"]);
	});

	it("is marked once when its marked label, written down, comes back longer than a label is shown and is cut", async () => {
		const label = "subagent-checkpoint-planner (pid 2330)";
		const first = host();
		first.host.serve(request("again", { resent: true, label }));
		await flush(vi);
		const shown = first.fake.dialogs[0]!.title;
		const marked = /^\[(.*)\] Project name\?$/.exec(shown)![1]!;
		expect(marked.length, "the marked label is longer than a label is shown, so taken in again it is cut").toBeGreaterThan(64);
		const second = host();
		second.host.serve(request("again-2", { resent: true, label: marked }));
		await flush(vi);
		expect(second.fake.dialogs.map((d) => d.title)).toEqual([shown]);
	});
});

describe("answers carried in, and the figures", () => {
	it("takes a carried answer only for the question of the same text and id", async () => {
		const { host: h, fake, results } = host();
		const question = { question: "Project name?", id: "name" };
		const carried = (id: string): Answer => ({ question: question.question, id, answer: "atlas", kind: "text", source: "dialog" });
		h.serve(request("other-id", { questions: [question] }), { entries: [{ answer: carried("title") }], queuedAt: Date.now() });
		h.serve(request("resent", { questions: [question], label: "reviewer", answers: [carried("title")] }));
		h.serve(request("same-id", { questions: [question], label: "third" }), { entries: [{ answer: carried("name") }], queuedAt: Date.now() });
		await flush(vi);
		expect(results("same-id")).toMatchObject([{ status: "ok", answers: [{ answer: "atlas", id: "name" }] }]);
		expect(results("other-id")).toEqual([]);
		expect(results("resent")).toEqual([]);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[planner] Project name?"]);
	});

	it("keeps of a re-sent request's answers only those that are answers, and never throws on the rest", () => {
		const { host: h, results } = host();
		const given: Answer = { question: "Project name?", answer: "atlas", kind: "text", source: "dialog" };
		const junk = [
			undefined,
			null,
			7,
			"atlas",
			{ answer: "no question" },
			{ question: "Project name?" },
			{ question: 1, answer: "x" },
			{ question: "q", answer: 2 },
		];
		// Spent before it reached the host: the reply carries exactly the answers the host kept.
		h.serve(request("resent", { deadline: Date.now() - 1, answers: [...junk, given] as Answer[] }));
		h.serve(request("not-a-list", { label: "reviewer", deadline: Date.now() - 1, answers: { 0: given, length: 1 } as never }));
		expect(results("resent")).toEqual([expect.objectContaining({ status: "timeout", answers: [{ ...given, source: "carried" }] })]);
		expect(results("not-a-list")).toEqual([expect.objectContaining({ status: "timeout", answers: [] })]);
	});

	it("does not count the questions of a request carried over from a replaced host as asked again", () => {
		const { host: h } = host();
		h.serve(request("carried", { questions: [name, city] }), { entries: [], queuedAt: Date.now() - 1_000 });
		expect(h.stats.questionsAsked).toBe(0);
		h.serve(request("new", { questions: [name, city], label: "reviewer" }));
		expect(h.stats.questionsAsked).toBe(2);
	});
});
