/**
 * One object per process on `globalThis`, under a `Symbol.for` key, so every copy of the
 * extension finds the same one: the registries of the local endpoint, the NATS room and the web page.
 */

/** The object under `key` on `target`, made by `create` and defined read-only on first use. */
export function processSlot<T extends object>(target: object, key: symbol, create: () => T): T {
	const existing = (target as Record<symbol, T | undefined>)[key];
	if (existing) return existing;
	const slot = create();
	Object.defineProperty(target, key, { value: slot, writable: false, configurable: false, enumerable: false });
	return slot;
}

/** A registry holding what one start is starting: at most one start in flight or done per process. */
export interface StartSlot<T> {
	starting?: Promise<T>;
}

/**
 * The slot's start, begun by `start` on the first call and the same promise after. A start that
 * fails, or whose outcome `keep` declines, is cleared from the slot (unless another has replaced it meanwhile),
 * so the next call starts afresh. @default keep: every outcome is kept
 */
export function startOnce<T>(slot: StartSlot<T>, start: () => Promise<T>, keep: (outcome: T) => boolean = () => true): Promise<T> {
	if (slot.starting) return slot.starting;
	const starting = start();
	slot.starting = starting;
	const clear = () => {
		if (slot.starting === starting) slot.starting = undefined;
	};
	starting.then((outcome) => keep(outcome) || clear(), clear);
	return starting;
}

/** Takes the slot's start out of it, so nothing later finds it, and resolves with its outcome; undefined when none ran or it failed. */
export async function takeStarted<T>(slot: StartSlot<T>): Promise<T | undefined> {
	const starting = slot.starting;
	slot.starting = undefined;
	return starting?.catch(() => undefined);
}
