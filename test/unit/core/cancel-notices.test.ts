/**
 * A question its asker cancels says so at the host (core/shared/notice-window.ts's CancelNotices, wired in
 * core/host/host-role.ts): a shown form or a queued question never vanishes without a word, a storm of
 * cancels is one notice and one summary per window, and the host's own model's cancels are the human's doing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CANCEL_WINDOW_MS, CancelNotices } from "../../../extensions/checkpoint-bridge/core/shared/notice-window.ts";
import { flush, HOST_SESSION, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const cancelNotices = (notices: { message: string }[]) => notices.map((n) => n.message).filter((m) => m.includes("cancelled"));

describe("an asker's cancel at the host", () => {
	it("of the question on screen and of one waiting its turn: each named with its asker and its question", async () => {
		const { fake, ask } = relay();
		const shown = new AbortController();
		const queued = new AbortController();
		void ask([{ question: "Ship the release?" }, { question: "Which day?" }], { label: '"Fix the flaky tests" in shop (pid 4242)', signal: shown.signal });
		void ask([{ question: "Which   branch?" }], { label: "MCP client in api", signal: queued.signal });
		await flush(vi);
		expect(fake.current()?.title).toContain("Ship the release?");
		shown.abort();
		await flush(vi);
		expect(fake.current()?.title, "the next request's form replaced the cancelled one").toContain("Which   branch?");
		expect(cancelNotices(fake.notices)).toEqual([
			'checkpoint-bridge: ["Fix the flaky tests" in shop (pid 4242)] cancelled its question "Ship the release?" and 1 question more; it is no longer asked.',
		]);
		// A cancel in the same window is owed the summary at its end.
		await vi.advanceTimersByTimeAsync(CANCEL_WINDOW_MS + 1);
		queued.abort();
		await flush(vi);
		expect(cancelNotices(fake.notices).at(-1)).toBe('checkpoint-bridge: [MCP client in api] cancelled its question "Which branch?"; it is no longer asked.');
	});

	it("a storm of 200 cancels is one notice at once and one summary per window, naming the askers", async () => {
		const { fake, ask } = relay();
		const controllers = Array.from({ length: 200 }, () => new AbortController());
		controllers.forEach((c, i) => void ask([{ question: `Q${i}?` }], { label: `asker-${i % 5}`, sessionId: `s-${i}`, signal: c.signal }));
		await flush(vi);
		for (const c of controllers) c.abort();
		await flush(vi);
		expect(cancelNotices(fake.notices)).toHaveLength(1);
		await vi.advanceTimersByTimeAsync(CANCEL_WINDOW_MS);
		expect(cancelNotices(fake.notices)).toEqual([
			'checkpoint-bridge: [asker-0] cancelled its question "Q0?"; it is no longer asked.',
			"checkpoint-bridge: 199 more questions cancelled by [asker-1], [asker-2], [asker-3] +2 more.",
		]);
	});

	it("says nothing of the host's own model's cancel, nor of a budget that ran out", async () => {
		const { fake, ask } = relay();
		const own = new AbortController();
		void ask([{ question: "Mine?" }], { label: "main session", sessionId: HOST_SESSION, signal: own.signal });
		void ask([{ question: "Short?" }], { label: "child", budgetMs: 1_000 });
		await flush(vi);
		own.abort();
		await vi.advanceTimersByTimeAsync(2_000);
		expect(cancelNotices(fake.notices)).toEqual([]);
	});
});

describe("CancelNotices", () => {
	it("quotes a long question cut, and after a quiet window notices the next cancel at once again", () => {
		const sent: string[] = [];
		const notices = new CancelNotices((m) => sent.push(m), 1_000);
		notices.cancelled("a", ["x".repeat(200)]);
		expect(sent[0]).toBe(`checkpoint-bridge: [a] cancelled its question "${"x".repeat(79)}…"; it is no longer asked.`);
		notices.cancelled("b", ["one", "two"]);
		vi.advanceTimersByTime(1_000);
		expect(sent[1]).toBe("checkpoint-bridge: 2 more questions cancelled by [b].");
		vi.advanceTimersByTime(1_000);
		notices.cancelled("c", ["now"]);
		expect(sent[2]).toBe('checkpoint-bridge: [c] cancelled its question "now"; it is no longer asked.');
		notices.cancelled("d", ["later"]);
		notices.close();
		vi.advanceTimersByTime(5_000);
		expect(sent).toHaveLength(3);
	});
});
