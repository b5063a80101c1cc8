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
