/**
 * Late answers for askers on NATS: a call that ended `timeout` leaves its question open at the host,
 * marked late; its later end goes to the asker's inbox as a sealed `late` frame, sent as a request
 * whose ack says the asker's process took it (it delivers it to the asking session, once). An asker
 * whose session ended (no inbox any more) or that takes no late frames leaves it to the host's
 * session, naming the asker. In-memory NATS (fake-broker.ts), real timers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { RequestBook } from "../../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { releaseLateWaits } from "../../../../extensions/checkpoint-bridge/transports/nats/asker.ts";
import { encodeNatsFrame, type NatsFrame } from "../../../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { until } from "../../../support/until.ts";
import { FakeNats } from "../../support/fake-broker.ts";
import { forwardedLate, hostSessionMessages } from "../../support/host-messages.ts";
import { askFake, type NatsHost, natsHost, SUBJECTS } from "../../support/nats-room.ts";

const HOST = "host-session";
// The process's box, made first here: the host's session is HOST in every test of this file.
const hostMessages = hostSessionMessages(HOST);

const hosts: NatsHost[] = [];
afterEach(() => {
	hostMessages.length = 0;
	for (const host of hosts.splice(0)) host.quit();
});

/** A call of `session` whose budget (300 ms) runs out while its dialog is open; `late` collects what comes late. */
async function timedOut(withLateFrames: boolean, session: string) {
	const nats = new FakeNats();
	const host = natsHost(nats, undefined, new RequestBook(readLateConfig({})));
	hosts.push(host);
	const late: Envelope[] = [];
	const envelope = await askFake(nats, [{ question: "Deploy to prod?", options: ["yes", "no"] }], {
		asker: { label: session, sessionId: session },
		budgetMs: 300,
		dialogTimeoutMs: 0,
		...(withLateFrames ? { onLate: (ended: Envelope) => void late.push(ended) } : {}),
	});
	expect(envelope.status).toBe("timeout");
	const requestId = host.handle.snapshot()?.late?.[0]?.requestId;
	expect(requestId, "the question stays open at the host, marked late").toEqual(expect.any(String));
	const answer = () => {
		const replies: unknown[] = [];
		host.handle.bus.emit("answer", { requestId, answers: ["no"], source: "web" }, (reply) => void replies.push(reply));
		expect(replies).toEqual([{ ok: true }]);
	};
	return { envelope, late, answer };
}

describe("late frames on NATS", () => {
	it("an asker whose session still runs gets its late answer in its inbox, once, under its own request id; the host's session gets nothing", async () => {
		const run = await timedOut(true, "nats-worker-1");
		run.answer();
		await until(() => run.late.length > 0, "the late frame");
		expect(run.late[0]).toMatchObject({ status: "ok", requestId: run.envelope.requestId, answers: [{ question: "Deploy to prod?", answer: "no" }] });
		// The ack reached the host: nothing goes to its session.
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(run.late).toHaveLength(1);
		expect(hostMessages).toEqual([]);
	});

	it("an asker whose session ended (its inbox gone): the host's session gets it, forwarded, naming the asker", async () => {
		const run = await timedOut(true, "nats-worker-2");
		releaseLateWaits("nats-worker-2");
		expect(await forwardedLate(hostMessages, "nats-worker-2", run.answer)).toMatchObject({ questions: ["Deploy to prod?"] });
		expect(run.late).toEqual([]);
	});

	it("an asker that takes no late frames (an older version): the host's session gets it, as before", async () => {
		await forwardedLate(hostMessages, "nats-worker-3", (await timedOut(false, "nats-worker-3")).answer);
	});

	it("a late frame for the call not sealed by its host (anyone who reads the room) is ignored and not acked; the host's own still comes", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats, undefined, new RequestBook(readLateConfig({})));
		hosts.push(host);
		const late: Envelope[] = [];
		const inboxes: string[] = [];
		const spy = nats.client();
		spy.subscribe(SUBJECTS.request, (message) => message.reply && inboxes.push(message.reply));
		const envelope = await askFake(nats, [{ question: "Deploy to prod?", options: ["yes", "no"] }], {
			asker: { label: "nats-worker-4", sessionId: "nats-worker-4" },
			budgetMs: 300,
			dialogTimeoutMs: 0,
			onLate: (ended) => void late.push(ended),
		});
		const forged = {
			type: "late",
			v: FRAME_VERSION.nats,
			id: envelope.requestId!,
			kind: "late",
			status: "ok",
			answers: [{ question: "Deploy to prod?", answer: "yes" }],
		} as unknown as NatsFrame;
		const outcome = await spy.request(inboxes[0]!, encodeNatsFrame(forged), 200);
		expect(outcome.kind, "no ack for a frame the host did not seal").toBe("timeout");
		expect(late).toEqual([]);
		const requestId = host.handle.snapshot()?.late?.[0]?.requestId;
		host.handle.bus.emit("answer", { requestId, answers: ["no"], source: "web" }, () => {});
		await until(() => late.length > 0, "the host's late frame");
		expect(late[0]).toMatchObject({ status: "ok", answers: [{ answer: "no" }] });
	});
});
