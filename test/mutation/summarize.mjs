#!/usr/bin/env node
// Turns Stryker's JSON reports (.tmp/mutation/<group>.json) into the committed report: summary.json
// (per file: counts, score, every surviving mutant) and REPORT.md. A group without a fresh report keeps
// its entries from the committed summary.json, so one group can be re-run alone. Survivors listed in
// equivalent.json (file, line, mutator, replacement, why) are marked equivalent and named with the reason; an entry
// with killedByHand names the test seen failing with that mutant applied by hand, and counts it as killed.
import { execSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = new URL("./", import.meta.url);
const GROUPS = ["seal", "host", "queue", "order", "answers", "tool", "route", "book", "dialog", "store", "wire", "shared", "notices", "model"];
/** The score each file of the relay core must reach, excluding mutants shown to be equivalent. */
export const TARGET = 85;

const readJson = (path, fallback) => (existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : fallback);
const isCaught = (status) => status === "Killed" || status === "Timeout";
const isCounted = (status) => isCaught(status) || status === "Survived" || status === "NoCoverage";
const percent = (part, whole) => (whole === 0 ? 100 : Math.round((1000 * part) / whole) / 10);
const short = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A mutant's replacement as the report shows it and equivalent.json names it: spaces folded, at most 80 characters. */
export const shownReplacement = (replacement) => short((replacement ?? "").replace(/\s+/g, " "), 80);

/** The code a mutant replaces, when it lies on one line. */
export const mutatedCode = (lines, { start, end }) =>
	start.line === end.line ? (lines[start.line - 1] ?? "").slice(start.column - 1, end.column - 1) : undefined;

/** One file's figures from Stryker's report. */
function fileSummary(path, file, equivalents) {
	const lines = file.source.split("\n");
	const counts = {};
	const survivors = [];
	for (const mutant of file.mutants) {
		counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
		if (mutant.status !== "Survived" && mutant.status !== "NoCoverage") continue;
		const line = mutant.location.start.line;
		const replacement = shownReplacement(mutant.replacement);
		const equivalent = equivalents.find(
			(e) =>
				e.file === path &&
				e.line === line &&
				e.mutator === mutant.mutatorName &&
				(e.replacement === undefined || e.replacement === replacement) &&
				// Two mutants of one line with the same replacement differ in the code they replace.
				(e.code === undefined || e.code === mutatedCode(lines, mutant.location)),
		);
		survivors.push({
			line,
			mutator: mutant.mutatorName,
			status: mutant.status,
			code: short((lines[line - 1] ?? "").trim(), 100),
			replacement,
			// An entry that names the test which fails with this mutant applied by hand (Stryker's run reported it survived).
			...(equivalent?.killedByHand ? { killedByHand: equivalent.killedByHand, why: equivalent.why } : equivalent ? { equivalent: equivalent.why } : {}),
		});
	}
	const counted = file.mutants.filter((m) => isCounted(m.status)).length;
	const caught = file.mutants.filter((m) => isCaught(m.status)).length + survivors.filter((s) => s.killedByHand).length;
	const equivalent = survivors.filter((s) => s.equivalent).length;
	return {
		mutants: file.mutants.length,
		counts,
		score: percent(caught, counted),
		scoreWithoutEquivalents: percent(caught, counted - equivalent),
		survivors: survivors.sort((a, b) => a.line - b.line),
	};
}

/** `reports`: where Stryker's reports are; `to`: the folder of summary.json, REPORT.md and equivalent.json. */
export function summarize({ reports = ".tmp/mutation", to = fileURLToPath(HERE) } = {}) {
	const equivalents = readJson(join(to, "equivalent.json"), []);
	const summaryPath = join(to, "summary.json");
	const previous = readJson(summaryPath, { groups: {} });
	const groups = { ...previous.groups };
	for (const group of GROUPS) {
		// A run that was stopped leaves only its incremental file, holding the mutants it got to.
		const full = readJson(join(reports, `${group}.json`), undefined);
		const report = full ?? readJson(join(reports, `incremental-${group}.json`), undefined);
		if (!report) continue;
		const timing = readJson(join(reports, `${group}.timing.json`), undefined);
		const logPath = join(reports, `${group}.log`);
		const log = existsSync(logPath) ? readFileSync(logPath, "utf8") : "";
		const instrumented = Number(/Instrumented \d+ source file\(s\) with (\d+) mutant/.exec(log)?.[1] ?? Number.NaN);
		// The commit the run started on (run.mjs records it), else the one checked out now.
		let commit = timing?.commit ?? "unknown";
		if (!timing?.commit)
			try {
				commit = execSync("git rev-parse --short HEAD", { encoding: "utf8" }).trim();
			} catch {}
		const ranAt = timing?.at ?? new Date().toISOString();
		const before = previous.groups[group];
		// A run of some of the group's files (run.mjs --only): the others keep their figures and the commit each was taken on.
		const kept = timing?.only && before ? before.files : {};
		const files = {};
		for (const [path, f] of Object.entries(kept)) files[path] = { commit: before.commit, ranAt: before.ranAt, ...f };
		for (const [path, file] of Object.entries(report.files)) files[path] = { commit, ranAt, ...fileSummary(path, file, equivalents) };
		const tested = Object.values(report.files).reduce((sum, f) => sum + f.mutants.length, 0);
		groups[group] = {
			commit,
			ranAt,
			seconds: timing?.seconds,
			...(timing?.only ? { only: Object.keys(report.files) } : {}),
			...(full ? {} : { partial: { tested, of: Number.isNaN(instrumented) ? undefined : instrumented } }),
			files,
		};
	}
	const summary = { target: TARGET, groups };
	writeFileSync(summaryPath, `${JSON.stringify(summary, null, "\t")}\n`);
	writeFileSync(join(to, "REPORT.md"), markdown(summary));
	return summary;
}

function markdown({ groups }) {
	const out = [
		"# Mutation report",
		"",
		"Written by `npm run mutation` (see [README.md](README.md)); do not edit by hand. A score counts killed and",
		"timed-out mutants against every mutant that ran or had no test; *without equivalents* leaves out the survivors",
		`listed in [equivalent.json](equivalent.json), each with why no test can tell it from the original. A survivor marked *killed by hand*`,
		"is one Stryker reported alive that the named test fails on when the mutant is applied by hand; it counts as killed.",
		`Target: ${TARGET} % per file.`,
		"",
	];
	const notRun = GROUPS.filter((group) => !(group in groups));
	if (notRun.length > 0) out.push(`Not run yet: ${notRun.map((group) => `\`${group}\``).join(", ")}.`, "");
	for (const [group, { commit, ranAt, seconds, only, partial, files }] of Object.entries(groups)) {
		const what = only ? `, of ${only.map((path) => `\`${path.replace("extensions/checkpoint-bridge/", "")}\``).join(", ")} only` : "";
		out.push(`## Group \`${group}\``, "", `Last run at ${ranAt} on commit ${commit}${what}${seconds ? `, ${Math.round(seconds / 60)} min` : ""}.`, "");
		if (partial)
			out.push(
				`**Partial run**: stopped after ${partial.tested}${partial.of ? ` of ${partial.of}` : ""} mutants (the figures below count only those); \`npm run mutation -- ${group}\` resumes it.`,
				"",
			);
		out.push(
			"| file | commit | mutants | killed | timeout | survived | no coverage | score | without equivalents |",
			"|---|---|---:|---:|---:|---:|---:|---:|---:|",
		);
		for (const [path, f] of Object.entries(files))
			out.push(
				`| \`${path.replace("extensions/checkpoint-bridge/", "")}\` | ${f.commit ?? commit} | ${f.mutants} | ${f.counts.Killed ?? 0} | ${f.counts.Timeout ?? 0} | ${f.counts.Survived ?? 0} | ${f.counts.NoCoverage ?? 0} | ${f.score} % | ${f.scoreWithoutEquivalents} % |`,
			);
		out.push("");
		for (const [path, f] of Object.entries(files)) {
			if (f.survivors.length === 0) continue;
			out.push(`### ${path.replace("extensions/checkpoint-bridge/", "")}: surviving mutants`, "");
			for (const s of f.survivors)
				out.push(
					`- line ${s.line}, ${s.mutator}${s.status === "NoCoverage" ? " (no test reaches it)" : ""}: \`${s.code.replace(/`/g, "'")}\` → \`${s.replacement.replace(/`/g, "'")}\`${s.equivalent ? `. **Equivalent:** ${s.equivalent}` : ""}${s.killedByHand ? `. **Killed by hand** (counted as killed): ${s.killedByHand}; ${s.why}` : ""}`,
				);
			out.push("");
		}
	}
	return `${out.join("\n").trimEnd()}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) summarize();
