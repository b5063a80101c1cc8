/**
 * The asking side on NATS against a room server on the in-memory broker, with fake timers: a room
 * nobody serves, a host that hangs or quits, the grace (CHECKPOINT_BRIDGE_HOST_GRACE_MS) with a new
 * host keeping answers already given, and replies the asker must refuse.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { processSlot } from "../../../../extensions/checkpoint-bridge/core/shared/process-slot.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import {
	decodeNatsFrame,
	encodeNatsFrame,
	type NatsCancelFrame,
	type NatsFrame,
	type NatsRequestFrame,
} from "../../../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { RESEND_INTERVAL_MS, SILENCE_MS, TICK_MS } from "../../../../extensions/checkpoint-bridge/transports/nats/liveness.ts";
import { newKeyPair, seal, secretMatches, sharedKey } from "../../../../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { type FakeClient, FakeNats } from "../../support/fake-broker.ts";
import { hostSessionMessages } from "../../support/host-messages.ts";
import { askFake, natsHost, ROOM, SUBJECTS } from "../../support/nats-room.ts";

const Q = [{ question: "Which naming convention?", options: [{ label: "camelCase" }, { label: "snake_case" }] }];
const TWO = [{ question: "Name?" }, { question: "Colour?" }];
const flush = () => vi.advanceTimersByTimeAsync(0);
/** Worst case for a silent host to be noticed. */
const NOTICE_MS = SILENCE_MS + 2 * TICK_MS;

// The process's box, made first here: natsHost's session is the host's session in every test of this file.
const hostMessages = hostSessionMessages("host-session");

beforeEach(() => {
	vi.useFakeTimers();
	// Each test is a fresh asker process: no host was ever heard (the module's process slot).
	processSlot(globalThis, Symbol.for("checkpoint-bridge.nats-host-heard"), () => ({ heard: false })).heard = false;
	hostMessages.length = 0;
});
afterEach(() => void vi.useRealTimers());

/** Tracks a call: its envelope once settled, and how many times it settled. */
function track(promise: Promise<Envelope>) {
	const state: { envelope?: Envelope; at?: number } = {};
	const started = Date.now();
	void promise.then((envelope) => {
		state.envelope = envelope;
		state.at = Date.now() - started;
	});
	return state;
}

describe("no host, and a host that goes away (grace 0)", () => {
	it("a room nobody serves: no-host at once (the server's no-responders), without waiting for a heartbeat", async () => {
		const nats = new FakeNats();
		const call = track(askFake(nats, Q));
		await flush();
		expect(call.envelope).toMatchObject({ status: "no-host" });
		expect(call.envelope!.note).toMatch(/No host serves the room "test"/);
		expect(call.at).toBe(0);
	});

	it(`a host that hangs mid-dialog (cut off, still subscribed): no-host after ${SILENCE_MS} ms of silence, within ${NOTICE_MS} ms`, async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const call = track(askFake(nats, Q));
		await flush();
		expect(host.fake.dialogs).toHaveLength(1);
		host.client.cut();
		await vi.advanceTimersByTimeAsync(SILENCE_MS - TICK_MS);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(NOTICE_MS - SILENCE_MS + TICK_MS);
		expect(call.envelope).toMatchObject({ status: "no-host" });
		expect(call.envelope!.note).toMatch(/stopped answering/);
		expect(call.at).toBeLessThanOrEqual(NOTICE_MS);
	});

	it("a host whose requests reach it but which never answers (hung before the request): no-host after the silence", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		host.client.cut();
		const call = track(askFake(nats, Q));
		await vi.advanceTimersByTimeAsync(NOTICE_MS);
		expect(call.envelope).toMatchObject({ status: "no-host" });
		expect(call.envelope!.note).toMatch(/silent/);
	});

	it("a host that quits mid-dialog: no-host at once, with the host's note and the answers so far", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const call = track(askFake(nats, TWO));
		await flush();
		host.fake.current()!.answer("Ada");
		await flush();
		host.quit("The host session ended (quit).");
		await flush();
		expect(call.envelope).toMatchObject({ status: "no-host", answers: [{ question: "Name?", answer: "Ada" }] });
		expect(call.envelope!.note).toContain("The host session ended (quit).");
	});

	it("a host kept alive by pings answers after minutes: heartbeats alone never end a call", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const call = track(askFake(nats, Q, { budgetMs: 600_000, dialogTimeoutMs: 300_000 }));
		await vi.advanceTimersByTimeAsync(120_000);
		expect(call.envelope).toBeUndefined();
		host.fake.current()!.answer("camelCase");
		await flush();
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "camelCase" }] });
	});

	it("a call without a budget (timeoutMs: 0) waits at a host that keeps pinging, its dialog without a timeout", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const call = track(askFake(nats, Q, { budgetMs: 0, dialogTimeoutMs: 0 }));
		await flush();
		expect(host.fake.current()!.timeout).toBeUndefined();
		// Past every default (its dialog's 30 s here, a call's 300 s); the host holds it without a deadline (room-server.test.ts).
		await vi.advanceTimersByTimeAsync(600_000);
		expect(call.envelope).toBeUndefined();
		host.fake.current()!.answer("camelCase");
		await flush();
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "camelCase" }] });
	});

	it("a connection that fails: no-host at once with the reason", async () => {
		const call = track(
			askFake(new FakeNats(), Q, {
				connect: () => Promise.reject(new Error("the NATS server refused authorization (Authorization Violation; check CHECKPOINT_BRIDGE_NATS_TOKEN)")),
			}),
		);
		await flush();
		expect(call.envelope).toMatchObject({ status: "no-host" });
		expect(call.envelope!.note).toMatch(/authorization.*CHECKPOINT_BRIDGE_NATS_TOKEN/);
	});

	it("an asker whose budget runs out takes the host's verdict: the host's dialog closes at its deadline, the asker closes its connection", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		let client: FakeClient | undefined;
		const call = track(askFake(nats, Q, { budgetMs: 5_000, connect: async () => (client = nats.client()) }));
		await vi.advanceTimersByTimeAsync(5_000);
		await flush();
		// The host's clock decided (ADR-0019): its timeout, with its note, is what the asker reports.
		expect(call.envelope).toMatchObject({ status: "timeout", note: expect.stringMatching(/^The call's budget ran out before every question was answered\./) });
		expect(host.fake.dialogs[0]!.closedBy).toBe("signal");
		expect(client!.closed).toBe(true);
	});

	it("an asker that gives up (abort) tells the host, whose dialog closes, and closes its connection", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		let client: FakeClient | undefined;
		const abort = new AbortController();
		const call = track(askFake(nats, Q, { budgetMs: 5_000, signal: abort.signal, connect: async () => (client = nats.client()) }));
		await vi.advanceTimersByTimeAsync(1_000);
		abort.abort();
		await flush();
		expect(call.envelope).toMatchObject({ status: "cancelled" });
		expect(host.fake.dialogs[0]!.closedBy).toBe("signal");
		expect(client!.sent.map((m) => m.subject)).toContain(SUBJECTS.cancel);
		expect(client!.closed).toBe(true);
	});
});

describe("asked with wait: false, the asking process gone after its receipt", () => {
	it("its request says later: true; its pings stop when the process exits, the question stays, and its end goes to the host's session naming the asker", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		let client: FakeClient | undefined;
		let receipt = false;
		void askFake(nats, Q, { later: true, onProgress: () => void (receipt = true), connect: async () => (client = nats.client()) });
		await flush();
		expect(receipt).toBe(true);
		const sent = decodeNatsFrame(client!.sent.find((m) => m.subject === SUBJECTS.request)!.data);
		expect(sent).toMatchObject({ ok: true, frame: { type: "request", later: true } });
		// The process exits: its connection goes without a word, its pings stop.
		await client!.close();
		await vi.advanceTimersByTimeAsync(3 * NOTICE_MS);
		expect(host.fake.dialogs[0]!.closedBy).toBeUndefined();
		host.fake.current()!.answer("snake_case");
		await flush();
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject({ forwarded: true, envelope: { status: "ok", answers: [{ answer: "snake_case" }] } });
		expect(hostMessages[0]!.details.asker).toContain("planner (build-7:4242)");
		expect(host.handle.snapshot()?.open ?? []).toHaveLength(0);
	});
});

describe("refused replies", () => {
	it("junk, another version and a reply for another request on the asker's inbox are ignored; the real answer still arrives", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		let client: FakeClient | undefined;
		const call = track(askFake(nats, Q, { connect: async () => (client = nats.client()) }));
		await flush();
		const inbox = client!.sent[0]!.reply!;
		const intruder = nats.client();
		intruder.publish(inbox, new TextEncoder().encode("not json"));
		intruder.publish(inbox, encodeNatsFrame({ type: "result", v: 2, id: "x", kind: "result", status: "ok", answers: [] }));
		intruder.publish(
			inbox,
			encodeNatsFrame({
				type: "result",
				v: FRAME_VERSION.nats,
				id: "someone-else",
				kind: "result",
				status: "ok",
				answers: [{ question: "Q", answer: "forged", kind: "text" }],
			}),
		);
		intruder.publish(inbox, encodeNatsFrame({ type: "pong", v: FRAME_VERSION.nats, id: "someone-else", held: false, host: "h" }));
		await flush();
		expect(call.envelope).toBeUndefined();
		host.fake.current()!.answer("snake_case");
		await flush();
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "snake_case" }] });
	});

	it("the host's error frame (a version mismatch) settles the call as error naming it", async () => {
		const nats = new FakeNats();
		const fakeHost = nats.client();
		fakeHost.subscribe(SUBJECTS.request, (m) =>
			fakeHost.publish(m.reply!, encodeNatsFrame({ type: "error", v: 7, code: "bad-version", message: "The frame speaks v1; this side speaks v7." })),
		);
		const call = track(askFake(nats, Q));
		await flush();
		expect(call.envelope).toMatchObject({ status: "error" });
		expect(call.envelope!.note).toMatch(/bad-version.*v7/);
	});
});

describe("only the host that took the request is heard", () => {
	/** A client that reads the room's requests, as any member with subscribe rights can, and seals frames for the asker's key with a key of its own. */
	function reader(nats: FakeNats) {
		const client = nats.client();
		const keys = newKeyPair();
		const seen: { inbox: string; frame: NatsRequestFrame }[] = [];
		client.subscribe(SUBJECTS.request, (m) => {
			const checked = decodeNatsFrame(m.data);
			if (checked.ok && checked.frame.type === "request") seen.push({ inbox: m.reply!, frame: checked.frame });
		});
		const forge = (frame: NatsFrame) => {
			const { inbox, frame: request } = seen[0]!;
			client.publish(inbox, encodeNatsFrame(seal(frame, keys.publicKey, sharedKey(keys.privateKey, request.key)!)));
		};
		return { seen, forge, id: () => seen[0]!.frame.id };
	}

	it("a client that read the request answers in the host's place, sealed with its own key, after the host took it: ignored, the human's answer arrives", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const intruder = reader(nats);
		const call = track(askFake(nats, Q));
		await flush();
		expect(host.fake.dialogs).toHaveLength(1);
		const forged = {
			type: "result",
			v: FRAME_VERSION.nats,
			id: intruder.id(),
			kind: "result",
			status: "ok",
			answers: [{ question: Q[0]!.question, answer: "forged", kind: "text" }],
		};
		intruder.forge(forged as NatsFrame);
		await flush();
		expect(call.envelope).toBeUndefined();
		host.fake.current()!.answer("snake_case");
		await flush();
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "snake_case" }] });
	});

	it("a forged pong held: false (the host let go) from anyone but the host does not end the call", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const intruder = reader(nats);
		const call = track(askFake(nats, Q));
		await flush();
		intruder.forge({ type: "pong", v: FRAME_VERSION.nats, id: intruder.id(), held: false, host: host.server.hostId, note: "host restarted" });
		const { inbox } = intruder.seen[0]!;
		nats.client().publish(inbox, encodeNatsFrame({ type: "pong", v: FRAME_VERSION.nats, id: intruder.id(), held: false, host: host.server.hostId }));
		await flush();
		expect(call.envelope).toBeUndefined();
		host.fake.current()!.answer("camelCase");
		await flush();
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "camelCase" }] });
	});

	it("the real host's frame, altered and replayed under its key and MAC, fails the MAC and is ignored", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		let client: FakeClient | undefined;
		const call = track(askFake(nats, Q, { connect: async () => (client = nats.client()) }));
		const sniffed: Record<string, unknown>[] = [];
		await flush();
		const inbox = client!.sent[0]!.reply!;
		nats.client().subscribe(inbox, (m) => void sniffed.push(JSON.parse(new TextDecoder().decode(m.data))));
		nats
			.client()
			.publish(
				SUBJECTS.ping,
				encodeNatsFrame({ type: "ping", v: FRAME_VERSION.nats, id: (decodeNatsFrame(client!.sent[0]!.data) as { frame: NatsRequestFrame }).frame.id }),
				inbox,
			);
		await flush();
		const pong = sniffed.find((f) => f.type === "pong")!;
		const { hostKey, mac, id } = pong;
		const forged = {
			type: "result",
			v: FRAME_VERSION.nats,
			id,
			kind: "result",
			status: "ok",
			answers: [{ question: Q[0]!.question, answer: "forged", kind: "text" }],
			hostKey,
			mac,
		};
		nats.client().publish(inbox, encodeNatsFrame(forged as NatsFrame));
		await flush();
		expect(call.envelope).toBeUndefined();
		host.fake.current()!.answer("camelCase");
		await flush();
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "camelCase" }] });
	});

	it("the asker's cancel carries the secret whose hash its request carried", async () => {
		const nats = new FakeNats();
		natsHost(nats);
		let client: FakeClient | undefined;
		const abort = new AbortController();
		const call = track(askFake(nats, Q, { budgetMs: 10_000, signal: abort.signal, connect: async () => (client = nats.client()) }));
		await vi.advanceTimersByTimeAsync(1_000);
		abort.abort();
		await flush();
		expect(call.envelope).toMatchObject({ status: "cancelled" });
		const frames = client!.sent.map((m) => decodeNatsFrame(m.data)).map((c) => (c.ok ? c.frame : undefined));
		const request = frames.find((f) => f?.type === "request") as NatsRequestFrame;
		const cancel = frames.find((f) => f?.type === "cancel") as NatsCancelFrame;
		expect(secretMatches(cancel.secret, request.cancelHash)).toBe(true);
		expect(JSON.stringify(request)).not.toContain(cancel.secret);
	});
});

describe("a grace for the host to come back (CHECKPOINT_BRIDGE_HOST_GRACE_MS)", () => {
	const GRACE = 5_000;
	const withGrace = { config: { ...ROOM, graceMs: GRACE } };

	it("a host that quits after one of two answers, a new host 1 s later: only the open question is shown again, the answers arrive once", async () => {
		const nats = new FakeNats();
		const first = natsHost(nats);
		const settled: Envelope[] = [];
		const promise = askFake(nats, TWO, withGrace).then((e) => void settled.push(e));
		await flush();
		first.fake.current()!.answer("Ada");
		await flush();
		first.quit();
		await vi.advanceTimersByTimeAsync(1_000);
		expect(settled).toEqual([]);
		const second = natsHost(nats);
		await vi.advanceTimersByTimeAsync(RESEND_INTERVAL_MS + TICK_MS);
		expect(second.fake.dialogs.map((d) => d.title)).toEqual(["[planner (build-7:4242) · asked before the restart] (2/2) Colour?"]);
		second.fake.current()!.answer("blue");
		await promise;
		await vi.advanceTimersByTimeAsync(10_000);
		expect(settled).toHaveLength(1);
		expect(settled[0]).toMatchObject({
			status: "ok",
			answers: [
				{ question: "Name?", answer: "Ada" },
				{ question: "Colour?", answer: "blue" },
			],
		});
	});

	// Cut after the request was taken (a hang), or before it (it reached the host's subscription and nothing
	// came back: the host's first word died with a restarting server). Either way the hung host's subscriptions
	// remain, so re-sends reach nobody who answers, until the next host serves the room.
	for (const cut of ["after", "before"] as const)
		it(`a host cut off ${cut} it took the request: the asker waits, and the next host shows the question again`, async () => {
			const nats = new FakeNats();
			const first = natsHost(nats);
			if (cut === "before") first.client.cut();
			const call = track(askFake(nats, Q, withGrace));
			await flush();
			if (cut === "after") first.client.cut();
			await vi.advanceTimersByTimeAsync(NOTICE_MS + 1_000);
			expect(call.envelope).toBeUndefined();
			await first.client.close();
			const second = natsHost(nats);
			await vi.advanceTimersByTimeAsync(RESEND_INTERVAL_MS + TICK_MS);
			second.fake.current()!.answer("camelCase");
			await flush();
			expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "camelCase" }] });
		});

	it(`no host within the grace: no-host when it ends (${GRACE} ms after the loss, within a tick), with the answers so far`, async () => {
		const nats = new FakeNats();
		const first = natsHost(nats);
		const call = track(askFake(nats, TWO, withGrace));
		await flush();
		first.fake.current()!.answer("Ada");
		await flush();
		first.quit();
		await vi.advanceTimersByTimeAsync(GRACE - TICK_MS);
		expect(call.envelope).toBeUndefined();
		await vi.advanceTimersByTimeAsync(2 * TICK_MS);
		expect(call.envelope).toMatchObject({ status: "no-host", answers: [{ answer: "Ada" }] });
		expect(call.envelope!.note).toMatch(/within 5000 ms/);
	});

	it("the call's budget still ends it during the grace: timeout, once", async () => {
		const nats = new FakeNats();
		const first = natsHost(nats);
		const settled: Envelope[] = [];
		void askFake(nats, Q, { ...withGrace, budgetMs: 2_000 }).then((e) => void settled.push(e));
		await flush();
		first.quit();
		await vi.advanceTimersByTimeAsync(10_000);
		expect(settled.map((e) => e.status)).toEqual(["timeout"]);
	});

	it("a room nobody serves at the start is no-host at once, grace or not: the grace is for a host that vanished", async () => {
		const call = track(askFake(new FakeNats(), Q, withGrace));
		await flush();
		expect(call.envelope).toMatchObject({ status: "no-host" });
	});
});

describe("random input on the asker's inbox (property)", () => {
	const junk = fc.oneof(
		fc.uint8Array({ maxLength: 200 }),
		fc.json().map((s) => new TextEncoder().encode(s)),
		fc
			.record(
				{
					type: fc.constantFrom("result", "progress", "pong", "error", "request", "host"),
					code: fc.constantFrom("bad-version", "malformed"),
					message: fc.string(),
					v: fc.constantFrom(1, 2),
					id: fc.constantFrom("other", "x", ""),
					kind: fc.constantFrom("result", "progress"),
					status: fc.constantFrom("ok", "no-host", "bogus"),
					held: fc.boolean(),
					answers: fc.constant([{ question: "Which naming convention?", answer: "forged", kind: "text" }]),
				},
				{ requiredKeys: ["type", "id"] },
			)
			.map((o) => new TextEncoder().encode(JSON.stringify(o))),
	);
	it("never settles a held call, never changes its answer: only its own host's replies for its id count", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(junk, { maxLength: 15 }), async (messages) => {
				const nats = new FakeNats();
				const host = natsHost(nats);
				let client: FakeClient | undefined;
				const call = track(askFake(nats, Q, { connect: async () => (client = nats.client()) }));
				await flush();
				const intruder = nats.client();
				for (const bytes of messages) intruder.publish(client!.sent[0]!.reply!, bytes);
				await flush();
				// Error frames too: once a host holds the request, only that host's replies for its id count.
				expect(call.envelope).toBeUndefined();
				host.fake.current()!.answer("snake_case");
				await flush();
				expect(call.envelope).toMatchObject({ status: "ok", answers: [{ question: "Which naming convention?", answer: "snake_case" }] });
				host.quit();
			}),
			{ numRuns: 150 },
		);
	});
});
