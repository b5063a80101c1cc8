/**
 * The host's own replies are sealed in place (`sealBuilt`), not copied: each is frozen through and
 * through before anyone gets it, bound to its request, and built of nothing a surface or the
 * shared handle still holds.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Whether `value` and everything in it is frozen. */
const deeplyFrozen = (value: unknown): boolean =>
	typeof value !== "object" || value === null || (Object.isFrozen(value) && Object.values(value).every(deeplyFrozen));

const request = (id: string, questions: RelayRequest["questions"]): RelayRequest => ({
	v: PROTOCOL_VERSION,
	id,
	asker: { label: "asker", sessionId: "asker-session" },
	questions,
	deadline: Date.now() + 60_000,
	dialogTimeoutMs: 60_000,
	createdAt: Date.now(),
});

describe("sealBuilt", () => {
	it("freezes the reply itself, deeply, and binds it to its request id only", () => {
		const handle = createHandle();
		const claim = handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION })!;
		const reply: RelayReply = {
			v: PROTOCOL_VERSION,
			id: "r1",
			kind: "result",
			status: "ok",
			answers: [{ question: "q?", answer: "a, b", kind: "option", values: ["a", "b"], sharedWith: ["x"] }],
		};
		const sealed = claim.sealBuilt!(reply);
		expect(sealed).toBe(reply);
		expect(deeplyFrozen(sealed)).toBe(true);
		expect(() => Object.assign(sealed, { id: "r2" })).toThrow(TypeError);
		expect(() => (sealed.answers[0]!.values as string[]).push("c")).toThrow(TypeError);
		expect(handle.isFromHost(sealed, "r1")).toBe(true);
		expect(handle.isFromHost(sealed, "r2")).toBe(false);
		// A copy of it, however faithful, is not sealed.
		expect(handle.isFromHost({ ...sealed }, "r1")).toBe(false);
	});
});

describe("the host's replies", () => {
	it("are deeply frozen when they reach the reply channel, every stage of a request", async () => {
		const { handle, fake } = relay();
		const replies: RelayReply[] = [];
		handle.bus.on(replyChannel("req-1"), (reply) => replies.push(reply));
		handle.bus.emit("request", request("req-1", [{ question: "Targets?", options: ["linux", "mac"], multiSelect: true }, { question: "Why?" }]));
		await flush(vi);
		fake.current()!.answer("☐ linux");
		await flush(vi);
		fake.current()!.answer("Done (1 selected)");
		await flush(vi);
		fake.current()!.answer("because");
		await flush(vi);
		expect(replies.map((r) => (r.kind === "progress" ? r.stage : r.status))).toEqual(["queued", "shown", "answered", "shown", "answered", "ok"]);
		for (const reply of replies) {
			expect(deeplyFrozen(reply)).toBe(true);
			expect(handle.isFromHost(reply, "req-1")).toBe(true);
		}
		expect(replies.at(-1)!.answers.map((a) => a.answer)).toEqual(["linux", "because"]);
	});

	it("share nothing with what the surface handed back: the surface may change its answer afterwards", async () => {
		const handle = createHandle();
		const given: Answer[] = [];
		const surface: Surface = {
			ask: async (_prompt, question) => {
				const answer: Answer = { question: question.question, answer: "linux, mac", kind: "option", values: ["linux", "mac"] };
				given.push(answer);
				return answer;
			},
		};
		claimHostRole(handle, { ui: fakeUI().ui, surface, sessionId: HOST_SESSION });
		const replies: RelayReply[] = [];
		handle.bus.on(replyChannel("req-2"), (reply) => replies.push(reply));
		handle.bus.emit("request", request("req-2", [{ question: "Targets?", options: ["linux", "mac"], multiSelect: true }]));
		await flush(vi);
		const result = replies.at(-1)!;
		expect(result).toMatchObject({ kind: "result", status: "ok", answers: [{ answer: "linux, mac", values: ["linux", "mac"], source: "dialog" }] });
		// The surface's own objects stay its own: not frozen, and changing them changes no reply.
		expect(Object.isFrozen(given[0]) || Object.isFrozen(given[0]!.values)).toBe(false);
		given[0]!.values!.push("windows");
		given[0]!.answer = "windows";
		expect(result.answers[0]).toMatchObject({ answer: "linux, mac", values: ["linux", "mac"] });
	});

	it("share nothing with answers a re-sent request carries: a carried answer changed later changes no reply", async () => {
		const handle = createHandle();
		const carried: Answer = { question: "First?", answer: "yes", kind: "confirm", source: "dialog" };
		const req = request("req-3", [
			{ question: "First?", kind: "confirm" },
			{ question: "Second?", kind: "confirm" },
		]);
		const replies: RelayReply[] = [];
		handle.bus.on(replyChannel("req-3"), (reply) => replies.push(reply));
		const fake = fakeUI();
		claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: HOST_SESSION });
		handle.bus.emit("request", { ...req, answers: [carried], resent: true });
		await flush(vi);
		carried.answer = "no";
		fake.current()!.answer("Yes");
		await flush(vi);
		const result = replies.at(-1)!;
		expect(result).toMatchObject({ kind: "result", status: "ok" });
		expect(result.answers.map((a) => a.answer)).toEqual(["yes", "yes"]);
		expect(Object.isFrozen(carried)).toBe(false);
	});
});
