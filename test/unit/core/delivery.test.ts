import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
	ANSWER_MESSAGE_TYPE,
	createDeliveryBox,
	DELIVERED_ENTRY_TYPE,
	type DeliveryBox,
	deliveredIn,
	deliveryBox,
	GONE_GRACE_MS,
	sessionPoster,
} from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { homeText, wakesHost } from "../../../extensions/checkpoint-bridge/core/delivery/home.ts";
import { homeRoute } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { makeEnvelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { sanitiseText, UNSAFE_CHARACTER } from "../../../extensions/checkpoint-bridge/model/sanitise.ts";
import { delivery, fakeSession } from "../support/delivery-session.ts";

/** Each test's own box, on fake timers, the host's session "host" until a test says otherwise. */
let host: string | undefined;
let box: DeliveryBox;
beforeEach(() => {
	vi.useFakeTimers();
	host = "host";
	box = createDeliveryBox({ hostSessionId: () => host });
});
afterEach(() => vi.useRealTimers());

describe("delivery of an ended request as one message", () => {
	it("an answer is one message of the project's type that starts a turn when idle and waits for the turn's end when busy, recorded first", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		box.deliver(delivery("r1", "s1"));
		expect(session.messages).toHaveLength(1);
		const { message, options } = session.messages[0]!;
		expect(message.customType).toBe(ANSWER_MESSAGE_TYPE);
		expect(message.details).toMatchObject({
			v: 1,
			requestId: "r1",
			envelope: { status: "ok", requestId: "r1" },
			asker: "planner",
			questions: ["Which database?"],
		});
		expect(message.details.forwarded).toBeUndefined();
		expect(message.content).toContain("do not ask again");
		expect(options).toEqual({ triggerTurn: true, deliverAs: "followUp" });
		// The record comes before the message.
		expect(session.entries[0]).toMatchObject({ type: "custom", customType: DELIVERED_ENTRY_TYPE, data: { requestId: "r1", status: "ok" } });
	});

	it("an answer to a queued question says queued; to a question reopened after a restart, that it was asked before the restart", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		box.deliver(delivery("r1", "s1"));
		box.deliver({ ...delivery("r2", "s1"), reopened: true });
		box.deliver({ ...delivery("r3", "s1", "timeout-or-cancelled"), questions: ["Which database?", "Deploy where?"], reopened: true });
		// The text before the envelope's JSON.
		expect(session.messages.map(({ message }) => message.content.slice(0, message.content.indexOf(": {")))).toEqual([
			"checkpoint-bridge: the human answered your queued question (request r1). This is the answer; do not ask again",
			"checkpoint-bridge: the human answered the question you asked before the restart (request r2). This is the answer; do not ask again",
			'checkpoint-bridge: the questions you asked before the restart (request r3) ended "timeout-or-cancelled" without every answer',
		]);
	});

	it("a dismissal, timeout or no-host joins the session without waking it", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		for (const [i, status] of (["timeout-or-cancelled", "timeout", "no-host"] as const).entries()) box.deliver(delivery(`r${i}`, "s1", status));
		expect(session.messages.map((m) => m.options)).toEqual([{ triggerTurn: false }, { triggerTurn: false }, { triggerTurn: false }]);
	});

	it("two copies of the extension in one session deliver it once", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		box.attach("s1", session.poster());
		box.deliver(delivery("r1", "s1"));
		box.deliver(delivery("r1", "s1"));
		expect(session.messages).toHaveLength(1);
	});

	it("two copies, each with its own box on the same process key, deliver it once", () => {
		const target = {};
		const first = deliveryBox(() => "host", target);
		expect(deliveryBox(() => "other", target)).toBe(first);
	});

	it("the process's box finds the host's session the way the latest copy to reach it does, not only the copy that made it", () => {
		const target = {};
		deliveryBox(() => undefined, target);
		const box = deliveryBox(() => "host", target);
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		box.deliver(delivery("r1", "child"), { gone: true });
		expect(hostSession.messages).toHaveLength(1);
		expect(hostSession.messages[0]!.message.details.forwarded).toBe(true);
	});

	it("across /reload: the session detaches and attaches again within the grace, and gets it once", () => {
		const before = fakeSession();
		const detach = box.attach("s1", before.poster());
		detach();
		box.deliver(delivery("r1", "s1"));
		vi.advanceTimersByTime(GONE_GRACE_MS / 2);
		const after = fakeSession();
		after.entries.push(...before.entries);
		box.attach("s1", after.poster());
		expect(after.messages).toHaveLength(1);
		vi.advanceTimersByTime(GONE_GRACE_MS * 2);
		expect(after.messages).toHaveLength(1);
	});

	it("a resumed session whose entries record the delivery never gets it again", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		box.deliver(delivery("r1", "s1"));
		// A fresh process (another box) re-delivering the same request into the resumed session.
		const again = createDeliveryBox({ hostSessionId: () => "host" });
		const resumed = { entries: [...session.entries], messages: [] as unknown[] };
		const poster = sessionPoster({ sendMessage: (m) => resumed.messages.push(m), appendEntry: () => {} }, () => resumed.entries);
		again.attach("s1", poster);
		again.deliver(delivery("r1", "s1"));
		expect(resumed.messages).toHaveLength(0);
		expect([...deliveredIn(session.entries)]).toEqual(["r1"]);
	});

	it("an asker that is gone: after the grace the host's session gets a message naming the asker and the question", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		box.attach("child", fakeSession().poster())();
		box.deliver(delivery("r1", "child"));
		expect(hostSession.messages).toHaveLength(0);
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(hostSession.messages).toHaveLength(1);
		const { message } = hostSession.messages[0]!;
		expect(message.details.forwarded).toBe(true);
		expect(message.content).toContain('planner asked ("Which database?")');
	});

	it("with no host session either, it is held until one attaches, bounded, the oldest dropped", () => {
		host = undefined;
		const small = createDeliveryBox({ hostSessionId: () => host, maxUnsent: 2 });
		for (const id of ["r1", "r2", "r3"]) small.deliver(delivery(id, "gone"));
		vi.advanceTimersByTime(GONE_GRACE_MS);
		host = "host";
		const hostSession = fakeSession();
		small.attach("host", hostSession.poster());
		expect(hostSession.messages.map((m) => m.message.details.requestId)).toEqual(["r2", "r3"]);
	});

	it("a wait takes the envelopes instead of a message, and ends at its budget listing what is still open", async () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		for (const id of ["r1", "r2"]) box.expect({ requestId: id, askerSessionId: "s1", asker: "planner", questions: ["Q?"], queuedAt: 0 });
		expect(box.open("s1").map((a) => a.requestId)).toEqual(["r1", "r2"]);
		const waited = box.waitFor("s1", ["r1", "r2"], 5_000);
		box.deliver(delivery("r1", "s1"));
		vi.advanceTimersByTime(5_000);
		const result = await waited;
		expect(result.ended.map((d) => d.requestId)).toEqual(["r1"]);
		expect(result.open).toEqual(["r2"]);
		// Taken by the wait: recorded, not sent as a message.
		expect(session.messages).toHaveLength(0);
		expect(deliveredIn(session.entries).has("r1")).toBe(true);
		expect(box.open("s1").map((a) => a.requestId)).toEqual(["r2"]);
		// After the wait, r2 comes as a message.
		box.deliver(delivery("r2", "s1"));
		expect(session.messages).toHaveLength(1);
	});

	it("two waits on one id: the first ending (its budget, an abort) leaves the other waiting for it", async () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		box.expect({ requestId: "r1", askerSessionId: "s1", asker: "planner", questions: ["Q?"], queuedAt: 0 });
		const aborted = new AbortController();
		const first = box.waitFor("s1", ["r1"], 60_000, aborted.signal);
		const second = box.waitFor("s1", ["r1"], 60_000);
		aborted.abort();
		await expect(first).resolves.toMatchObject({ ended: [], open: ["r1"] });
		box.deliver(delivery("r1", "s1"));
		vi.advanceTimersByTime(60_000);
		expect(await second).toMatchObject({ ended: [{ requestId: "r1" }], open: [] });
		expect(session.messages).toHaveLength(0);
	});

	it("a wait whose call was cancelled before it began ends at once, its ids still open and still delivered as messages", async () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		box.expect({ requestId: "r1", askerSessionId: "s1", asker: "planner", questions: ["Q?"], queuedAt: 0 });
		await expect(box.waitFor("s1", ["r1"], 60_000, AbortSignal.abort())).resolves.toMatchObject({ ended: [], open: ["r1"] });
		expect(vi.getTimerCount()).toBe(0);
		box.deliver(delivery("r1", "s1"));
		expect(session.messages).toHaveLength(1);
	});

	it("a wait ends as soon as every id ended", async () => {
		box.attach("s1", fakeSession().poster());
		const waited = box.waitFor("s1", ["r1"], 60_000);
		box.deliver(delivery("r1", "s1", "timeout"));
		await expect(waited).resolves.toMatchObject({ ended: [{ requestId: "r1" }], open: [] });
	});
});

describe("the route home (ADR-0025): one place decides where an end goes", () => {
	it("an asker of another process that is gone: the host's session records it and shows it; a turn of its model starts only for its own sub-agent", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		const route = homeRoute(() => host, box);
		route.send(delivery("pi-p", "pid 7/run"), { asker: { sessionId: "pid 7/run" }, origin: "local:1" }, { gone: true });
		route.send(delivery("mcp", "pid 8/mcp-x"), { asker: { sessionId: "pid 8/mcp-x", kind: "mcp" }, origin: "local:2" }, { gone: true });
		route.send(delivery("agent", "pid 9/child"), { asker: { sessionId: "pid 9/child", kind: "agent" }, origin: "local:3" }, { gone: true });
		route.send(delivery("own", "host"), { asker: { sessionId: "host" } });
		const options = Object.fromEntries(hostSession.messages.map((m) => [m.message.details.requestId, m.options]));
		const quiet = { triggerTurn: false };
		const wakes = { triggerTurn: true, deliverAs: "followUp" };
		expect(options).toEqual({ "pi-p": quiet, mcp: quiet, agent: wakes, own: wakes });
		// Recorded and shown, every one of them.
		expect(hostSession.messages.every((m) => m.message.display)).toBe(true);
		expect(deliveredIn(hostSession.entries)).toEqual(new Set(["pi-p", "mcp", "agent", "own"]));
	});

	it("an MCP client's late answer never starts a turn of the host's model, whichever way it reaches the host's session", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		const route = homeRoute(() => host, box);
		const mcp = { asker: { sessionId: "pid 8/mcp-x", kind: "mcp" as const }, origin: "local:2" };
		// Its transport could not carry it back (the client takes no late frames, or its process went).
		route.send({ ...delivery("carried", "pid 8/mcp-x"), late: true }, mcp, { sendBack: (taken) => taken(false) });
		route.send({ ...delivery("no-way", "pid 8/mcp-x"), late: true }, mcp);
		expect(hostSession.messages.map((m) => m.options)).toEqual([{ triggerTurn: false }, { triggerTurn: false }]);
		expect(route.where(mcp, false)).toEqual({ to: "host", wakes: false });
		expect(homeText(route.where(mcp, false), "claude-code")).toMatch(/recorded and shown here, without starting a turn/);
	});

	it("where an end goes: its session in this process, its process while a transport carries it back, else the host's session", () => {
		box.attach("child", fakeSession().poster());
		const route = homeRoute(() => host, box);
		expect(route.where({ asker: { sessionId: "child" } }, false)).toEqual({ to: "asker" });
		expect(route.where({ asker: { sessionId: "host" } }, false)).toEqual({ to: "asker" });
		expect(route.where({ asker: { sessionId: "pid 7/run" }, origin: "local:1" }, true)).toEqual({ to: "asker-process" });
		expect(route.where({ asker: { sessionId: "pid 7/run" }, origin: "local:1" }, false)).toEqual({ to: "host", wakes: false });
		// A foreground child that finished: its own sub-agent, so the host's model is woken.
		expect(route.where({ asker: { sessionId: "gone-child" } }, false)).toEqual({ to: "host", wakes: true });
		expect(wakesHost({ asker: { sessionId: "x", kind: "mcp" } }, "host")).toBe(false);
	});

	it("a carried end taken by the asker's process goes nowhere else; one it could not take goes to the host's session, once", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		const route = homeRoute(() => host, box);
		const asker = { asker: { sessionId: "pid 7/run" }, origin: "local:1" };
		route.send({ ...delivery("taken", "pid 7/run"), late: true }, asker, { sendBack: (taken) => taken(true) });
		route.send({ ...delivery("refused", "pid 7/run"), late: true }, asker, {
			sendBack: (taken) => {
				taken(false);
				taken(false);
			},
		});
		expect(hostSession.messages.map((m) => m.message.details.requestId)).toEqual(["refused"]);
	});

	it("raw escapes never reach a session: content and details are neutralised, a forwarded message's too", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		const raw = "Deploy\u001b]8;;http://x\u0007 now\u001b[2J\u0007\u202e\u009b?";
		const answer = { question: raw, answer: `yes${raw}`, kind: "text" as const, note: `n${raw}`, values: [raw] };
		homeRoute(() => host, box).send(
			{
				requestId: "r",
				askerSessionId: "pid 7/run",
				asker: `asker${raw}`,
				questions: [raw],
				queuedAt: 0,
				late: true,
				envelope: makeEnvelope("ok", [answer], `note${raw}`, { requestId: "r", asker: `asker${raw}` }),
			},
			{ asker: { sessionId: "pid 7/run" }, origin: "nats:inbox" },
			{ gone: true },
		);
		const { message } = hostSession.messages[0]!;
		expect(message.content).not.toMatch(UNSAFE_CHARACTER);
		expect(message.content).not.toContain("\u001b");
		expect(JSON.stringify(message.details)).not.toMatch(/\\u001b|\\u0007/);
		expect(JSON.stringify(message.details)).not.toMatch(UNSAFE_CHARACTER);
		expect(message.details.envelope.answers[0]!.answer).toBe(`yes${sanitiseText(raw)}`);
	});
});
