/**
 * A request sent again after its host went away counts its wait from when it was first asked, at
 * the new host as in the asker's envelope: `/checkpoints` (open and recent), the status line and the
 * audit record, not from when the new host showed it (core/host/dialog-host.ts serve, core/host/audit.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { checkpointsReport } from "../../../extensions/checkpoint-bridge/core/host/audit.ts";
import { statusText } from "../../../extensions/checkpoint-bridge/core/host/status-line.ts";
import { flush, relay, relayRequest } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers({ now: new Date(2026, 11, 3, 9, 0, 0) }));
afterEach(() => vi.useRealTimers());

/** A request as the bridge puts it on the bus (again after a restart: `resent`), asked `agoMs` before now. */
function sendAgain(handle: ReturnType<typeof relay>["handle"], id: string, agoMs: number, resent = true) {
	handle.bus.emit("request", relayRequest(id, { createdAt: Date.now() - agoMs, ...(resent ? { resent: true } : {}) }));
}

describe("the wait of a request sent again after a restart", () => {
	it("counts from when it was first asked: /checkpoints says since then, the status line and the audit record agree with the asker's 25 s", async () => {
		const records: { waitedMs: number; queuedAt: number }[] = [];
		const { handle, fake, role } = relay({}, { onSettled: (record) => void records.push(record) });
		sendAgain(handle, "again-1", 25_000);
		await flush(vi);
		const open = checkpointsReport(handle.snapshot(), []);
		expect(open).toMatch(/\[planner · asked before the restart] shown \(question 1 of 1\) since 08:59:35, asked 0 min ago: Name\?/);
		await vi.advanceTimersByTimeAsync(4_000);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(records[0]!.waitedMs).toBe(29_000);
		const report = checkpointsReport(undefined, [{ type: "custom", customType: "checkpoint-bridge", data: records[0] }]);
		expect(report).toMatch(/\[planner[^\]]*] ok, 1\/1 answered, waited 29\.0 s/);
		expect(statusText(role.host)).toBeUndefined();
	});

	it("a first request counts from its arrival, and an asker's clock ahead of the host's never makes a wait start in the future", async () => {
		const records: { waitedMs: number }[] = [];
		const { handle, fake } = relay({}, { onSettled: (record) => void records.push(record) });
		sendAgain(handle, "first", 25_000, false);
		await flush(vi);
		await vi.advanceTimersByTimeAsync(2_000);
		fake.current()!.answer("a");
		await flush(vi);
		sendAgain(handle, "ahead", -60_000);
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		fake.current()!.answer("b");
		await flush(vi);
		expect(records.map((r) => r.waitedMs)).toEqual([2_000, 1_000]);
	});
});
