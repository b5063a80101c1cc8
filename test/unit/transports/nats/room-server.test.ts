/**
 * The host side on NATS, on the in-memory broker with fake timers: forwarding onto the bus, id
 * remapping, budgets as milliseconds left, the asker's heartbeats, every refusal, and random input.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FRAME_VERSION, MAX_FRAME_BYTES } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { MAX_TIMEOUT_MS } from "../../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { MAX_OPEN_PER_ASKER } from "../../../../extensions/checkpoint-bridge/model/limits.ts";
import { capLength, sanitiseText, UNSAFE_CHARACTER } from "../../../../extensions/checkpoint-bridge/model/sanitise.ts";
import { encodeNatsFrame, type NatsFrame } from "../../../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { SILENCE_MS, TICK_MS } from "../../../../extensions/checkpoint-bridge/transports/nats/liveness.ts";
import {
	KEEP_RESEND_ANSWERS_MS,
	MAX_INBOX_LENGTH,
	MAX_OPEN_PER_CLIENT,
	MAX_ROOM_BYTES,
	MAX_ROOM_NOTICES_PER_WINDOW,
	MAX_ROOM_REQUESTS,
	natsAsker,
	ROOM_NOTICE_WINDOW_MS,
	serveRoom,
} from "../../../../extensions/checkpoint-bridge/transports/nats/room-server.ts";
import { newCancelSecret, sealValid, sharedKey } from "../../../../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { FakeNats } from "../../support/fake-broker.ts";
import { hostSessionMessages } from "../../support/host-messages.ts";
import { cancelFrame, type NatsHost, natsHost, PREFIX, pingFrame, RAW_KEYS, rawAsker, requestFrame, SUBJECTS } from "../../support/nats-room.ts";

const Q = [{ question: "Which naming convention?", options: [{ label: "camelCase" }, { label: "snake_case" }] }];
const TWO = [{ question: "Name?" }, { question: "Colour?" }];
const flush = () => vi.advanceTimersByTimeAsync(0);
/** Requests of the room's askers open at the host: what its queue shows. */
const openAtHost = (host: { handle: NatsHost["handle"] }) => host.handle.snapshot()?.open.length ?? 0;
/** The pong the room answers a ping for request `id` of `asker` with. */
async function pongFor(asker: ReturnType<typeof rawAsker>, id: string): Promise<NatsFrame | undefined> {
	const before = asker.received.length;
	asker.send(SUBJECTS.ping, pingFrame(id));
	await flush();
	return asker.received.slice(before).find((f) => f.type === "pong");
}
/** A fake NATS server with a host serving the room and one raw asker on it. */
function room() {
	const nats = new FakeNats();
	return { nats, host: natsHost(nats), asker: rawAsker(nats) };
}

// The process's box, made first here: natsHost's session is the host's session in every test of this file.
const hostMessages = hostSessionMessages("host-session");

beforeEach(() => {
	hostMessages.length = 0;
	vi.useFakeTimers();
});
afterEach(() => void vi.useRealTimers());

describe("forwarding a request onto the host's bus", () => {
	it("shows it as [label (machine:pid)] and sends the answer to the asker's inbox under the asker's id, not the bus id", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const seen: RelayRequest[] = [];
		host.handle.bus.on("request", (r) => seen.push(r));
		const asker = rawAsker(nats);
		asker.send(SUBJECTS.request, requestFrame("asker-id-1", Q));
		await flush();
		expect(host.fake.dialogs.map((d) => d.title)).toEqual(["[planner (build-7:4242)] Which naming convention?"]);
		expect(seen[0]!.id).not.toBe("asker-id-1");
		// Frames speak the wire's version, the bus its own: the room server translates, as the local endpoint does.
		expect(seen[0]!.v).toBe(PROTOCOL_VERSION);
		expect(seen[0]!.asker.sessionId).toBe("build-7:4242/planner-session");
		host.fake.current()!.answer("snake_case");
		await flush();
		const result = asker.received.find((f) => f.type === "result");
		expect(result).toMatchObject({ v: FRAME_VERSION.nats, id: "asker-id-1", status: "ok", answers: [{ answer: "snake_case" }] });
		expect(asker.received.every((f) => "id" in f && f.id === "asker-id-1")).toBe(true);
		expect(openAtHost(host)).toBe(0);
	});

	it("sets the deadline from the milliseconds left on its own clock, clamped to the one-hour ceiling", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const seen: RelayRequest[] = [];
		host.handle.bus.on("request", (r) => seen.push(r));
		const asker = rawAsker(nats);
		// The asker's own epoch deadline is a year off: ignored.
		asker.send(SUBJECTS.request, requestFrame("a", Q, { budgetMs: 5_000, deadline: Date.now() + 365 * 86_400_000 }));
		asker.send(SUBJECTS.request, requestFrame("b", Q, { budgetMs: 10 * MAX_TIMEOUT_MS, dialogTimeoutMs: 10 * MAX_TIMEOUT_MS }));
		await flush();
		expect(seen[0]!.deadline).toBe(Date.now() + 5_000);
		expect(seen[1]!.deadline).toBe(Date.now() + MAX_TIMEOUT_MS);
		expect(seen[1]!.dialogTimeoutMs).toBe(MAX_TIMEOUT_MS);
	});

	it("keeps answers a re-sent request carries: only the open question is shown", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", TWO, { answers: [{ question: "Name?", answer: "Ada", kind: "text", source: "web", smuggled: "x" }] }));
		await flush();
		expect(host.fake.dialogs.map((d) => d.title)).toEqual(["[planner (build-7:4242)] (2/2) Colour?"]);
		host.fake.current()!.answer("blue");
		await flush();
		const result = asker.received.find((f) => f.type === "result");
		expect(result).toMatchObject({
			status: "ok",
			answers: [
				// The asker's word, marked carried whatever source it named (issue 45): never "web" or "dialog".
				{ question: "Name?", answer: "Ada", source: "carried" },
				{ question: "Colour?", answer: "blue", source: "dialog" },
			],
		});
		expect(JSON.stringify(result)).not.toContain("smuggled");
	});

	it("a carried answer is marked carried, whatever source it names", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", TWO, { answers: [{ question: "Name?", answer: "Ada", kind: "text", source: "<b>forged</b>" }] }));
		await flush();
		host.fake.current()!.answer("blue");
		await flush();
		const result = asker.received.find((f) => f.type === "result") as { answers: unknown[] };
		expect(result.answers[0]).toEqual({ question: "Name?", answer: "Ada", kind: "text", source: "carried" });
	});

	it("answers no-host at once when no session holds the host role in its process", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		host.quit();
		serveRoom({ broker: nats.client(), handle: host.handle, prefix: PREFIX });
		const asker = rawAsker(nats);
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		expect(asker.received).toEqual([expect.objectContaining({ type: "result", status: "no-host" })]);
	});

	it("a duplicate of a held request (a re-send that crossed the first reply) is acknowledged, not queued twice", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		expect(openAtHost(host)).toBe(1);
		expect(host.fake.dialogs).toHaveLength(1);
		expect(asker.received.filter((f) => f.type === "pong")).toEqual([expect.objectContaining({ held: true, id: "r" })]);
	});

	it("each NATS client (its inbox) is an origin of its own: the same question from two clients is asked of each, from one client once", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const seen: RelayRequest[] = [];
		host.handle.bus.on("request", (r) => seen.push(r));
		const one = rawAsker(nats);
		const two = rawAsker(nats);
		one.send(SUBJECTS.request, requestFrame("a", Q, { machine: "build-7" }));
		one.send(SUBJECTS.request, requestFrame("a2", Q, { machine: "build-7", asker: { label: "reviewer", sessionId: "reviewer-session" } }));
		two.send(SUBJECTS.request, requestFrame("b", Q, { machine: "build-8" }));
		await flush();
		expect(seen.map((r) => r.origin)).toEqual([`nats:${one.inbox}`, `nats:${one.inbox}`, `nats:${two.inbox}`]);
		host.fake.current()!.answer("camelCase");
		await flush();
		expect(host.fake.dialogs.map((d) => d.title)).toEqual([
			"[planner (build-7:4242)] Which naming convention?",
			"[planner (build-8:4242)] Which naming convention?",
		]);
		expect(one.received.filter((f) => f.type === "result").map((f) => f.type === "result" && f.id)).toEqual(expect.arrayContaining(["a", "a2"]));
	});

	it("a request answered at once gets its result alone; one answered later gets the last progress of the turn that showed it, then its result", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats, (dialog) => {
			if (dialog.title.includes("at once")) dialog.answer("camelCase");
		});
		const asker = rawAsker(nats);
		asker.send(SUBJECTS.request, requestFrame("now", [{ ...Q[0]!, question: "Which naming convention, at once?" }]));
		await flush();
		expect(asker.received.map((f) => f.type)).toEqual(["result"]);
		expect(asker.received[0]).toMatchObject({ id: "now", status: "ok", answers: [{ answer: "camelCase" }] });
		asker.send(SUBJECTS.request, requestFrame("later", Q));
		await flush();
		// Queued, then shown in the same turn: only the state it reached is sent.
		expect(asker.received.slice(1)).toEqual([expect.objectContaining({ type: "progress", id: "later", stage: "shown" })]);
		host.fake.current()!.answer("snake_case");
		await flush();
		// Answered and ended in one turn too: the result alone.
		expect(asker.received.slice(2)).toEqual([
			expect.objectContaining({ type: "result", id: "later", status: "ok", answers: [expect.objectContaining({ answer: "snake_case" })] }),
		]);
	});

	it("the progress of an answer short of the last leaves at once, before the turn ends: a host that dies then has handed it over", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", TWO));
		await flush();
		expect(asker.received).toEqual([expect.objectContaining({ type: "progress", stage: "shown", answers: [] })]);
		host.fake.current()!.answer("Ada");
		// Microtasks only: the end of the turn has not come.
		for (let i = 0; i < 50; i++) await Promise.resolve();
		expect(asker.received.at(-1)).toMatchObject({ type: "progress", answers: [{ question: "Name?", answer: "Ada" }] });
	});

	it("a room closed in the turn that took a request lets it go without the progress not yet sent: the asker hears held: false last", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		// The request is taken and shown within microtasks; the end of the turn has not come.
		for (let i = 0; i < 50; i++) await Promise.resolve();
		expect(host.fake.dialogs).toHaveLength(1);
		host.server.close("bye");
		await flush();
		expect(asker.received.map((f) => f.type)).toEqual(["pong"]);
		expect(asker.received[0]).toMatchObject({ id: "r", held: false, note: "bye" });
	});

	it("names the asker with a machine name cleaned of anything that could fake a title", () => {
		expect(natsAsker({ label: "planner", sessionId: "s" }, "evil] [host", 1).label).toBe("planner (evil-host:1)");
	});
});

describe(`the asker's heartbeats (silence ${SILENCE_MS} ms, checked every ${TICK_MS} ms)`, () => {
	it(`an asker that stops pinging loses its question: the dialog is dismissed within ${SILENCE_MS + TICK_MS} ms, not before ${SILENCE_MS} ms`, async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		const dialog = host.fake.current()!;
		await vi.advanceTimersByTimeAsync(SILENCE_MS - TICK_MS);
		expect(dialog.closedBy).toBeUndefined();
		await vi.advanceTimersByTimeAsync(2 * TICK_MS);
		expect(dialog.closedBy).toBe("signal");
		expect(openAtHost(host)).toBe(0);
		expect(host.handle.snapshot()!.open).toEqual([]);
	});

	it("a request without a budget (deadline 0) has none at the host, and its asker falling silent still ends it", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const seen: RelayRequest[] = [];
		host.handle.bus.on("request", (r) => seen.push(r));
		const asker = rawAsker(nats);
		asker.send(SUBJECTS.request, requestFrame("r", Q, { deadline: 0, budgetMs: MAX_TIMEOUT_MS, dialogTimeoutMs: 0 }));
		await flush();
		expect(seen[0]).toMatchObject({ deadline: 0, dialogTimeoutMs: 0 });
		const dialog = host.fake.current()!;
		expect(dialog.timeout).toBeUndefined();
		await vi.advanceTimersByTimeAsync(SILENCE_MS + TICK_MS);
		expect(dialog.closedBy).toBe("signal");
		expect(openAtHost(host)).toBe(0);
	});

	it("an asker that pings keeps its question open, and each ping is answered held", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		for (let i = 0; i < 10; i++) {
			await vi.advanceTimersByTimeAsync(SILENCE_MS / 2);
			asker.send(SUBJECTS.ping, pingFrame("r"));
		}
		await flush();
		expect(host.fake.current()!.closedBy).toBeUndefined();
		expect(asker.received.filter((f) => f.type === "pong" && f.held)).toHaveLength(10);
	});

	it("answers given before the asker fell silent are kept for its re-send (its progress may never have arrived), for its inbox only, for KEEP_RESEND_ANSWERS_MS", async () => {
		const { nats, host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", TWO));
		await flush();
		host.fake.current()!.answer("Ada");
		await flush();
		// Silent past the window: dropped, the second question's dialog dismissed.
		await vi.advanceTimersByTimeAsync(SILENCE_MS + 2 * TICK_MS);
		expect(host.fake.dialogs[1]!.closedBy).toBe("signal");
		// Another client with the same id gets nothing of it.
		const other = rawAsker(nats);
		other.send(SUBJECTS.request, requestFrame("r", TWO));
		await flush();
		expect(host.fake.dialogs.at(-1)!.title).toMatch(/\(1\/2\) Name\?$/);
		other.send(SUBJECTS.cancel, cancelFrame("r"));
		await flush();
		// The asker itself re-sends without the answer (it never got the progress): only the open question is shown.
		asker.send(SUBJECTS.request, requestFrame("r", TWO));
		await flush();
		expect(host.fake.current()!.title).toMatch(/\(2\/2\) Colour\?$/);
		host.fake.current()!.answer("blue");
		await flush();
		expect(asker.received.find((f) => f.type === "result")).toMatchObject({
			status: "ok",
			answers: [
				{ question: "Name?", answer: "Ada" },
				{ question: "Colour?", answer: "blue" },
			],
		});
	});

	it(`kept answers are discarded after KEEP_RESEND_ANSWERS_MS (${KEEP_RESEND_ANSWERS_MS} ms)`, async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", TWO, { budgetMs: 2 * KEEP_RESEND_ANSWERS_MS }));
		await flush();
		host.fake.current()!.answer("Ada");
		await vi.advanceTimersByTimeAsync(KEEP_RESEND_ANSWERS_MS + SILENCE_MS + 3 * TICK_MS);
		asker.send(SUBJECTS.request, requestFrame("r", TWO));
		await flush();
		expect(host.fake.current()!.title).toMatch(/\(1\/2\) Name\?$/);
	});

	it("a cancel drops the request and closes its dialog; a ping for it then hears held: false", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		asker.send(SUBJECTS.cancel, cancelFrame("r"));
		await flush();
		expect(host.fake.dialogs[0]!.closedBy).toBe("signal");
		asker.send(SUBJECTS.ping, pingFrame("r"));
		await flush();
		expect(asker.received.at(-1)).toMatchObject({ type: "pong", held: false });
	});

	it("another client cannot cancel or ping a request it did not send (requests are keyed by the asker's inbox)", async () => {
		const { nats, host, asker } = room();
		const other = rawAsker(nats);
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		other.send(SUBJECTS.cancel, cancelFrame("r"));
		other.send(SUBJECTS.ping, pingFrame("r"));
		await flush();
		expect(host.fake.current()!.closedBy).toBeUndefined();
		expect(other.received).toEqual([expect.objectContaining({ type: "pong", held: false })]);
	});

	it("closing the room lets every held request go at once (pong held: false with the note) and dismisses its dialog", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		host.server.close("host quit");
		await flush();
		expect(host.fake.dialogs[0]!.closedBy).toBe("signal");
		expect(asker.received.at(-1)).toMatchObject({ type: "pong", held: false, note: "host quit" });
	});
});

describe("asked with wait: false (later: true): the asker's process may exit after its receipt", () => {
	it("its asker falls silent (its process gone): the question stays open, and its end goes to the host's session, once, naming the asker", async () => {
		const { host, asker } = room();
		const cancels: unknown[] = [];
		host.handle.bus.on("cancel", (c) => cancels.push(c));
		asker.send(SUBJECTS.request, requestFrame("r", Q, { later: true }));
		await flush();
		const dialog = host.fake.current()!;
		await vi.advanceTimersByTimeAsync(3 * SILENCE_MS);
		expect(cancels).toEqual([]);
		expect(dialog.closedBy).toBeUndefined();
		expect(openAtHost(host)).toBe(1);
		dialog.answer("snake_case");
		await flush();
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject({
			forwarded: true,
			requestId: "r",
			questions: ["Which naming convention?"],
			envelope: { status: "ok", answers: [{ answer: "snake_case" }] },
		});
		expect(hostMessages[0]!.details.asker).toContain("planner (build-7:4242)");
		// Its inbox is nobody's any more: nothing more is sent there, and the room holds nothing.
		expect(asker.received.filter((f) => f.type === "result")).toEqual([]);
		expect(openAtHost(host)).toBe(0);
	});

	it("a room member's question with raw escapes, its asker gone: the message in the host's session carries neutralised text in content and details", async () => {
		const { host, asker } = room();
		const raw = "Ship\u001b]8;;http://x\u0007 it\u001b[2J\u0007\u202e\u009b?";
		// An id of its own: the process's box remembers what it delivered, "r" included.
		asker.send(SUBJECTS.request, requestFrame("raw", [{ question: raw, options: [{ label: "yes" }, { label: "no" }] }], { later: true }));
		await flush();
		await vi.advanceTimersByTimeAsync(3 * SILENCE_MS);
		host.fake.current()!.answer("yes");
		await flush();
		// The form closes, then the request ends: one more turn.
		await flush();
		expect(hostMessages).toHaveLength(1);
		const [message] = hostMessages;
		expect(message!.content).toContain(sanitiseText(raw));
		expect(message!.content).not.toMatch(UNSAFE_CHARACTER);
		expect(JSON.stringify(message!.details)).not.toMatch(/\\u001b|\\u0007/);
		expect(JSON.stringify(message!.details)).not.toMatch(UNSAFE_CHARACTER);
		expect(message!.details.questions).toEqual([sanitiseText(raw)]);
	});

	it("its asker heard again after the silence (a nats-server restart): the end goes to its inbox, not to the host's session", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q, { later: true }));
		await flush();
		await vi.advanceTimersByTimeAsync(SILENCE_MS + 2 * TICK_MS);
		asker.send(SUBJECTS.ping, pingFrame("r"));
		await flush();
		expect(asker.received.at(-1)).toMatchObject({ type: "pong", held: true });
		host.fake.current()!.answer("camelCase");
		await flush();
		expect(asker.received.find((f) => f.type === "result")).toMatchObject({ id: "r", status: "ok", answers: [{ answer: "camelCase" }] });
		expect(hostMessages).toEqual([]);
	});

	it("a cancel under its secret still takes it off the host, and the room's close still lets it go", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("a", Q, { later: true }));
		asker.send(SUBJECTS.request, requestFrame("b", Q, { later: true }));
		await flush();
		asker.send(SUBJECTS.cancel, cancelFrame("a"));
		await flush();
		expect(host.fake.dialogs[0]!.closedBy).toBe("signal");
		await vi.advanceTimersByTimeAsync(SILENCE_MS + 2 * TICK_MS);
		host.server.close("host quit");
		await flush();
		expect(openAtHost(host)).toBe(0);
		expect(host.handle.snapshot()!.open).toEqual([]);
		expect(hostMessages).toEqual([]);
	});
});

describe("refusals: told to the sender only, never a dialog", () => {
	const cases: [string, () => Uint8Array, string][] = [
		["a wrong version", () => encodeNatsFrame({ ...requestFrame("r", Q), v: 99 } as never), "bad-version"],
		["an oversized frame", () => new Uint8Array(MAX_FRAME_BYTES + 1).fill(0x20), "too-large"],
		["bytes that are not UTF-8", () => new Uint8Array([0xff, 0xfe, 0x7b]), "malformed"],
		["JSON that is not an object", () => new TextEncoder().encode("[1,2]"), "malformed"],
		["a request without pid", () => encodeNatsFrame({ ...requestFrame("r", Q), pid: undefined } as never), "malformed"],
		["a request with a 65-character machine", () => encodeNatsFrame(requestFrame("r", Q, { machine: "m".repeat(65) })), "malformed"],
		["a request whose carried answers are not answers", () => encodeNatsFrame(requestFrame("r", Q, { answers: [{ question: 1 }] })), "malformed"],
		["a request whose later is not true (a string)", () => encodeNatsFrame(requestFrame("r", Q, { later: "yes" })), "malformed"],
		["a request whose later is false", () => encodeNatsFrame(requestFrame("r", Q, { later: false })), "malformed"],
		["a socket hello", () => encodeNatsFrame({ type: "hello", v: FRAME_VERSION.endpoint, token: "t", pid: 1 } as never), "unexpected"],
		[
			"a result frame sent to the host",
			() => encodeNatsFrame({ type: "result", v: FRAME_VERSION.nats, id: "r", kind: "result", status: "ok", answers: [] }),
			"unexpected",
		],
	];
	for (const [what, bytes, code] of cases)
		it(`${what}: an error frame "${code}" to its inbox, nothing queued`, async () => {
			const { host, asker } = room();
			asker.send(SUBJECTS.request, bytes());
			await flush();
			expect(asker.received).toEqual([expect.objectContaining({ type: "error", code })]);
			expect(host.fake.dialogs).toEqual([]);
			expect(host.fake.notices).toEqual([]);
			expect(openAtHost(host)).toBe(0);
		});

	it("a reply subject longer than MAX_INBOX_LENGTH (256): a malformed error frame to it, nothing queued", async () => {
		const { host, asker } = room();
		const long = `_INBOX.${"x".repeat(MAX_INBOX_LENGTH)}`;
		const received: string[] = [];
		asker.client.subscribe(long, (m) => void received.push(new TextDecoder().decode(m.data)));
		asker.send(SUBJECTS.request, requestFrame("r", Q), long);
		await flush();
		expect(received).toEqual([expect.stringMatching(/"code":"malformed".*at most 256/)]);
		expect(host.fake.dialogs).toEqual([]);
		expect(openAtHost(host)).toBe(0);
	});

	it("a request without a reply subject is dropped unanswered", async () => {
		const { host, asker } = room();
		asker.client.publish(SUBJECTS.request, encodeNatsFrame(requestFrame("r", Q)));
		await flush();
		expect(host.fake.dialogs).toEqual([]);
	});

	it("a request whose questions are invalid gets the host's error result, no dialog", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", [{ question: "" }]));
		await flush();
		expect(asker.received).toEqual([expect.objectContaining({ type: "result", status: "error" })]);
		expect(host.fake.dialogs).toEqual([]);
	});
});

describe("notices of other extensions on the notice subject", () => {
	const notice = (extra: Record<string, unknown> = {}) =>
		({
			type: "notice",
			v: FRAME_VERSION.nats,
			asker: { label: "planner", sessionId: "planner-session" },
			message: "Build started.",
			level: "warning",
			pid: 4242,
			machine: "build-7",
			...extra,
		}) as NatsFrame;

	it("shows it as [label (machine:pid)] message at its level; nothing is sent back", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.notice, notice(), undefined);
		await flush();
		expect(host.fake.notices).toEqual([{ message: "[planner (build-7:4242)] Build started.", type: "warning" }]);
		expect(asker.received).toEqual([]);
	});

	it.each([
		["a malformed notice (no machine)", () => encodeNatsFrame(notice({ machine: "" })), "malformed"],
		["a notice of an unknown level", () => encodeNatsFrame(notice({ level: "loud" })), "malformed"],
		["a notice of another version", () => encodeNatsFrame(notice({ v: FRAME_VERSION.nats - 1 })), "bad-version"],
		["a request on the notice subject", () => encodeNatsFrame(requestFrame("r", Q)), "unexpected"],
		["bytes that are not JSON", () => new TextEncoder().encode("{nope"), "malformed"],
	])("%s: an error frame %j to its sender's reply subject, nothing shown or queued", async (_what, bytes, code) => {
		const { host, asker } = room();
		asker.send(SUBJECTS.notice, bytes());
		await flush();
		expect(asker.received).toEqual([expect.objectContaining({ type: "error", code })]);
		expect(host.fake.notices).toEqual([]);
		expect(host.fake.dialogs).toEqual([]);
	});

	it("a notice on the request subject is refused there, never shown", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, notice());
		await flush();
		expect(asker.received).toEqual([expect.objectContaining({ type: "error", code: "unexpected" })]);
		expect(host.fake.notices).toEqual([]);
	});

	it(`at most ${MAX_ROOM_NOTICES_PER_WINDOW} in ${ROOM_NOTICE_WINDOW_MS} ms for the whole room, whoever sends them: the rest are dropped`, async () => {
		const { nats, host } = room();
		for (let i = 0; i < MAX_ROOM_NOTICES_PER_WINDOW + 5; i++) rawAsker(nats).send(SUBJECTS.notice, notice({ message: `n${i}`, pid: i + 1 }), undefined);
		await flush();
		expect(host.fake.notices.map((n) => n.message)).toEqual(
			Array.from({ length: MAX_ROOM_NOTICES_PER_WINDOW }, (_, i) => `[planner (build-7:${i + 1})] n${i}`),
		);
		await vi.advanceTimersByTimeAsync(ROOM_NOTICE_WINDOW_MS);
		rawAsker(nats).send(SUBJECTS.notice, notice({ message: "later" }), undefined);
		await flush();
		expect(host.fake.notices.at(-1)?.message).toBe("[planner (build-7:4242)] later");
	});

	it("random text in a valid notice: shown neutralised and bounded, prefixed with who sends it (property)", async () => {
		await fc.assert(
			fc.asyncProperty(fc.string({ unit: "binary", maxLength: 2_000 }), async (message) => {
				const { host, asker } = room();
				asker.send(SUBJECTS.notice, notice({ message }), undefined);
				await flush();
				expect(host.fake.notices).toEqual([{ message: `[planner (build-7:4242)] ${capLength(sanitiseText(message), 2_000)}`, type: "warning" }]);
				host.quit();
			}),
			{ numRuns: 100 },
		);
	});
});

describe("random input on every subject (property)", () => {
	const junk = fc.oneof(
		fc.uint8Array({ maxLength: 300 }),
		fc.json().map((s) => new TextEncoder().encode(s)),
		fc
			.record(
				{
					type: fc.constantFrom("request", "cancel", "ping", "pong", "host", "result", "progress", "hello", "error", "notice"),
					v: fc.constantFrom(1, 2, "1"),
					id: fc.oneof(fc.string(), fc.constant("r")),
				},
				{ requiredKeys: [] },
			)
			.chain((base) => fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 })).map((extra) => ({ ...extra, ...base })))
			.map((o) => new TextEncoder().encode(JSON.stringify(o))),
	);
	it("never crashes, never shows a dialog, never changes the request that is already open", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.tuple(fc.constantFrom(SUBJECTS.request, SUBJECTS.cancel, SUBJECTS.ping, SUBJECTS.host, SUBJECTS.notice), junk, fc.boolean()), {
					maxLength: 12,
				}),
				async (messages) => {
					const { nats, host, asker } = room();
					asker.send(SUBJECTS.request, requestFrame("r", Q));
					await flush();
					const intruder = rawAsker(nats);
					for (const [subject, bytes, withReply] of messages) intruder.send(subject, bytes, withReply ? intruder.inbox : undefined);
					await flush();
					// Random requests can be valid ones with random questions: they never reach the screen while ours is open.
					expect(host.fake.dialogs).toHaveLength(1);
					expect(host.fake.dialogs[0]!.closedBy).toBeUndefined();
					expect(host.fake.notices.filter((n) => !n.message.includes("asks"))).toEqual([]);
					host.fake.current()!.answer("camelCase");
					await flush();
					expect(asker.received.find((f) => f.type === "result")).toMatchObject({
						id: "r",
						status: "ok",
						answers: [{ question: Q[0]!.question, answer: "camelCase" }],
					});
					host.quit();
				},
			),
			{ numRuns: 150 },
		);
	});
});

/** Results with status error, as a raw asker received them. */
const refusals = (received: NatsFrame[]) => received.filter((f) => f.type === "result" && f.status === "error") as (NatsFrame & { note: string })[];

describe("what a room holds is bounded: refusals are error results naming the limit", () => {
	it("the defaults are the documented ones", () => {
		expect([MAX_OPEN_PER_ASKER, MAX_OPEN_PER_CLIENT, MAX_ROOM_REQUESTS, MAX_ROOM_BYTES]).toEqual([16, 128, 1024, 16 * 1024 * 1024]);
	});

	it("one asker session past MAX_OPEN_PER_ASKER (16) from one inbox: each further request refused, the open ones untouched", async () => {
		const { host, asker } = room();
		for (let i = 0; i < 40; i++) asker.send(SUBJECTS.request, requestFrame(`r${i}`, Q));
		await flush();
		expect(openAtHost(host)).toBe(MAX_OPEN_PER_ASKER);
		const refused = refusals(asker.received);
		expect(refused).toHaveLength(40 - MAX_OPEN_PER_ASKER);
		expect(refused[0]!.note).toContain(`MAX_OPEN_PER_ASKER = ${MAX_OPEN_PER_ASKER}`);
		// Once one settles, the session may ask again.
		host.fake.current()!.answer("camelCase");
		await flush();
		asker.send(SUBJECTS.request, requestFrame("again", Q));
		await flush();
		expect(openAtHost(host)).toBe(MAX_OPEN_PER_ASKER);
		expect(refusals(asker.received)).toHaveLength(40 - MAX_OPEN_PER_ASKER);
	});

	it("the same asker session from a fresh inbox for every request is capped all the same", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		const askers = Array.from({ length: 30 }, () => rawAsker(nats));
		askers.forEach((a, i) => a.send(SUBJECTS.request, requestFrame(`r${i}`, Q)));
		await flush();
		expect(openAtHost(host)).toBe(MAX_OPEN_PER_ASKER);
		expect(askers.flatMap((a) => refusals(a.received))).toHaveLength(30 - MAX_OPEN_PER_ASKER);
	});

	it("one client (inbox) under ever new session ids is capped at MAX_OPEN_PER_CLIENT (128), like one local connection", async () => {
		const { host, asker } = room();
		for (let i = 0; i < MAX_OPEN_PER_CLIENT + 5; i++) asker.send(SUBJECTS.request, requestFrame(`r${i}`, Q, { asker: { label: "flood", sessionId: `s${i}` } }));
		await flush();
		expect(openAtHost(host)).toBe(MAX_OPEN_PER_CLIENT);
		const refused = refusals(asker.received);
		expect(refused).toHaveLength(5);
		expect(refused[0]!.note).toContain(`maxOpenPerClient = ${MAX_OPEN_PER_CLIENT}`);
	});

	it("a flood of re-sent requests (marked resent, answers carried) meets the same caps as new ones: per asker session, per client", async () => {
		const { host, asker } = room();
		const carried = [{ question: "Name?", answer: "Ada", kind: "text" }];
		const resent = (id: string, sessionId: string) => requestFrame(id, TWO, { resent: true, answers: carried, asker: { label: "flood", sessionId } });
		for (let i = 0; i < 40; i++) asker.send(SUBJECTS.request, resent(`same-${i}`, "one-session"));
		for (let i = 0; i < MAX_OPEN_PER_CLIENT; i++) asker.send(SUBJECTS.request, resent(`new-${i}`, `s${i}`));
		await flush();
		expect(openAtHost(host)).toBe(MAX_OPEN_PER_CLIENT);
		const refused = refusals(asker.received);
		// 24 past the session's 16, then 16 past the client's 128.
		expect(refused).toHaveLength(40 - MAX_OPEN_PER_ASKER + MAX_OPEN_PER_ASKER);
		expect(refused[0]!.note).toContain(`MAX_OPEN_PER_ASKER = ${MAX_OPEN_PER_ASKER}`);
		expect(refused.at(-1)!.note).toContain(`maxOpenPerClient = ${MAX_OPEN_PER_CLIENT}`);
	});

	it("every inbox and session id new: the room holds at most maxRoomRequests (default 1024)", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		host.server.close();
		const server = serveRoom({ broker: nats.client(), handle: host.handle, prefix: PREFIX, maxRoomRequests: 5 });
		const askers = Array.from({ length: 8 }, () => rawAsker(nats));
		askers.forEach((a, i) => a.send(SUBJECTS.request, requestFrame(`r${i}`, Q, { asker: { label: "flood", sessionId: `s${i}` } })));
		await flush();
		expect(openAtHost(host)).toBe(5);
		const refused = askers.flatMap((a) => refusals(a.received));
		expect(refused).toHaveLength(3);
		expect(refused[0]!.note).toContain("maxRoomRequests = 5");
		server.close();
	});

	it("bytes: a request that would take the room past maxRoomBytes (default 16 MiB) is refused naming it", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		host.server.close();
		const server = serveRoom({ broker: nats.client(), handle: host.handle, prefix: PREFIX, maxRoomBytes: 4_000 });
		const big = (id: string) => [{ question: `Why ${id}?`, details: "d".repeat(1_500) }];
		const one = rawAsker(nats);
		for (const id of ["a", "b", "c"]) one.send(SUBJECTS.request, requestFrame(id, big(id), { asker: { label: id, sessionId: id } }));
		await flush();
		expect(openAtHost(host)).toBe(2);
		const refused = refusals(one.received);
		expect(refused.map((f) => f.type === "result" && f.id)).toEqual(["c"]);
		expect(refused[0]!.note).toContain("maxRoomBytes = 4000");
		// The refusal names what the room holds: within the bound, and past it with this one.
		const [, held, asked] = /holds (\d+) bytes .* of (\d+) bytes/.exec(refused[0]!.note ?? "")!.map(Number);
		expect(held).toBeLessThanOrEqual(4_000);
		expect(held! + asked!).toBeGreaterThan(4_000);
		// One settles: the room has the bytes again.
		host.fake.current()!.answer("because");
		await flush();
		one.send(SUBJECTS.request, requestFrame("c", big("c"), { asker: { label: "c", sessionId: "c" } }));
		await flush();
		expect(openAtHost(host)).toBe(2);
		server.close();
	});

	it("kept answers of a silent asker make way for a new request before it is refused", async () => {
		const nats = new FakeNats();
		const host = natsHost(nats);
		host.server.close();
		const server = serveRoom({ broker: nats.client(), handle: host.handle, prefix: PREFIX, maxRoomBytes: 3_000 });
		const asker = rawAsker(nats);
		asker.send(SUBJECTS.request, requestFrame("r", TWO));
		await flush();
		host.fake.current()!.answer("A".repeat(1_000));
		await vi.advanceTimersByTimeAsync(SILENCE_MS + 2 * TICK_MS);
		expect(openAtHost(host)).toBe(0);
		// Its answers are kept for a re-send: a ping for it is answered sealed with its asker's key.
		expect(await pongFor(asker, "r")).toHaveProperty("mac");
		const other = rawAsker(nats);
		other.send(SUBJECTS.request, requestFrame("n", [{ question: "New?", details: "d".repeat(1_800) }], { asker: { label: "o", sessionId: "o" } }));
		await flush();
		expect(refusals(other.received)).toEqual([]);
		expect(openAtHost(host)).toBe(1);
		// They made way: nothing is kept for it any more.
		expect(await pongFor(asker, "r")).not.toHaveProperty("mac");
		server.close();
	});

	it("a refusal is sealed for the asker: it carries the host's key and a MAC the asker can check", async () => {
		const nats = new FakeNats();
		natsHost(nats);
		const asker = rawAsker(nats);
		for (let i = 0; i <= MAX_OPEN_PER_ASKER; i++) asker.send(SUBJECTS.request, requestFrame(`r${i}`, Q));
		await flush();
		const [refused] = refusals(asker.received) as unknown as Record<string, unknown>[];
		expect(sealValid(refused!, sharedKey(RAW_KEYS.privateKey, refused!.hostKey as string)!)).toBe(true);
	});
});

describe("who may cancel a request, and whose frames an asker can trust", () => {
	it("a cancel under the asker's own inbox and id but without its secret is ignored; the asker's own cancel works", async () => {
		const { nats, host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		// Whoever read the request off the room knows the inbox, the id and the secret's hash, not the secret.
		const intruder = rawAsker(nats);
		intruder.send(SUBJECTS.cancel, cancelFrame("r", newCancelSecret().secret), asker.inbox);
		intruder.send(SUBJECTS.cancel, { ...cancelFrame("r"), secret: undefined } as never, asker.inbox);
		await flush();
		expect(host.fake.current()!.closedBy).toBeUndefined();
		expect(openAtHost(host)).toBe(1);
		asker.send(SUBJECTS.cancel, cancelFrame("r"));
		await flush();
		expect(host.fake.dialogs[0]!.closedBy).toBe("signal");
		expect(openAtHost(host)).toBe(0);
	});

	it("every frame for a request (progress, result, pong) carries the host's key and a valid MAC under the asker's key", async () => {
		const { host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		asker.send(SUBJECTS.ping, pingFrame("r"));
		await flush();
		host.fake.current()!.answer("camelCase");
		await flush();
		const frames = asker.received as unknown as Record<string, unknown>[];
		expect(frames.map((f) => f.type)).toEqual(expect.arrayContaining(["progress", "pong", "result"]));
		const key = sharedKey(RAW_KEYS.privateKey, frames[0]!.hostKey as string)!;
		for (const frame of frames) expect(sealValid(frame, key)).toBe(true);
	});

	it("a re-send of a held request under another key (someone who read it) gets nothing", async () => {
		const { nats, host, asker } = room();
		asker.send(SUBJECTS.request, requestFrame("r", Q));
		await flush();
		const before = asker.received.length;
		const intruder = rawAsker(nats);
		const other = (await import("../../../../extensions/checkpoint-bridge/transports/nats/seal.ts")).newKeyPair();
		intruder.send(SUBJECTS.request, requestFrame("r", Q, { key: other.publicKey }), asker.inbox);
		await flush();
		expect(asker.received).toHaveLength(before);
		expect(openAtHost(host)).toBe(1);
	});
});
