#!/usr/bin/env node
/**
 * Installs the oldest supported pi (test/compat/pi-0.85: pi 0.85.1 and pi-subagents 0.67) from its
 * lockfile when it is missing, as `npm run setup:compat` does. Used before `npm test` (its
 * integration-pi-0.85 project) and by the demo (background sub-agents need pi 0.85).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
export const COMPAT_DIR = join(here, "pi-0.85");
const CLI = join(COMPAT_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
/** How often a running install says it is still at work, in ms. @default 5000 */
const PROGRESS_MS = 5_000;

/** Packages the compat lockfile installs: said before the install starts, so the wait has a size. */
function packageCount() {
	try {
		return Object.keys(JSON.parse(readFileSync(join(COMPAT_DIR, "package-lock.json"), "utf8")).packages ?? {}).filter((key) => key !== "").length;
	} catch {
		return undefined;
	}
}

/**
 * Installs the compat pi unless it is there; `why` says what it is for. Says what it installs,
 * then the time spent every 5 s while npm works (npm's own output is kept for a failure). Resolves
 * true when it installed; rejects with npm's output when the install fails.
 */
export async function ensureCompatInstall(why) {
	if (existsSync(CLI)) return false;
	const prefix = relative(root, COMPAT_DIR);
	const count = packageCount();
	console.log(
		`Installing pi 0.85.1 and pi-subagents 0.67${count ? ` (${count} packages)` : ""} into ${prefix} ${why}: once, 30 s to a minute and a half depending on the network.`,
	);
	const started = Date.now();
	const seconds = () => Math.round((Date.now() - started) / 1000);
	const progress = setInterval(() => console.log(`  ... still installing (${seconds()} s)`), PROGRESS_MS);
	const output = [];
	const status = await new Promise((resolve) => {
		const child = spawn("npm", ["ci", "--prefix", prefix, "--no-audit", "--no-fund"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
		child.stdout.on("data", (chunk) => output.push(chunk));
		child.stderr.on("data", (chunk) => output.push(chunk));
		child.on("error", (error) => resolve(`failed: ${error.message}`));
		child.on("close", (code) => resolve(code === 0 ? 0 : `exited with ${code}`));
	});
	clearInterval(progress);
	if (status !== 0)
		throw new Error(`could not install ${prefix} (npm ci ${status}):\n${Buffer.concat(output).toString("utf8").trim()}\nRun "npm run setup:compat" to retry.`);
	console.log(`Installed ${prefix} in ${seconds()} s.`);
	return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await ensureCompatInstall(process.argv[2] ?? "for the tests on the oldest supported pi");
