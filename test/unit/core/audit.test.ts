import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AUDIT_ENTRY_TYPE, checkpointsReport } from "../../../extensions/checkpoint-bridge/core/host/audit.ts";
import { until } from "../../support/until.ts";
import { loadExtensionCopy, playSession } from "../support/fake-pi.ts";
import { fakeUI } from "../support/fake-ui.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("audit trail", () => {
	it("appends every settled request to the host session with who asked, questions, answers, outcome and timings", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI();
		const host = playSession(copy, { sessionId: "host", ui: ui.ui });
		const child = playSession(copy, { sessionId: "child", name: "planner" });
		await host.start();
		const answered = child.call({ questions: [{ question: "Name?" }] });
		await until(() => ui.current() !== undefined, "the first call's dialog");
		await vi.advanceTimersByTimeAsync(3_000);
		ui.current()!.answer("atlas");
		await answered;
		const slow = child.call({ questions: [{ question: "Too slow?" }], timeoutMs: 1_000 });
		await vi.advanceTimersByTimeAsync(1_000);
		expect((await slow).status).toBe("timeout");
		expect(child.entries).toEqual([]);
		expect(host.entries.map((e) => e.customType)).toEqual([AUDIT_ENTRY_TYPE, AUDIT_ENTRY_TYPE]);
		expect(host.entries[0]!.data).toMatchObject({
			asker: "planner",
			askerSessionId: "child",
			questions: ["Name?"],
			answers: [{ answer: "atlas" }],
			status: "ok",
			waitedMs: 3_000,
			queuedAt: expect.any(Number),
			shownAt: expect.any(Number),
			settledAt: expect.any(Number),
		});
		expect(host.entries[1]!.data).toMatchObject({ status: "timeout", answers: [] });
		await host.shutdown();
	});

	it("lists what is open and the recent history with /checkpoints", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI();
		const host = playSession(copy, { sessionId: "host", ui: ui.ui });
		await host.start();
		const first = host.call({ questions: [{ question: "Done already?" }] });
		await until(() => ui.current() !== undefined, "the first call's dialog");
		ui.current()!.answer("yes");
		await first;
		void host.call({ questions: [{ question: "Still open?" }] });
		await vi.advanceTimersByTimeAsync(0);
		await host.command("checkpoints");
		const report = ui.notices.at(-1)!.message;
		expect(report).toContain("1 open (1 shown, 0 queued), oldest first:");
		// The unnamed host session's own model asks as the main session (core/shared/identity.ts).
		expect(report).toMatch(/\[main session\] shown \(question 1 of 1\) since \d\d:\d\d:\d\d, asked 0 min ago: Still open\?/);
		expect(report).toContain("Still open?");
		expect(report).toMatch(/Recent \(1\):\n.*ok, 1\/1 answered/);
		expect(report).toContain("2 questions asked, shown to you in 2 dialogs.");
		await host.shutdown();
	});

	it("gives times in the local time zone, as the web page does", () => {
		const tz = process.env.TZ;
		process.env.TZ = "Asia/Kolkata";
		try {
			const record = {
				requestId: "r",
				asker: "planner",
				askerSessionId: "s",
				questions: ["Q?"],
				answers: [],
				status: "ok",
				queuedAt: 0,
				settledAt: 0,
				waitedMs: 0,
			};
			expect(checkpointsReport(undefined, [{ type: "custom", customType: AUDIT_ENTRY_TYPE, data: record }])).toContain("  05:30:00 [planner] ok");
		} finally {
			if (tz === undefined) delete process.env.TZ;
			else process.env.TZ = tz;
		}
	});

	it("lists a relayed dialog's title of several lines on one line", () => {
		const title = "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?";
		const snapshot = {
			v: 1,
			takenAt: 0,
			open: [
				{
					v: 1,
					requestId: "r",
					asker: { label: "subagent-janitor", sessionId: "s" },
					questions: [{ question: title, kind: "choice" as const, dialog: "select" as const, options: [{ label: "Yes" }, { label: "No" }] }],
					queuedAt: 0,
					deadline: 0,
					state: "queued" as const,
				},
			],
		};
		const report = checkpointsReport(snapshot as Parameters<typeof checkpointsReport>[0], []);
		expect(report.split("\n")[1]).toMatch(/^ {2}\[subagent-janitor\] queued since .*: ⚠️ Dangerous command: rm -rf build Allow\?$/);
	});

	it("says when there is no host", () => {
		expect(checkpointsReport(undefined, [])).toContain("no host session");
	});
});
