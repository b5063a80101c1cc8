/**
 * How every fast-check property in this repository runs (the seed policy):
 * - fast-check prints the seed and the path of a failing run with its shrunk counterexample;
 *   `FC_SEED=<seed> FC_PATH=<path> npx vitest run <file>` replays exactly that run.
 * - Every counterexample ever found is kept as a fixed case of its property (fast-check runs
 *   `examples` before the random runs), in a `…_COUNTEREXAMPLES` list beside the property (for the
 *   relay: test/unit/core/relay-properties.test.ts), with a comment or a handwritten regression test that
 *   explains it. Never delete one; a fix that makes one pass keeps it.
 * - Without FC_SEED each run draws a fresh seed, so CI keeps exploring new interleavings.
 * - PROPERTY_RUNS_SCALE (mutation testing sets 0.1) scales the random runs, never the kept counterexamples.
 */
import type fc from "fast-check";

/** fast-check parameters for one property: its fixed counterexamples first, then `numRuns` random runs. */
export function propertyRun<Ts>(numRuns: number, examples: Ts[] = []): fc.Parameters<Ts> {
	const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
	const path = process.env.FC_PATH;
	const scale = Number(process.env.PROPERTY_RUNS_SCALE ?? 1);
	return {
		numRuns: Math.max(1, Math.round(numRuns * (scale > 0 && scale <= 1 ? scale : 1))),
		examples,
		...(seed !== undefined && Number.isInteger(seed) ? { seed } : {}),
		...(path ? { path, endOnFailure: true } : {}),
	};
}
