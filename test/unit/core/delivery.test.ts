import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
	ANSWER_MESSAGE_TYPE,
	createDeliveryBox,
	DELIVERED_ENTRY_TYPE,
	type Delivery,
	type DeliveryBox,
	deliveredIn,
	deliveryBox,
	GONE_GRACE_MS,
	type MessageApi,
	sessionPoster,
} from "../../../extensions/checkpoint-bridge/core/delivery.ts";
import { makeEnvelope, type Status } from "../../../extensions/checkpoint-bridge/model/result.ts";

/** A session as pi keeps it: entries appended, messages sent, both in order. */
function fakeSession() {
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	const messages: { message: Parameters<MessageApi["sendMessage"]>[0]; options: Parameters<MessageApi["sendMessage"]>[1] }[] = [];
	const pi: MessageApi = {
		sendMessage: (message, options) => {
			messages.push({ message, options });
			entries.push({ type: "custom_message", customType: message.customType, data: message.details });
		},
		appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }),
	};
	return { entries, messages, poster: () => sessionPoster(pi, () => entries) };
}

const delivery = (requestId: string, askerSessionId: string, status: Status = "ok"): Delivery => ({
	requestId,
	askerSessionId,
	asker: askerSessionId === "host" ? "main" : "planner",
	questions: ["Which database?"],
	queuedAt: 0,
	envelope: makeEnvelope(status, [], status === "ok" ? undefined : "ended", { requestId }),
});

describe("delivery of an ended request as one message", () => {
	let host: string | undefined;
	let box: DeliveryBox;
	beforeEach(() => {
		vi.useFakeTimers();
		host = "host";
		box = createDeliveryBox({ hostSessionId: () => host });
	});
	afterEach(() => vi.useRealTimers());

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
		const small = createDeliveryBox({ hostSessionId: () => host, maxHeld: 2 });
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

	it("a wait ends as soon as every id ended", async () => {
		box.attach("s1", fakeSession().poster());
		const waited = box.waitFor("s1", ["r1"], 60_000);
		box.deliver(delivery("r1", "s1", "timeout"));
		await expect(waited).resolves.toMatchObject({ ended: [{ requestId: "r1" }], open: [] });
	});
});
