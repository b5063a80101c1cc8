/** wait_for_host_answers: waiting on purpose within a budget, and its refusals. Fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createDeliveryBox, type DeliveryBox, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { DEFAULT_WAIT_MS, MAX_OPEN_PER_ASKER, MAX_WAIT_MS } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { makeEnvelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { waitForAnswers } from "../../../extensions/checkpoint-bridge/tool/waiting.ts";

const ask = (requestId: string, askerSessionId = "s1") => ({ requestId, askerSessionId, asker: "planner", questions: ["Q?"], queuedAt: 0 });
const end = (requestId: string, askerSessionId = "s1") => ({ ...ask(requestId, askerSessionId), envelope: makeEnvelope("ok", [], undefined, { requestId }) });

describe("wait_for_host_answers", () => {
	let box: DeliveryBox;
	const messages: unknown[] = [];
	beforeEach(() => {
		vi.useFakeTimers();
		messages.length = 0;
		box = createDeliveryBox({ hostSessionId: () => "host" });
		box.attach(
			"s1",
			sessionPoster({ sendMessage: (m) => messages.push(m), appendEntry: () => {} }, () => []),
		);
		for (const id of ["r1", "r2"]) box.expect(ask(id));
		box.expect(ask("theirs", "s2"));
	});
	afterEach(() => vi.useRealTimers());

	it("waits for every open request of the session by default and returns each envelope, which is then no message", async () => {
		const waited = waitForAnswers(box, "s1", {});
		box.deliver(end("r2"));
		box.deliver(end("r1"));
		await expect(waited).resolves.toMatchObject({ status: "ok", ended: [{ requestId: "r2" }, { requestId: "r1" }], open: [] });
		expect(messages).toHaveLength(0);
	});

	it("a wait that ends first lists what is still open; that answer comes later as a message", async () => {
		const waited = waitForAnswers(box, "s1", { requestIds: ["r1", "r2"], timeoutMs: 5_000 });
		box.deliver(end("r1"));
		await vi.advanceTimersByTimeAsync(5_000);
		const outcome = await waited;
		expect(outcome).toMatchObject({ status: "timeout", ended: [{ requestId: "r1" }], open: ["r2"] });
		expect(outcome.note).toContain("Do not ask them again");
		box.deliver(end("r2"));
		expect(messages).toHaveLength(1);
	});

	it("clamps its budget: 60 s by default, at most 10 min", async () => {
		const waited = waitForAnswers(box, "s1", { requestIds: ["r1"], timeoutMs: 10 * MAX_WAIT_MS });
		await vi.advanceTimersByTimeAsync(MAX_WAIT_MS - 1);
		let done = false;
		void waited.then(() => (done = true));
		await vi.advanceTimersByTimeAsync(0);
		expect(done).toBe(false);
		await vi.advanceTimersByTimeAsync(1);
		await expect(waited).resolves.toMatchObject({ status: "timeout", open: ["r1"] });
		expect(DEFAULT_WAIT_MS).toBe(60_000);
	});

	it("names a request delivered before the wait instead of waiting for it", async () => {
		box.deliver(end("r1"));
		await expect(waitForAnswers(box, "s1", { requestIds: ["r1"] })).resolves.toMatchObject({ status: "ok", delivered: ["r1"], ended: [] });
	});

	it("refuses unknown, foreign and too many ids, and unknown parameters, each by name", async () => {
		await expect(waitForAnswers(box, "s1", { requestIds: ["nope"] })).resolves.toMatchObject({ status: "error", note: expect.stringContaining('"nope"') });
		await expect(waitForAnswers(box, "s1", { requestIds: ["theirs"] })).resolves.toMatchObject({
			status: "error",
			note: expect.stringContaining('Not requests of this session: "theirs"'),
		});
		const many = Array.from({ length: MAX_OPEN_PER_ASKER + 1 }, (_, i) => `x${i}`);
		await expect(waitForAnswers(box, "s1", { requestIds: many })).resolves.toMatchObject({ status: "error", note: expect.stringContaining("at most") });
		await expect(waitForAnswers(box, "s1", { ids: ["r1"] })).resolves.toMatchObject({ status: "error", note: expect.stringContaining('"ids"') });
		await expect(waitForAnswers(box, "s1", { requestIds: "r1" })).resolves.toMatchObject({ status: "error" });
	});

	it("words a refusal of its parameters as the ask tool and the MCP server's wait do: every problem in one note, a long name cut", async () => {
		const outcome = await waitForAnswers(box, "s1", { ids: ["r1"], ["x".repeat(10_000)]: 1, requestIds: "r1", timeoutMs: "soon" });
		expect(outcome.status).toBe("error");
		expect(outcome.note).toContain(
			`Invalid parameters: parameters: "ids" is not a parameter (known: requestIds, timeoutMs); parameters: "${"x".repeat(39)}…" is not a parameter (known: requestIds, timeoutMs); requestIds: must be an array of request ids (strings); timeoutMs: must be a finite number of milliseconds.`,
		);
		expect(outcome.note!.length).toBeLessThan(1_000);
	});
});
