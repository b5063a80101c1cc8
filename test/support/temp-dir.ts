/**
 * A directory of a test's own under the system's temp dir, removed when that test ends (or, made
 * while a file's tests are collected, when the file ends): a run leaves nothing behind in /tmp.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, onTestFinished } from "vitest";

export function tempDir(prefix: string): string {
	const dir = mkdtempSync(join(tmpdir(), prefix));
	const remove = () => rmSync(dir, { recursive: true, force: true });
	try {
		onTestFinished(remove);
	} catch {
		// Not inside a test: the file's collection.
		afterAll(remove);
	}
	return dir;
}
