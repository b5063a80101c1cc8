/**
 * `/checkpoints`' history of ended written-down requests (core/host/audit.ts over the store's
 * `history`): what was answered, who asked, when, newest first and bounded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WRITTEN_DOWN_SHOWN, writtenDownReport } from "../../../extensions/checkpoint-bridge/core/host/audit.ts";
import { openStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import type { RequestStore, StoredEnd } from "../../../extensions/checkpoint-bridge/core/store/store.ts";

const stores: RequestStore[] = [];
afterEach(() => {
	for (const store of stores.splice(0)) store.close();
});

const NOW = Date.UTC(2026, 11, 6, 12, 0, 0);

const end = (n: number, extra: Partial<StoredEnd> = {}): StoredEnd => ({
	askerId: `id-${n}`,
	hostId: `host-${n}`,
	askerSession: "pi-gone",
	asker: `run ${n} (pid ${100 + n})`,
	questions: ["Which  database?"],
	status: "ok",
	answers: [{ question: "Which  database?", answer: `db ${n}`, kind: "option" }],
	queuedAt: NOW - 3_600_000,
	endedAt: NOW - (20 - n) * 60_000,
	expiresAt: NOW + 86_400_000,
	...extra,
});

describe("/checkpoints: the written-down history", () => {
	it("is empty when nothing written down has ended", () => {
		expect(writtenDownReport([], NOW)).toBe("");
	});

	it("says what was answered, where, who asked, when and under which id; late and unanswered ones say so", () => {
		const report = writtenDownReport(
			[
				end(1, { answers: [{ question: "Which  database?", answer: "SQLite", kind: "option", place: "mail" }], late: true }),
				end(2, { status: "timeout", answers: [], note: "It expired." }),
			],
			NOW,
		);
		const lines = report.split("\n");
		expect(lines[0]).toMatch(/^Written down, ended \(2, newest first/);
		expect(lines[1]).toMatch(/\(19 min ago\) \[run 1 \(pid 101\)\] ok, late, 1\/1 answered: Which database\? → SQLite \(mail\) \(id id-1\)$/);
		expect(lines[2]).toMatch(/\(18 min ago\) \[run 2 \(pid 102\)] timeout, 0\/1 answered: Which database\? \(id id-2\)$/);
	});

	it("over the store: the newest ten of twelve ends, newest first", () => {
		const opened = openStore(":memory:");
		if (!opened.ok) throw new Error(opened.warning);
		stores.push(opened.store);
		for (let n = 1; n <= 12; n++) opened.store.ended(end(n));
		const lines = writtenDownReport(opened.store.history(WRITTEN_DOWN_SHOWN), NOW).split("\n");
		expect(lines).toHaveLength(1 + WRITTEN_DOWN_SHOWN);
		expect(lines[1]).toContain("(id id-12)");
		expect(lines.at(-1)).toContain("(id id-3)");
		expect(lines.join("\n")).not.toContain("(id id-2)");
	});
});
