/**
 * Answering from outside the terminal, on real in-process sessions: while a child's dialog is open,
 * another party (a web or phone bridge, another extension) sends the answers on the shared bus. The
 * first complete, valid answer wins and closes the dialog; anything else is refused with a code and
 * changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SettledEvent, ShownEvent } from "../../extensions/checkpoint-bridge/core/shared/observers.ts";
import type { OutsideAnswerReply } from "../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import type { SharedHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { type AskArgs, checkedEnvelope, PiWorld } from "./harness/sdk-sessions.ts";

const DEPLOY = "Deploy to which environment?";
const CHECKS = "Which checks must pass first?";
const ROLLBACK = "Roll back automatically on failure?";

/** A batch of three: a closed choice (no Other), a multi-select and a confirm. */
const BATCH = {
	questions: [
		{ id: "env", question: DEPLOY, options: ["staging", "production"], allowOther: false },
		{ id: "checks", question: CHECKS, options: ["unit", "integration", "e2e"], multiSelect: true, allowOther: false },
		{ id: "rollback", question: ROLLBACK, kind: "confirm" },
	],
} as unknown as AskArgs;

const handle = () => {
	const found = (globalThis as Record<symbol, SharedHandle | undefined>)[Symbol.for("checkpoint-bridge.handle")];
	if (!found) throw new Error("no checkpoint-bridge handle on globalThis: the extension did not load");
	return found;
};

/** Sends an outside answer the way a bridge does, and returns the host's one reply. */
function answerFromOutside(payload: unknown): OutsideAnswerReply {
	const replies: OutsideAnswerReply[] = [];
	handle().bus.emit("answer", payload, (reply) => replies.push(reply));
	expect(replies, "the host replies exactly once, at once").toHaveLength(1);
	return replies[0]!;
}

/** Records the observer events of the bus until the test ends. */
function observe() {
	const shown: ShownEvent[] = [];
	const settled: SettledEvent[] = [];
	const onShown = (event: ShownEvent) => shown.push(event);
	const onSettled = (event: SettledEvent) => settled.push(event);
	handle().bus.on("observe:shown", onShown);
	handle().bus.on("observe:settled", onSettled);
	return {
		shown,
		settled,
		stop() {
			handle().bus.off("observe:shown", onShown);
			handle().bus.off("observe:settled", onSettled);
		},
	};
}

let world: PiWorld;
let observer: ReturnType<typeof observe> | undefined;
beforeEach(() => {
	world = new PiWorld();
});
afterEach(async () => {
	observer?.stop();
	observer = undefined;
	await world.close();
});

/** A host, and a child "deployer" that asks BATCH while the bus's observer events are recorded. */
async function deployerAsks() {
	const { ui } = await world.createHost({ name: "main" });
	const child = await world.createChild({ name: "deployer", ask: BATCH });
	observer = observe();
	child.start();
	return { ui, child, events: observer };
}

describe("answers from outside the terminal", () => {
	it("refuses malformed and not-offered answers without touching the open dialog, applies a valid one, and refuses a late one", async () => {
		const { ui, child, events } = await deployerAsks();

		const dialog = await ui.waitForDialog((d) => d.seq === 1, 10_000, "the child's first dialog");
		expect(dialog.title).toBe(`[deployer] (1/3) ${DEPLOY}`);
		// The request id, as an observer learns it: from the "shown" event, and from a snapshot.
		expect(events.shown).toHaveLength(1);
		const shown = events.shown[0]!;
		expect(shown).toMatchObject({ v: 1, asker: { label: "deployer", sessionId: child.sessionId }, question: 0 });
		expect(shown.questions.map((q) => q.question)).toEqual([DEPLOY, CHECKS, ROLLBACK]);
		const { requestId } = shown;
		expect(handle().snapshot()?.open).toEqual([expect.objectContaining({ requestId, state: "shown", question: 0 })]);

		// Malformed payloads: refused as invalid_payload.
		for (const payload of [
			"staging",
			null,
			{ answers: ["staging", ["unit"], "yes"] },
			{ requestId, answers: "staging" },
			{ requestId, answers: ["staging", ["unit"]] },
			{ requestId, cancel: "yes" },
		]) {
			const reply = answerFromOutside(payload);
			expect(reply, JSON.stringify(payload)).toMatchObject({ ok: false, code: "invalid_payload" });
			expect((reply as { reason: string }).reason).toMatch(/\S/);
		}
		// Answers that were not offered: refused as invalid_answer, each problem named.
		const notOffered = answerFromOutside({ requestId, answers: ["qa", ["unit", "smoke"], "perhaps"] });
		expect(notOffered).toMatchObject({ ok: false, code: "invalid_answer" });
		const reason = (notOffered as { reason: string }).reason;
		expect(reason).toContain('"qa"');
		expect(reason).toContain('"smoke"');
		expect(reason).toContain("answers[2]");
		// One bad answer among good ones: still nothing applied.
		expect(answerFromOutside({ requestId, answers: ["staging", ["unit", "smoke"], "yes"] })).toMatchObject({ ok: false, code: "invalid_answer" });
		// An id nobody asked under.
		expect(answerFromOutside({ requestId: "no-such-request", answers: ["staging", ["unit"], "yes"] })).toMatchObject({ ok: false, code: "not_found" });

		// Nothing was applied: the dialog is still open, the call still waits, the request is still open.
		expect(dialog.open).toBe(true);
		expect(dialog.signal?.aborted).toBe(false);
		expect(events.settled).toEqual([]);
		expect(child.toolRuns.find((run) => run.endedAt !== undefined)).toBeUndefined();
		expect(
			handle()
				.snapshot()
				?.open.map((o) => o.requestId),
		).toEqual([requestId]);

		// A valid answer to every question: accepted, and the open dialog is closed through its signal.
		const accepted = answerFromOutside({ requestId, answers: ["production", { values: ["e2e", "unit"] }, true] });
		expect(accepted).toEqual({ ok: true });
		expect(dialog.signal?.aborted).toBe(true);
		expect(dialog.outcome).toEqual({ how: "signal" });

		await child.done();
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("ok");
		expect(envelope.requestId).toBe(requestId);
		expect(envelope.answers).toEqual([
			{ id: "env", question: DEPLOY, answer: "production", kind: "option", source: "outside" },
			// Values in option order, whatever order they were sent in.
			{ id: "checks", question: CHECKS, answer: "unit, e2e", kind: "option", values: ["unit", "e2e"], source: "outside" },
			{ id: "rollback", question: ROLLBACK, answer: "yes", kind: "confirm", source: "outside" },
		]);
		// The human saw only the first dialog; the later questions were never shown.
		expect(ui.dialogs).toHaveLength(1);
		expect(events.settled).toHaveLength(1);
		expect(events.settled[0]).toMatchObject({ requestId, outcome: { status: "ok", answers: envelope.answers } });
		expect(handle().snapshot()?.open).toEqual([]);

		// A second answer for the same request comes too late.
		const late = answerFromOutside({ requestId, answers: ["staging", ["unit"], false] });
		expect(late).toMatchObject({ ok: false, code: "not_found" });
		expect(checkedEnvelope(child).answers[0]!.answer).toBe("production");
	});

	it("answers the human already gave in a dialog stand; the outside answer fills the rest", async () => {
		const { ui, child, events } = await deployerAsks();

		const first = await ui.waitForDialog((d) => d.seq === 1, 10_000, "the first dialog");
		first.answer("staging");
		const second = await ui.waitForDialog((d) => d.seq === 2, 10_000, "the multi-select's first round");
		expect(second.title).toBe(`[deployer] (2/3) ${CHECKS}`);
		const { requestId } = events.shown.at(-1)!;
		expect(events.shown.at(-1)!.question).toBe(1);

		expect(answerFromOutside({ requestId, answers: ["production", ["integration"], "no"] })).toEqual({ ok: true });
		expect(second.outcome).toEqual({ how: "signal" });
		await child.done();
		expect(checkedEnvelope(child).answers).toEqual([
			{ id: "env", question: DEPLOY, answer: "staging", kind: "option", source: "dialog" },
			{ id: "checks", question: CHECKS, answer: "integration", kind: "option", values: ["integration"], source: "outside" },
			{ id: "rollback", question: ROLLBACK, answer: "no", kind: "confirm", source: "outside" },
		]);
		expect(ui.dialogs).toHaveLength(2);
	});

	it("a cancel from outside closes the dialog and ends the call as timeout-or-cancelled", async () => {
		const { ui, child, events } = await deployerAsks();

		const dialog = await ui.waitForDialog((d) => d.seq === 1, 10_000, "the first dialog");
		const requestId = handle().snapshot()!.open[0]!.requestId;
		expect(events.shown[0]!.requestId).toBe(requestId);
		expect(answerFromOutside({ requestId, cancel: true })).toEqual({ ok: true });
		expect(dialog.outcome).toEqual({ how: "signal" });
		await child.done();
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("timeout-or-cancelled");
		expect(envelope.answers).toEqual([]);
		expect(envelope.note).toMatch(/outside/);
		expect(answerFromOutside({ requestId, cancel: true })).toMatchObject({ ok: false, code: "not_found" });
	});
	it("a request still waiting in the queue can be answered from outside: it is never shown", async () => {
		const { ui } = await world.createHost({ name: "main" });
		const first = await world.createChild({ name: "first", ask: { questions: [{ question: "Tag the release?", options: ["yes", "no"] }] } });
		const queued = await world.createChild({ name: "queued", ask: BATCH });
		first.start();
		const shownDialog = await ui.waitForDialog((d) => d.seq === 1, 10_000, "the first child's dialog");
		queued.start();
		const waiting = await ui.waitFor(
			() =>
				handle()
					.snapshot()
					?.open.find((o) => o.asker.label === "queued"),
			10_000,
			"the second request in the queue",
		);
		expect(waiting.state).toBe("queued");

		expect(answerFromOutside({ requestId: waiting.requestId, answers: ["staging", ["unit"], "yes"] })).toEqual({ ok: true });
		await queued.done();
		expect(checkedEnvelope(queued).answers.map((a) => [a.answer, a.source])).toEqual([
			["staging", "outside"],
			["unit", "outside"],
			["yes", "outside"],
		]);
		// The dialog on screen is not disturbed, and once it is answered nothing else is shown.
		expect(shownDialog.open).toBe(true);
		shownDialog.answer("no");
		await first.done();
		expect(checkedEnvelope(first).answers).toEqual([{ question: "Tag the release?", answer: "no", kind: "option", source: "dialog" }]);
		expect(ui.dialogs).toHaveLength(1);
	});
});
