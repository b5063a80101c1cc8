#!/usr/bin/env node
/**
 * Installs the oldest supported pi (test/compat/pi-0.85: pi 0.85.1 and pi-subagents 0.67) from its
 * lockfile when it is missing, as `npm run setup:compat` does. Used before `npm test` (its
 * integration-pi-0.85 project) and by the demo (background sub-agents need pi 0.85).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
export const COMPAT_DIR = join(here, "pi-0.85");
const CLI = join(COMPAT_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");

/** Installs the compat pi unless it is there; `why` says what it is for. Throws with npm's output when the install fails. */
export function ensureCompatInstall(why) {
	if (existsSync(CLI)) return false;
	const prefix = relative(root, COMPAT_DIR);
	console.log(`Installing pi 0.85.1 and pi-subagents into ${prefix} ${why} (once, about 20 s)...`);
	const result = spawnSync("npm", ["ci", "--prefix", prefix, "--no-audit", "--no-fund"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	if (result.status !== 0)
		throw new Error(
			`could not install ${prefix} (npm ci ${result.error ? `failed: ${result.error.message}` : `exited with ${result.status}`}):\n${`${result.stdout ?? ""}${result.stderr ?? ""}`.trim()}\nRun "npm run setup:compat" to retry.`,
		);
	return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) ensureCompatInstall(process.argv[2] ?? "for the tests on the oldest supported pi");
