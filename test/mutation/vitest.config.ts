import { statSync } from "node:fs";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Smallest test files first: they test one module directly and fail fastest, and a run stops at the
 * first failure, so a mutant is killed before the slow files (properties, module copies) start.
 */
class SmallestFirst extends BaseSequencer {
	override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
		return [...files].sort((a, b) => statSync(a.moduleId).size - statSync(b.moduleId).size);
	}
}

/**
 * The tests a mutant must face: the unit project without the load test (100,000 calls in one test run
 * again for every mutant it covers would make a run take hours; its claims are pinned by other tests too)
 * and without the crash and the two flood tests, whose host runs in a child process where no mutant is active.
 */
export default defineConfig({
	test: {
		include: ["test/unit/**/*.test.ts"],
		exclude: [
			"test/unit/core/load.test.ts",
			"test/unit/transports/local/crash.test.ts",
			"test/unit/transports/local/flood.test.ts",
			"test/unit/surfaces/web/fd-flood.test.ts",
		],
		sequence: { sequencer: SmallestFirst },
		// A fraction of each property's random runs (its kept counterexamples all run): every mutant the
		// properties cover runs them again, and the full count would triple the run's time.
		env: { PROPERTY_RUNS_SCALE: process.env.PROPERTY_RUNS_SCALE ?? "0.1" },
	},
});
