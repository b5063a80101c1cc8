/**
 * What a session reads and keeps of an ended request (core/delivery/delivery.ts): the message's text per
 * kind of end, the record's flags, every asker text neutralised, and the route home's words and rules at
 * their edges. Fake timers; each test's own box.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
	createDeliveryBox,
	DELIVERED_ENTRY_TYPE,
	type Delivery,
	type DeliveryBox,
	deliveredIn,
} from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { homeText, wakesHost } from "../../../extensions/checkpoint-bridge/core/delivery/home.ts";
import { homeRoute } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { makeEnvelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { delivery, type Entry, fakeSession } from "../support/delivery-session.ts";

const json = (d: Delivery) => JSON.stringify(d.envelope);

let box: DeliveryBox;
beforeEach(() => {
	vi.useFakeTimers();
	box = createDeliveryBox({ hostSessionId: () => "host" });
});
afterEach(() => vi.useRealTimers());

describe("the text a session's model reads", () => {
	it("a late answer says it came late, after the call's budget ran out, with question or questions as asked", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		const one: Delivery = { ...delivery("r1", "s1"), late: true };
		const two: Delivery = { ...delivery("r2", "s1", "ok", ["Which database?", "Deploy where?"]), late: true };
		box.deliver(one);
		box.deliver(two);
		expect(session.texts()).toEqual([
			`checkpoint-bridge: the human answered your question (request r1) late, after the call's budget ran out. This is the answer; do not ask again: ${json(one)}`,
			`checkpoint-bridge: the human answered your questions (request r2) late, after the call's budget ran out. This is the answer; do not ask again: ${json(two)}`,
		]);
	});

	it("a late end that is no answer reads as any other end, never as an answer", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		const dismissed: Delivery = { ...delivery("r1", "s1", "timeout-or-cancelled"), late: true };
		box.deliver(dismissed);
		expect(session.texts()).toEqual([
			`checkpoint-bridge: your queued question (request r1) ended "timeout-or-cancelled" without every answer: ${json(dismissed)}`,
		]);
	});

	it("forwarded to the host's session, it quotes the first question and counts the others, or names none when none was asked", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		const asked = [[], ["Which database?"], ["Which database?", "Deploy where?"], ["Which database?", "Deploy where?", "Which region?"]];
		const ends = asked.map((questions, i) => delivery(`r${i}`, "gone-child", "ok", questions));
		for (const end of ends) box.deliver(end, { gone: true });
		const tail = (d: Delivery) => `(request ${d.requestId}) and ended before it came back; it ended "ok": ${json(d)}`;
		expect(hostSession.texts()).toEqual([
			`checkpoint-bridge: planner asked ${tail(ends[0]!)}`,
			`checkpoint-bridge: planner asked ("Which database?") ${tail(ends[1]!)}`,
			`checkpoint-bridge: planner asked ("Which database?" and 1 more question) ${tail(ends[2]!)}`,
			`checkpoint-bridge: planner asked ("Which database?" and 2 more questions) ${tail(ends[3]!)}`,
		]);
	});
});

describe("what a session keeps of a delivery", () => {
	it("the record says forwarded in the host's session and late for a late answer; the asker's own end and a wait's record carry neither", async () => {
		const hostSession = fakeSession();
		const session = fakeSession();
		box.attach("host", hostSession.poster());
		box.attach("s1", session.poster());
		box.deliver(delivery("fwd", "gone-child"), { gone: true });
		box.deliver(delivery("own", "s1"));
		box.deliver({ ...delivery("own", "s1"), late: true });
		const waited = box.waitFor("s1", ["waited"], 60_000);
		box.deliver(delivery("waited", "s1"));
		await waited;
		expect(hostSession.records()).toEqual([expect.objectContaining({ requestId: "fwd", forwarded: true })]);
		expect(hostSession.records()[0]).not.toHaveProperty("late");
		const records = session.records() as Record<string, unknown>[];
		expect(records.map((r) => [r.requestId, r.forwarded, r.late])).toEqual([
			["own", undefined, undefined],
			["own", undefined, true],
			["waited", undefined, undefined],
		]);
	});

	it("only a delivery record counts as delivered: a message, or another custom entry naming the request, does not", () => {
		const entries: Entry[] = [
			{ type: "custom_message", customType: DELIVERED_ENTRY_TYPE, data: { requestId: "message" } },
			{ type: "custom", customType: "checkpoint-bridge:answer", data: { requestId: "other-type" } },
			{ type: "custom", customType: DELIVERED_ENTRY_TYPE, data: { requestId: "recorded" } },
		];
		expect(deliveredIn(entries)).toEqual(new Set(["recorded"]));
	});

	it("a resumed session that recorded a request's late answer still takes the request's own end, and not the late answer again", () => {
		const first = fakeSession();
		box.attach("s1", first.poster());
		box.deliver({ ...delivery("r1", "s1"), late: true });
		expect(deliveredIn(first.entries)).toEqual(new Set(["r1:late"]));
		// A fresh process's poster delivering both into the resumed session.
		const resumed = fakeSession();
		resumed.entries.push(...first.entries);
		const poster = resumed.poster();
		expect(poster.post({ ...delivery("r1", "s1"), late: true })).toBe("already");
		expect(poster.post(delivery("r1", "s1", "timeout"))).toBe("posted");
		expect(resumed.messages.map((m) => m.message.details.envelope.status)).toEqual(["timeout"]);
	});

	it("every text of an answer is neutralised: its id, and its note and the envelope's with their line breaks kept", () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		const answer = { question: "Q?", answer: "yes", kind: "text" as const, id: "db\u001b[2J", note: "first line\nsecond\u0007 line" };
		box.deliver({
			...delivery("r1", "s1"),
			envelope: makeEnvelope("ok", [answer], "the human's note\nover two lines\u001b]8;;x\u0007", { requestId: "r1\u009b" }),
		});
		const { envelope } = session.messages[0]!.message.details;
		expect(envelope.answers[0]).toMatchObject({ id: "db", note: "first line\nsecond line" });
		expect(envelope.note).toBe("the human's note\nover two lines");
		expect(envelope.requestId).toBe("r1");
		// The record keeps the same neutralised envelope.
		expect((session.records()[0] as { envelope: unknown }).envelope).toEqual(envelope);
	});
});

describe("the route home at its edges", () => {
	it("says where each end goes in the words /checkpoints shows", () => {
		expect(homeText({ to: "asker" }, "planner")).toBe("goes to planner as a message");
		expect(homeText({ to: "asker-process" }, "pi -p run")).toBe("goes back to pi -p run, whose process is still connected");
		expect(homeText({ to: "host", wakes: true }, "x")).toBe("goes to this session (the asker is gone) and starts a turn of its model");
		expect(homeText({ to: "host", wakes: false }, "x")).toBe(
			"goes to this session (the asker is gone): recorded and shown here, without starting a turn of its model",
		);
	});

	it("the host's own question wakes its model whichever way it came, even marked as from another process or an MCP client", () => {
		expect(wakesHost({ asker: { sessionId: "host" }, origin: "local:1" }, "host")).toBe(true);
		expect(wakesHost({ asker: { sessionId: "host", kind: "mcp" } }, "host")).toBe(true);
		expect(wakesHost({ asker: { sessionId: "other" }, origin: "local:1" }, "host")).toBe(false);
	});

	it("where an end goes is decided by where it was asked from first: another process's goes back there, this process's never does", () => {
		box.attach("s1", fakeSession().poster());
		const route = homeRoute(() => "host", box);
		// Asked from another process, under an id a session here has: back to its process, or the host's session.
		expect(route.where({ asker: { sessionId: "s1" }, origin: "local:1" }, true)).toEqual({ to: "asker-process" });
		expect(route.where({ asker: { sessionId: "host" }, origin: "local:1" }, true)).toEqual({ to: "asker-process" });
		// Asked from this process by a session that is gone: the host's session, whatever a transport could carry.
		expect(route.where({ asker: { sessionId: "gone-child" } }, true)).toEqual({ to: "host", wakes: true });
	});

	it("an end its asker's process took goes nowhere else, even when the transport reports a failure after", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		homeRoute(() => "host", box).send(
			{ ...delivery("r1", "pid 7/run"), late: true },
			{ asker: { sessionId: "pid 7/run" }, origin: "local:1" },
			{
				sendBack: (taken) => {
					taken(true);
					taken(false);
				},
			},
		);
		vi.advanceTimersByTime(60_000);
		expect(hostSession.messages).toHaveLength(0);
	});
});
