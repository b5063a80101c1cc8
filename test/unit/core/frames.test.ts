/**
 * The one check of the frames both transports carry (core/bridge/frames.ts), on its own: each field a
 * frame can get wrong is refused with the sentence that names it, one field broken at a time from a
 * frame that passes; every shared frame passes a transport that adds nothing of its own; the bounds
 * are inclusive; an error frame is read at any version.
 */
import { describe, expect, it } from "vitest";
import { checkFrame, FRAME_VERSION, MAX_NOTICE_LENGTH, type Transport } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { MAX_REQUEST_ID_LENGTH } from "../../../extensions/checkpoint-bridge/model/limits.ts";

const ASKER = { label: "planner", sessionId: "pid 7/planner" };
const ANSWERS = [{ question: "Name?", answer: "Ada", kind: "text" }];
const V = FRAME_VERSION.endpoint;

/** One frame of each shared type that passes the check. */
const VALID: Record<string, Record<string, unknown>> = {
	request: {
		type: "request",
		v: V,
		id: "r1",
		asker: ASKER,
		questions: [],
		deadline: 0,
		dialogTimeoutMs: 0,
		createdAt: 0,
		later: true,
		lateFrames: true,
		acks: true,
	},
	cancel: { type: "cancel", v: V, id: "r1", reason: "timeout" },
	notice: { type: "notice", v: V, asker: ASKER, message: "hello", level: "info" },
	progress: { type: "progress", v: V, id: "r1", kind: "progress", stage: "shown", answers: ANSWERS, question: 0, position: 0 },
	result: { type: "result", v: V, id: "r1", kind: "result", status: "ok", answers: ANSWERS, ack: true },
	late: { type: "late", v: V, id: "r1", kind: "late", status: "ok", answers: ANSWERS },
	ack: { type: "ack", v: V, id: "r1", recorded: true },
	error: { type: "error", v: V, code: "busy", message: "full" },
};

const refusal = (raw: unknown, transport: Transport = "endpoint") => {
	const checked = checkFrame(raw, transport);
	return checked.ok ? undefined : checked.message;
};

describe("the shared frame check", () => {
	it.each(Object.keys(VALID))("a well-formed %s frame passes a transport that adds nothing of its own", (type) => {
		expect(checkFrame(VALID[type], "endpoint")).toEqual({ ok: true, frame: VALID[type] });
	});

	const broken: [string, string, Record<string, unknown>, string][] = [
		["request", "an id over the bound", { id: "x".repeat(MAX_REQUEST_ID_LENGTH + 1) }, "request.id must be a non-empty string of at most 128 characters"],
		["request", "acks other than true", { acks: false }, "request.acks must be true when present"],
		["cancel", "no id", { id: "" }, "cancel.id must be a non-empty string"],
		[
			"notice",
			"a message of more code points than the bound",
			{ message: "x".repeat(MAX_NOTICE_LENGTH + 1) },
			"notice.message must be a string of at most 2000 characters",
		],
		["notice", "an unknown level", { level: "debug" }, "notice.level must be one of info, warning, error"],
		["progress", "no id", { id: "" }, "progress.id must be a non-empty string"],
		["progress", "another kind", { kind: "result" }, 'progress.kind must be "progress"'],
		["progress", "an empty stage", { stage: "" }, "progress.stage must be a string"],
		["progress", "a stage that is no string", { stage: 3 }, "progress.stage must be a string"],
		["progress", "a negative question index", { question: -1 }, "progress.question must be an index"],
		["progress", "a question index that is no integer", { question: 1.5 }, "progress.question must be an index"],
		["progress", "a negative position", { position: -1 }, "progress.position must be an index"],
		["progress", "answers that are no records", { answers: ["Ada"] }, "progress.answers must be [{question, answer}] strings"],
		["progress", "an answer without its question", { answers: [{ answer: "Ada" }] }, "progress.answers must be [{question, answer}] strings"],
		["result", "ack other than true", { ack: false }, "result.ack must be true when present"],
		["late", "ack other than true", { ack: 1 }, "late.ack must be true when present"],
		["ack", "no id", { id: "" }, "ack.id must be a non-empty string"],
		["error", "no code", { code: undefined }, "error needs a code and a message"],
		["error", "no message", { message: undefined }, "error needs a code and a message"],
		["error", "a version that is no integer", { v: 2.5 }, "error.v must be an integer"],
		["request", "a deadline that is no finite number", { deadline: Number.POSITIVE_INFINITY }, "request.deadline must be a finite number"],
		["request", "a deadline that is no number", { deadline: "soon" }, "request.deadline must be a finite number"],
	];
	it.each(broken)("a %s frame with %s is refused, naming the field", (type, _what, change, message) => {
		expect(refusal({ ...VALID[type], ...change })).toBe(`Malformed frame: ${message}.`);
	});

	it("the bounds are inclusive: an id of the longest length and a notice of the most code points (twice as many UTF-16 units) pass", () => {
		expect(refusal({ ...VALID.request, id: "x".repeat(MAX_REQUEST_ID_LENGTH) })).toBeUndefined();
		expect(refusal({ ...VALID.notice, message: "😀".repeat(MAX_NOTICE_LENGTH) })).toBeUndefined();
	});

	it("a frame of another version is refused naming the transport's own word for its frames; an error frame is read at any version", () => {
		expect(checkFrame({ ...VALID.cancel, v: 1 }, "endpoint")).toEqual({
			ok: false,
			code: "bad-version",
			message: `The frame speaks checkpoint-bridge wire v1; this side speaks v${FRAME_VERSION.endpoint}.`,
		});
		expect(refusal({ ...VALID.cancel, v: 1 }, "nats")).toBe(`The frame speaks checkpoint-bridge NATS protocol v1; this side speaks v${FRAME_VERSION.nats}.`);
		expect(refusal({ ...VALID.error, v: 99 }, "nats")).toBeUndefined();
	});
});
