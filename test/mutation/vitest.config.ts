import { globSync, readFileSync, statSync } from "node:fs";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { OWN_PROCESS } from "../support/own-process.ts";

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
const EXCLUDED = [
	// Reads the sources for retired words: Stryker's instrumented copies are not what it checks.
	"test/unit/check-words.test.ts",
	// Reads the sources for the packages they load: Stryker wraps a package name given to require in its mutant switch.
	"test/unit/package.test.ts",
	"test/unit/core/load.test.ts",
	"test/unit/transports/local/crash.test.ts",
	"test/unit/transports/local/flood.test.ts",
	"test/unit/surfaces/web/fd-flood.test.ts",
];

/**
 * Groups whose files nearly every test reaches (every call is validated, all asker text sanitised): each
 * surviving mutant would run the whole unit project again, and the tool group took hours on a busy machine.
 * Their mutants face only the test files that import a file of the group; fewer tests can only kill fewer
 * mutants, so the score is a lower bound of the whole project's.
 */
const DIRECT_TESTS_ONLY: Record<string, readonly string[]> = { tool: ["model/validate.ts", "model/sanitise.ts"] };
const direct = DIRECT_TESTS_ONLY[process.env.MUTATION_GROUP ?? ""];
const importing = direct
	? globSync("test/unit/**/*.test.ts").filter((file) =>
			direct.some((mutated) => readFileSync(file, "utf8").includes(`extensions/checkpoint-bridge/${mutated}"`)),
		)
	: undefined;
// The shared project's exclude below still takes out EXCLUDED and the files that need a process of their own.
const shared = importing ?? ["test/unit/**/*.test.ts"];
const isolated = OWN_PROCESS.filter((file) => importing === undefined || importing.includes(file));

export default defineConfig({
	test: {
		sequence: { sequencer: SmallestFirst },
		// A mutant's run shares the machine with the checker and other runners: a test's own limit is not what is measured here.
		testTimeout: 30_000,
		// A fraction of each property's random runs (its kept counterexamples all run): every mutant the
		// properties cover runs them again, and the full count would triple the run's time.
		env: { PROPERTY_RUNS_SCALE: process.env.PROPERTY_RUNS_SCALE ?? "0.1" },
		projects: [
			{
				// One process for every file of a mutant's run, not one per file: starting a process per
				// file was most of a mutant's time. The files clean up what they share on globalThis
				// (the whole suite passes so); Stryker's dry run checks that before any mutant runs.
				extends: true,
				test: { name: "shared", include: shared, exclude: [...EXCLUDED, ...OWN_PROCESS], isolate: false },
			},
			{ extends: true, test: { name: "isolated", include: isolated } },
		],
	},
});
