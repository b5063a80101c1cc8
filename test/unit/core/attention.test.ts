import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadExtensionCopy, playSession } from "../support/fake-pi.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A fake UI that also records the footer status. */
function withStatus() {
	const statuses: (string | undefined)[] = [];
	return { statuses, setStatus: (key: string, text: string | undefined) => key === "checkpoint-bridge" && void statuses.push(text) };
}

describe("attention and visibility", () => {
	it("shows the request on screen apart from those waiting their turn, with who asked and how long ago, and clears it when nobody waits", async () => {
		const status = withStatus();
		const { fake, ask } = relay({}, {});
		fake.ui.setStatus = status.setStatus;
		const first = ask([{ question: "A?" }], { label: "planner" });
		const second = ask([{ question: "B?" }], { label: "reviewer" });
		await flush(vi);
		expect(status.statuses.at(-1)).toBe("checkpoint-bridge: shown: planner (0 min) · 1 queued: reviewer (0 min)");
		vi.advanceTimersByTime(120_000);
		fake.current()!.answer("a");
		await flush(vi);
		// Shown now, and how long ago it was asked.
		expect(status.statuses.at(-1)).toBe("checkpoint-bridge: shown: reviewer (2 min)");
		fake.current()!.answer("b");
		await Promise.all([first, second]);
		expect(status.statuses.at(-1)).toBeUndefined();
	});

	it("names the first three askers and counts the rest", async () => {
		const status = withStatus();
		const { fake, ask } = relay();
		fake.ui.setStatus = status.setStatus;
		for (const label of ["a", "b", "c", "d", "e"]) void ask([{ question: `${label}?` }], { label });
		await flush(vi);
		expect(status.statuses.at(-1)).toBe("checkpoint-bridge: shown: a (0 min) · 4 queued: b (0 min), c (0 min), d (0 min) and 1 more");
	});

	it("rings once when a relayed question is first shown, never for the host's own", async () => {
		const bell = vi.fn();
		const { fake, ask } = relay({ respond: (d) => queueMicrotask(() => d.answer("x")) }, { bell });
		await ask([{ question: "One?" }, { question: "Two?" }], { label: "child" });
		expect(bell).toHaveBeenCalledTimes(1);
		await ask([{ question: "Mine?" }], { label: "main", sessionId: HOST_SESSION });
		expect(bell).toHaveBeenCalledTimes(1);
		expect(fake.dialogs).toHaveLength(3);
	});

	it("streams the call's progress through onUpdate: queued with its position, shown, answered", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI();
		const host = playSession(copy, { sessionId: "host", ui: ui.ui });
		const child = playSession(copy, { sessionId: "child", name: "reviewer" });
		await host.start();
		const updates: string[] = [];
		const onUpdate = (partial: { content: { text: string }[] }) => void updates.push(partial.content[0]!.text);
		const ctx = child.ctx;
		void host.call({ questions: [{ question: "Holding the queue?" }] });
		const pending = child.tool().execute("c1", { questions: [{ question: "Mine?" }, { question: "Also?" }] }, undefined, onUpdate, ctx);
		// The first call of a session loads the call's code (a module import, not a timer): wait for its dialog.
		await vi.waitFor(() => expect(ui.current()).toBeDefined());
		ui.current()!.answer("h");
		await flush(vi);
		ui.current()!.answer("one");
		await flush(vi);
		ui.current()!.answer("two");
		await pending;
		expect(updates).toEqual([
			"checkpoint-bridge: queued, position 2 (1 ahead)",
			"checkpoint-bridge: shown to the human, question 1 of 2",
			"checkpoint-bridge: answered question 1 of 2",
			"checkpoint-bridge: shown to the human, question 2 of 2",
			"checkpoint-bridge: answered question 2 of 2",
		]);
		await host.shutdown();
	});
});
