import { globSync, readFileSync, statSync } from "node:fs";
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
 * Files that load copies of the extension's modules from other paths, or whose sessions start from
 * a fresh process's slots (the delivery box, the late book, which files before them leave in use):
 * each needs a process of its own.
 */
const ISOLATED = [
	"test/unit/core/copies.test.ts",
	// Tells a channel configured by a page already running: a page an earlier file left in the process would count.
	"test/unit/channels.test.ts",
	// Starts where the process has no delivery box yet: one an earlier file made would be there.
	"test/unit/core/session-box.test.ts",
	// Passes alone; in one process after the files before it, its refused-answer case never ends (not yet explained).
	"test/unit/transports/local/restart.test.ts",
	// Reads which modules the extension's entry imports: one an earlier file loaded is already there.
	"test/unit/surfaces/terminal-form/lazy.test.ts",
	"test/unit/own-questions.test.ts",
	// The process's delivery box is made first in each of these (support/host-messages.ts): the host's session is theirs.
	"test/unit/transports/local/answer-acks.test.ts",
	"test/unit/transports/local/ask-later-exit.test.ts",
	"test/unit/transports/local/late-frames.test.ts",
	"test/unit/transports/nats/answer-acks.test.ts",
	"test/unit/transports/nats/asker.test.ts",
	"test/unit/transports/nats/late-frames.test.ts",
	"test/unit/transports/nats/room-server.test.ts",
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
// The shared project's exclude below still takes out EXCLUDED and ISOLATED.
const shared = importing ?? ["test/unit/**/*.test.ts"];
const isolated = importing ? ISOLATED.filter((file) => importing.includes(file)) : ISOLATED;

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
				test: { name: "shared", include: shared, exclude: [...EXCLUDED, ...ISOLATED], isolate: false },
			},
			{ extends: true, test: { name: "isolated", include: isolated } },
		],
	},
});
