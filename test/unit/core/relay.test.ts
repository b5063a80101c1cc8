import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION, type RelayReply, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { type Envelope, NEEDS_INPUT_ADVICE } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { MAX_REFUSALS } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { flush, HOST_SESSION, relay } from "../support/relay.ts";

const choice = { question: "Which naming convention?", options: ["camelCase", "snake_case"] };
const text = { question: "Project name?", placeholder: "e.g. atlas" };

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Resolves-or-not probe: the envelope when the call has settled, else undefined. */
function track(call: Promise<Envelope>) {
	const state: { envelope?: Envelope } = {};
	void call.then((envelope) => {
		state.envelope = envelope;
	});
	return state;
}

describe("ok: the user answers every question", () => {
	it("relays a batch, one dialog after another, titled with who asks and where the question stands", async () => {
		const { fake, ask } = relay({ respond: (d) => queueMicrotask(() => d.answer(d.method === "select" ? "snake_case" : "atlas")) });
		const envelope = await ask([choice, text], { label: "subagent-planner" });
		expect(envelope.status).toBe("ok");
		expect(envelope.answers).toEqual([
			{ question: choice.question, answer: "snake_case", kind: "option", source: "dialog" },
			{ question: text.question, answer: "atlas", kind: "text", source: "dialog" },
		]);
		expect(envelope.note).toBeUndefined();
		expect(envelope.asker).toBe("subagent-planner");
		expect(envelope.requestId).toMatch(/^[\w-]{21}$/);
		expect(fake.dialogs.map((d) => [d.method, d.title])).toEqual([
			["select", "[subagent-planner] (1/2) Which naming convention?"],
			["input", "[subagent-planner] (2/2) Project name?"],
		]);
		expect(fake.dialogs[0]?.options).toEqual([...choice.options, "Other (type your own)"]);
		expect(fake.dialogs[1]?.placeholder).toBe("e.g. atlas");
		expect(fake.maxOpen).toBe(1);
	});

	it("titles a single question without a position", async () => {
		const { fake, ask } = relay({ respond: (d) => d.answer("camelCase") });
		await ask([choice], { label: "reviewer" });
		expect(fake.dialogs[0]?.title).toBe("[reviewer] Which naming convention?");
	});

	it("sends the host a one-line receipt for a relayed batch, and none for the host's own questions", async () => {
		const { fake, ask } = relay({ respond: (d) => d.answer("x") });
		await ask([text, text], { label: "planner" });
		await ask([text], { label: "main", sessionId: HOST_SESSION });
		expect(fake.notices).toEqual([{ message: "checkpoint-bridge: [planner] asks 2 questions", type: "info" }]);
	});

	it("reports queued, shown and answered progress to the asker", async () => {
		const { ask } = relay({ respond: (d) => d.answer("x") });
		const stages: string[] = [];
		await ask([text, text], { onProgress: (p) => stages.push(`${p.stage}${p.position ?? p.question ?? ""}`) });
		expect(stages).toEqual(["queued1", "shown0", "answered0", "shown1", "answered1"]);
	});
});

describe("one dialog at a time", () => {
	it("serves concurrent askers in arrival order, never two dialogs open, each answer to its asker", async () => {
		const { fake, ask } = relay();
		// Distinct questions per asker: identical ones would be shown once (see dedupe.test.ts).
		const calls = ["a", "b", "c"].map((label) => ask([{ question: `${label}: name?` }, { ...choice, question: `${label}: naming?` }], { label }));
		for (let served = 0; served < 6; served++) {
			await flush(vi);
			expect(fake.open).toHaveLength(1);
			const dialog = fake.current()!;
			// The answer names the asker, so a misrouted answer shows up in the envelopes.
			const label = /^\[(\w)\]/.exec(dialog.title)![1]!;
			dialog.answer(dialog.method === "select" ? "camelCase" : `name for ${label}`);
		}
		const envelopes = await Promise.all(calls);
		expect(fake.maxOpen).toBe(1);
		expect(fake.dialogs.map((d) => d.title.slice(0, 8))).toEqual(["[a] (1/2", "[a] (2/2", "[b] (1/2", "[b] (2/2", "[c] (1/2", "[c] (2/2"]);
		envelopes.forEach((envelope, i) => {
			expect(envelope.status).toBe("ok");
			expect(envelope.answers[0]?.answer).toBe(`name for ${"abc"[i]}`);
		});
	});

	it("sends the host's own model through the same queue", async () => {
		const { fake, ask } = relay();
		const child = track(ask([text], { label: "child" }));
		const own = track(ask([{ question: "Release now?" }], { label: "main", sessionId: HOST_SESSION }));
		await flush(vi);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[child] Project name?"]);
		fake.current()!.answer("one");
		await flush(vi);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[child] Project name?", "[main] Release now?"]);
		fake.current()!.answer("two");
		await flush(vi);
		expect([child.envelope?.answers[0]?.answer, own.envelope?.answers[0]?.answer]).toEqual(["one", "two"]);
	});
});

describe("timeout-or-cancelled: a dialog dismissed or timed out", () => {
	it("stops at a dismissed dialog and keeps the answers so far", async () => {
		const { fake, ask } = relay({ respond: (d) => d.answer(d.method === "select" ? "camelCase" : undefined) });
		const envelope = await ask([choice, text, text]);
		expect(envelope.status).toBe("timeout-or-cancelled");
		expect(envelope.answers).toMatchObject([{ question: choice.question, answer: "camelCase" }]);
		expect(envelope.note).toContain(NEEDS_INPUT_ADVICE);
		expect(fake.dialogs).toHaveLength(2);
	});

	it("closes a dialog after the per-question timeout", async () => {
		const { fake, ask } = relay();
		const call = track(ask([text], { dialogTimeoutMs: 180_000 }));
		await flush(vi);
		expect(fake.dialogs[0]?.timeout).toBe(180_000);
		await vi.advanceTimersByTimeAsync(179_999);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(call.envelope?.status).toBe("timeout-or-cancelled");
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
	});

	it("never gives a dialog more than what is left of the call's budget, queue wait included", async () => {
		const { fake, ask } = relay();
		void ask([{ question: "First?" }], { label: "first" });
		const second = track(ask([text], { label: "second", budgetMs: 60_000 }));
		await vi.advanceTimersByTimeAsync(40_000);
		fake.current()!.answer("done");
		await flush(vi);
		expect(fake.current()?.title).toBe("[second] Project name?");
		expect(fake.current()?.timeout).toBe(20_000);
		await vi.advanceTimersByTimeAsync(20_000);
		expect(second.envelope?.status).toBe("timeout");
		expect(fake.dialogs[1]?.closedBy).toBe("signal");
	});
});

describe("timeout: the call's budget expires", () => {
	it("settles at the budget and dismisses its open dialog at once", async () => {
		const { fake, ask, role } = relay();
		const call = track(ask([text], { budgetMs: 5_000 }));
		await vi.advanceTimersByTimeAsync(4_999);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(call.envelope?.status).toBe("timeout");
		expect(call.envelope?.note).toContain(NEEDS_INPUT_ADVICE);
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(role.host.snapshot().open.length).toBe(0);
	});

	it("drops questions of a timed-out call from the queue without showing them", async () => {
		const { fake, ask } = relay();
		void ask([text], { label: "holder" });
		const queued = track(ask([text], { label: "queued", budgetMs: 5_000 }));
		await vi.advanceTimersByTimeAsync(5_000);
		expect(queued.envelope?.status).toBe("timeout");
		fake.current()!.answer("x");
		await flush(vi);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[holder] Project name?"]);
	});

	it("keeps answers given before the budget ran out", async () => {
		const { fake, ask } = relay();
		const call = track(ask([text, text], { budgetMs: 5_000 }));
		await flush(vi);
		fake.current()!.answer("first");
		await vi.advanceTimersByTimeAsync(5_000);
		expect(call.envelope?.status).toBe("timeout");
		expect(call.envelope?.answers).toMatchObject([{ question: text.question, answer: "first" }]);
	});

	it("moves on when the UI ignores the signal: the queue is not held by a dialog that never resolves", async () => {
		const { fake, ask } = relay({ ignoreSignal: true });
		const stuck = track(ask([text], { label: "stuck", budgetMs: 2_000 }));
		const next = track(ask([text], { label: "next" }));
		await vi.advanceTimersByTimeAsync(2_000);
		expect(stuck.envelope?.status).toBe("timeout");
		expect(fake.dialogs.at(-1)?.title).toBe("[next] Project name?");
		fake.dialogs.at(-1)!.answer("served");
		await flush(vi);
		expect(next.envelope?.answers[0]?.answer).toBe("served");
	});
});

describe("cancelled: the tool call is aborted", () => {
	it("settles as cancelled and dismisses the open dialog", async () => {
		const { fake, ask, role } = relay();
		const abort = new AbortController();
		const call = track(ask([text], { signal: abort.signal }));
		await flush(vi);
		abort.abort();
		await flush(vi);
		expect(call.envelope?.status).toBe("cancelled");
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(role.host.snapshot().open.length).toBe(0);
	});

	it("shows nothing for a call aborted before it asks", async () => {
		const { fake, ask } = relay();
		const envelope = await ask([text], { signal: AbortSignal.abort() });
		expect(envelope.status).toBe("cancelled");
		expect(fake.dialogs).toHaveLength(0);
	});

	it("drops an aborted call's queued questions and serves the next asker", async () => {
		const { fake, ask } = relay();
		const abort = new AbortController();
		void ask([{ question: "One?" }], { label: "first" });
		const dropped = track(ask([{ question: "Two?" }], { label: "dropped", signal: abort.signal }));
		void ask([{ question: "Three?" }], { label: "third" });
		await flush(vi);
		abort.abort();
		fake.current()!.answer("x");
		await flush(vi);
		expect(dropped.envelope?.status).toBe("cancelled");
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[first] One?", "[third] Three?"]);
	});
});

describe("no-host", () => {
	it("returns at once when nobody holds the host role", async () => {
		const handle = createHandle();
		const envelope = await askViaHost({ handle, asker: { label: "c", sessionId: "c" }, questions: [text], budgetMs: 300_000, dialogTimeoutMs: 1 });
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toContain("No session with a UI holds the host role");
		expect(envelope.note).toContain(NEEDS_INPUT_ADVICE);
		expect(handle.bus.eventNames()).toEqual([]);
		// Claimed, but nothing listens for questions: no-host as well, saying so.
		handle.claimHost({ sessionId: "silent", protocol: PROTOCOL_VERSION });
		const silent = await askViaHost({ handle, asker: { label: "c", sessionId: "c" }, questions: [text], budgetMs: 300_000, dialogTimeoutMs: 1 });
		expect(silent).toMatchObject({ status: "no-host", note: expect.stringContaining("nothing is listening for questions") });
		expect(vi.getTimerCount()).toBe(0);
	});

	it("settles the open and the queued requests with no-host when the host session ends", async () => {
		const { fake, ask, role } = relay();
		const open = track(ask([text], { label: "open" }));
		const queued = track(ask([text], { label: "queued" }));
		await flush(vi);
		role.release("quit", "The host session ended (quit).");
		await flush(vi);
		for (const call of [open, queued]) {
			expect(call.envelope?.status).toBe("no-host");
			expect(call.envelope?.note).toContain("host session ended");
		}
		expect(fake.dialogs.map((d) => [d.title, d.closedBy])).toEqual([["[open] Project name?", "signal"]]);
		expect(await ask([text])).toMatchObject({ status: "no-host" });
	});
});

describe("error: the host dialog fails", () => {
	it("gives error for the failing call and goes on with the queue", async () => {
		const { fake, ask } = relay();
		const failing = track(ask([text], { label: "failing" }));
		const next = track(ask([text], { label: "next" }));
		await flush(vi);
		fake.current()!.fail(new Error("terminal went away"));
		await flush(vi);
		expect(failing.envelope?.status).toBe("error");
		expect(failing.envelope?.note).toContain("terminal went away");
		fake.current()!.answer("fine");
		await flush(vi);
		expect(next.envelope).toMatchObject({ status: "ok", answers: [{ answer: "fine" }] });
	});

	it("treats a UI that returns something other than text as an error", async () => {
		const { ask } = relay({ respond: (d) => d.answer(42 as unknown as string) });
		const envelope = await ask([choice]);
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain("number");
	});

	it("names both versions when the host speaks another protocol", async () => {
		const handle = createHandle();
		expect(handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION + 1 })?.seal).toBeTypeOf("function");
		const envelope = await askViaHost({ handle, asker: { label: "c", sessionId: "c" }, questions: [text], budgetMs: 1_000, dialogTimeoutMs: 1_000 });
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain(`v${PROTOCOL_VERSION + 1}`);
		expect(envelope.note).toContain(`v${PROTOCOL_VERSION}`);
	});

	/** A request as an asker of protocol version `v` sends it. */
	const requestIn = (v: unknown, id: string) => ({
		v: v as never,
		id,
		asker: { label: "x", sessionId: "x" },
		questions: [text],
		deadline: Date.now() + 1_000,
		dialogTimeoutMs: 1_000,
		createdAt: Date.now(),
	});

	it("answers a request in another protocol version with an error naming both", async () => {
		const { handle } = relay();
		const replies: RelayReply[] = [];
		handle.bus.on(replyChannel("r1"), (r) => replies.push(r));
		handle.bus.emit("request", requestIn(99, "r1"));
		expect(replies).toMatchObject([{ kind: "result", status: "error" }]);
		expect((replies[0] as { note: string }).note).toMatch(/v99.*v1/);
	});

	it("answers a request whose version String() cannot turn into text with that error too, never throwing", async () => {
		const { handle } = relay();
		const replies: RelayReply[] = [];
		handle.bus.on(replyChannel("r2"), (r) => replies.push(r));
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		for (const v of [{ toString: 1 }, cyclic]) handle.bus.emit("request", requestIn(v, "r2"));
		expect(replies.map((r) => (r as { note: string }).note)).toEqual([
			expect.stringContaining('protocol v{"toString":1}; the host speaks v1'),
			expect.stringContaining("protocol v[object Object]; the host speaks v1"),
		]);
	});
});

describe("answer integrity", () => {
	it("refuses a select answer that was not offered, tells the human why, and asks again", async () => {
		const { fake, ask } = relay();
		const call = track(ask([choice]));
		await flush(vi);
		fake.current()!.answer("kebab-case");
		await flush(vi);
		expect(fake.notices.at(-1)).toEqual({ message: expect.stringContaining('"kebab-case" is not one of the offered options'), type: "warning" });
		expect(call.envelope).toBeUndefined();
		expect(fake.dialogs).toHaveLength(2);
		expect(fake.dialogs[1]?.title).toBe(fake.dialogs[0]?.title);
		fake.current()!.answer("snake_case");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "snake_case" }] });
	});

	it("ignores a well-formed reply that the host did not send: only the host role can answer", async () => {
		const { handle, fake, ask } = relay();
		const call = track(ask([choice], { label: "victim" }));
		await flush(vi);
		const requestId = handle.snapshot()!.open[0]!.requestId;
		// Code that learned the id (observers see it) forges a result on the asker's reply channel.
		handle.bus.emit(replyChannel(requestId), {
			v: PROTOCOL_VERSION,
			id: requestId,
			kind: "result",
			status: "ok",
			answers: [{ question: choice.question, answer: "forged", kind: "option" }],
		});
		await flush(vi);
		expect(call.envelope).toBeUndefined();
		fake.current()!.answer("camelCase");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "camelCase" }] });
	});

	it("ignores a sealed reply that is not a well-formed reply to its request: another version or id, no answers, an unknown stage or status", async () => {
		// A host from a faulty copy: it holds the role (and so the seal) but writes malformed replies.
		const handle = createHandle();
		const { seal } = handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION })!;
		const stages: string[] = [];
		let id = "";
		handle.bus.on("request", (request) => (id = request.id));
		const call = track(
			askViaHost({
				handle,
				asker: { label: "c", sessionId: "c" },
				questions: [text],
				budgetMs: 10_000,
				dialogTimeoutMs: 10_000,
				onProgress: (p) => stages.push(p.stage),
			}),
		);
		const answers = [{ question: text.question, answer: "bad", kind: "text" as const }];
		const send = (reply: Record<string, unknown>) => handle.bus.emit(replyChannel(id), seal(reply as unknown as RelayReply));
		send({ v: PROTOCOL_VERSION + 1, id, kind: "result", status: "ok", answers });
		send({ v: PROTOCOL_VERSION, id: `${id}x`, kind: "result", status: "ok", answers });
		send({ v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: "all of them" });
		send({ v: PROTOCOL_VERSION, id, kind: "result", status: "fine", answers });
		send({ v: PROTOCOL_VERSION, id, kind: "verdict", status: "ok", answers });
		send({ v: PROTOCOL_VERSION, id, kind: "progress", stage: "pondering", answers: [] });
		for (const stage of ["queued", "shown", "answered"]) send({ v: PROTOCOL_VERSION, id, kind: "progress", stage, answers: [] });
		await flush(vi);
		expect(call.envelope).toBeUndefined();
		expect(stages).toEqual(["queued", "shown", "answered"]);
		send({ v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [{ question: text.question, answer: "good", kind: "text" }] });
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "good" }] });
		expect(handle.bus.listenerCount(replyChannel(id))).toBe(0);
	});

	it("gives error, not an endless loop, when the UI keeps answering instantly with values not offered", async () => {
		const { fake, ask } = relay({ respond: (d) => d.answer("never offered") });
		const envelope = await ask([choice]);
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain(`${MAX_REFUSALS} answers in a row that were not offered`);
		expect(fake.dialogs).toHaveLength(MAX_REFUSALS);
	});

	it("asks again only within the remaining budget", async () => {
		const { fake, ask } = relay({ respond: (d) => setTimeout(() => d.answer("not offered"), 1_000) });
		const call = track(ask([choice], { budgetMs: 3_500 }));
		await vi.advanceTimersByTimeAsync(3_500);
		expect(call.envelope?.status).toBe("timeout");
		expect(call.envelope?.answers).toEqual([]);
		expect(fake.dialogs.length).toBe(4);
	});
});

describe("every call settles exactly once and leaves nothing behind", () => {
	it("cleans listeners, timers and held requests for every way a call ends", async () => {
		// What would double if a call could settle twice: results sent per request id, cancels sent per
		// request id, audit entries, and progress passed to the asker after its envelope.
		const audit: string[] = [];
		const { handle, fake, ask, role } = relay({}, { onSettled: (record) => audit.push(record.requestId) });
		const results = new Map<string, number>();
		const cancels = new Map<string, number>();
		const bump = (counts: Map<string, number>, id: string) => counts.set(id, (counts.get(id) ?? 0) + 1);
		handle.bus.on(OBSERVER_EVENTS.queued, ({ requestId }) =>
			handle.bus.on(replyChannel(requestId), (reply) => reply.kind === "result" && bump(results, requestId)),
		);
		handle.bus.on("cancel", (cancel) => bump(cancels, cancel.id));
		const baseline = { timers: vi.getTimerCount() };
		const abort = new AbortController();
		const late: string[] = [];
		const calls = ["ok", "dismissed", "aborted", "budget"].map((label) => {
			const call = track(
				ask([{ question: `${label}?` }], {
					label,
					onProgress: (p) => call.envelope && late.push(`${label}: ${p.stage}`),
					...(label === "aborted" ? { signal: abort.signal } : {}),
					...(label === "budget" ? { budgetMs: 10_000 } : {}),
				}),
			);
			return call;
		});
		await flush(vi);
		fake.current()!.answer("yes");
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		abort.abort();
		await vi.advanceTimersByTimeAsync(10_000);
		// Late arrivals that must change nothing: a second abort, the host quitting.
		abort.abort();
		role.release("quit", "done");
		await vi.advanceTimersByTimeAsync(10_000);
		expect(calls.map((c) => c.envelope?.status)).toEqual(["ok", "timeout-or-cancelled", "cancelled", "timeout"]);
		const ids = calls.map((c) => c.envelope!.requestId!);
		// A cancelled request gets no result (nobody listens); the aborted asker tells the host once. At the budget the
		// host's own clock settles the request and its verdict ends the call (ADR-0019): no cancel is needed.
		expect(ids.map((id) => results.get(id) ?? 0)).toEqual([1, 1, 0, 1]);
		expect(ids.map((id) => cancels.get(id) ?? 0)).toEqual([0, 0, 1, 0]);
		expect(audit).toEqual(ids);
		expect(late).toEqual([]);
		// Only this test's own counter still listens on each reply channel: the askers' listeners are gone.
		for (const id of ids) expect(handle.bus.listenerCount(replyChannel(id)), `listeners for ${id}`).toBe(1);
		expect(vi.getTimerCount()).toBe(baseline.timers);
		expect(role.host.snapshot().open.length).toBe(0);
		expect(role.host.queued(0).queuedCount).toBe(0);
		expect(fake.open).toHaveLength(0);
	});
});
