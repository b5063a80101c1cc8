/**
 * The asking loops of figure 5, run the same way on both sides: in the host's process through
 * askViaHost, and in another process through askRemote. `ask` is whichever of the two; each call
 * asks one question whose right answer depends on its step, so a call that got another's answer,
 * or none, fails the run instead of being timed.
 */
import { performance } from "node:perf_hooks";

export const OPTIONS = ["even", "odd"];

/** The step a dialog title asks about: the host's UI answers from it. */
export const stepOf = (title) => Number(/step (\d+)\?/.exec(title)?.[1]);

const callOptions = (step) => ({
	asker: { label: `asker-${step}`, sessionId: `asker-${step}` },
	// Distinct per step: the host shows identical concurrent questions only once.
	questions: [{ question: `Proceed with step ${step}?`, options: OPTIONS }],
	budgetMs: 300_000,
	dialogTimeoutMs: 180_000,
});

function check(envelope, step) {
	if (envelope.status !== "ok" || envelope.answers[0]?.answer !== OPTIONS[step & 1])
		throw new Error(`step ${step}: settled as ${envelope.status} with ${JSON.stringify(envelope.answers)} (${envelope.note ?? "no note"})`);
}

/** `n` calls one after the other; per-call latency in µs. */
export async function sequential(ask, n) {
	const latenciesUs = new Array(n);
	for (let step = 0; step < n; step++) {
		const started = performance.now();
		const envelope = await ask(callOptions(step));
		latenciesUs[step] = (performance.now() - started) * 1000;
		check(envelope, step);
	}
	return { latenciesUs };
}

/** `n` calls issued in the same tick; per-call latency in µs and the round's wall time in ms. */
export async function concurrent(ask, n) {
	const latenciesUs = new Array(n);
	const calls = new Array(n);
	const started = performance.now();
	for (let step = 0; step < n; step++) {
		const issued = performance.now();
		calls[step] = ask(callOptions(step)).then((envelope) => {
			latenciesUs[step] = (performance.now() - issued) * 1000;
			check(envelope, step);
		});
	}
	await Promise.all(calls);
	return { latenciesUs, totalMs: performance.now() - started };
}
