/** Dialogs of a fake UI as they open, in order: each `next()` waits for the next one. */
import type { FakeDialog } from "./fake-ui.ts";

/**
 * Pass `respond` to fakeUI; `next()` resolves with the next dialog that opened; `nth(n)` with the
 * n-th one (1-based) once it has opened, whatever `next()` took; `all` holds every one, in order.
 */
export function dialogFeed() {
	const opened: FakeDialog[] = [];
	const waiting: ((dialog: FakeDialog) => void)[] = [];
	const all: FakeDialog[] = [];
	const counting: { n: number; resolve: (dialog: FakeDialog) => void }[] = [];
	return {
		all,
		respond: (dialog: FakeDialog) => {
			all.push(dialog);
			for (const waiter of counting.filter(({ n }) => n === all.length)) waiter.resolve(dialog);
			const waiter = waiting.shift();
			if (waiter) waiter(dialog);
			else opened.push(dialog);
		},
		next: () => (opened.length > 0 ? Promise.resolve(opened.shift()!) : new Promise<FakeDialog>((resolve) => waiting.push(resolve))),
		nth: (n: number) => (all.length >= n ? Promise.resolve(all[n - 1]!) : new Promise<FakeDialog>((resolve) => counting.push({ n, resolve }))),
	};
}
