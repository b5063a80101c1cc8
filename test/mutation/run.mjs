#!/usr/bin/env node
// `npm run mutation [-- seal|host|queue|order|answers|tool|route|book|dialog|store|wire|shared|notices|model]`: runs Stryker over each group of the relay's files (all of them by default),
// one after another, then writes the report (test/mutation/REPORT.md, summary.json). See README.md here.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { summarize } from "./summarize.mjs";

const GROUPS = ["seal", "host", "queue", "order", "answers", "tool", "route", "book", "dialog", "store", "wire", "shared", "notices", "model"];
const asked = process.argv.slice(2).filter((arg) => GROUPS.includes(arg));
mkdirSync(".tmp/mutation", { recursive: true });
for (const group of asked.length > 0 ? asked : GROUPS) {
	const startedAt = Date.now();
	const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim() || undefined;
	const run = spawnSync("npx", ["stryker", "run"], { stdio: "inherit", env: { ...process.env, MUTATION_GROUP: group } });
	if (run.status !== 0) process.exit(run.status ?? 1);
	writeFileSync(
		`.tmp/mutation/${group}.timing.json`,
		JSON.stringify({ group, commit, seconds: Math.round((Date.now() - startedAt) / 1000), at: new Date().toISOString() }),
	);
}
summarize();
