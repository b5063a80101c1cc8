/**
 * wait_for_host_answers on requests an earlier run asked (docs/tool.md, resume): found by id in the
 * store of the host's directory, whichever process waits; each wait gets the end while it is kept; an
 * open one is waited for until the host writes its end; an id nobody wrote down is still refused.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createDeliveryBox, type DeliveryBox } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { LOOK_EVERY_MS } from "../../../extensions/checkpoint-bridge/core/store/later-waits.ts";
import { openStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import type { RequestStore, StoredEnd } from "../../../extensions/checkpoint-bridge/core/store/store.ts";
import { waitForAnswers } from "../../../extensions/checkpoint-bridge/tool/waiting.ts";

const end = (askerId: string, over: Partial<StoredEnd> = {}): StoredEnd => ({
	askerId,
	hostId: askerId,
	askerSession: "pid 7/first-run",
	asker: "release-bot (pid 7)",
	questions: ["Ship it?"],
	status: "ok",
	answers: [{ question: "Ship it?", answer: "yes", kind: "option" }],
	queuedAt: Date.now() - 5_000,
	endedAt: Date.now(),
	expiresAt: Date.now() + 3_600_000,
	...over,
});

describe("a later run's wait on an earlier run's requests", () => {
	let box: DeliveryBox;
	let store: RequestStore;
	beforeEach(() => {
		vi.useFakeTimers({ now: 1_000_000 });
		box = createDeliveryBox({ hostSessionId: () => "host" });
		const opened = openStore(":memory:");
		if (!opened.ok) throw new Error(opened.warning);
		store = opened.store;
	});
	afterEach(() => {
		store.close();
		vi.useRealTimers();
	});

	it("an ended one comes back as the envelope a waiting call would have returned, to this wait and to the next one too", async () => {
		store.ended(end("V1StGXR8_Z5jdHi6B-myT"));
		for (const session of ["second-run", "third-run"]) {
			const outcome = await waitForAnswers(box, session, { requestIds: ["V1StGXR8_Z5jdHi6B-myT"] }, undefined, () => store);
			expect(outcome).toEqual({
				status: "ok",
				open: [],
				ended: [
					{
						status: "ok",
						requestId: "V1StGXR8_Z5jdHi6B-myT",
						asker: "release-bot (pid 7)",
						waitedMs: 5_000,
						answers: [{ question: "Ship it?", answer: "yes", kind: "option" }],
					},
				],
			});
		}
	});

	it("an open one is waited for: the end the host writes during the wait is returned; one not ended by the budget is listed open", async () => {
		store.put({ hostId: "h1", askerId: "first", askerSession: "pid 7/first-run", record: "{}" });
		store.put({ hostId: "h2", askerId: "second", askerSession: "pid 7/first-run", record: "{}" });
		const waited = waitForAnswers(box, "later-run", { requestIds: ["first", "second"], timeoutMs: 5_000 }, undefined, () => store);
		await vi.advanceTimersByTimeAsync(LOOK_EVERY_MS * 2);
		store.ended(end("first", { hostId: "h1", status: "timeout-or-cancelled", answers: [], note: "Dismissed.", reason: "dismissed" }));
		await vi.advanceTimersByTimeAsync(5_000);
		const outcome = await waited;
		expect(outcome.status).toBe("timeout");
		expect(outcome.open).toEqual(["second"]);
		expect(outcome.ended).toHaveLength(1);
		expect(outcome.ended[0]).toMatchObject({ status: "timeout-or-cancelled", requestId: "first", reason: "dismissed" });
	});

	it("an id the store does not know, nor this session, is refused by name; an end past its expiry is not known any more", async () => {
		store.ended(end("gone", { expiresAt: Date.now() - 1 }));
		const outcome = await waitForAnswers(box, "later-run", { requestIds: ["never-asked", "gone"] }, undefined, () => store);
		expect(outcome.status).toBe("error");
		expect(outcome.note).toContain('"never-asked", "gone"');
	});

	it("without a store (it was refused, the host runs in memory) an earlier run's id is refused as unknown", async () => {
		const outcome = await waitForAnswers(box, "later-run", { requestIds: ["V1StGXR8_Z5jdHi6B-myT"] }, undefined, () => undefined);
		expect(outcome).toMatchObject({ status: "error", ended: [], open: [] });
	});
});
