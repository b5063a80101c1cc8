/** Dialogs of a fake UI as they open, in order: each `next()` waits for the next one. */
import type { FakeDialog } from "./fake-ui.ts";

/** Pass `respond` to fakeUI; `next()` resolves with the next dialog that opened. */
export function dialogFeed() {
	const opened: FakeDialog[] = [];
	const waiting: ((dialog: FakeDialog) => void)[] = [];
	return {
		respond: (dialog: FakeDialog) => {
			const waiter = waiting.shift();
			if (waiter) waiter(dialog);
			else opened.push(dialog);
		},
		next: () => (opened.length > 0 ? Promise.resolve(opened.shift()!) : new Promise<FakeDialog>((resolve) => waiting.push(resolve))),
	};
}
