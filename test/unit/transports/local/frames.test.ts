/** The endpoint's frames on the socket (transports/local/frames.ts, core/bridge/frames.ts), its line reader, its address, and how a remote asker is shown. */
import { describe, expect, it } from "vitest";
import { FRAME_VERSION, type RequestFrame } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { PROTOCOL_VERSION } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { addressOf, advertise, ENDPOINT_ENV, endpointFromEnv } from "../../../../extensions/checkpoint-bridge/transports/local/address.ts";
import { remoteAsker } from "../../../../extensions/checkpoint-bridge/transports/local/connection.ts";
import { decodeFrame, encodeFrame, type Frame, LineReader } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";

const v = FRAME_VERSION.endpoint;
const NONCE = "n".repeat(43);
const request: RequestFrame = {
	type: "request",
	v,
	id: "V1StGXR8_Z5jdHi6B-myT",
	asker: { label: "planner", sessionId: "s-1" },
	questions: [{ question: "Project name?" }],
	deadline: 2_000,
	dialogTimeoutMs: 1_000,
	createdAt: 1_000,
};

describe("frames", () => {
	const valid: Frame[] = [
		{ type: "hello", v, nonce: NONCE, pid: 4242 },
		{ type: "welcome", v, proof: NONCE, nonce: NONCE },
		{ type: "auth", v, proof: NONCE },
		request,
		{ type: "cancel", v, id: "r1", reason: "timeout" },
		{ type: "notice", v, asker: { label: "planner", sessionId: "s-1" }, message: "Build started.", level: "warning" },
		{ type: "progress", v, id: "r1", kind: "progress", stage: "queued", answers: [], position: 1 },
		{ type: "result", v, id: "r1", kind: "result", status: "ok", answers: [{ question: "q", answer: "a", kind: "text" }] },
		{ type: "error", v, code: "bad-token", message: "no" },
	];

	it.each(valid.map((frame) => [frame.type, frame] as const))("round-trips a %s frame as one line", (_type, frame) => {
		const line = encodeFrame(frame);
		expect(line.endsWith("\n")).toBe(true);
		expect(line.slice(0, -1)).not.toContain("\n");
		expect(decodeFrame(line)).toEqual({ ok: true, frame });
	});

	it.each([
		["not JSON", "{nope", "malformed"],
		["not an object", "[1,2]", "malformed"],
		["no version", JSON.stringify({ type: "hello", nonce: NONCE, pid: 1 }), "bad-version"],
		["another version", JSON.stringify({ type: "hello", v: v + 1, nonce: NONCE, pid: 1 }), "bad-version"],
		["a v1 hello, which carried the token itself", JSON.stringify({ type: "hello", v: 1, token: NONCE, pid: 1 }), "bad-version"],
		["a version that String() cannot turn into text", '{"type":"hello","v":{"toString":1}}', "bad-version"],
		["an unknown type", JSON.stringify({ type: "shout", v }), "malformed"],
		["a hello without a nonce", JSON.stringify({ type: "hello", v, token: NONCE, pid: 1 }), "malformed"],
		["a hello with a short nonce", JSON.stringify({ type: "hello", v, nonce: "abc", pid: 1 }), "malformed"],
		["a hello with a nonce that is not base64url", JSON.stringify({ type: "hello", v, nonce: `${NONCE}\n`, pid: 1 }), "malformed"],
		["a hello with a bad pid", JSON.stringify({ type: "hello", v, nonce: NONCE, pid: -1 }), "malformed"],
		["a welcome without a proof", JSON.stringify({ type: "welcome", v, nonce: NONCE }), "malformed"],
		["an auth with an empty proof", JSON.stringify({ type: "auth", v, proof: "" }), "malformed"],
		["an auth with a huge proof", JSON.stringify({ type: "auth", v, proof: "p".repeat(200) }), "malformed"],
		["a request with a non-finite deadline", JSON.stringify({ ...request }).replace(/"deadline":\d+/, '"deadline":1e999'), "malformed"],
		["a request without asker", JSON.stringify({ ...request, asker: "me" }), "malformed"],
		["a request with questions not a list", JSON.stringify({ ...request, questions: "why?" }), "malformed"],
		["a request without a deadline", JSON.stringify({ ...request, deadline: null }), "malformed"],
		["a request with a huge id", JSON.stringify({ ...request, id: "x".repeat(200) }), "malformed"],
		["a request whose asker label is a megabyte", JSON.stringify({ ...request, asker: { label: "L".repeat(1_000_000), sessionId: "s" } }), "malformed"],
		["a request whose asker label is one character too long", JSON.stringify({ ...request, asker: { label: "L".repeat(257), sessionId: "s" } }), "malformed"],
		["a request whose asker session id is too long", JSON.stringify({ ...request, asker: { label: "p", sessionId: "s".repeat(129) } }), "malformed"],
		[
			"a notice whose asker label is a megabyte",
			JSON.stringify({ type: "notice", v, asker: { label: "L".repeat(1_000_000), sessionId: "s" }, message: "m", level: "info" }),
			"malformed",
		],
		["a notice without asker", JSON.stringify({ type: "notice", v, message: "m", level: "info" }), "malformed"],
		[
			"a notice whose message is not text",
			JSON.stringify({ type: "notice", v, asker: { label: "p", sessionId: "s" }, message: null, level: "info" }),
			"malformed",
		],
		["a notice of an unknown level", JSON.stringify({ type: "notice", v, asker: { label: "p", sessionId: "s" }, message: "m", level: "loud" }), "malformed"],
		["a cancel with an unknown reason", JSON.stringify({ type: "cancel", v, id: "r1", reason: "bored" }), "malformed"],
		["a result with an unknown status", JSON.stringify({ type: "result", v, id: "r1", kind: "result", status: "maybe", answers: [] }), "malformed"],
		[
			"a progress with bad answers",
			JSON.stringify({ type: "progress", v, id: "r1", kind: "progress", stage: "shown", answers: [{ question: 1 }] }),
			"malformed",
		],
	])("refuses %s", (_what, line, code) => {
		const checked = decodeFrame(line);
		expect(checked.ok).toBe(false);
		if (!checked.ok) {
			expect(checked.code).toBe(code);
			expect(checked.message).not.toBe("");
		}
	});

	it("refuses bytes that are not UTF-8 rather than reading them as something else", () => {
		const bytes = Buffer.concat([
			Buffer.from(JSON.stringify({ ...request, asker: { label: "x", sessionId: "s" } }).slice(0, -3)),
			Buffer.from([0xff]),
			Buffer.from('"}}'),
		]);
		expect(decodeFrame(bytes)).toEqual({ ok: false, code: "malformed", message: "The frame is not valid UTF-8." });
		expect(decodeFrame(Buffer.from(encodeFrame(request)))).toEqual({ ok: true, frame: request });
	});

	it("reads an error frame of any version, since that is how a version mismatch is reported", () => {
		expect(decodeFrame(JSON.stringify({ type: "error", v: v + 7, code: "bad-version", message: "v8 here" })).ok).toBe(true);
	});

	it("takes a request asked with wait: false (later: true) and refuses any other value of later", () => {
		expect(decodeFrame(encodeFrame({ ...request, later: true }).trimEnd())).toMatchObject({ ok: true, frame: { later: true } });
		for (const later of [false, "yes", 1, null])
			expect(decodeFrame(JSON.stringify({ ...request, later }))).toMatchObject({
				ok: false,
				code: "malformed",
				message: expect.stringContaining("request.later must be true"),
			});
		// A result never carries the receipt's status: queued is no end of a request.
		expect(decodeFrame(JSON.stringify({ type: "result", v, id: "r1", kind: "result", status: "queued", answers: [] }))).toMatchObject({ ok: false });
	});

	it("takes a request's lateFrames: true and refuses any other value", () => {
		expect(decodeFrame(encodeFrame({ ...request, lateFrames: true }).trimEnd())).toMatchObject({ ok: true, frame: { lateFrames: true } });
		for (const lateFrames of [false, "yes", 1, null, {}])
			expect(decodeFrame(JSON.stringify({ ...request, lateFrames }))).toMatchObject({
				ok: false,
				code: "malformed",
				message: expect.stringContaining("request.lateFrames must be true"),
			});
	});

	it("reads a late frame and refuses one whose fields do not check out, naming the field", () => {
		const late = { type: "late", v, id: "r1", kind: "late", status: "ok", answers: [{ question: "Q?", answer: "yes" }], note: "late", reason: "dismissed" };
		expect(decodeFrame(JSON.stringify(late))).toMatchObject({ ok: true, frame: late });
		const refusals: [Record<string, unknown>, string][] = [
			[{ id: "" }, "late.id"],
			[{ id: "x".repeat(500) }, "late.id"],
			[{ kind: "result" }, "late.kind"],
			[{ status: "queued" }, "late.status"],
			[{ status: "maybe" }, "late.status"],
			[{ answers: [{ question: "Q?" }] }, "late.answers"],
			[{ answers: "yes" }, "late.answers"],
			[{ note: 7 }, "late.note"],
			[{ reason: ["dismissed"] }, "late.reason"],
		];
		for (const [change, field] of refusals)
			expect(decodeFrame(JSON.stringify({ ...late, ...change })), field).toMatchObject({
				ok: false,
				code: "malformed",
				message: expect.stringContaining(field),
			});
		expect(decodeFrame(JSON.stringify({ ...late, v: v + 1 }))).toMatchObject({ ok: false, code: "bad-version" });
	});

	it("names both versions when they differ", () => {
		const checked = decodeFrame(JSON.stringify({ ...request, v: 99 }));
		expect(checked.ok ? "" : checked.message).toContain(`v99; this side speaks v${v}`);
	});

	it("has a version of its own, apart from the bus protocol's", () => {
		expect(FRAME_VERSION.endpoint).toBe(2);
		expect(PROTOCOL_VERSION).toBe(1);
	});
});

describe("line reader", () => {
	const lines = (reader: LineReader, chunk: string | Buffer) =>
		[...reader.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)].map((line) => (line === "too-large" ? line : line.toString()));

	it("joins lines split across chunks and splits chunks holding several lines", () => {
		const reader = new LineReader(100);
		expect(lines(reader, '{"a":')).toEqual([]);
		expect(lines(reader, '1}\n{"b":2}\n\n{"c"')).toEqual(['{"a":1}', '{"b":2}']);
		expect(lines(reader, ":3}\n")).toEqual(['{"c":3}']);
	});

	it("keeps multi-byte characters split across chunks intact", () => {
		const reader = new LineReader(100);
		const bytes = Buffer.from("Prénom ☑\n");
		expect(lines(reader, bytes.subarray(0, 3))).toEqual([]);
		expect(lines(reader, bytes.subarray(3))).toEqual(["Prénom ☑"]);
	});

	it("accepts a line of exactly the limit and refuses one byte more, before its newline arrives", () => {
		expect(lines(new LineReader(10), `${"x".repeat(10)}\n`)).toEqual(["x".repeat(10)]);
		const reader = new LineReader(10);
		expect(lines(reader, "x".repeat(6))).toEqual([]);
		expect(lines(reader, "x".repeat(5))).toEqual(["too-large"]);
		expect(lines(reader, "\n{}\n")).toEqual(["too-large"]);
	});

	it("applies a limit changed between two lines of one chunk to the second", () => {
		const reader = new LineReader(4);
		const seen: string[] = [];
		for (const line of reader.push(Buffer.from(`ok\n${"y".repeat(8)}\n`))) {
			seen.push(line === "too-large" ? line : line.toString());
			reader.maxBytes = 8;
		}
		expect(seen).toEqual(["ok", "y".repeat(8)]);
		const strict = new LineReader(4);
		expect(lines(strict, `ok\n${"y".repeat(8)}\n`)).toEqual(["ok", "too-large"]);
	});
});

describe("endpoint address", () => {
	it("reads the socket path from the environment; the token file is its sibling", () => {
		expect(endpointFromEnv({ [ENDPOINT_ENV]: "/run/user/1000/checkpoint-bridge-x/socket" })).toEqual({
			socketPath: "/run/user/1000/checkpoint-bridge-x/socket",
			tokenPath: "/run/user/1000/checkpoint-bridge-x/token",
		});
		expect(addressOf("/tmp/d/socket").tokenPath).toBe("/tmp/d/token");
	});

	it.each([
		["unset", undefined],
		["empty", " "],
		["relative", "sock/socket"],
	])("sees no endpoint when the variable is %s", (_what, value) => {
		expect(endpointFromEnv(value === undefined ? {} : { [ENDPOINT_ENV]: value })).toBeUndefined();
	});

	it("advertises, then puts back an outer host's endpoint, unless the variable changed meanwhile", () => {
		const env: NodeJS.ProcessEnv = { [ENDPOINT_ENV]: "/outer/socket" };
		const undo = advertise(env, "/inner/socket");
		expect(env[ENDPOINT_ENV]).toBe("/inner/socket");
		undo();
		expect(env[ENDPOINT_ENV]).toBe("/outer/socket");

		const fresh: NodeJS.ProcessEnv = {};
		const undoFresh = advertise(fresh, "/a/socket");
		undoFresh();
		expect(ENDPOINT_ENV in fresh).toBe(false);

		const changed: NodeJS.ProcessEnv = {};
		const undoChanged = advertise(changed, "/a/socket");
		changed[ENDPOINT_ENV] = "/b/socket";
		undoChanged();
		expect(changed[ENDPOINT_ENV]).toBe("/b/socket");
	});
});

describe("remote asker", () => {
	it("keeps the asker's label, marks the process it asks from, and is never taken for the host's own model", () => {
		expect(remoteAsker({ label: "planner", sessionId: "host-session" }, 4242)).toEqual({ label: "planner (pid 4242)", sessionId: "pid 4242/host-session" });
	});

	it("normalises a label as a local one is: whitespace folded, length bounded, short id when empty", () => {
		expect(remoteAsker({ label: "a\n\tb", sessionId: "s" }, 1).label).toBe("a b (pid 1)");
		expect(remoteAsker({ label: "x".repeat(500), sessionId: "s" }, 1).label.length).toBeLessThan(80);
		expect(remoteAsker({ label: "", sessionId: "0123456789abcdef" }, 1).label).toBe("session 89abcdef (pid 1)");
	});
});
