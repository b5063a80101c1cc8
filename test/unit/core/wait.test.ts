/** The one wait with a bound: first outcome wins, timer and abort listener dropped at once (core/shared/wait.ts). */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { firstWithin, type Settle, waitAtMost } from "../../../extensions/checkpoint-bridge/core/shared/wait.ts";

beforeEach(() => {
	vi.useFakeTimers();
});
afterEach(() => {
	vi.useRealTimers();
});

describe("waitAtMost", () => {
	it("settles with the first value handed to settle; later ones, the time passing and an abort are ignored", async () => {
		const stop = new AbortController();
		const elapsed = vi.fn(() => "elapsed");
		const aborted = vi.fn(() => "aborted");
		let settle: Settle<string> | undefined;
		const told = vi.fn();
		const wait = waitAtMost({ ms: 100, elapsed, signal: stop.signal, aborted }, (s) => {
			settle = s;
			return told;
		});
		settle?.("first");
		settle?.("second");
		stop.abort();
		await vi.advanceTimersByTimeAsync(200);
		expect(await wait).toBe("first");
		expect(told).toHaveBeenCalledTimes(1);
		expect(told).toHaveBeenCalledWith("first");
		expect(elapsed).not.toHaveBeenCalled();
		expect(aborted).not.toHaveBeenCalled();
		expect(vi.getTimerCount()).toBe(0);
	});

	it("settles with elapsed() when the time passes first, and says so to start's settled()", async () => {
		let settled: (() => boolean) | undefined;
		const wait = waitAtMost({ ms: 100, elapsed: () => "elapsed" }, (_settle, s) => {
			settled = s;
			return undefined;
		});
		await vi.advanceTimersByTimeAsync(99);
		expect(settled?.()).toBe(false);
		await vi.advanceTimersByTimeAsync(1);
		expect(settled?.()).toBe(true);
		expect(await wait).toBe("elapsed");
	});

	it("settles with aborted() on an abort, and drops its listener however it settles", async () => {
		const stop = new AbortController();
		const add = vi.spyOn(stop.signal, "addEventListener");
		const remove = vi.spyOn(stop.signal, "removeEventListener");
		const wait = waitAtMost({ ms: 100, elapsed: () => "elapsed", signal: stop.signal, aborted: () => "aborted" }, () => undefined);
		stop.abort();
		expect(await wait).toBe("aborted");
		expect(vi.getTimerCount()).toBe(0);
		expect(remove).toHaveBeenCalledWith("abort", add.mock.calls[0]?.[1]);

		const other = new AbortController();
		const removed = vi.spyOn(other.signal, "removeEventListener");
		const timedOut = waitAtMost({ ms: 10, elapsed: () => "elapsed", signal: other.signal }, () => undefined);
		await vi.advanceTimersByTimeAsync(10);
		expect(await timedOut).toBe("elapsed");
		expect(removed).toHaveBeenCalledTimes(1);
	});

	it("a signal already aborted settles at once, without running start; elapsed() stands in for a missing aborted()", async () => {
		const start = vi.fn(() => undefined);
		expect(await waitAtMost({ ms: 100, elapsed: () => "elapsed", signal: AbortSignal.abort() }, start)).toBe("elapsed");
		expect(start).not.toHaveBeenCalled();
		expect(vi.getTimerCount()).toBe(0);
	});

	it("a value settled while start runs is told to what start returns, once", async () => {
		const told = vi.fn();
		const wait = waitAtMost<string>({ ms: 100, elapsed: () => "elapsed" }, (settle) => {
			settle("at once");
			return told;
		});
		expect(await wait).toBe("at once");
		expect(told).toHaveBeenCalledExactlyOnceWith("at once");
		expect(vi.getTimerCount()).toBe(0);
	});

	it("an unref'd timer does not hold the process", async () => {
		// Real timers here: a spy on a faked setTimeout, once restored, left the faked one in place for files after this one sharing the process.
		vi.useRealTimers();
		const unref = vi.fn();
		const real = globalThis.setTimeout;
		const spy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((run: () => void, ms: number) => {
			const timer = real(run, ms);
			const wrapped = Object.create(timer) as NodeJS.Timeout;
			wrapped.unref = () => (unref(), timer);
			return wrapped;
		}) as typeof setTimeout);
		try {
			void waitAtMost({ ms: 5, elapsed: () => 0, unref: true }, () => undefined);
			expect(unref).toHaveBeenCalledTimes(1);
			void waitAtMost({ ms: 5, elapsed: () => 0 }, () => undefined);
			expect(unref).toHaveBeenCalledTimes(1);
		} finally {
			spy.mockRestore();
		}
		await new Promise((resolve) => setTimeout(resolve, 10));
	});

	it("afterInput judges the time after the loop's next turn: what comes in the same round of timers as the bound still counts", async () => {
		vi.useRealTimers();
		// A stalled loop: the bound's timer and the answer's are both due when the loop gets to them.
		const stalled = (afterInput: boolean) =>
			waitAtMost<string>({ ms: 5, elapsed: () => "elapsed", afterInput }, (settle) => {
				setTimeout(() => settle("answered"), 5);
				const until = Date.now() + 20;
				while (Date.now() < until) {}
				return undefined;
			});
		expect(await stalled(false)).toBe("elapsed");
		expect(await stalled(true)).toBe("answered");
	});
});

describe("firstWithin", () => {
	it("is the work's outcome when it ends in time, and the bound's when the time passes first", async () => {
		expect(await firstWithin(Promise.resolve("done"), { ms: 100, elapsed: () => "late" as const })).toBe("done");
		expect(vi.getTimerCount()).toBe(0);
		const slow = firstWithin(new Promise<string>(() => {}), { ms: 100, elapsed: () => "late" as const });
		await vi.advanceTimersByTimeAsync(100);
		expect(await slow).toBe("late");
	});

	it("rejects with the work's error when it fails in time; a failure after the bound is not unhandled", async () => {
		await expect(firstWithin(Promise.reject(new Error("broke")), { ms: 100, elapsed: () => "late" })).rejects.toThrow("broke");
		let fail: ((error: Error) => void) | undefined;
		const later = firstWithin(
			new Promise<string>((_resolve, reject) => {
				fail = reject;
			}),
			{ ms: 10, elapsed: () => "late" },
		);
		await vi.advanceTimersByTimeAsync(10);
		expect(await later).toBe("late");
		fail?.(new Error("too late to matter"));
		await vi.advanceTimersByTimeAsync(0);
	});

	it("ends on the signal's abort with aborted()", async () => {
		const stop = new AbortController();
		const wait = firstWithin(new Promise<string>(() => {}), { ms: 100, elapsed: () => "late", signal: stop.signal, aborted: () => "stopped" });
		stop.abort();
		expect(await wait).toBe("stopped");
		expect(vi.getTimerCount()).toBe(0);
	});
});
