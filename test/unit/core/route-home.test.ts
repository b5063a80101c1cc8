/**
 * The route home (core/delivery/home.ts, route-home.ts, ADR-0034): one decision of where an ended
 * request's answer goes, asked by every caller. Each destination is pinned by what actually receives
 * the end, and a property over random facts checks that `where` says what `send` then does. Fake
 * timers; each test's own box, bus and takers.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Bridge } from "../../../extensions/checkpoint-bridge/core/bridge/bridge.ts";
import { createDeliveryBox, GONE_GRACE_MS } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { type EndFacts, type Home, homeOf, homeText } from "../../../extensions/checkpoint-bridge/core/delivery/home.ts";
import { endTakers, homeRoute } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { lateChannel, PROTOCOL_VERSION, type RelayLate } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { delivery, fakeSession } from "../support/delivery-session.ts";
import { propertyRun } from "../support/property-policy.ts";
import { flush, HOST_SESSION, relay } from "../support/relay.ts";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

const late = (id: string): RelayLate => ({ v: PROTOCOL_VERSION, id, kind: "late", status: "ok", answers: [] });

/** One world: a box whose host's session "host" is attached, the takers of a bus of its own. */
function world() {
	const box = createDeliveryBox({ hostSessionId: () => "host" });
	const hostSession = fakeSession();
	box.attach("host", hostSession.poster());
	const { bus } = createHandle();
	const takers = endTakers(bus);
	const route = homeRoute(() => "host", box, takers);
	return { box, hostSession, bus, takers, route };
}

describe("the route home: each destination, as what receives the end", () => {
	it("a wait on it in this process takes it, before its session", async () => {
		const { box, route } = world();
		const asker = fakeSession();
		box.attach("child", asker.poster());
		const waited = box.waitFor("child", ["r1"], 60_000);
		expect(route.where({ asker: { sessionId: "child" }, id: "r1" })).toEqual({ to: "wait" });
		expect(route.send(delivery("r1", "child"), { asker: { sessionId: "child" } })).toEqual({ to: "wait" });
		await expect(waited).resolves.toMatchObject({ ended: [{ requestId: "r1" }], open: [] });
		expect(asker.messages).toHaveLength(0);
	});

	it("its session in this process, attached: a message there, nothing to the host's", () => {
		const { box, hostSession, route } = world();
		const asker = fakeSession();
		box.attach("child", asker.poster());
		expect(route.send(delivery("r1", "child"), { asker: { sessionId: "child" } })).toEqual({ to: "asker" });
		expect(asker.ids()).toEqual(["r1"]);
		expect(hostSession.messages).toHaveLength(0);
	});

	it("its process, while a transport registered to take it back: the late frame goes there, and nowhere else once taken", () => {
		const { bus, takers, hostSession, route } = world();
		const frames: RelayLate[] = [];
		takers.register("r1", (frame, taken) => {
			frames.push(frame);
			taken(true);
		});
		const end = { asker: { sessionId: "pid 7/run" }, origin: "local:1", id: "r1" };
		expect(route.where(end)).toEqual({ to: "asker-process" });
		const home = route.send({ ...delivery("r1", "pid 7/run"), late: true }, end, { sendBack: (taken) => void bus.emit(lateChannel("r1"), late("r1"), taken) });
		expect(home).toEqual({ to: "asker-process" });
		expect(frames).toHaveLength(1);
		expect(hostSession.messages).toHaveLength(0);
	});

	it("the host's session when no transport registered for it, whatever listens on its late channel", () => {
		const { bus, hostSession, route } = world();
		// A listener put on the bus by hand is no registration: the route decides by its takers, not by who listens.
		const heard: unknown[] = [];
		bus.on(lateChannel("r1"), (frame) => void heard.push(frame));
		const end = { asker: { sessionId: "pid 7/run" }, origin: "local:1", id: "r1" };
		expect(route.where(end)).toEqual({ to: "host", wakes: false });
		route.send({ ...delivery("r1", "pid 7/run"), late: true }, end, { sendBack: (taken) => void bus.emit(lateChannel("r1"), late("r1"), taken) });
		expect(heard).toHaveLength(0);
		expect(hostSession.messages.map((m) => [m.message.details.requestId, m.message.details.forwarded, m.options])).toEqual([
			["r1", true, { triggerTurn: false }],
		]);
	});

	it("a registration that closed counts no more: the takers say so, and the end goes to the host's session", () => {
		const { takers, hostSession, route } = world();
		const close = takers.register("r1", (_frame, taken) => taken(true));
		const again = takers.register("r1", (_frame, taken) => taken(true));
		close();
		close();
		expect(takers.has("r1")).toBe(true);
		again();
		expect(takers.has("r1")).toBe(false);
		route.send(
			delivery("r1", "pid 7/run"),
			{ asker: { sessionId: "pid 7/run", kind: "agent" }, origin: "nats:x", id: "r1" },
			{ sendBack: (taken) => taken(true) },
		);
		expect(hostSession.messages.map((m) => m.options)).toEqual([{ triggerTurn: true, deliverAs: "followUp" }]);
	});

	it("its process refused it: the host's session, once, however often the refusal is told", () => {
		const { takers, bus, hostSession, route } = world();
		takers.register("r1", (_frame, taken) => {
			taken(false);
			taken(false);
		});
		const end = { asker: { sessionId: "pid 7/run" }, origin: "local:1", id: "r1" };
		route.send(delivery("r1", "pid 7/run"), end, { sendBack: (taken) => void bus.emit(lateChannel("r1"), late("r1"), taken) });
		expect(hostSession.ids()).toEqual(["r1"]);
	});

	it("kept open in the store (lost with its host): nowhere yet, not the host's session", () => {
		const { hostSession, route } = world();
		const end = { asker: { sessionId: "pid 7/run" }, origin: "local:1", id: "r1" };
		expect(route.where(end, false, { gone: true, openInStore: true })).toEqual({ to: "store" });
		expect(route.send(delivery("r1", "pid 7/run", "no-host"), end, { gone: true, openInStore: true })).toEqual({ to: "store" });
		vi.advanceTimersByTime(GONE_GRACE_MS * 2);
		expect(hostSession.messages).toHaveLength(0);
	});

	it("delivered already: nowhere, a late end of the same request still goes", () => {
		const { box, route } = world();
		const asker = fakeSession();
		box.attach("child", asker.poster());
		route.send(delivery("r1", "child"), { asker: { sessionId: "child" } });
		expect(route.where({ asker: { sessionId: "child" }, id: "r1" })).toEqual({ to: "nowhere" });
		expect(route.send(delivery("r1", "child"), { asker: { sessionId: "child" } })).toEqual({ to: "nowhere" });
		expect(route.where({ asker: { sessionId: "child" }, id: "r1" }, false, { late: true })).toEqual({ to: "asker" });
		route.send({ ...delivery("r1", "child"), late: true }, { asker: { sessionId: "child" } });
		expect(asker.ids()).toEqual(["r1", "r1"]);
	});

	it("an asker of this process neither attached nor known gone: held for the box's grace, then the host's session; one known gone goes at once", () => {
		const { hostSession, route } = world();
		expect(route.send(delivery("r2", "child-9"), { asker: { sessionId: "child-9" }, id: "r2" })).toMatchObject({ to: "host" });
		expect(hostSession.ids()).toEqual([]);
		vi.advanceTimersByTime(GONE_GRACE_MS);
		expect(hostSession.ids()).toEqual(["r2"]);
		route.send(delivery("r3", "child-9"), { asker: { sessionId: "child-9" }, id: "r3" }, { gone: true });
		expect(hostSession.ids()).toEqual(["r2", "r3"]);
	});

	it("the asking side: a wait in this process takes a transport's end whose session is not here; a late end after its call's is taken too", async () => {
		const box = createDeliveryBox({ hostSessionId: () => undefined });
		const route = homeRoute(() => undefined, box);
		const waited = box.waitFor("runner", ["r4"], 60_000);
		expect(route.takeHere(delivery("r4", "runner"))).toBe(true);
		await expect(waited).resolves.toMatchObject({ ended: [{ requestId: "r4" }], open: [] });
		const asker = fakeSession();
		box.attach("s5", asker.poster());
		expect(route.takeHere(delivery("r5", "s5"))).toBe(true);
		expect(route.takeHere({ ...delivery("r5", "s5"), late: true })).toBe(true);
		expect(asker.ids()).toEqual(["r5", "r5"]);
	});

	it("the asking side: a transport's end is taken by its attached session or a wait, refused for one that is not here", () => {
		const box = createDeliveryBox({ hostSessionId: () => undefined });
		const route = homeRoute(() => undefined, box);
		const asker = fakeSession();
		box.attach("s1", asker.poster());
		expect(route.takeHere(delivery("r1", "s1"))).toBe(true);
		// Recorded once: the same frame again is taken, not delivered twice.
		expect(route.takeHere(delivery("r1", "s1"))).toBe(true);
		expect(route.takeHere(delivery("r2", "gone"))).toBe(false);
		expect(asker.ids()).toEqual(["r1"]);
	});
});

/** The facts a world can be put in, drawn at random. */
const FACTS = fc.record({
	here: fc.boolean(),
	askerIsHost: fc.boolean(),
	attached: fc.boolean(),
	waited: fc.boolean(),
	delivered: fc.boolean(),
	registered: fc.boolean(),
	takes: fc.boolean(),
	gone: fc.boolean(),
	openInStore: fc.boolean(),
	late: fc.boolean(),
	kind: fc.constantFrom(undefined, "agent" as const, "mcp" as const),
});
type Drawn = typeof FACTS extends fc.Arbitrary<infer T> ? T : never;

/** What received the end, as a destination: the first place it went. */
async function sentAndSeen(facts: Drawn): Promise<{ said: Home; did: Home; seen: string }> {
	const { box, hostSession, bus, takers, route } = world();
	const session = facts.here && facts.askerIsHost ? "host" : facts.here ? "child" : "pid 7/run";
	const asker = fakeSession();
	if (facts.here && !facts.askerIsHost && facts.attached) box.attach(session, asker.poster());
	const end = { asker: { sessionId: session, ...(facts.kind ? { kind: facts.kind } : {}) }, ...(facts.here ? {} : { origin: "local:1" }), id: "r1" };
	const d = { ...delivery("r1", session), late: facts.late || undefined } as ReturnType<typeof delivery>;
	if (facts.delivered) box.deliver(d, { gone: true });
	const before = hostSession.messages.length;
	let waitGot = false;
	if (facts.waited) void box.waitFor(session, ["r1"], 600_000).then((w) => void (waitGot = w.ended.length > 0));
	let taker = 0;
	if (facts.registered)
		takers.register("r1", (_frame, taken) => {
			taker++;
			taken(facts.takes);
		});
	const known = { gone: facts.gone, openInStore: facts.openInStore, late: facts.late };
	const said = route.where(end, undefined, known);
	const did = route.send(d, end, { ...known, ...(facts.here ? {} : { sendBack: (taken) => void bus.emit(lateChannel("r1"), late("r1"), taken) }) });
	await vi.advanceTimersByTimeAsync(GONE_GRACE_MS + 1);
	const toHost = hostSession.messages.slice(before);
	let seen = "none";
	if (taker > 0) seen = "asker-process";
	else if (waitGot) seen = "wait";
	else if (asker.messages.length > 0 || toHost.some((m) => m.message.details.forwarded === undefined)) seen = "asker";
	else if (toHost.length > 0) seen = toHost[0]!.options?.triggerTurn ? "host-wakes" : "host-quiet";
	// The host's own question: its session is the asker's, so an end forwarded there is its own message.
	return { said, did, seen: facts.here && facts.askerIsHost && seen === "host-wakes" ? "asker" : seen };
}

const seenAs = (home: Home) =>
	home.to === "host" ? (home.wakes ? "host-wakes" : "host-quiet") : home.to === "nowhere" || home.to === "store" ? "none" : home.to;

describe("where and send agree", () => {
	it("for any facts: where says what send then does, and the end lands there (a refused send-back going on to the host's session)", async () => {
		await fc.assert(
			fc.asyncProperty(FACTS, async (facts) => {
				const { said, did, seen } = await sentAndSeen(facts);
				expect(did).toEqual(said);
				const expected = seenAs(said);
				expect(seen).toBe(facts.here && facts.askerIsHost && expected === "host-wakes" ? "asker" : expected);
			}),
			propertyRun(300),
		);
	});

	it("says where each end goes in words for /checkpoints, naming the asker where it goes to it", () => {
		const homes: [Home, string][] = [
			[{ to: "wait" }, "goes to planner, which is waiting for it"],
			[{ to: "asker" }, "goes to planner as a message"],
			[{ to: "asker-process" }, "goes back to planner, whose process is still connected"],
			[{ to: "store" }, "stays written down for the next host of this directory"],
			[{ to: "nowhere" }, "was given to planner already"],
			[{ to: "host", wakes: true }, "goes to this session (the asker is gone) and starts a turn of its model"],
			[{ to: "host", wakes: false }, "goes to this session (the asker is gone): recorded and shown here, without starting a turn of its model"],
		];
		for (const [home, words] of homes) expect(homeText(home, "planner"), home.to).toBe(words);
	});

	it("the decision is total and in its order: nowhere, store, wait, asker, asker-process, host", () => {
		fc.assert(
			fc.property(
				fc.record({
					here: fc.boolean(),
					delivered: fc.boolean(),
					gone: fc.boolean(),
					waited: fc.boolean(),
					attached: fc.boolean(),
					takesBack: fc.boolean(),
					openInStore: fc.boolean(),
					wakes: fc.boolean(),
				}),
				(facts: EndFacts) => {
					const home = homeOf(facts);
					const stays = facts.here && !facts.gone;
					if (facts.delivered) expect(home).toEqual({ to: "nowhere" });
					else if (facts.openInStore) expect(home).toEqual({ to: "store" });
					else if (stays && facts.waited) expect(home).toEqual({ to: "wait" });
					else if (stays && facts.attached) expect(home).toEqual({ to: "asker" });
					else if (!facts.here && !facts.gone && facts.takesBack) expect(home).toEqual({ to: "asker-process" });
					else expect(home).toEqual({ to: "host", wakes: facts.wakes });
				},
			),
			propertyRun(500),
		);
	});
});

describe("a transport's registration is the only way back to its process", () => {
	it("the takers of one bus are found by every caller; another bus has its own", () => {
		const { bus } = createHandle();
		const close = endTakers(bus).register("r1", () => {});
		expect(endTakers(bus).has("r1")).toBe(true);
		expect(endTakers(createHandle().bus).has("r1")).toBe(false);
		close();
		expect(endTakers(bus).has("r1")).toBe(false);
		expect(bus.listenerCount(lateChannel("r1"))).toBe(0);
	});
});

describe("the bridge and the host role meet at the takers, not at a listener count", () => {
	it("a request that takes late frames registers when its budget runs out; /checkpoints says its process, then the host's session once its client went", async () => {
		const shared = createHandle();
		const takers = endTakers(shared.bus);
		const box = createDeliveryBox({ hostSessionId: () => HOST_SESSION });
		const hostSession = fakeSession();
		box.attach(HOST_SESSION, hostSession.poster());
		const book = new RequestBook({ ...readLateConfig({}), expiryMs: 600_000 });
		const { role } = relay({}, { book, home: homeRoute(() => HOST_SESSION, box, takers) }, shared);
		const bridge = new Bridge({ handle: shared, transport: "endpoint", server: "endpoint" });
		const frames: unknown[] = [];
		const open = bridge.take(
			{
				client: "local:1",
				id: "asker-id-0123456789",
				asker: { label: "run", sessionId: "pid 7/run" },
				questions: [{ question: "Name?" }],
				deadline: Date.now() + 1_000,
				dialogTimeoutMs: 60_000,
				origin: "local:1",
				send: () => {},
				sendLate: (frame) => frames.push(frame) > 0,
			},
			undefined,
		)!;
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		expect(takers.has(open.hostId)).toBe(true);
		expect(role.whereLate(open.hostId)).toEqual({ to: "asker-process" });
		bridge.closeClient("local:1");
		expect(takers.has(open.hostId)).toBe(false);
		expect(shared.bus.listenerCount(lateChannel(open.hostId))).toBe(0);
		expect(role.whereLate(open.hostId)).toEqual({ to: "host", wakes: false });
		shared.bus.emit("answer", { requestId: open.hostId, answers: ["Ada"] }, () => {});
		expect(frames).toHaveLength(0);
		expect(hostSession.messages.map((m) => [m.message.details.requestId, m.message.details.forwarded])).toEqual([["asker-id-0123456789", true]]);
		role.release("quit", "done");
	});
});

describe("where a late request's answer goes, as /checkpoints asks it", () => {
	it("its late end, not its call's: a wait: false request whose timeout end was delivered still has its answer go to its session", async () => {
		const box = createDeliveryBox({ hostSessionId: () => HOST_SESSION });
		const asker = fakeSession();
		box.attach("child-session", asker.poster());
		const book = new RequestBook({ ...readLateConfig({}), expiryMs: 600_000 });
		const { role, ask, handle } = relay({}, { book, home: homeRoute(() => HOST_SESSION, box) });
		void ask([{ question: "Name?" }], { budgetMs: 1_000 });
		await flush(vi);
		const id = handle.snapshot()!.open.at(-1)!.requestId;
		await vi.advanceTimersByTimeAsync(1_000);
		box.deliver({ ...delivery(id, "child-session", "timeout"), queuedAt: 0 });
		expect(asker.ids()).toEqual([id]);
		expect(role.whereLate(id)).toEqual({ to: "asker" });
		role.release("quit", "done");
	});
});
