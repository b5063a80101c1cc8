/**
 * Waiting for something at most so long: the first outcome wins, the rest are ignored, and the
 * timer and the abort listener go at once so neither holds the process or fires afterwards.
 */

/** How long a wait may last, and what it settles with when that time passes or `signal` aborts first. */
export interface WaitBound<T> {
	/** How long to wait, in ms. */
	ms: number;
	/** The outcome when `ms` pass first; only called when they do. */
	elapsed: () => T;
	/** Ends the wait early; one already aborted ends it before `start` runs. */
	signal?: AbortSignal;
	/** The outcome when `signal` aborts first. @default elapsed */
	aborted?: () => T;
	/** The timer does not keep the process alive. @default false */
	unref?: boolean;
	/**
	 * The time is judged after the event loop's next read of pending input (`setImmediate`): what
	 * already waits in a socket of a process whose loop stalled past `ms` still comes in time. @default false
	 */
	afterInput?: boolean;
}

/** Node's `setImmediate`, named so because the page's checked script, which reaches this file, knows no Node types. */
const afterInputRead = (run: () => void) => (globalThis as unknown as { setImmediate(run: () => void): unknown }).setImmediate(run);

/** Settles the wait with `value`, unless it has settled already. */
export type Settle<T> = (value: T) => void;

/**
 * Runs `start` and resolves with the first of: a value it hands to `settle`, `bound.elapsed()`
 * when `bound.ms` pass, `bound.aborted()` when the signal aborts. `settled()` says whether the
 * wait is over. What `start` returns is called once, with the outcome, as the wait settles.
 */
export function waitAtMost<T>(bound: WaitBound<T>, start: (settle: Settle<T>, settled: () => boolean) => ((outcome: T) => void) | undefined): Promise<T> {
	const { ms, elapsed, signal, aborted = elapsed, unref = false, afterInput = false } = bound;
	if (signal?.aborted) return Promise.resolve(aborted());
	return new Promise<T>((resolve) => {
		let done = false;
		let onSettled: ((outcome: T) => void) | undefined;
		let outcome: T;
		const settle: Settle<T> = (value) => {
			if (done) return;
			done = true;
			outcome = value;
			clearTimeout(timer);
			signal?.removeEventListener("abort", onAbort);
			onSettled?.(value);
			resolve(value);
		};
		const onAbort = () => settle(aborted());
		const timeUp = () => {
			if (!done) settle(elapsed());
		};
		const timer = setTimeout(afterInput ? () => afterInputRead(timeUp) : timeUp, ms);
		// A Node timer (the page's checked script sees the DOM's number instead).
		if (unref) (timer as unknown as { unref?(): void }).unref?.();
		signal?.addEventListener("abort", onAbort, { once: true });
		onSettled = start(settle, () => done);
		// Settled while `start` ran: what it returned has not been told yet.
		if (done) onSettled?.(outcome!);
	});
}

/** The outcome of `work`, or `bound`'s when its time passes or its signal aborts first; a rejection of `work` in time rejects. */
export async function firstWithin<T, E>(work: PromiseLike<T>, bound: WaitBound<E>): Promise<T | E> {
	const { elapsed, aborted = elapsed } = bound;
	const outcome = await waitAtMost<{ value: T | E } | { error: unknown }>(
		{ ...bound, elapsed: () => ({ value: elapsed() }), aborted: () => ({ value: aborted() }) },
		(settle) => {
			work.then(
				(value) => settle({ value }),
				(error: unknown) => settle({ error }),
			);
			return undefined;
		},
	);
	if ("error" in outcome) throw outcome.error;
	return outcome.value;
}
