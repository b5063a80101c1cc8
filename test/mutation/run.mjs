#!/usr/bin/env node
// `npm run mutation [-- seal|host|queue|order|answers|tool|route|book|dialog|store|wire|shared|notices|model] [--only <file>…]`: runs Stryker
// over each group of the relay's files (all of them by default), one after another, then writes the report
// (test/mutation/REPORT.md, summary.json). `--only` (one group) mutates only the files named, of that group:
// the group's other files keep their figures, each with the commit it was taken on. See README.md here.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { summarize } from "./summarize.mjs";

const GROUPS = ["seal", "host", "queue", "order", "answers", "tool", "route", "book", "dialog", "store", "wire", "shared", "notices", "model"];
const args = process.argv.slice(2);
const onlyAt = args.indexOf("--only");
const only = onlyAt < 0 ? [] : args.slice(onlyAt + 1);
const asked = (onlyAt < 0 ? args : args.slice(0, onlyAt)).filter((arg) => GROUPS.includes(arg));
if (onlyAt >= 0 && (asked.length !== 1 || only.length === 0)) {
	console.error("--only takes one group before it and one file or more after it, e.g. `npm run mutation -- dialog --only core/host/dialog/showing.ts`");
	process.exit(2);
}
mkdirSync(".tmp/mutation", { recursive: true });
for (const group of asked.length > 0 ? asked : GROUPS) {
	const startedAt = Date.now();
	const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim() || undefined;
	const env = { ...process.env, MUTATION_GROUP: group, ...(only.length > 0 ? { MUTATION_ONLY: only.join(",") } : {}) };
	const run = spawnSync("npx", ["stryker", "run"], { stdio: "inherit", env });
	if (run.status !== 0) process.exit(run.status ?? 1);
	writeFileSync(
		`.tmp/mutation/${group}.timing.json`,
		JSON.stringify({
			group,
			commit,
			seconds: Math.round((Date.now() - startedAt) / 1000),
			at: new Date().toISOString(),
			...(only.length > 0 ? { only } : {}),
		}),
	);
}
summarize();
