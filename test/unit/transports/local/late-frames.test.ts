/**
 * Late answers for askers of another process over the local endpoint: a call that ended `timeout`
 * leaves its question open at the host, marked late; when it is answered later, the answer goes
 * back on the asker's connection as a `late` frame while that connection is open (the asker's
 * process delivers it to the asking session, once), and to the host's session, naming the asker,
 * when the asker is gone or is of a version that takes no late frames. Real endpoint, real sockets.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type CallControl, lateEnd } from "../../../../extensions/checkpoint-bridge/core/asking/call.ts";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { RequestBook } from "../../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { type Envelope, STATUSES } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { validateAskParams } from "../../../../extensions/checkpoint-bridge/model/validate.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { decodeFrame } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { closePooledConnections, releaseLateWaits } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { until } from "../../../support/until.ts";
import { hostWithEndpoint } from "../../support/endpoint-host.ts";
import { forwardedLate, hostSessionMessages } from "../../support/host-messages.ts";
import { propertyRun } from "../../support/property-policy.ts";
import { openConnections } from "../../support/server-sockets.ts";

const HOST = "host-session";
// The process's box, made first here: the host's session is HOST in every test of this file.
const hostMessages = hostSessionMessages(HOST);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
	closePooledConnections();
	hostMessages.length = 0;
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A call of `session` whose budget (300 ms) runs out while its dialog is open; `onLate` collects what comes late. */
async function timedOut(withLateFrames: boolean, session: string) {
	const served = await hostWithEndpoint(cleanups, { sessionId: HOST, book: new RequestBook(readLateConfig({})) });
	const late: Envelope[] = [];
	const call = askRemote(served.endpoint.endpoint, {
		asker: { label: session, sessionId: session },
		questions: [{ question: "Deploy to prod?", options: ["yes", "no"] }],
		budgetMs: 300,
		dialogTimeoutMs: 0,
		...(withLateFrames ? { onLate: (envelope: Envelope) => void late.push(envelope) } : {}),
	});
	await served.feed.next();
	const envelope = await call;
	expect(envelope.status).toBe("timeout");
	const [kept] = served.role.host.lateRequests();
	expect(kept, "the question stays open at the host, marked late").toBeDefined();
	const answer = () => expect(served.role.host.answerFromOutside({ requestId: kept!.request.id, answers: ["no"], source: "web" })).toEqual({ ok: true });
	return { ...served, envelope, late, answer };
}

describe("late frames on the local endpoint", () => {
	it("an asker still connected gets its late answer on its connection, once, under its own request id; the host's session gets nothing", async () => {
		const run = await timedOut(true, "worker-1");
		run.answer();
		await until(() => run.late.length > 0, "the late frame");
		expect(run.late).toHaveLength(1);
		expect(run.late[0]).toMatchObject({
			status: "ok",
			requestId: run.envelope.requestId,
			asker: "worker-1",
			answers: [{ question: "Deploy to prod?", answer: "no" }],
		});
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(run.late).toHaveLength(1);
		expect(hostMessages).toEqual([]);
	});

	it("an asker whose connection is gone (its process exited): the host's session gets it, forwarded, naming the asker and the question", async () => {
		const run = await timedOut(true, "worker-2");
		closePooledConnections();
		await until(() => openConnections(run.endpoint.endpoint) === 0, "the connection's close at the host");
		expect(await forwardedLate(hostMessages, "worker-2", run.answer)).toMatchObject({ questions: ["Deploy to prod?"] });
		expect(run.late).toEqual([]);
	});

	it("an asker whose session ended while its process runs: its connection closes, and the host's session gets it, forwarded, naming the asker", async () => {
		const run = await timedOut(true, "worker-5");
		releaseLateWaits("worker-5");
		await until(() => openConnections(run.endpoint.endpoint) === 0, "the connection's close at the host");
		expect(await forwardedLate(hostMessages, "worker-5", run.answer)).toMatchObject({ questions: ["Deploy to prod?"] });
		expect(run.late).toEqual([]);
	});

	it("an asker that takes no late frames (an older version): the host's session gets it, as before", async () => {
		await forwardedLate(hostMessages, "worker-3", (await timedOut(false, "worker-3")).answer);
	});

	it("a dismissal of the late question comes back the same way, with its reason", async () => {
		const run = await timedOut(true, "worker-4");
		const [kept] = run.role.host.lateRequests();
		expect(run.role.host.answerFromOutside({ requestId: kept!.request.id, cancel: true })).toEqual({ ok: true });
		await until(() => run.late.length > 0, "the late frame");
		expect(run.late[0]).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", requestId: run.envelope.requestId });
		expect(hostMessages).toEqual([]);
	});
});

/** A call of two questions as the asker holds it (its questions checked), for its late frames. */
function callOf(): CallControl {
	const checked = validateAskParams({ questions: [{ question: "Deploy?", options: ["yes", "no"] }, { question: "Why?" }] });
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	const request = {
		v: 1,
		id: "call-1",
		asker: { label: "worker", sessionId: "w" },
		questions: checked.questions,
		deadline: 0,
		dialogTimeoutMs: 0,
		createdAt: Date.now(),
	};
	return { id: "call-1", request, reply() {}, end() {} };
}

const VALID_LATE = {
	type: "late",
	v: FRAME_VERSION.endpoint,
	id: "call-1",
	kind: "late",
	status: "ok",
	answers: [
		{ question: "Deploy?", answer: "yes" },
		{ question: "Why?", answer: "tested" },
	],
};

describe("late frames from random input", () => {
	it("whatever a host sends as a late frame: refused by the wire check, or one envelope whose answers fit the call's questions (else error); nothing throws", () => {
		const answer = fc.record({
			question: fc.oneof(fc.constantFrom("Deploy?", "Why?"), fc.string({ maxLength: 12 })),
			answer: fc.oneof(fc.constantFrom("yes", "no"), fc.string({ maxLength: 12 })),
		});
		const frame = fc.oneof(
			fc.json().map((json) => json),
			fc
				.tuple(fc.constantFrom("v", "id", "kind", "status", "answers", "note", "reason", "__proto__"), fc.jsonValue())
				.map(([key, value]) => JSON.stringify({ ...VALID_LATE, [key]: value })),
			fc
				.record({
					status: fc.constantFrom(...STATUSES, "queued"),
					answers: fc.array(answer, { maxLength: 3 }),
					note: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
					reason: fc.option(fc.string({ maxLength: 16 }), { nil: undefined }),
				})
				.map((fields) => JSON.stringify({ ...VALID_LATE, ...fields })),
		);
		const questions = callOf().request.questions.map((q) => q.question);
		fc.assert(
			fc.property(frame, (line) => {
				const checked = decodeFrame(line);
				if (!checked.ok || checked.frame.type !== "late") return;
				const got: Envelope[] = [];
				lateEnd(callOf(), { asker: { label: "worker", sessionId: "w" }, onLate: (envelope) => void got.push(envelope) })(checked.frame);
				expect(got).toHaveLength(1);
				const [envelope] = got;
				expect(envelope!.requestId).toBe("call-1");
				if (envelope!.status === "error" && checked.frame.status !== "error") expect(envelope!.answers).toEqual([]);
				else expect(envelope!.status).toBe(checked.frame.status);
				// Every answer passed on answers a question of the call.
				for (const a of envelope!.answers) expect(questions).toContain(a.question);
				if (envelope!.status === "timeout-or-cancelled") expect(envelope!.reason).toEqual(expect.any(String));
			}),
			propertyRun(500),
		);
	});
});
