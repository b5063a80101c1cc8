/** Dialogs of a fake UI as they open, in order: each `next()` waits for the next one. */
import type { FakeDialog } from "./fake-ui.ts";

/** Pass `respond` to fakeUI; `next()` resolves with the next dialog that opened; `all` holds every one, in order. */
export function dialogFeed() {
	const opened: FakeDialog[] = [];
	const waiting: ((dialog: FakeDialog) => void)[] = [];
	const all: FakeDialog[] = [];
	return {
		all,
		respond: (dialog: FakeDialog) => {
			all.push(dialog);
			const waiter = waiting.shift();
			if (waiter) waiter(dialog);
			else opened.push(dialog);
		},
		next: () => (opened.length > 0 ? Promise.resolve(opened.shift()!) : new Promise<FakeDialog>((resolve) => waiting.push(resolve))),
	};
}
