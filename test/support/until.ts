/** Waiting in tests for state that has no event of its own to wait on. */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Resolves with `check`'s (or its promise's) first value that is not `undefined`, `null` or `false`, polled every
 * `everyMs`; after `timeoutMs` it fails naming `what`. Real time throughout (node:timers and
 * performance, which fake timers leave alone), so it also waits while a test fakes the clock.
 */
export async function until<T>(
	check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
	what: string,
	timeoutMs = 10_000,
	everyMs = 10,
): Promise<T> {
	const deadline = performance.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== null && value !== false) return value;
		if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await sleep(everyMs);
	}
}
