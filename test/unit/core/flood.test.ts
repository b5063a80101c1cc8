/**
 * A flood from one asker (issue 13, finding 4, its in-process half): one connection queued 16,846
 * requests in two seconds and the UI got 17,006 notices. The host caps the requests one asker
 * session may have open, coalesces arrival notices, and keeps serving everyone else.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
	ArrivalNotices,
	NOTICE_ASKERS_AT_ONCE,
	NOTICE_ASKERS_SHOWN,
	NOTICE_WINDOW_MS,
} from "../../../extensions/checkpoint-bridge/core/host/arrival-notices.ts";
import { PROTOCOL_VERSION, type RelayResult, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { MAX_OPEN_PER_ASKER } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { flush, relay, track } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const FLOOD = 2_000;

describe("arrival notices", () => {
	it(`notices the first request of up to ${NOTICE_ASKERS_AT_ONCE} askers at once, and sums up the rest of the window in one notice when it ends`, async () => {
		const sent: string[] = [];
		const notices = new ArrivalNotices<number>((m) => sent.push(m));
		const askers = ["a", "a", "b", "c", "d", "e", "f", "g", "a"];
		askers.forEach((label, i) => notices.arrived(i, label, i === 0 ? 2 : 1, i));
		// Each notice restates the window's earlier ones: pi's TUI shows back-to-back notices in one place.
		const told = [
			"[a] asks 2 questions",
			"[b] asks 1 question (2 ahead)",
			"[c] asks 1 question (3 ahead)",
			"[d] asks 1 question (4 ahead)",
			"[e] asks 1 question (5 ahead)",
		];
		expect(sent).toEqual(told.map((_, i) => `checkpoint-bridge: ${told.slice(0, i + 1).join("; ")}`));
		expect(NOTICE_ASKERS_AT_ONCE).toBe(5);
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS - 1);
		expect(sent).toHaveLength(5);
		await vi.advanceTimersByTimeAsync(1);
		// a's second and third, f and g.
		expect(sent.at(-1)).toBe(`checkpoint-bridge: ${told.join("; ")}; 4 questions from [a], [f], [g]`);
		// Those summed up stay in the summaries of the next window; a new asker is noticed at once.
		notices.arrived(20, "a", 1, 0);
		notices.arrived(21, "h", 1, 1);
		expect(sent.at(-1)).toBe("checkpoint-bridge: [h] asks 1 question (1 ahead)");
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS);
		expect(sent.at(-1)).toBe("checkpoint-bridge: [h] asks 1 question (1 ahead); 1 question from [a]");
		expect(sent).toHaveLength(8);
		// After a quiet window, everyone is noticed at once again.
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS);
		notices.arrived(30, "a", 3, 0);
		expect(sent.at(-1)).toBe("checkpoint-bridge: [a] asks 3 questions");
		expect(vi.getTimerCount()).toBe(0);
	});

	it(`names ${NOTICE_ASKERS_SHOWN} askers in a summary and counts the rest`, async () => {
		const sent: string[] = [];
		const notices = new ArrivalNotices<number>((m) => sent.push(m));
		for (let i = 0; i < NOTICE_ASKERS_AT_ONCE + 6; i++) notices.arrived(i, `s${i}`, 1, i);
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS);
		expect(sent.at(-1)).toMatch(/; 6 questions from \[s5\], \[s6\], \[s7\] \+3 more$/);
	});

	it("drops what settled before its notice, and with nothing left owed, its timer", async () => {
		const sent: string[] = [];
		const notices = new ArrivalNotices<number>((m) => sent.push(m));
		notices.arrived(0, "a", 1, 0);
		notices.arrived(1, "a", 1, 1);
		notices.arrived(2, "a", 1, 2);
		notices.gone(1);
		expect(vi.getTimerCount()).toBe(1);
		notices.gone(2);
		expect(vi.getTimerCount()).toBe(0);
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS * 2);
		expect(sent).toEqual(["checkpoint-bridge: [a] asks 1 question"]);
	});
});

describe(`${FLOOD.toLocaleString("en")} requests from one asker session`, () => {
	it(`holds ${MAX_OPEN_PER_ASKER}, refuses the rest with an error naming the cap, notices the legitimate asker at once and the flood in one summary, and the legitimate asker's dialog opens within 2 dialogs (the fair queue, ADR-0024)`, async () => {
		const { fake, handle, ask } = relay();
		const flood = Array.from({ length: FLOOD }, (_, i) => track(ask([{ question: `Runaway question ${i}?` }], { label: "runaway" })));
		const planner = track(ask([{ question: "Which naming convention?", options: ["camelCase", "snake_case"] }], { label: "planner" }));
		await flush(vi);

		const refused = flood.filter((call) => call.envelope?.status === "error");
		expect(refused).toHaveLength(FLOOD - MAX_OPEN_PER_ASKER);
		expect(refused[0]!.envelope!.note).toContain(`the most one asker session may have (${MAX_OPEN_PER_ASKER})`);
		expect(handle.snapshot()!.open).toHaveLength(MAX_OPEN_PER_ASKER + 1);

		// The runaway's first request and the planner's at once; the runaway's others in one summary.
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS);
		const info = fake.notices.filter((n) => n.type === "info").map((n) => n.message);
		console.log(`${FLOOD} requests from one asker: ${info.length} notices, ${refused.length} refused, ${MAX_OPEN_PER_ASKER} held`);
		const told = `[runaway] asks 1 question; [planner] asks 1 question (${MAX_OPEN_PER_ASKER} ahead)`;
		expect(info).toEqual([
			"checkpoint-bridge: [runaway] asks 1 question",
			`checkpoint-bridge: ${told}`,
			`checkpoint-bridge: ${told}; ${MAX_OPEN_PER_ASKER - 1} questions from [runaway]`,
		]);

		// The human dismisses the runaway's dialogs; the planner's opens after the one on screen and the runaway's next (one per round).
		let dismissed = 0;
		while (!fake.current()!.title.startsWith("[planner]")) {
			fake.current()!.answer(undefined);
			dismissed++;
			await flush(vi);
		}
		expect(dismissed).toBe(2);
		fake.current()!.answer("snake_case");
		await flush(vi);
		expect(planner.envelope).toMatchObject({ status: "ok", answers: [{ answer: "snake_case" }] });
		expect(fake.maxOpen).toBe(1);
	});

	it("takes the asker's next request once one of its open ones has settled", async () => {
		const { fake, ask } = relay();
		const open = Array.from({ length: MAX_OPEN_PER_ASKER }, (_, i) => track(ask([{ question: `Q${i}?` }], { label: "busy" })));
		const over = track(ask([{ question: "One too many?" }], { label: "busy" }));
		await flush(vi);
		expect(over.envelope?.status).toBe("error");
		fake.current()!.answer("done");
		await flush(vi);
		expect(open[0]!.envelope?.status).toBe("ok");
		const next = track(ask([{ question: "Now?" }], { label: "busy" }));
		await flush(vi);
		expect(next.envelope).toBeUndefined();
	});

	it("counts per asker session and origin: a request naming the same session from another origin is not refused", async () => {
		const { handle, ask } = relay();
		for (let i = 0; i < MAX_OPEN_PER_ASKER; i++) void ask([{ question: `Q${i}?` }], { label: "victim" });
		await flush(vi);
		const results: RelayResult[] = [];
		handle.bus.on(replyChannel("other-origin"), (reply) => reply.kind === "result" && results.push(reply));
		handle.bus.emit("request", {
			v: PROTOCOL_VERSION,
			id: "other-origin",
			origin: "local:elsewhere",
			asker: { label: "victim", sessionId: "victim-session" },
			questions: [{ question: "From elsewhere?" }],
			deadline: Date.now() + 60_000,
			dialogTimeoutMs: 60_000,
			createdAt: Date.now(),
		});
		await flush(vi);
		expect(results).toEqual([]);
		expect(handle.snapshot()!.open).toHaveLength(MAX_OPEN_PER_ASKER + 1);
	});
});
