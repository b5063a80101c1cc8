import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OBSERVER_EVENTS, OBSERVER_VERSION } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("observer contract v1", () => {
	it("emits queued, shown and settled with the request id, who asked, the questions and timestamps", async () => {
		const { handle, fake, ask } = relay();
		const events: [string, Record<string, unknown>][] = [];
		for (const name of Object.values(OBSERVER_EVENTS)) handle.bus.on(name, (e: object) => void events.push([name, e as Record<string, unknown>]));
		const startedAt = Date.now();
		const call = ask([{ question: "One?" }, { question: "Two?" }], { label: "planner", budgetMs: 60_000 });
		await vi.advanceTimersByTimeAsync(1_000);
		fake.current()!.answer("a");
		await vi.advanceTimersByTimeAsync(1_000);
		fake.current()!.answer("b");
		const envelope = await call;
		expect(events.map(([name]) => name)).toEqual(["observe:queued", "observe:shown", "observe:shown", "observe:settled"]);
		const [queued, shown, , settled] = events.map(([, e]) => e);
		expect(queued).toMatchObject({
			v: OBSERVER_VERSION,
			requestId: envelope.requestId,
			asker: { label: "planner" },
			position: 1,
			queuedAt: expect.any(Number),
			deadline: startedAt + 60_000,
		});
		expect((queued!.questions as { question: string }[]).map((q) => q.question)).toEqual(["One?", "Two?"]);
		expect(shown).toMatchObject({ question: 0, shownAt: queued!.queuedAt });
		expect(settled).toMatchObject({ settledAt: (queued!.queuedAt as number) + 2_000, outcome: { status: "ok", answers: [{ answer: "a" }, { answer: "b" }] } });
	});

	it("gives a late observer a snapshot of what is open, oldest first", async () => {
		const { handle, ask } = relay();
		void ask([{ question: "First?" }], { label: "a" });
		await vi.advanceTimersByTimeAsync(10);
		void ask([{ question: "Second?" }, { question: "Third?" }], { label: "b" });
		await flush(vi);
		const snapshot = handle.snapshot()!;
		expect(snapshot.v).toBe(OBSERVER_VERSION);
		expect(snapshot.open.map((o) => [o.asker.label, o.state, o.question])).toEqual([
			["a", "shown", 0],
			["b", "queued", undefined],
		]);
		expect(snapshot.open[0]!.queuedAt).toBeLessThan(snapshot.open[1]!.queuedAt);
		// The call's own deadline, so a page can show a countdown.
		expect(snapshot.open[0]!.deadline).toBe(snapshot.open[0]!.queuedAt + 300_000);
	});

	it("keeps relaying when an observer throws", async () => {
		const { handle, ask } = relay({ respond: (d) => d.answer("fine") });
		handle.bus.on(OBSERVER_EVENTS.shown, () => {
			throw new Error("observer bug");
		});
		expect((await ask([{ question: "Still works?" }])).status).toBe("ok");
	});
});
