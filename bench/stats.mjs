/** Order statistics for the bench figures. */

/** Nearest-rank percentile (p in 0..100) of an already sorted array. */
export function percentile(sorted, p) {
	if (sorted.length === 0) return Number.NaN;
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export const median = (values) =>
	percentile(
		[...values].sort((a, b) => a - b),
		50,
	);

export const mean = (values) => (values.length === 0 ? Number.NaN : values.reduce((sum, v) => sum + v, 0) / values.length);

/** p50 and p99 of a list of samples. */
export function summary(values) {
	const sorted = Float64Array.from(values).sort();
	return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples: sorted.length };
}

/** The heap in use after the event loop settled and three full GCs (run node with --expose-gc). */
export async function heapAfterGc() {
	await new Promise((resolve) => setImmediate(resolve));
	for (let i = 0; i < 3; i++) globalThis.gc();
	return process.memoryUsage().heapUsed;
}
