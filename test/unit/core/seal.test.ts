/**
 * Forging the host's answers from inside the process (issue 13, finding 2). Each test performs an
 * attack that worked against the WeakSet seal and the claim id in `host()`: a sealed reply of the
 * attacker's own, rewritten and delivered on another asker's channel; the role released and
 * re-claimed with a claim id read from `host()`; and a sealed result carrying an answer to a
 * question the asker did not ask, or a value it did not offer.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION, relay, relayRequest, track } from "../support/relay.ts";

const choice = { question: "Deploy to which environment?", options: ["staging", "production"], allowOther: false };
const confirm: QuestionInput = { question: "Deploy now?", kind: "confirm" };

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A request the attacker puts on the bus itself, to receive sealed replies of its own. */
function attackerRequest(id: string): RelayRequest {
	return relayRequest(id, { asker: { label: "attacker", sessionId: "attacker-session" }, questions: [{ question: "Anything?" }] });
}

const forgedAnswers: Answer[] = [{ question: choice.question, answer: "production", kind: "option", source: "dialog" }];

describe("a sealed reply is frozen and bound to the request it answers", () => {
	it("refuses the attacker's own sealed queued reply, rewritten in place or copied, on the victim's channel", async () => {
		const { handle, fake, ask } = relay();
		const victim = track(ask([choice], { label: "victim" }));
		await flush(vi);
		const victimId = handle.snapshot()!.open[0]!.requestId;
		// The attacker asks too, and keeps the sealed `queued` reply the host sends it.
		const captured: RelayReply[] = [];
		handle.bus.on(replyChannel("attacker-1"), (reply) => captured.push(reply));
		handle.bus.emit("request", attackerRequest("attacker-1"));
		await flush(vi);
		const sealed = captured[0]!;
		expect(sealed).toMatchObject({ kind: "progress", stage: "queued" });
		expect(handle.isFromHost(sealed, "attacker-1")).toBe(true);

		// Delivered as it is on the victim's channel: sealed, but for another request.
		expect(handle.isFromHost(sealed, victimId)).toBe(false);
		handle.bus.emit(replyChannel(victimId), sealed);
		// Rewritten in place: the sealed reply is frozen, so nothing changes (strict mode throws).
		const rewrite = { id: victimId, kind: "result", status: "ok", answers: forgedAnswers };
		expect(() => Object.assign(sealed, rewrite)).toThrow(TypeError);
		expect(() => (sealed.answers as Answer[]).push(forgedAnswers[0]!)).toThrow(TypeError);
		expect(sealed).toMatchObject({ id: "attacker-1", kind: "progress" });
		handle.bus.emit(replyChannel(victimId), sealed);
		// A rewritten copy is not sealed.
		const copy = { ...sealed, ...rewrite } as RelayReply;
		expect(handle.isFromHost(copy, victimId)).toBe(false);
		handle.bus.emit(replyChannel(victimId), copy);
		await flush(vi);
		expect(victim.envelope).toBeUndefined();

		// The human's own answer still reaches the victim.
		fake.current()!.answer("staging");
		await flush(vi);
		expect(victim.envelope).toMatchObject({ status: "ok", answers: [{ answer: "staging", source: "dialog" }] });
	});

	it("seals a deeply frozen copy: what the host keeps and what the asker is given are not the same objects", () => {
		const handle = createHandle();
		const claim = handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION })!;
		const reply: RelayReply = { v: PROTOCOL_VERSION, id: "r1", kind: "result", status: "ok", answers: [{ question: "q?", answer: "a", kind: "text" }] };
		const sealed = claim.seal(reply);
		expect(sealed).not.toBe(reply);
		expect(Object.isFrozen(sealed) && Object.isFrozen(sealed.answers) && Object.isFrozen(sealed.answers[0])).toBe(true);
		expect(Object.isFrozen(reply)).toBe(false);
		expect(handle.isFromHost(reply, "r1")).toBe(false);
		expect(handle.isFromHost(sealed, "r1")).toBe(true);
		expect(handle.isFromHost(sealed, "r2")).toBe(false);
		expect(handle.isFromHost(sealed, undefined as unknown as string)).toBe(false);
	});

	it("hands the asker an envelope of its own: answers it may change without touching anything sealed", async () => {
		const { ask } = relay({ respond: (d) => d.answer("staging") });
		const envelope = await ask([choice]);
		expect(Object.isFrozen(envelope.answers[0])).toBe(false);
		envelope.answers[0]!.answer = "changed by the caller";
	});
});

describe("nothing in host() releases or re-claims the role", () => {
	it("gives a thief with the claim id from host() neither the release nor the seal", async () => {
		const { handle, fake, ask } = relay();
		const victim = track(ask([choice], { label: "victim" }));
		await flush(vi);
		const facts = handle.host() as unknown as Record<string, unknown>;
		expect(Object.keys(facts).sort()).toEqual(["protocol", "sessionId", "snapshot"]);
		// The attack: release with the id the claim used to expose, then claim the role and its seal.
		const stolen = facts.claimId;
		(handle as unknown as { releaseHost?: (id: unknown) => boolean }).releaseHost?.(stolen);
		const claim = handle.claimHost({ sessionId: "thief", protocol: PROTOCOL_VERSION });
		expect(claim).toBeUndefined();
		expect(handle.host()?.sessionId).toBe(HOST_SESSION);
		// Had it worked, the thief would seal a result of its own for the victim.
		const victimId = handle.snapshot()!.open[0]!.requestId;
		const seal = typeof claim === "function" ? (claim as (r: RelayReply) => RelayReply) : claim?.seal;
		if (seal) handle.bus.emit(replyChannel(victimId), seal({ v: PROTOCOL_VERSION, id: victimId, kind: "result", status: "ok", answers: forgedAnswers }));
		await flush(vi);
		expect(victim.envelope).toBeUndefined();
		fake.current()!.answer("staging");
		await flush(vi);
		expect(victim.envelope).toMatchObject({ status: "ok", answers: [{ answer: "staging" }] });
	});

	it("lets only the capability release the role, once", () => {
		const handle = createHandle();
		const claim = handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION })!;
		expect(Object.isFrozen(claim)).toBe(true);
		expect(handle.claimHost({ sessionId: "other", protocol: PROTOCOL_VERSION })).toBeUndefined();
		expect(claim.release()).toBe(true);
		expect(handle.host()).toBeUndefined();
		const next = handle.claimHost({ sessionId: "next", protocol: PROTOCOL_VERSION })!;
		// An old capability cannot free its successor's claim.
		expect(claim.release()).toBe(false);
		expect(handle.host()?.sessionId).toBe("next");
		expect(next.release()).toBe(true);
	});
});

describe("a handle made by a 0.1.0 copy of the extension", () => {
	it("is left alone: the role is not claimed there, and given back, rather than hosted with a seal that is not one", () => {
		const handle = createHandle();
		let claimed: Record<string, unknown> | undefined;
		// 0.1.0's claim: the bare seal function, released by the claim id the claim carried.
		const old = {
			...handle,
			claimHost: (claim: Record<string, unknown>) => (claimed ? undefined : ((claimed = claim), (reply: RelayReply) => reply)),
			releaseHost: (claimId: unknown) => (claimed?.claimId === claimId ? ((claimed = undefined), true) : false),
		} as unknown as SharedHandle;
		const fake = fakeUI();
		expect(claimHostRole(old, { ui: fake.ui, surface: { ask: async () => undefined }, sessionId: "new-release" })).toBeUndefined();
		expect(claimed).toBeUndefined();
	});
});

/** A host that seals whatever `answer` makes of each request: the asker's own check is all that stands. */
function sealingHost(answer: (request: RelayRequest) => Omit<RelayReply, "v" | "id">): SharedHandle {
	const handle = createHandle();
	const { seal } = handle.claimHost({ sessionId: "host", protocol: PROTOCOL_VERSION })!;
	handle.bus.on("request", (request) =>
		handle.bus.emit(replyChannel(request.id), seal({ v: PROTOCOL_VERSION, id: request.id, ...answer(request) } as RelayReply)),
	);
	return handle;
}

const askOnce = (handle: SharedHandle, questions: QuestionInput[]) =>
	askViaHost({ handle, asker: { label: "asker", sessionId: "asker-session" }, questions, budgetMs: 10_000, dialogTimeoutMs: 10_000 });

describe("askers check every result against their own questions", () => {
	it.each<[string, QuestionInput[], Answer[], string]>([
		["an answer to a question it did not ask", [choice], [{ question: "Delete the database?", answer: "yes", kind: "confirm" }], "which this call did not ask"],
		["an option that was not offered", [choice], [{ question: choice.question, answer: "everywhere", kind: "option" }], '"everywhere" was not offered'],
		["typed text where Other is not allowed", [choice], [{ question: choice.question, answer: "everywhere", kind: "other" }], '"everywhere" was not offered'],
		["a confirm that is neither yes nor no", [confirm], [{ question: confirm.question, answer: "maybe", kind: "confirm" }], "must be yes or no"],
		["text for a choice", [choice], [{ question: choice.question, answer: "staging", kind: "text" }], "takes a choice"],
		[
			"the same question answered twice",
			[confirm],
			[
				{ question: confirm.question, answer: "yes", kind: "confirm" },
				{ question: confirm.question, answer: "no", kind: "confirm" },
			],
			"did not ask",
		],
		[
			"ok with a question left unanswered",
			[confirm, choice],
			[{ question: confirm.question, answer: "yes", kind: "confirm" }],
			"ok with 1 answers for 2 questions",
		],
	])("refuses a sealed result carrying %s: the call ends in error, with no answer taken", async (_name, questions, answers, reason) => {
		const handle = sealingHost(() => ({ kind: "result", status: "ok", answers }));
		const envelope = await askOnce(handle, questions);
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain("The host's reply was refused");
		expect(envelope.note).toContain(reason);
		expect(envelope.answers).toEqual([]);
	});

	it("refuses a sealed progress reply carrying an unasked answer, which a later timeout would have returned", async () => {
		const handle = sealingHost(() => ({ kind: "progress", stage: "answered", question: 0, answers: [{ question: "Unasked?", answer: "x", kind: "text" }] }));
		const envelope = await askOnce(handle, [confirm]);
		expect(envelope).toMatchObject({ status: "error", answers: [] });
		expect(envelope.note).toContain('"Unasked?"');
	});

	it("takes a sealed result that fits: values offered, in question order, ids echoed", async () => {
		const questions: QuestionInput[] = [
			{ ...confirm, id: "go" },
			{ question: "Targets?", options: ["linux", "mac"], multiSelect: true },
		];
		const answers: Answer[] = [
			{ question: "Deploy now?", id: "go", answer: "yes", kind: "confirm" },
			{ question: "Targets?", answer: "linux, mac", values: ["linux", "mac"], kind: "option" },
		];
		const envelope = await askOnce(
			sealingHost(() => ({ kind: "result", status: "ok", answers })),
			questions,
		);
		expect(envelope).toMatchObject({ status: "ok", answers });
	});

	it("ends a call whose host dialog hands back an answer that was not offered in error: the host's dialogs pass the same check", async () => {
		const handle = createHandle();
		const fake = fakeUI();
		const liar: Surface = { ask: async (_prompt, question) => ({ question: question.question, answer: "everywhere", kind: "option" }) };
		claimHostRole(handle, { ui: fake.ui, surface: liar, sessionId: HOST_SESSION });
		const envelope = await askOnce(handle, [choice]);
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain('The host dialog\'s answer to question 1 "everywhere" was not offered');
	});
});
