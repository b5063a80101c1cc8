/** The start-once registry the endpoint, the NATS room and the web page share (core/shared/process-slot.ts). */
import { describe, expect, it, vi } from "vitest";
import { type StartSlot, startOnce, takeStarted } from "../../../extensions/checkpoint-bridge/core/shared/process-slot.ts";

describe("startOnce and takeStarted", () => {
	it("starts once: later calls get the same start", async () => {
		const slot: StartSlot<string> = {};
		const start = vi.fn(async () => "up");
		const first = startOnce(slot, start);
		expect(startOnce(slot, start)).toBe(first);
		expect(await first).toBe("up");
		expect(startOnce(slot, start)).toBe(first);
		expect(start).toHaveBeenCalledTimes(1);
	});

	it("forgets a start that failed, or whose outcome is declined, so the next call starts afresh", async () => {
		const slot: StartSlot<string> = {};
		await expect(startOnce(slot, async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
		expect(slot.starting).toBeUndefined();
		expect(
			await startOnce(
				slot,
				async () => "taken",
				(outcome) => outcome !== "taken",
			),
		).toBe("taken");
		expect(slot.starting).toBeUndefined();
		expect(
			await startOnce(
				slot,
				async () => "serving",
				(outcome) => outcome !== "taken",
			),
		).toBe("serving");
		expect(slot.starting).toBeDefined();
	});

	it("never forgets a newer start in place of a failed older one", async () => {
		const slot: StartSlot<string> = {};
		let fail!: (error: Error) => void;
		const older = startOnce(slot, () => new Promise<string>((_, reject) => (fail = reject)));
		// Closed while starting (its outcome awaited elsewhere), then started again.
		const taken = takeStarted(slot);
		const newer = startOnce(slot, async () => "newer");
		fail(new Error("late"));
		await expect(older).rejects.toThrow("late");
		expect(await taken).toBeUndefined();
		expect(slot.starting).toBe(newer);
	});

	it("takeStarted empties the slot and gives the outcome; undefined when none ran or it failed", async () => {
		const slot: StartSlot<string> = {};
		expect(await takeStarted(slot)).toBeUndefined();
		startOnce(slot, async () => "up");
		expect(await takeStarted(slot)).toBe("up");
		expect(slot.starting).toBeUndefined();
		startOnce(slot, async () => Promise.reject(new Error("no"))).catch(() => {});
		expect(await takeStarted(slot)).toBeUndefined();
	});
});
