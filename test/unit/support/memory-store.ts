/** Stores in memory for a test file's tests, each closed after the test that opened it. */
import { afterEach } from "vitest";
import { openStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import type { RequestStore } from "../../../extensions/checkpoint-bridge/core/store/store.ts";

/** Call once at a file's top level: the function it returns opens one store per call. */
export function memoryStores(): () => RequestStore {
	const stores: RequestStore[] = [];
	afterEach(() => {
		for (const store of stores.splice(0)) store.close();
	});
	return () => {
		const opened = openStore(":memory:");
		if (!opened.ok) throw new Error(opened.warning);
		stores.push(opened.store);
		return opened.store;
	};
}
