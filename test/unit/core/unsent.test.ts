/**
 * Ends that could not be sent at once (core/delivery/unsent.ts, and the box around them in delivery.ts):
 * the asker's grace, the host's session after it, the bound, who takes what when a session attaches or
 * detaches, a wait taking an end that came while its session was away, and what the process remembers as
 * delivered. Fake timers; each test's own box.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
	createDeliveryBox,
	DELIVERED_ENTRY_TYPE,
	type DeliveryBox,
	deliveredIn,
	deliveryBox,
	GONE_GRACE_MS,
	type SessionPoster,
} from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { unsentEnds } from "../../../extensions/checkpoint-bridge/core/delivery/unsent.ts";
import { delivery, fakeSession } from "../support/delivery-session.ts";

/** What `promise` gave without any time passing, or "still waiting". */
async function soon<T>(promise: Promise<T>): Promise<T | "still waiting"> {
	let outcome: T | "still waiting" = "still waiting";
	void promise.then((value) => {
		outcome = value;
	});
	for (let i = 0; i < 10; i++) await Promise.resolve();
	return outcome;
}
const queued = (requestId: string, askerSessionId: string) => ({ requestId, askerSessionId, asker: "planner", questions: ["Q?"], queuedAt: 0 });

let host: string | undefined;
let box: DeliveryBox;
beforeEach(() => {
	vi.useFakeTimers();
	host = "host";
	box = createDeliveryBox({ hostSessionId: () => host });
});
afterEach(() => vi.useRealTimers());

describe("an asker's grace", () => {
	it("an asker that came back within its grace gets its end, and the host's session never gets it after the grace", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		box.attach("s1", fakeSession().poster())();
		box.deliver(delivery("r1", "s1"));
		vi.advanceTimersByTime(GONE_GRACE_MS / 2);
		const back = fakeSession();
		box.attach("s1", back.poster());
		vi.advanceTimersByTime(GONE_GRACE_MS * 2);
		expect(back.ids()).toEqual(["r1"]);
		expect(hostSession.messages).toHaveLength(0);
	});

	it("an end that went to the host's session after the grace does not come to its asker as well when it attaches later", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		box.deliver(delivery("r1", "s1"));
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(hostSession.ids()).toEqual(["r1"]);
		const late = fakeSession();
		box.attach("s1", late.poster());
		expect(late.messages).toHaveLength(0);
	});

	it("another session attaching during the grace, the host's included, does not cut it short", () => {
		box.deliver(delivery("r1", "s1"));
		const other = fakeSession();
		box.attach("s2", other.poster());
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		expect(hostSession.messages).toHaveLength(0);
		vi.advanceTimersByTime(GONE_GRACE_MS - 1);
		expect(hostSession.messages).toHaveLength(0);
		vi.advanceTimersByTime(1);
		expect(hostSession.ids()).toEqual(["r1"]);
		expect(other.messages).toHaveLength(0);
	});

	it("a session whose send throws counts as gone: after the grace its end goes to the host's session, forwarded", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		box.attach("s1", fakeSession(1).poster());
		box.deliver(delivery("r1", "s1"));
		expect(box.wasDelivered("r1")).toBe(false);
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(hostSession.ids()).toEqual(["r1"]);
		expect(hostSession.messages[0]!.message.details.forwarded).toBe(true);
		expect(box.wasDelivered("r1")).toBe(true);
	});

	it("the host's session that could not take its own end gets it after the grace as its own, not forwarded", () => {
		const hostSession = fakeSession(1);
		box.attach("host", hostSession.poster());
		box.deliver(delivery("r1", "host"));
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(hostSession.ids()).toEqual(["r1"]);
		expect(hostSession.messages[0]!.message.details.forwarded).toBeUndefined();
		expect(hostSession.messages[0]!.message.content).toMatch(/^checkpoint-bridge: the human answered your queued question/);
	});

	it("an end held for the host's session keeps no timer: nothing wakes the process until a session attaches", () => {
		host = undefined;
		box.deliver(delivery("r1", "gone-child"), { gone: true });
		expect(vi.getTimerCount()).toBe(0);
		box.deliver(delivery("r2", "s1"));
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(vi.getTimerCount()).toBe(0);
		host = "host";
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		expect(hostSession.ids()).toEqual(["r1", "r2"]);
	});
});

describe("the bound on unsent ends", () => {
	it("a discarded end's request is no longer open, nor owned by its session", () => {
		host = undefined;
		const small = createDeliveryBox({ hostSessionId: () => host, maxUnsent: 2 });
		for (const id of ["r1", "r2", "r3"]) {
			small.expect(queued(id, "s1"));
			small.deliver(delivery(id, "s1"));
		}
		small.expect(queued("r4", "s1"));
		expect(small.open("s1").map((a) => a.requestId)).toEqual(["r4"]);
		expect(small.ownerOf("r1")).toBeUndefined();
		expect(small.ownerOf("r4")).toBe("s1");
	});

	it("the oldest end is the one discarded, however many sessions attached while it waited for the host's", () => {
		host = undefined;
		const small = createDeliveryBox({ hostSessionId: () => host, maxUnsent: 2 });
		small.deliver(delivery("oldest", "gone-child"), { gone: true });
		small.deliver(delivery("in-grace", "s3"));
		small.attach("s2", fakeSession().poster());
		small.deliver(delivery("newest", "gone-child"), { gone: true });
		host = "host";
		const hostSession = fakeSession();
		small.attach("host", hostSession.poster());
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(hostSession.ids()).toEqual(["newest", "in-grace"]);
	});
});

describe("sessions attaching and detaching", () => {
	it("one copy detaching leaves the session attached through the other copy, which takes its ends", () => {
		const first = fakeSession();
		const second = fakeSession();
		box.attach("s1", first.poster());
		const detachSecond = box.attach("s1", second.poster());
		const detachFirst = box.attach("s1", fakeSession().poster());
		detachFirst();
		detachSecond();
		expect(box.attached("s1")).toBe(true);
		box.deliver(delivery("r1", "s1"));
		expect(first.ids()).toEqual(["r1"]);
	});

	it("a detach run twice leaves the session attached again in between alone", () => {
		const session = fakeSession();
		const poster = session.poster();
		const detach = box.attach("s1", poster);
		detach();
		box.attach("s1", poster);
		detach();
		expect(box.attached("s1")).toBe(true);
		box.deliver(delivery("r1", "s1"));
		expect(session.ids()).toEqual(["r1"]);
	});

	it("an end delivered once is never delivered again, even after its session left", () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		const session = fakeSession();
		const detach = box.attach("s1", session.poster());
		box.deliver(delivery("r1", "s1"));
		detach();
		box.deliver(delivery("r1", "s1"));
		vi.advanceTimersByTime(GONE_GRACE_MS * 2);
		expect(session.ids()).toEqual(["r1"]);
		expect(hostSession.messages).toHaveLength(0);
	});
});

describe("a wait and the ends that came while its session was away", () => {
	it("takes them at once, recorded as delivered, and no message follows them", async () => {
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		for (const id of ["r1", "r2", "other"]) box.expect(queued(id, id === "other" ? "s2" : "s1"));
		box.deliver(delivery("r1", "s1"));
		box.deliver(delivery("other", "s2"));
		// The ended one is no longer open, though it is not delivered yet.
		expect(box.open("s1").map((a) => a.requestId)).toEqual(["r2"]);
		expect(await soon(box.waitFor("s1", ["r1"], 60_000))).toEqual({ ended: [expect.objectContaining({ requestId: "r1" })], open: [] });
		expect(box.wasDelivered("r1")).toBe(true);
		expect(box.open("s1").map((a) => a.requestId)).toEqual(["r2"]);
		// Another session's end is not the wait's to take.
		const waited = box.waitFor("s1", ["other"], 1_000);
		vi.advanceTimersByTime(GONE_GRACE_MS);
		await expect(waited).resolves.toEqual({ ended: [], open: ["other"] });
		expect(hostSession.ids()).toEqual(["other"]);
	});

	it("a wait on nothing open ends at once, its budget unused", async () => {
		expect(await soon(box.waitFor("s1", [], 60_000))).toEqual({ ended: [], open: [] });
		expect(vi.getTimerCount()).toBe(0);
	});

	it("a late answer that comes after a wait took the request's own end still comes as a message", async () => {
		const session = fakeSession();
		box.attach("s1", session.poster());
		const waited = box.waitFor("s1", ["r1"], 60_000);
		box.deliver(delivery("r1", "s1", "timeout"));
		await waited;
		box.deliver({ ...delivery("r1", "s1"), late: true });
		expect(session.ids()).toEqual(["r1"]);
		expect(session.messages[0]!.message.details.late).toBe(true);
		expect(deliveredIn(session.entries)).toEqual(new Set(["r1", "r1:late"]));
	});
});

describe("what the process remembers", () => {
	it("whether a request was delivered, for the latest 1,024 of them", () => {
		const quiet: SessionPoster = { post: () => "posted", record: () => {} };
		box.attach("s1", quiet);
		for (let i = 0; i <= 1_024; i++) box.deliver(delivery(`r${i}`, "s1"));
		expect(box.wasDelivered("r0")).toBe(false);
		expect(box.wasDelivered("r1")).toBe(true);
		expect(box.wasDelivered("r1024")).toBe(true);
	});

	it("the process's box lives under the key every copy of the extension names, as does its way of finding the host's session", () => {
		const target: Record<symbol, unknown> = {};
		const box = deliveryBox(() => undefined, target);
		expect(target[Symbol.for("checkpoint-bridge.deliveries")]).toBe(box);
		// A later copy tells the box made by an earlier one how to find the host's session, under its own key.
		const setHost = (box as unknown as Record<symbol, (resolve: () => string | undefined) => void>)[Symbol.for("checkpoint-bridge.deliveries.host-session-of")];
		setHost!(() => "host");
		const hostSession = fakeSession();
		box.attach("host", hostSession.poster());
		box.deliver(delivery("r1", "gone-child"), { gone: true });
		expect(hostSession.ids()).toEqual(["r1"]);
		// What it appended, besides the message itself: the delivery's record.
		expect(hostSession.entries.filter((e) => e.type === "custom").map((e) => e.customType)).toEqual([DELIVERED_ENTRY_TYPE]);
	});
});

describe("unsent ends on their own", () => {
	it("an end kept again under its key keeps its place and one grace; taking it stops the grace", () => {
		const over: string[] = [];
		const discarded: string[] = [];
		const ends = unsentEnds<string>({ graceMs: 1_000, maxUnsent: 2, graceOver: (d) => void over.push(d), discarded: (k) => void discarded.push(k) });
		ends.hold("a", "A", false);
		ends.hold("b", "B", true);
		vi.advanceTimersByTime(500);
		ends.hold("a", "A again", false);
		expect(ends.entries().map(([key]) => key)).toEqual(["a", "b"]);
		expect(ends.get("a")).toEqual({ delivery: "A again", toHost: false });
		vi.advanceTimersByTime(999);
		expect(over).toEqual([]);
		vi.advanceTimersByTime(1);
		expect(over).toEqual(["A again"]);
		expect(ends.get("a")).toBeUndefined();
		ends.hold("c", "C", false);
		expect(ends.take("c")).toEqual({ delivery: "C", toHost: false });
		vi.advanceTimersByTime(5_000);
		expect(over).toEqual(["A again"]);
		expect(vi.getTimerCount()).toBe(0);
		ends.hold("d", "D", true);
		ends.hold("e", "E", true);
		expect(discarded).toEqual(["b"]);
		expect(ends.entries().map(([key]) => key)).toEqual(["d", "e"]);
	});
});
