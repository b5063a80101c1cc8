/**
 * The pi releases this version is tested on, and a check of the pi that loads it. pi's extension API
 * does not tell its version and the extension imports nothing from pi at run time, so the version is
 * read from pi's own package.json, found from the call stack while pi's loader runs the extension's
 * factory. A pi whose files are not on disk (a compiled binary, or pi bundled into another program)
 * stays unknown and unchecked.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as util from "node:util";
import { processSlot } from "./core/shared/process-slot.ts";

/** pi release lines (major.minor) this version is tested on; docs/limits.md states the same. */
export const SUPPORTED_PI_LINES: readonly string[] = ["0.85", "1.6"];
/** The names pi's package has been published under. */
const PI_PACKAGE_NAMES = new Set(["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]);
/** Deep enough to reach pi's loader below the factory and jiti's frames. */
const STACK_FRAMES = 64;
/** Process-global, so one notice reaches the human however many copies of the extension load. */
const NOTICE_GIVEN = Symbol.for("checkpoint-bridge.unsupported-pi-notice");

/** Whether `version` belongs to a supported pi release line. */
export function isSupportedPi(version: string): boolean {
	const line = /^(\d+)\.(\d+)\./.exec(version);
	return line !== null && SUPPORTED_PI_LINES.includes(`${line[1]}.${line[2]}`);
}

/**
 * The version of the pi whose files call this, or undefined when none is found. Call it synchronously
 * from the extension's factory, while pi's loader is on the stack. Never throws.
 */
export function loadingPiVersion(): string | undefined {
	try {
		// getCallSites is Node >= 22.12; pi needs 22.19, but an embedded runtime may lack it.
		if (typeof util.getCallSites !== "function") return undefined;
		return piVersionOf(util.getCallSites(STACK_FRAMES).map((site) => site.scriptName));
	} catch {
		return undefined;
	}
}

/**
 * The version in pi's package.json for the first of `scripts` (file paths or file: URLs) that lies in
 * pi's package: the nearest package.json above a script says which package the script belongs to.
 */
export function piVersionOf(scripts: Iterable<string>): string | undefined {
	const seen = new Set<string>();
	for (const script of scripts) {
		const file = script.startsWith("file:") ? fileURLToPath(script) : script;
		if (!isAbsolute(file)) continue; // node:internal frames, eval, virtual files
		const version = nearestPackage(dirname(file), seen);
		if (version) return version;
	}
	return undefined;
}

/**
 * pi's version if the package that holds `dir` is pi, else undefined; `seen` skips directories already
 * read. A package.json without a name (a folder's module type only) does not end a package.
 */
function nearestPackage(dir: string, seen: Set<string>): string | undefined {
	for (let current = dir; !seen.has(current); current = dirname(current)) {
		seen.add(current);
		let manifest: { name?: unknown; version?: unknown } | null;
		try {
			manifest = JSON.parse(readFileSync(join(current, "package.json"), "utf8")) as typeof manifest;
		} catch {
			continue; // none here (or unreadable): look further up
		}
		if (typeof manifest !== "object" || manifest === null || manifest.name === undefined) continue;
		return PI_PACKAGE_NAMES.has(String(manifest.name)) && typeof manifest.version === "string" ? manifest.version : undefined;
	}
	return undefined;
}

/** What the human is told when an unsupported pi loads the extension; undefined for a supported or unknown pi. */
export function unsupportedPiNotice(version: string | undefined): string | undefined {
	if (version === undefined || isSupportedPi(version)) return undefined;
	const lines = SUPPORTED_PI_LINES.map((line) => `${line}.x`).join(" and ");
	return `checkpoint-bridge is tested on pi ${lines}; this is pi ${version}. ask_user_via_host may fail here: use a supported pi, or a checkpoint-bridge release made for this one.`;
}

/** Hands the notice for an unsupported pi to `tell`, once per process; a `tell` that throws is ignored. */
export function reportUnsupportedPi(version: string | undefined, tell: (notice: string) => void): void {
	const notice = unsupportedPiNotice(version);
	const once = processSlot(globalThis, NOTICE_GIVEN, () => ({ given: false }));
	if (notice === undefined || once.given) return;
	once.given = true;
	try {
		tell(notice);
	} catch {
		// A notice is never worth a failed session start.
	}
}
