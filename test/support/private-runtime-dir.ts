/**
 * Each test file's hosts (unit, and the in-process SDK sessions of integration files) keep their
 * endpoint and advertisement in a directory of the file's own. Two files run at once in one working
 * directory, and the advertisement is found by user and directory: an asker with no host in its file
 * would otherwise reach the other file's host.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const before = process.env.XDG_RUNTIME_DIR;
const stateBefore = process.env.CHECKPOINT_BRIDGE_STATE_DIR;
const dir = mkdtempSync(join(tmpdir(), "cpb-unit-run-"));
process.env.XDG_RUNTIME_DIR = dir;
// Their stores too (core/store/): never the user's own.
process.env.CHECKPOINT_BRIDGE_STATE_DIR = join(dir, "state");

afterAll(() => {
	if (before === undefined) delete process.env.XDG_RUNTIME_DIR;
	else process.env.XDG_RUNTIME_DIR = before;
	if (stateBefore === undefined) delete process.env.CHECKPOINT_BRIDGE_STATE_DIR;
	else process.env.CHECKPOINT_BRIDGE_STATE_DIR = stateBefore;
	rmSync(dir, { recursive: true, force: true });
});
