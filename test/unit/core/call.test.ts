/**
 * One call's life (core/asking/call.ts) with a hand-driven transport: what would happen twice if the call
 * could settle twice is counted here, not the promise's settlement (a promise settles once anyway).
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type CallControl, type CallOptions, replyAnswersProblem, runCall, VERDICT_GRACE_MS } from "../../../extensions/checkpoint-bridge/core/asking/call.ts";
import { LATE_NOTE } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { PROTOCOL_VERSION, type RelayProgress } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { Status } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const answer = { question: "Name?", answer: "atlas", kind: "text" as const };

/** A transport that hands out its control and records every time the call's end reaches it. */
function transport() {
	const ends: { cancelHost: boolean; status: Status }[] = [];
	let control!: CallControl;
	const start = (call: CallControl) => {
		control = call;
		return (cancelHost: boolean, status: Status) => void ends.push({ cancelHost, status });
	};
	return { ends, start, control: () => control };
}

function options(extra: Partial<CallOptions> = {}): CallOptions & { progress: RelayProgress[] } {
	const progress: RelayProgress[] = [];
	return {
		asker: { label: "child", sessionId: "c" },
		questions: [{ question: "Name?" }],
		budgetMs: 5_000,
		dialogTimeoutMs: 5_000,
		onProgress: (p) => progress.push(p),
		progress,
		...extra,
	};
}

const progress = (id: string, stage: RelayProgress["stage"]): RelayProgress => ({ v: PROTOCOL_VERSION, id, kind: "progress", stage, answers: [] });

describe("a call settles exactly once", () => {
	it("a result, then a transport finishing it again: the transport's end runs once, with the first outcome, and nothing is passed on after it", async () => {
		const t = transport();
		const o = options();
		const call = runCall(o, t.start);
		const { id } = t.control();
		t.control().reply(progress(id, "queued"));
		t.control().reply({ v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [answer] });
		// The socket closing after the result, a late progress, a second result: all too late.
		t.control().end("no-host", "closed");
		t.control().reply(progress(id, "shown"));
		t.control().reply({ v: PROTOCOL_VERSION, id, kind: "result", status: "error", answers: [] });
		await vi.advanceTimersByTimeAsync(10_000);
		const envelope = await call;
		expect(envelope).toMatchObject({ status: "ok", answers: [answer] });
		expect(t.ends).toEqual([{ cancelHost: false, status: "ok" }]);
		expect(o.progress.map((p) => p.stage)).toEqual(["queued"]);
	});

	it("its budget, then an abort and a result: the host is told to drop it once, and the envelope is the timeout", async () => {
		const t = transport();
		const abort = new AbortController();
		const call = runCall(options({ signal: abort.signal }), t.start);
		await vi.advanceTimersByTimeAsync(5_000);
		abort.abort();
		t.control().reply({ v: PROTOCOL_VERSION, id: t.control().id, kind: "result", status: "ok", answers: [answer] });
		t.control().end("no-host");
		expect((await call).status).toBe("timeout");
		expect(t.ends).toEqual([{ cancelHost: true, status: "timeout" }]);
		expect(vi.getTimerCount()).toBe(0);
		// Nothing is left listening on the tool call's signal.
		expect(getEventListeners(abort.signal, "abort")).toEqual([]);
	});

	it("an abort, then its budget: the host is told to drop it once, as cancelled", async () => {
		const t = transport();
		const abort = new AbortController();
		const call = runCall(options({ signal: abort.signal }), t.start);
		abort.abort();
		await vi.advanceTimersByTimeAsync(5_000);
		t.control().end("error");
		expect((await call).status).toBe("cancelled");
		expect(t.ends).toEqual([{ cancelHost: true, status: "cancelled" }]);
	});

	it("a transport that settles the call while starting gets its end called once, after it returned it", async () => {
		const ends: Status[] = [];
		const envelope = await runCall(options(), (call) => {
			call.end("no-host", "nobody");
			call.end("error", "twice");
			return (_cancelHost, status) => void ends.push(status);
		});
		expect(envelope).toMatchObject({ status: "no-host", note: expect.stringContaining("nobody") });
		expect(ends).toEqual(["no-host"]);
		expect(vi.getTimerCount()).toBe(0);
	});

	it("says why it ended: its budget, its abort, an abort before it asked", async () => {
		const budget = await (async () => {
			const call = runCall(options({ budgetMs: 4_321 }), transport().start);
			await vi.advanceTimersByTimeAsync(4_321);
			return call;
		})();
		expect(budget).toMatchObject({ status: "timeout", note: expect.stringContaining("The call's budget of 4321 ms ran out"), waitedMs: 4_321 });
		const abort = new AbortController();
		const aborted = runCall(options({ signal: abort.signal }), transport().start);
		abort.abort();
		expect(await aborted).toMatchObject({ status: "cancelled", note: expect.stringContaining("The tool call was aborted.") });
		const before = await runCall(options({ signal: AbortSignal.abort() }), () => {
			throw new Error("a call aborted before it asks must not start");
		});
		expect(before).toMatchObject({ status: "cancelled", note: expect.stringContaining("aborted before it was asked"), waitedMs: 0 });
	});

	it("sends one request: its id, the asker, the questions, its deadline and a dialog time capped by the budget", async () => {
		vi.setSystemTime(1_000_000);
		const t = transport();
		void runCall(options({ budgetMs: 5_000, dialogTimeoutMs: 9_000 }), t.start);
		const { id, request } = t.control();
		expect(id).toMatch(/^[\w-]{21}$/);
		expect(request).toEqual({
			v: PROTOCOL_VERSION,
			id,
			asker: { label: "child", sessionId: "c" },
			questions: [expect.objectContaining({ question: "Name?" })],
			deadline: 1_005_000,
			dialogTimeoutMs: 5_000,
			createdAt: 1_000_000,
		});
		t.control().end("no-host");
	});

	it("marks a request sent again after its host restarted, and one asked with wait: false, as such; nothing else rides along", async () => {
		const marked = transport();
		void runCall(options({ resent: true, later: true }), marked.start);
		expect(marked.control().request).toMatchObject({ resent: true, later: true });
		marked.control().end("no-host");
		const plain = transport();
		void runCall(options({ resent: false }), plain.start);
		expect(Object.keys(plain.control().request)).not.toContain("resent");
		expect(Object.keys(plain.control().request)).not.toContain("later");
		plain.control().end("no-host");
	});

	it("refuses a reply that answers what was not asked, in error, and tells the host to drop the request", async () => {
		const t = transport();
		const call = runCall(options(), t.start);
		t.control().reply({
			v: PROTOCOL_VERSION,
			id: t.control().id,
			kind: "result",
			status: "ok",
			answers: [answer, { question: "Never asked?", answer: "x", kind: "text" }],
		});
		expect(await call).toMatchObject({
			status: "error",
			answers: [],
			note: expect.stringContaining('answer 2 answers "Never asked?", which this call did not ask'),
		});
		expect(t.ends).toEqual([{ cancelHost: true, status: "error" }]);
	});

	it("a transport's own ending does not tell the host to drop the request", async () => {
		const t = transport();
		const call = runCall(options(), t.start);
		t.control().end("no-host", "gone");
		await call;
		expect(t.ends).toEqual([{ cancelHost: false, status: "no-host" }]);
	});

	it("refuses invalid questions before asking, naming every problem", async () => {
		const envelope = await runCall(options({ questions: [{ question: "" }, { question: "Pick", options: ["a"] }] as never }), () => {
			throw new Error("an invalid call must not start");
		});
		expect(envelope).toMatchObject({ status: "error", asker: "child", waitedMs: 0 });
		expect(envelope.note).toMatch(/^Invalid parameters: questions\[0\].*; questions\[1\]/);
	});

	it("names what is wrong with a reply's answers without throwing on junk", () => {
		const questions = validateAskParams({ questions: [{ question: "Name?" }] });
		if (!questions.ok) throw new Error("valid");
		expect(replyAnswersProblem(questions.questions, { kind: "result", status: "ok", answers: "none" as never })).toBe("it carries no answers");
		expect(replyAnswersProblem(questions.questions, { kind: "progress", answers: [null as never] })).toMatch(/^answer 1 answers undefined/);
		expect(replyAnswersProblem(questions.questions, { kind: "result", status: "ok", answers: [] })).toBe("it is ok with 0 answers for 1 questions");
	});

	it("a progress listener that throws does not break the call", async () => {
		const t = transport();
		const call = runCall(
			options({
				onProgress: () => {
					throw new Error("listener failed");
				},
			}),
			t.start,
		);
		t.control().reply(progress(t.control().id, "queued"));
		t.control().reply({ v: PROTOCOL_VERSION, id: t.control().id, kind: "result", status: "ok", answers: [answer] });
		expect((await call).status).toBe("ok");
	});

	it("leaves no listener on the tool call's signal once it has settled", async () => {
		const t = transport();
		const abort = new AbortController();
		const call = runCall(options({ signal: abort.signal }), t.start);
		expect(getEventListeners(abort.signal, "abort")).toHaveLength(1);
		t.control().reply({ v: PROTOCOL_VERSION, id: t.control().id, kind: "result", status: "ok", answers: [answer] });
		await call;
		expect(getEventListeners(abort.signal, "abort")).toEqual([]);
	});
});

describe("at the deadline the host's clock decides (ADR-0019, issue 30 finding 4)", () => {
	it("a host that holds the request and answered at the deadline: its ok, sent on a later turn, is what the asker gets", async () => {
		const t = transport();
		const call = runCall(options({ budgetMs: 5_000 }), t.start);
		const { id } = t.control();
		t.control().reply(progress(id, "queued"));
		await vi.advanceTimersByTimeAsync(5_000);
		// The host took the human's answer 1 ms before the deadline; its result arrives just after it.
		await vi.advanceTimersByTimeAsync(8);
		t.control().reply({ v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [answer] });
		expect(await call).toMatchObject({ status: "ok", answers: [answer] });
		expect(t.ends).toEqual([{ cancelHost: false, status: "ok" }]);
	});

	it("the host's own timeout is what the asker reports, with the host's note; nothing is cancelled", async () => {
		const t = transport();
		const call = runCall(options({ budgetMs: 5_000 }), t.start);
		const { id } = t.control();
		t.control().reply(progress(id, "queued"));
		await vi.advanceTimersByTimeAsync(5_001);
		t.control().reply({ v: PROTOCOL_VERSION, id, kind: "result", status: "timeout", answers: [], note: "the host's" });
		expect(await call).toMatchObject({ status: "timeout", note: expect.stringContaining("the host's") });
		expect(t.ends).toEqual([{ cancelHost: false, status: "timeout" }]);
	});

	it(`a host whose verdict does not come within ${VERDICT_GRACE_MS} ms of the deadline: timeout, and the host is told`, async () => {
		const t = transport();
		const call = runCall(options({ budgetMs: 5_000 }), t.start);
		t.control().reply(progress(t.control().id, "shown"));
		await vi.advanceTimersByTimeAsync(5_000 + VERDICT_GRACE_MS - 1);
		expect(t.ends).toEqual([]);
		await vi.advanceTimersByTimeAsync(1);
		expect(await call).toMatchObject({ status: "timeout", note: expect.stringContaining("The call's budget of 5000 ms ran out") });
		expect(t.ends).toEqual([{ cancelHost: true, status: "timeout" }]);
		expect(vi.getTimerCount()).toBe(0);
	});

	it("a budget run out says the question stays open, late, at the host; not when late answers are off, nor for another extension's dialog", async () => {
		const noteOf = async (extra: Partial<CallOptions>, env: Record<string, string> = {}) => {
			for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
			try {
				const call = runCall(options({ budgetMs: 1_000, ...extra }), transport().start);
				await vi.advanceTimersByTimeAsync(1_000);
				return (await call).note;
			} finally {
				vi.unstubAllEnvs();
			}
		};
		const ranOut = "The call's budget of 1000 ms ran out before every question was answered.";
		const notes = [
			await noteOf({}),
			await noteOf({}, { CHECKPOINT_BRIDGE_LATE_ANSWERS: "0" }),
			await noteOf({ questions: [{ question: "Name?" }, { question: "Allow?", kind: "confirm", dialog: "confirm" }] }),
		];
		for (const note of notes) expect(note?.startsWith(ranOut)).toBe(true);
		expect(notes.map((note) => note?.includes(LATE_NOTE))).toEqual([true, false, false]);
	});

	it("no host has said it holds the request: timeout at the deadline itself", async () => {
		const t = transport();
		const call = runCall(options({ budgetMs: 5_000 }), t.start);
		await vi.advanceTimersByTimeAsync(5_000);
		expect(await call).toMatchObject({ status: "timeout" });
		expect(t.ends).toEqual([{ cancelHost: true, status: "timeout" }]);
	});
});
