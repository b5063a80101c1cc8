/**
 * The mutation report's summary (test/mutation/summarize.mjs): a run of some files of a group
 * (`--only`) replaces their figures and keeps the others', each with the commit it was taken on.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: a script of the mutation run, plain JavaScript without types.
import { summarize } from "../mutation/summarize.mjs";

const A = "extensions/checkpoint-bridge/core/host/dialog/showing.ts";
const B = "extensions/checkpoint-bridge/core/host/dialog/events.ts";

/** Stryker's report of one file: `killed` mutants killed, `survived` alive, on one-line source. */
function fileReport(killed: number, survived: number) {
	const mutant = (status: string) => ({
		status,
		mutatorName: "BooleanLiteral",
		replacement: "true",
		location: { start: { line: 1, column: 1 }, end: { line: 1, column: 5 } },
	});
	return {
		source: "const x = 1;\n",
		mutants: [...Array.from({ length: killed }, () => mutant("Killed")), ...Array.from({ length: survived }, () => mutant("Survived"))],
	};
}

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder of reports and one of the committed summary, the group `dialog` having run on `first` for both files. */
function setUp() {
	const reports = mkdtempSync(join(tmpdir(), "mutation-reports-"));
	const to = mkdtempSync(join(tmpdir(), "mutation-summary-"));
	dirs.push(reports, to);
	writeFileSync(join(reports, "dialog.json"), JSON.stringify({ files: { [A]: fileReport(9, 1), [B]: fileReport(4, 0) } }));
	writeFileSync(join(reports, "dialog.timing.json"), JSON.stringify({ group: "dialog", commit: "first", seconds: 600, at: "2026-12-01T00:00:00.000Z" }));
	summarize({ reports, to });
	return { reports, to };
}

describe("the mutation summary", () => {
	it("a run of some files of a group replaces their figures and keeps the others', each naming the commit it was taken on", () => {
		const { reports, to } = setUp();
		writeFileSync(join(reports, "dialog.json"), JSON.stringify({ files: { [A]: fileReport(10, 0) } }));
		writeFileSync(
			join(reports, "dialog.timing.json"),
			JSON.stringify({ group: "dialog", commit: "second", seconds: 60, at: "2026-12-02T00:00:00.000Z", only: ["core/host/dialog/showing.ts"] }),
		);
		const { groups } = summarize({ reports, to });
		expect(groups.dialog.commit).toBe("second");
		expect(groups.dialog.only).toEqual([A]);
		expect(groups.dialog.files[A]).toMatchObject({ commit: "second", ranAt: "2026-12-02T00:00:00.000Z", score: 100, mutants: 10 });
		expect(groups.dialog.files[B]).toMatchObject({ commit: "first", ranAt: "2026-12-01T00:00:00.000Z", score: 100, mutants: 4 });
		// The same again changes nothing: the kept file keeps its own commit.
		expect(summarize({ reports, to }).groups).toEqual(groups);
		const report = readFileSync(join(to, "REPORT.md"), "utf8");
		expect(report).toContain("on commit second, of `core/host/dialog/showing.ts` only");
		expect(report).toMatch(/\| `core\/host\/dialog\/events.ts` \| first \| 4 \|/);
		expect(report).toMatch(/\| `core\/host\/dialog\/showing.ts` \| second \| 10 \|/);
	});

	it("a run of the whole group names only its files, on its commit", () => {
		const { reports, to } = setUp();
		writeFileSync(join(reports, "dialog.json"), JSON.stringify({ files: { [A]: fileReport(8, 2) } }));
		writeFileSync(join(reports, "dialog.timing.json"), JSON.stringify({ group: "dialog", commit: "third", seconds: 60, at: "2026-12-03T00:00:00.000Z" }));
		const { groups } = summarize({ reports, to });
		expect(Object.keys(groups.dialog.files)).toEqual([A]);
		expect(groups.dialog.files[A]).toMatchObject({ commit: "third", score: 80 });
		expect(groups.dialog.only).toBeUndefined();
	});
});
