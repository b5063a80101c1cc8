/**
 * Waits in real time while fake timers hold the clock: a session's first call loads its code by dynamic
 * import, which finishes on real I/O, not when fake time is advanced. Node's timers/promises are not faked.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** Resolves once `ready()` holds, polling every 5 ms of real time; throws naming `what` after about `limitMs`. */
export async function untilReal(ready: () => boolean, what: string, limitMs = 10_000): Promise<void> {
	for (let waited = 0; !ready(); waited += 5) {
		if (waited >= limitMs) throw new Error(`not within ${limitMs} ms of real time: ${what}`);
		await sleep(5);
	}
}
