/**
 * The bridge from a transport to the bus (core/bridge/bridge.ts), on its own: a bare handle whose host is
 * this test (it takes requests off the bus and seals its replies), no socket, no NATS. Each refusal
 * once; replies only from the host, back under the asker's id; what a client's leaving takes with
 * it; the notice window; and random frames through the shared frame check and the bridge.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Asked, Bridge, type BridgeOptions } from "../../../extensions/checkpoint-bridge/core/bridge/bridge.ts";
import { checkFrame, FRAME_VERSION, type ReplyFrame, type RequestFrame, type Transport } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { deliveryBox } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { MAX_TIMEOUT_MS, NO_LIMIT } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { NoticeWindow } from "../../../extensions/checkpoint-bridge/core/shared/notice-window.ts";
import {
	lateChannel,
	PROTOCOL_VERSION,
	type RelayCancel,
	type RelayNotice,
	type RelayReply,
	type RelayRequest,
	replyChannel,
} from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle, type HostCapability, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { fakeSession } from "../support/delivery-session.ts";
import { propertyRun } from "../support/property-policy.ts";

const Q = [{ question: "Which naming convention?" }];
const ASKER = { label: "planner (pid 7)", sessionId: "pid 7/planner-session" };

/** A handle whose host is the test: what reaches the bus is recorded, and `reply` answers as the host. */
function hostOnBus(options: { protocol?: number; listening?: boolean } = {}) {
	const handle = createHandle();
	const capability = handle.claimHost({ sessionId: "host-session", protocol: options.protocol ?? PROTOCOL_VERSION }) as HostCapability;
	const requests: RelayRequest[] = [];
	const cancels: RelayCancel[] = [];
	const notices: RelayNotice[] = [];
	if (options.listening !== false) handle.bus.on("request", (r) => void requests.push(r));
	handle.bus.on("cancel", (c) => void cancels.push(c));
	handle.bus.on("relay:notice", (n) => void notices.push(n));
	const reply = (reply: RelayReply) => handle.bus.emit(replyChannel(reply.id), capability.seal(reply));
	return { handle, requests, cancels, notices, reply, seal: capability.seal };
}

/** A bridge on `handle` and what one client of it is sent. */
function bridgeOn(handle: SharedHandle, options: Partial<BridgeOptions> = {}) {
	const bridge = new Bridge<{ tag: string }>({ handle, transport: "endpoint", server: "endpoint", ...options });
	const sent = new Map<string, ReplyFrame[]>();
	const asked = (id: string, more: Partial<Asked> = {}): Asked => {
		const client = more.client ?? "local:one";
		return {
			client,
			id,
			asker: ASKER,
			questions: Q,
			deadline: NO_LIMIT,
			dialogTimeoutMs: 0,
			createdAt: 1_000,
			origin: client,
			send: (frame) => void sent.set(client, [...(sent.get(client) ?? []), frame]),
			...more,
		};
	};
	return { bridge, sent, asked };
}

const result = (id: string, status: "ok" | "no-host" = "ok") => ({ v: PROTOCOL_VERSION, id, kind: "result" as const, status, answers: [] });

beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => void vi.useRealTimers());

describe("a request onto the bus", () => {
	it("goes under an id of the host's, in the bus's version, as the transport says who asks and from where", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const held = bridge.take(
			asked("asker-1", { later: true, resent: true, answers: () => [{ question: "Which naming convention?", answer: "x", kind: "text" }] }),
			{
				tag: "own",
			},
		);
		expect(held).toMatchObject({ client: "local:one", id: "asker-1", session: ASKER.sessionId, own: { tag: "own" }, gone: false });
		expect(host.requests).toHaveLength(1);
		const request = host.requests[0]!;
		expect(request.id).toBe(held!.hostId);
		expect(request.id).not.toBe("asker-1");
		expect(request).toMatchObject({ v: PROTOCOL_VERSION, asker: ASKER, questions: Q, origin: "local:one", createdAt: 1_000, later: true, resent: true });
		expect(request.answers).toEqual([{ question: "Which naming convention?", answer: "x", kind: "text" }]);
		expect(bridge.openRequests()).toHaveLength(1);
	});

	it("keeps the asker's own id in the host only when it is shaped as askers' ids are: 16 to 128 of A-Z, a-z, 0-9, _ and -, nothing before or after", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const shaped = "Ab0_-Ab0_-Ab0_-A";
		const ids = [shaped, "x".repeat(128), "short-id", "x".repeat(129), `!${shaped}`, `${shaped}!`, `${shaped}\n`];
		const inHost = ids.map((id, i) => bridge.take(asked(id, { client: `local:${i}` }), { tag: "" })!.hostId);
		expect(inHost.slice(0, 2)).toEqual(ids.slice(0, 2));
		for (const [i, id] of inHost.entries()) if (i >= 2) expect(id, ids[i]).not.toBe(ids[i]);
	});

	it("clamps the deadline and the dialog timeout as a local call's; from the budget left when the asker's clock is not ours; no budget stays none", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const now = Date.now();
		bridge.take(asked("far", { deadline: now + 10 * MAX_TIMEOUT_MS, dialogTimeoutMs: 10 * MAX_TIMEOUT_MS }), { tag: "" });
		bridge.take(asked("near", { deadline: now + 5_000 }), { tag: "" });
		bridge.take(asked("budget", { deadline: 1, budgetMs: 7_000, createdAt: undefined }), { tag: "" });
		bridge.take(asked("spent", { deadline: 1, budgetMs: -50 }), { tag: "" });
		bridge.take(asked("none", { deadline: NO_LIMIT, budgetMs: 7_000 }), { tag: "" });
		const [far, near, budget, spent, none] = host.requests;
		expect(far).toMatchObject({ deadline: now + MAX_TIMEOUT_MS, dialogTimeoutMs: MAX_TIMEOUT_MS });
		expect(near!.deadline).toBe(now + 5_000);
		expect(budget).toMatchObject({ deadline: now + 7_000, createdAt: now });
		expect(spent!.deadline).toBe(now);
		expect(none!.deadline).toBe(NO_LIMIT);
		// Nothing the asker did not send rides along.
		expect(Object.keys(near!)).not.toContain("answers");
		expect(Object.keys(near!)).not.toContain("resent");
		expect(Object.keys(near!)).not.toContain("later");
	});

	it("sends back only what the host sealed for it, under the asker's id and in the transport's version; the result ends it", () => {
		const host = hostOnBus();
		const { bridge, sent, asked } = bridgeOn(host.handle, { transport: "nats", server: "room server" });
		const held = bridge.take(asked("asker-1"), { tag: "" })!;
		// Well-formed but not the host's: ignored.
		host.handle.bus.emit(replyChannel(held.hostId), result(held.hostId));
		host.reply({ v: PROTOCOL_VERSION, id: held.hostId, kind: "progress", stage: "queued", answers: [], position: 1 });
		host.reply({ ...result(held.hostId), answers: [{ question: "Which naming convention?", answer: "snake_case", kind: "option" }] });
		expect(sent.get("local:one")).toEqual([
			{ type: "progress", v: FRAME_VERSION.nats, id: "asker-1", kind: "progress", stage: "queued", answers: [], position: 1 },
			{
				type: "result",
				v: FRAME_VERSION.nats,
				id: "asker-1",
				kind: "result",
				status: "ok",
				answers: [{ question: "Which naming convention?", answer: "snake_case", kind: "option" }],
			},
		]);
		expect(held.answers).toEqual([{ question: "Which naming convention?", answer: "snake_case", kind: "option" }]);
		expect(bridge.openRequests()).toHaveLength(0);
		expect(host.handle.bus.listenerCount(replyChannel(held.hostId))).toBe(0);
	});
});

describe("one id: the asker's own is the request's id in the host when it names nothing else there", () => {
	/** Shaped as the ids askers make (nanoid's alphabet and length). */
	const OWN = "Edg4ZA8SciEhAfqGKvVVX";

	it("an asker's nanoid is the id the host, the page and every notice use, and its replies still come back to it alone", () => {
		const host = hostOnBus();
		const { bridge, sent, asked } = bridgeOn(host.handle);
		const held = bridge.take(asked(OWN), { tag: "" })!;
		expect(held.hostId).toBe(OWN);
		expect(host.requests.map((r) => r.id)).toEqual([OWN]);
		host.reply({ ...result(OWN), answers: [{ question: "Which naming convention?", answer: "snake_case", kind: "option" }] });
		expect(sent.get("local:one")).toEqual([expect.objectContaining({ type: "result", id: OWN, status: "ok" })]);
	});

	it("an id another client has open, one an asker in the host's process waits on, or one the host holds open or late gets a fresh id, and never those replies", () => {
		const handle = createHandle();
		const inProcess = "inprocessAskerId-0001";
		const open = "hostHoldsThisOpen-0001";
		const late = "hostHoldsThisLate-0001";
		const observed = (requestId: string) => ({
			requestId,
			asker: "planner",
			origin: "host",
			questions: ["Which naming convention?"],
			createdAt: 1,
			deadline: 0,
		});
		const capability = handle.claimHost({
			sessionId: "host-session",
			protocol: PROTOCOL_VERSION,
			snapshot: () =>
				({ v: 1, takenAt: 1, open: [{ ...observed(open), state: "queued" }], late: [{ ...observed(late), lateSince: 1, expiresAt: 2 }] }) as never,
		}) as HostCapability;
		const requests: RelayRequest[] = [];
		handle.bus.on("request", (r) => void requests.push(r));
		const waiting: RelayReply[] = [];
		handle.bus.on(replyChannel(inProcess), (reply) => void waiting.push(reply));
		const { bridge, sent, asked } = bridgeOn(handle);
		const first = bridge.take(asked(OWN, { client: "c1" }), { tag: "" })!;
		const taken = [OWN, inProcess, open, late].map((id) => bridge.take(asked(id, { client: "c2" }), { tag: "" })!);
		expect(first.hostId).toBe(OWN);
		for (const [i, held] of taken.entries()) {
			expect(held.hostId, held.id).not.toBe(held.id);
			expect(held.hostId).toMatch(/^[A-Za-z0-9_-]{21}$/);
			expect(requests[i + 1]!.id).toBe(held.hostId);
		}
		expect(new Set(requests.map((r) => r.id)).size).toBe(5);
		handle.bus.emit(replyChannel(OWN), capability.seal(result(OWN)));
		handle.bus.emit(replyChannel(inProcess), capability.seal(result(inProcess)));
		expect(sent.get("c1")).toEqual([expect.objectContaining({ id: OWN, status: "ok" })]);
		expect(sent.get("c2"), "the second client hears nothing of the others' requests").toBeUndefined();
		expect(waiting).toHaveLength(1);
	});

	it("an id not shaped as the askers' ids (short, or other characters) is never taken as it is", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		for (const id of ["asker-1", "short", "has space in it 0123456", "dollar$(rm)-012345678", "ünïcödé-0123456789012"]) {
			const held = bridge.take(asked(id), { tag: "" })!;
			expect(held.hostId, id).not.toBe(id);
		}
	});

	it("a wait: false request whose questions are not objects is put on the bus as sent, for the host to refuse, without a throw here", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const questions = [null, "Which?"] as never;
		const held = bridge.take(asked("odd-questions", { later: true, questions }), { tag: "" })!;
		expect(held.later?.questions).toEqual(["undefined", "undefined"]);
		expect(host.requests.map((r) => r.questions)).toEqual([questions]);
	});

	it("a request taken under its asker's id frees that id when it ends: the next asker of the same id gets it again", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		bridge.take(asked(OWN, { client: "c1" }), { tag: "" });
		host.reply(result(OWN));
		expect(bridge.take(asked(OWN, { client: "c2" }), { tag: "" })!.hostId).toBe(OWN);
	});
});

describe("refusals: each answered with a result of its own, nothing put on the bus", () => {
	/** A refusal: the host's options, the bridge's, what the bridge already holds, what the asker is told and the request refused (`r` of `local:one`). */
	interface Refusal {
		host?: Parameters<typeof hostOnBus>[0];
		bridge?: Partial<BridgeOptions>;
		held?: Partial<Asked>[];
		asking?: Partial<Asked>;
		status: "no-host" | "error";
		note: RegExp;
	}
	const other = (label: string) => ({ label, sessionId: label });
	const cases: [string, Refusal][] = [
		["no session holds the host role", { status: "no-host", note: /No session with a UI holds the host role/ }],
		[
			"the host speaks another bus protocol",
			{
				host: { protocol: PROTOCOL_VERSION + 1 },
				bridge: { server: "room server" },
				status: "error",
				note: new RegExp(`protocol v${PROTOCOL_VERSION + 1}; its room server speaks v${PROTOCOL_VERSION}`),
			},
		],
		[
			"past the cap per asker session",
			{ bridge: { caps: { perAsker: { max: 1, refusal: (n) => `asker has ${n}` } } }, held: [{ client: "other" }], status: "error", note: /^asker has 1$/ },
		],
		[
			"past the cap per client",
			{
				bridge: { caps: { perClient: { max: 1, refusal: (n) => `client has ${n}` } } },
				held: [{ asker: other("b") }],
				status: "error",
				note: /^client has 1$/,
			},
		],
		[
			"past the cap for all clients together",
			{
				bridge: { caps: { total: { max: 2, refusal: (n) => `all have ${n}` } } },
				held: [
					{ client: "c1", asker: other("a") },
					{ client: "c2", asker: other("b") },
				],
				status: "error",
				note: /^all have 2$/,
			},
		],
		[
			"past the cap on bytes, what the transport keeps counted too",
			{
				bridge: {
					caps: { bytes: { max: 100, refusal: (held, asking) => `${held} held, ${asking} asked` } },
					alongside: { bytes: () => 30, freeOldest: () => false },
				},
				held: [{ client: "c1", bytes: 40 }],
				asking: { bytes: 31 },
				status: "error",
				note: /^40 held, 31 asked$/,
			},
		],
		[
			"the host role is claimed but nothing listens for questions",
			{ host: { listening: false }, status: "no-host", note: /nothing is listening for questions/ },
		],
	];

	it.each(cases)("%s", (name, refusal) => {
		const host = hostOnBus(refusal.host);
		// Without a host: a handle nobody claimed.
		const { bridge, asked } = bridgeOn(name.startsWith("no session") ? createHandle() : host.handle, refusal.bridge);
		for (const [i, more] of (refusal.held ?? []).entries()) bridge.take(asked(`held-${i}`, more), { tag: "" });
		const before = host.requests.length;
		const openBefore = bridge.openRequests().length;
		const sent: ReplyFrame[] = [];
		const ask = asked("r", { ...refusal.asking, send: (frame) => void sent.push(frame) });
		expect(bridge.take(ask, { tag: "" })).toBeUndefined();
		expect(sent).toHaveLength(1);
		expect(sent[0]).toMatchObject({ type: "result", v: FRAME_VERSION.endpoint, id: "r", kind: "result", status: refusal.status, answers: [] });
		expect((sent[0] as { note: string }).note).toMatch(refusal.note);
		expect(host.requests.length).toBe(before);
		expect(bridge.openRequests()).toHaveLength(openBefore);
		expect(bridge.get(ask.client, "r")).toBeUndefined();
	});

	it("what the transport keeps makes way, oldest first, before a request is refused for bytes; answers are read only once let in", () => {
		const host = hostOnBus();
		const kept = [30, 30];
		let read = 0;
		const { bridge, asked } = bridgeOn(host.handle, {
			caps: { bytes: { max: 100, refusal: (open) => `full: ${open} bytes open` }, perClient: { max: 1, refusal: () => "one" } },
			alongside: { bytes: () => kept.reduce((a, b) => a + b, 0), freeOldest: () => kept.length > 0 && Boolean(kept.shift()) },
		});
		bridge.take(asked("a", { bytes: 40 }), { tag: "" });
		// Refused by the client cap: its answers are never read, nothing kept is freed.
		bridge.take(asked("b", { bytes: 10, answers: () => (read++, []) }), { tag: "" });
		expect([read, kept]).toEqual([0, [30, 30]]);
		bridge.take(asked("c", { client: "two", bytes: 25, answers: () => (read++, []) }), { tag: "" });
		expect([read, kept]).toEqual([1, [30]]);
		expect(host.requests.map((r) => r.questions)).toHaveLength(2);
		// The bytes open now are a and c's, 65: one more past the bound is refused naming them.
		const sent: ReplyFrame[] = [];
		bridge.take(asked("d", { client: "three", bytes: 40, send: (frame) => void sent.push(frame) }), { tag: "" });
		expect(sent).toEqual([expect.objectContaining({ id: "d", status: "error", note: "full: 65 bytes open" })]);
	});
});

describe("who lets a request go", () => {
	it("a request re-sent under one host id through two clients is put on the bus once, both hear its replies, and it leaves the host only when the last lets go", () => {
		const host = hostOnBus();
		const { bridge, sent, asked } = bridgeOn(host.handle);
		const first = bridge.take(asked("r", { client: "c1", hostId: "same" }), { tag: "" })!;
		const second = bridge.take(asked("r", { client: "c2", hostId: "same" }), { tag: "" })!;
		expect(host.requests.map((r) => r.id)).toEqual(["same"]);
		host.reply({ v: PROTOCOL_VERSION, id: "same", kind: "progress", stage: "shown", answers: [], question: 0 });
		expect([sent.get("c1")?.length, sent.get("c2")?.length]).toEqual([1, 1]);
		bridge.release(first);
		expect(host.cancels).toEqual([]);
		bridge.release(second);
		expect(host.cancels).toEqual([{ v: PROTOCOL_VERSION, id: "same", reason: "cancelled" }]);
	});

	it("an asker that gives up takes it off the host at once, whoever else carries it, with its reason", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const first = bridge.take(asked("r", { client: "c1", hostId: "same" }), { tag: "" })!;
		bridge.take(asked("r", { client: "c2", hostId: "same" }), { tag: "" });
		bridge.cancel(first, "timeout");
		expect(host.cancels).toEqual([{ v: PROTOCOL_VERSION, id: "same", reason: "timeout" }]);
		expect(bridge.openRequests().map((h) => h.client)).toEqual(["c2"]);
	});

	it("a client that leaves takes its requests off the host, but for those asked with wait: false, which stay without being sent to it", () => {
		const host = hostOnBus();
		const { bridge, sent, asked } = bridgeOn(host.handle);
		const waiting = bridge.take(asked("waits"), { tag: "" })!;
		const later = bridge.take(asked("later", { later: true }), { tag: "" })!;
		bridge.take(asked("elsewhere", { client: "other" }), { tag: "" });
		bridge.closeClient("local:one");
		expect(host.cancels).toEqual([{ v: PROTOCOL_VERSION, id: waiting.hostId, reason: "cancelled" }]);
		expect(bridge.openRequests().map((h) => h.id)).toEqual(["later", "elsewhere"]);
		expect(later.gone).toBe(true);
		expect(later.later).toEqual({ asker: ASKER, questions: ["Which naming convention?"], createdAt: 1_000 });
		host.reply(result(later.hostId));
		expect(sent.get("local:one")).toBeUndefined();
		expect(bridge.openRequests().map((h) => h.id)).toEqual(["elsewhere"]);
	});
});

describe("late ends", () => {
	const late = (id: string) => ({
		v: PROTOCOL_VERSION,
		id,
		kind: "late" as const,
		status: "ok" as const,
		answers: [{ question: "Which naming convention?", answer: "x", kind: "text" as const }],
	});

	/** A request that gave up at its budget (the host keeps it late), and its late end as the host sends it: what the host is told of its taking. */
	function lateEnd(sendLate: Asked["sendLate"]) {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const held = bridge.take(asked("r", { sendLate }), { tag: "" })!;
		bridge.cancel(held, "timeout");
		const taken: boolean[] = [];
		host.handle.bus.emit(lateChannel(held.hostId), host.seal(late(held.hostId)), (sent: boolean) => void taken.push(sent));
		return { taken };
	}

	it("go to the asker through the transport, under the asker's id, and the host is told they were taken", () => {
		const frames: unknown[] = [];
		const { taken } = lateEnd((frame) => frames.push(frame) > 0);
		expect(frames).toMatchObject([{ type: "late", id: "r", status: "ok", answers: [{ answer: "x" }] }]);
		expect(taken).toEqual([true]);
	});

	it("a transport that throws while sending one leaves it to the host's session (taken: false), not a throw into the host", () => {
		const { taken } = lateEnd(() => {
			throw new Error("socket closed under the write");
		});
		expect(taken).toEqual([false]);
	});

	it("a transport whose sending fails later leaves it to the host's session too", async () => {
		const { taken } = lateEnd(() => Promise.reject(new Error("no ack")));
		await vi.runAllTimersAsync();
		expect(taken).toEqual([false]);
	});
});

describe("late ends: which requests wait for one, and how many", () => {
	const late = (id: string) => ({ v: PROTOCOL_VERSION, id, kind: "late" as const, status: "ok" as const, answers: [] });

	/** A bridge whose requests record the late frames sent for them; `giveUp` times a request out, `end` sends its late end, sealed or not. */
	function lateWorld(options: Partial<BridgeOptions> = {}) {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle, options);
		const frames: string[] = [];
		const taken: [string, boolean][] = [];
		const held = new Map<string, ReturnType<typeof bridge.take>>();
		const giveUp = (id: string, client = "local:one", reason: "timeout" | "cancelled" = "timeout") => {
			const open = bridge.take(asked(id, { client, sendLate: (frame) => frames.push(frame.id) > 0 }), { tag: "" })!;
			held.set(id, open);
			bridge.cancel(open, reason);
		};
		const end = (id: string, sealed = true) => {
			const hostId = held.get(id)!.hostId;
			host.handle.bus.emit(lateChannel(hostId), sealed ? host.seal(late(hostId)) : late(hostId), (sent: boolean) => void taken.push([id, sent]));
		};
		return { bridge, frames, taken, giveUp, end };
	}

	it("only the host's sealed late end goes on, once: one not sealed, or a second, is not sent to the asker", () => {
		const { frames, taken, giveUp, end } = lateWorld();
		giveUp("r");
		end("r", false);
		expect(frames).toEqual([]);
		end("r");
		end("r");
		expect(frames).toEqual(["r"]);
		expect(taken).toEqual([["r", true]]);
	});

	it("a request that ended with its host's verdict (not timed out) has no late end to wait for", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const frames: string[] = [];
		const open = bridge.take(asked("answered", { sendLate: (frame) => frames.push(frame.id) > 0 }), { tag: "" })!;
		host.reply(result(open.hostId));
		host.handle.bus.emit(lateChannel(open.hostId), host.seal(late(open.hostId)), () => {});
		expect(frames).toEqual([]);
	});

	it("a request its asker cancelled (not timed out) has no late end to wait for", () => {
		const { frames, giveUp, end } = lateWorld();
		giveUp("r", "local:one", "cancelled");
		end("r");
		expect(frames).toEqual([]);
	});

	it("per client, past the bound the client's oldest stops waiting; other clients' are not counted", () => {
		const { frames, giveUp, end } = lateWorld({ lateCaps: { perClient: 1 } });
		giveUp("c1-first", "c1");
		giveUp("c2-only", "c2");
		giveUp("c1-second", "c1");
		for (const id of ["c1-first", "c2-only", "c1-second"]) end(id);
		expect(frames).toEqual(["c2-only", "c1-second"]);
	});

	it("for all clients together, past the bound the oldest stops waiting, and only it", () => {
		const { frames, giveUp, end } = lateWorld({ lateCaps: { total: 2 } });
		giveUp("a", "c1");
		giveUp("b", "c2");
		giveUp("c", "c3");
		for (const id of ["a", "b", "c"]) end(id);
		expect(frames).toEqual(["b", "c"]);
	});

	it("discarding one client's waits leaves the others'; discarding all leaves none", () => {
		const { bridge, frames, giveUp, end } = lateWorld();
		giveUp("a", "c1");
		giveUp("b", "c2");
		bridge.discardLate("c1");
		end("a");
		end("b");
		expect(frames).toEqual(["b"]);
		giveUp("c", "c1");
		giveUp("d", "c2");
		bridge.discardLate();
		end("c");
		end("d");
		expect(frames).toEqual(["b"]);
	});
});

describe("a request let go twice, or after its end", () => {
	it("takes it off the host once: a release after its result, or a second release, sends no cancel", () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const ended = bridge.take(asked("ended"), { tag: "" })!;
		host.reply(result(ended.hostId));
		bridge.release(ended);
		const twice = bridge.take(asked("twice"), { tag: "" })!;
		bridge.release(twice);
		bridge.release(twice);
		expect(host.cancels).toEqual([{ v: PROTOCOL_VERSION, id: twice.hostId, reason: "cancelled" }]);
	});
});

describe("the end of a wait: false request its asker did not record", () => {
	it("goes to the host's session at once: its asker is known gone, so no grace is waited for it", async () => {
		const host = hostOnBus();
		const { bridge, asked } = bridgeOn(host.handle);
		const hostSession = fakeSession();
		const detach = deliveryBox(() => "host-session").attach("host-session", hostSession.poster());
		try {
			const open = bridge.take(asked("unrecorded-later-2", { later: true, sendAcked: () => Promise.resolve(false) }), { tag: "" })!;
			host.reply(result(open.hostId));
			await vi.advanceTimersByTimeAsync(1);
			expect(hostSession.messages.map((m) => m.message.details.requestId)).toContain("unrecorded-later-2");
		} finally {
			detach();
		}
	});

	it("goes to the host's session, naming the request, its asker, how long it waited and why it ended", async () => {
		const host = hostOnBus();
		const { bridge, sent, asked } = bridgeOn(host.handle);
		const hostSession = fakeSession();
		const detach = deliveryBox(() => "host-session").attach("host-session", hostSession.poster());
		try {
			const open = bridge.take(asked("unrecorded-later-1", { later: true, sendAcked: () => Promise.reject(new Error("connection closed")) }), { tag: "" })!;
			host.reply({ ...result(open.hostId), status: "no-host", reason: "dismissed" });
			await vi.runAllTimersAsync();
			expect(sent.get("local:one")).toBeUndefined();
			// The box is the process's: what earlier tests left for the host's session arrives too.
			expect(hostSession.messages.map((m) => m.message.details).filter((d) => d.requestId === "unrecorded-later-1")).toMatchObject([
				{
					requestId: "unrecorded-later-1",
					forwarded: true,
					asker: ASKER.label,
					questions: ["Which naming convention?"],
					envelope: { status: "no-host", requestId: "unrecorded-later-1", asker: ASKER.label, waitedMs: Date.now() - 1_000, reason: "dismissed" },
				},
			]);
		} finally {
			detach();
		}
	});
});

describe("notices", () => {
	it("go on the bus as the transport marked them, in the bus's words, up to the window; the rest are dropped", () => {
		const host = hostOnBus();
		const { bridge } = bridgeOn(host.handle, { notices: new NoticeWindow(2, 1_000) });
		for (const message of ["a", "b", "c"]) bridge.notice(ASKER, { message, level: "warning" }, "nats");
		expect(host.notices).toEqual([
			{ v: PROTOCOL_VERSION, asker: ASKER, message: "a", type: "warning", origin: "nats" },
			{ v: PROTOCOL_VERSION, asker: ASKER, message: "b", type: "warning", origin: "nats" },
		]);
		vi.advanceTimersByTime(1_000);
		bridge.notice(ASKER, { message: "d", level: "info" }, "nats");
		expect(host.notices.map((n) => n.message)).toEqual(["a", "b", "d"]);
	});
});

describe("random frames through the shared check and the bridge", () => {
	const field = fc.oneof(
		fc.string(),
		fc.integer(),
		fc.double(),
		fc.boolean(),
		fc.constant(null),
		fc.array(fc.anything(), { maxLength: 3 }),
		fc.object({ maxDepth: 2 }),
	);
	const version = (transport: Transport) => fc.oneof(fc.constant(FRAME_VERSION[transport]), fc.integer({ min: -2, max: 5 }));
	const frame = (transport: Transport) =>
		fc.record(
			{
				type: fc.constantFrom("request", "cancel", "notice", "progress", "result", "error", "hello", "ping", "other"),
				v: version(transport),
				id: fc.oneof(fc.string({ maxLength: 8 }), field),
				asker: fc.oneof(fc.record({ label: fc.string({ maxLength: 80 }), sessionId: fc.string({ maxLength: 140 }) }), field),
				reason: fc.oneof(fc.constantFrom("timeout", "cancelled"), field),
				message: fc.oneof(fc.string({ maxLength: 40 }), field),
				level: fc.oneof(fc.constantFrom("info", "warning", "error"), field),
			},
			{ requiredKeys: ["type", "v"] },
		);
	/** A well-formed request of `transport`, as it is or with one field of it replaced by anything. */
	const request = (transport: Transport) =>
		fc
			.record(
				{
					type: fc.constant("request"),
					v: fc.constant(FRAME_VERSION[transport]),
					id: fc.string({ minLength: 1, maxLength: 12 }),
					asker: fc.record({ label: fc.string({ maxLength: 40 }), sessionId: fc.string({ maxLength: 40 }) }),
					questions: fc.array(
						fc.record({ question: fc.string(), options: fc.array(fc.record({ label: fc.string() }), { maxLength: 3 }) }, { requiredKeys: ["question"] }),
						{
							maxLength: 4,
						},
					),
					deadline: fc.oneof(fc.constant(NO_LIMIT), fc.integer({ min: -1e12, max: 1e13 })),
					dialogTimeoutMs: fc.nat({ max: 10 * MAX_TIMEOUT_MS }),
					createdAt: fc.nat(),
					later: fc.constant(true as const),
					resent: fc.boolean(),
					answers: fc.array(fc.record({ question: fc.string(), answer: fc.string() }), { maxLength: 2 }),
				},
				{ requiredKeys: ["type", "v", "id", "asker", "questions", "deadline", "dialogTimeoutMs", "createdAt"] },
			)
			.chain((sent) =>
				fc.oneof(
					fc.constant<Record<string, unknown>>(sent),
					fc.record({ key: fc.constantFrom(...Object.keys(sent)), value: field }).map(({ key, value }) => ({ ...sent, [key]: value })),
				),
			);
	let taken = 0;

	it("never a crash, never a frame taken that breaks its transport's version or fields, and a request taken reaches the host unchanged", () => {
		fc.assert(
			fc.property(
				fc
					.constantFrom<Transport>("endpoint", "nats")
					.chain((transport) => fc.tuple(fc.constant(transport), fc.anything(), frame(transport), request(transport))),
				([transport, junk, raw, asRequest]) => {
					for (const input of [junk, raw, asRequest]) {
						const before = structuredClone(input);
						const checked = checkFrame<RequestFrame>(input, transport);
						expect(input).toEqual(before);
						if (!checked.ok) {
							expect(["malformed", "bad-version"]).toContain(checked.code);
							continue;
						}
						expect(checked.frame).toBe(input);
						const type = checked.frame.type as string;
						expect(["request", "cancel", "notice", "progress", "result", "error"]).toContain(type);
						if (type !== "error") expect(checked.frame.v).toBe(FRAME_VERSION[transport]);
						if (type !== "request") continue;
						const host = hostOnBus();
						const { bridge, asked } = bridgeOn(host.handle, { transport });
						const request = checked.frame;
						const sent = structuredClone(request);
						const held = bridge.take(
							asked(request.id, {
								questions: request.questions,
								deadline: request.deadline,
								dialogTimeoutMs: request.dialogTimeoutMs,
								createdAt: request.createdAt,
								...(request.later ? { later: request.later } : {}),
							}),
							{ tag: "" },
						);
						expect(held).toBeDefined();
						expect(request).toEqual(sent);
						expect(host.requests).toHaveLength(1);
						expect(host.requests[0]!.questions).toEqual(sent.questions);
						expect(host.requests[0]!.dialogTimeoutMs).toBe(Math.min(sent.dialogTimeoutMs, MAX_TIMEOUT_MS));
						taken++;
					}
				},
			),
			propertyRun(300),
		);
		// Not vacuous: well-formed requests were taken.
		expect(taken).toBeGreaterThan(0);
	});
});
