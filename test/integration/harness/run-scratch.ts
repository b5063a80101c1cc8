/**
 * Global setup of the integration projects: one scratch directory per test run, shared by the files
 * of both pi versions for work whose result does not depend on the pi under test (the packed and
 * installed package of install.test.ts), and removed when the run ends.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
	interface ProvidedContext {
		runScratch: string;
	}
}

export default function setup(project: TestProject): () => void {
	// The run's own process: the same directory for every project of the run, never another run's.
	const dir = join(tmpdir(), `cb-run-${process.pid}`);
	project.provide("runScratch", dir);
	return () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
