/**
 * Nothing lost on the way back, over NATS: the end of a request asked with `wait: false`, and a late
 * end, go to the asker's inbox as a NATS request marked `ack`, whose reply is the asker's sealed ack
 * once it has recorded the end in its session. Not recorded (its session is gone), or its inbox gone
 * before it could record (the process ended): the host's session gets the end, once. In-memory NATS
 * (fake-broker.ts), real timers.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { RequestBook } from "../../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { decodeNatsFrame, encodeNatsFrame } from "../../../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { seal, sharedKey } from "../../../../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { until } from "../../../support/until.ts";
import { type FakeClient, FakeNats } from "../../support/fake-broker.ts";
import { forwardedLate, hostSessionMessages } from "../../support/host-messages.ts";
import { askFake, type NatsHost, natsHost, RAW_KEYS, requestFrame, SUBJECTS } from "../../support/nats-room.ts";
import { propertyRun } from "../../support/property-policy.ts";

const HOST = "host-session";
const hostMessages = hostSessionMessages(HOST);
const QUESTION = { question: "Deploy to prod?", options: ["yes", "no"] };

const hosts: NatsHost[] = [];
afterEach(() => {
	hostMessages.length = 0;
	for (const host of hosts.splice(0)) host.quit();
});

/** An asker that asks with `wait: false` and records its end with `record`; the host holds its question, shown. */
/** How long the room waits for an ack in these tests. */
const ACK_WAIT_MS = 400;

async function askedLater(session: string, record: (envelope: Envelope, client: FakeClient) => boolean) {
	const nats = new FakeNats();
	const host = natsHost(nats, undefined, undefined, { ackWaitMs: ACK_WAIT_MS });
	hosts.push(host);
	let client: FakeClient | undefined;
	let taken = false;
	const recorded: Envelope[] = [];
	const call = askFake(nats, [QUESTION], {
		asker: { label: session, sessionId: session },
		later: true,
		connect: async () => (client = nats.client()),
		onProgress: () => void (taken = true),
		recordEnd: (envelope) => {
			recorded.push(envelope);
			return record(envelope, client!);
		},
	});
	await until(() => taken && host.fake.current() !== undefined, "the host's dialog and the receipt");
	return { host, call, recorded, client: () => client!, answer: () => host.fake.current()!.answer("no") };
}

const forwardedOk = { forwarded: true, envelope: { status: "ok", answers: [{ question: "Deploy to prod?", answer: "no" }] } };

describe("a queued answer acknowledged once recorded (NATS)", () => {
	it("an asker that records the end acks it, sealed: the host's session gets nothing", async () => {
		const run = await askedLater("nats-later-1", () => true);
		run.answer();
		await until(() => run.recorded.length > 0, "the record in the asker");
		const ack = await until(
			() =>
				run
					.client()
					.sent.map((s) => decodeNatsFrame(s.data))
					.find((c) => c.ok && c.frame.type === "ack"),
			"the ack",
		);
		expect(ack.ok && ack.frame).toMatchObject({ type: "ack", recorded: true, hostKey: expect.any(String), mac: expect.any(String) });
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(hostMessages).toEqual([]);
		expect(run.recorded).toHaveLength(1);
	});

	it("an asker whose session is gone says it cannot record it: the host's session gets it at once, forwarded, once", async () => {
		const run = await askedLater("nats-later-2", () => false);
		run.answer();
		await until(() => hostMessages.length > 0, "the message in the host's session", 1_000);
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject(forwardedOk);
		expect(hostMessages[0]!.details.asker).toContain("nats-later-2");
	});

	it("an asker whose process ends between receiving the end and recording it (its connection gone, no ack): the host's session gets it once the bound has passed, once", async () => {
		const run = await askedLater("nats-later-3", (_envelope, client) => {
			void client.close();
			return false;
		});
		const answeredAt = Date.now();
		run.answer();
		await until(() => hostMessages.length > 0, "the message in the host's session");
		expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(ACK_WAIT_MS - 50);
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject(forwardedOk);
	});

	it("a late end the asker cannot record (its session gone, its inbox still there) goes to the host's session at once, not after the bound", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats, undefined, new RequestBook(readLateConfig({})));
		hosts.push(host);
		const envelope = await askFake(nats, [QUESTION], {
			asker: { label: "nats-late", sessionId: "nats-late" },
			budgetMs: 300,
			dialogTimeoutMs: 0,
			onLate: () => false,
		});
		expect(envelope.status).toBe("timeout");
		const requestId = host.handle.snapshot()?.late?.[0]?.requestId;
		const answeredAt = Date.now();
		await forwardedLate(hostMessages, "nats-late", () => host.handle.bus.emit("answer", { requestId, answers: ["no"], source: "web" }, () => {}));
		expect(Date.now() - answeredAt).toBeLessThan(1_000);
	});
});

describe("replies to an end marked ack (property)", () => {
	/** What a room member (or a broken asker) may put in the reply to request `id`'s end: only the asker's own sealed ack saying recorded counts. */
	type Reply = (id: string, hostKey: string) => Uint8Array;
	const reply: fc.Arbitrary<Reply> = fc.oneof(
		fc.uint8Array({ maxLength: 120 }).map((bytes) => () => bytes),
		fc.json().map((json) => () => new TextEncoder().encode(json)),
		// Unsealed: anyone who saw the reply subject could send it.
		fc.boolean().map((recorded) => (id: string) => encodeNatsFrame({ type: "ack", v: FRAME_VERSION.nats, id, recorded })),
		// Sealed by the asker, but for another request, or saying not recorded.
		fc.boolean().map((otherId) => (id: string, hostKey: string) => {
			const macKey = sharedKey(RAW_KEYS.privateKey, hostKey)!;
			return encodeNatsFrame(seal({ type: "ack", v: FRAME_VERSION.nats, id: otherId ? `${id}-other` : id, recorded: otherId }, RAW_KEYS.publicKey, macKey));
		}),
	);
	/** Each run asks under a fresh id: the process's box delivers one id once. */
	let run = 0;
	it("anything but the asker's sealed ack of that end saying recorded leaves the end to the host's session, once", async () => {
		await fc.assert(
			fc.asyncProperty(reply, async (makeReply) => {
				const id = `p-${++run}`;
				const nats = new FakeNats();
				const host = natsHost(nats, undefined, undefined, { ackWaitMs: 300 });
				hosts.push(host);
				const client = nats.client();
				const inbox = client.inbox();
				client.subscribe(inbox, (message) => {
					const checked = decodeNatsFrame(message.data);
					if (checked.ok && checked.frame.type === "result" && message.reply) client.publish(message.reply, makeReply(id, String(checked.frame.hostKey)));
				});
				client.publish(SUBJECTS.request, encodeNatsFrame(requestFrame(id, [QUESTION], { later: true, acks: true })), inbox);
				await until(() => host.fake.current(), "the dialog");
				host.fake.current()!.answer("no");
				await until(() => hostMessages.length > 0, "the message in the host's session");
				await new Promise((resolve) => setTimeout(resolve, 20));
				expect(hostMessages).toHaveLength(1);
				hostMessages.length = 0;
				host.quit();
			}),
			propertyRun(40),
		);
	}, 60_000);
});
