#!/usr/bin/env node
// `node test/mutation/recheck.mjs [--record | --timeouts] <group> <test file>…`: applies each mutant that survived the
// group's last Stryker run (.tmp/mutation/<group>.json) to its source by hand, one at a time, runs the given
// test files against it and says whether they now fail. For survivors killed by tests written after that run,
// without waiting for a whole new run; `--record` adds each killed one to equivalent.json as `killedByHand`,
// naming the test that failed (see README.md). A file whose source differs from the report's is skipped: the
// mutant's place in it is no longer known. `--timeouts` does the same for the mutants Stryker counted as detected
// because their tests ran past its time limit, without a limit of that kind (a run is stopped after
// TIMEOUT_RECHECK_MS): on a busy machine a mutant the tests would not notice can run past it too.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { mutatedCode, shownReplacement } from "./summarize.mjs";

const args = process.argv.slice(2);
const record = args[0] === "--record";
const timeouts = args[0] === "--timeouts";
const [group, ...tests] = record || timeouts ? args.slice(1) : args;
/** How long a rechecked timed-out mutant's run may take before it counts as hanging (a real timeout). */
const TIMEOUT_RECHECK_MS = 180_000;
if (!group || tests.length === 0) {
	console.error("usage: node test/mutation/recheck.mjs [--record | --timeouts] <group> <test file>…");
	process.exit(2);
}
const report = JSON.parse(readFileSync(`.tmp/mutation/${group}.json`, "utf8"));

/** The text of `source` with the mutant's range (1-based lines and columns, end exclusive) replaced. */
function applied(source, { location: { start, end }, replacement }) {
	const lines = source.split("\n");
	const offset = ({ line, column }) => lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column - 1;
	return source.slice(0, offset(start)) + replacement + source.slice(offset(end));
}

/** Where each test run's JSON report goes. */
const REPORT = `.tmp/mutation/${group}.recheck-run.json`;

/** The first failing test in the last run's JSON report, as "file › full name". */
function firstFailure() {
	try {
		const json = JSON.parse(readFileSync(REPORT, "utf8"));
		rmSync(REPORT);
		for (const file of json.testResults) {
			const test = file.assertionResults.find((t) => t.status === "failed");
			if (test) return `${relative(process.cwd(), file.name)} › ${test.fullName}`;
		}
	} catch {
		// no report: the run failed before any test (a mutant that breaks loading); the exit status still says so
	}
	return undefined;
}

const rows = [];
for (const [path, file] of Object.entries(report.files)) {
	const survivors = file.mutants.filter((m) => (timeouts ? m.status === "Timeout" : m.status === "Survived" || m.status === "NoCoverage"));
	if (survivors.length === 0) continue;
	const original = readFileSync(path, "utf8");
	if (original !== file.source) {
		console.error(`${path}: changed since the report; skipped (${survivors.length} survivors)`);
		continue;
	}
	const lines = original.split("\n");
	const restore = () => writeFileSync(path, original);
	process.once("SIGINT", () => {
		restore();
		process.exit(130);
	});
	try {
		for (const mutant of survivors) {
			writeFileSync(path, applied(original, mutant));
			const run = spawnSync(
				"npx",
				["vitest", "run", "--config", "test/mutation/vitest.config.ts", "--bail", "1", "--reporter", "json", "--outputFile", REPORT, ...tests],
				{ stdio: "ignore", ...(timeouts ? { timeout: TIMEOUT_RECHECK_MS, killSignal: "SIGKILL" } : {}) },
			);
			const hangs = run.error?.code === "ETIMEDOUT" || run.signal === "SIGKILL";
			const failed = hangs ? undefined : firstFailure();
			const killed = run.status !== 0 && !hangs;
			rows.push({
				path,
				line: mutant.location.start.line,
				mutator: mutant.mutatorName,
				replacement: mutant.replacement,
				code: mutatedCode(lines, mutant.location),
				killed,
				...(timeouts ? { hangs } : {}),
				by: failed,
			});
			console.log(
				`${hangs ? "hangs   " : killed ? "killed  " : "survived"} ${path}:${mutant.location.start.line}:${mutant.location.start.column} ${mutant.mutatorName} → ${JSON.stringify(mutant.replacement).slice(0, 60)}${failed ? `  (${failed})` : ""}`,
			);
		}
	} finally {
		restore();
	}
}
writeFileSync(`.tmp/mutation/${group}.recheck${timeouts ? "-timeouts" : ""}.json`, `${JSON.stringify(rows, null, "\t")}\n`);
const killed = rows.filter((r) => r.killed).length;
if (timeouts) {
	console.log(
		`${rows.length} timed-out mutants run again without Stryker's limit: ${killed} fail the tests, ${rows.filter((r) => r.hangs).length} hang (past ${TIMEOUT_RECHECK_MS / 1000} s), ${rows.filter((r) => !r.killed && !r.hangs).length} pass them; the list is in .tmp/mutation/${group}.recheck-timeouts.json`,
	);
	process.exit(0);
}
if (record) {
	const path = new URL("equivalent.json", import.meta.url);
	const entries = JSON.parse(readFileSync(path, "utf8"));
	const known = (r) =>
		entries.some(
			(e) => e.file === r.path && e.line === r.line && e.mutator === r.mutator && e.replacement === shownReplacement(r.replacement) && e.code === r.code,
		);
	for (const r of rows.filter((row) => row.killed && !known(row)))
		entries.push({
			file: r.path,
			line: r.line,
			mutator: r.mutator,
			replacement: shownReplacement(r.replacement),
			...(r.code !== undefined ? { code: r.code } : {}),
			killedByHand: r.by ?? tests.join(", "),
			why: `written after the ${group} group's last run; seen failing with the mutant applied by recheck.mjs.`,
		});
	writeFileSync(path, `${JSON.stringify(entries, null, "\t")}\n`);
}
console.log(`${killed} of ${rows.length} survivors killed by hand; the list is in .tmp/mutation/${group}.recheck.json`);
