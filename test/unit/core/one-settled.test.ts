/**
 * Observers see one request as one request (ADR-0025): exactly one `observe:settled` per request,
 * whatever way it took, and what happens in between (going late, shown again) as its own events.
 * Each path is counted from the bus, as a third-party observer written from docs/observers.md hears it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import type { SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay, track } from "../support/relay.ts";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** Every observer event of every request, in order, as `name` or `name:end` for settled. */
function heard(handle: SharedHandle) {
	const byRequest = new Map<string, string[]>();
	const note = (id: string, what: string) => byRequest.set(id, [...(byRequest.get(id) ?? []), what]);
	for (const name of ["queued", "shown", "late", "reopened"] as const)
		handle.bus.on(OBSERVER_EVENTS[name], (event: { requestId: string; again?: true }) => note(event.requestId, event.again ? `${name}-again` : name));
	handle.bus.on(OBSERVER_EVENTS.settled, (event) => note(event.requestId, `settled:${event.outcome.end}`));
	return {
		of: (id: string) => byRequest.get(id) ?? [],
		/** How many settled events each request got. */
		settledCounts: () => [...byRequest.values()].map((events) => events.filter((e) => e.startsWith("settled")).length),
	};
}

const late = (expiryMs = 60_000) => new RequestBook({ ...readLateConfig({}), expiryMs });
const Q = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];

describe("one observe:settled per request, whatever path it took", () => {
	it("answered, dismissed, timed out and answered late, shown again twice, expired late, cancelled late: each settles once", async () => {
		const { ask, fake, handle, role } = relay({}, { book: late() });
		const events = heard(handle);
		const id = () => handle.snapshot()!.open.at(-1)!.requestId;

		track(ask(Q, { label: "answered" }));
		await flush(vi);
		const answered = id();
		fake.current()!.answer("SQLite");
		await flush(vi);

		track(ask(Q, { label: "dismissed" }));
		await flush(vi);
		const dismissed = id();
		fake.current()!.answer(undefined);
		await flush(vi);

		// Timed out, then answered late from outside (the page, its link).
		track(ask(Q, { label: "late-outside", budgetMs: 3_000 }));
		await flush(vi);
		const lateOutside = id();
		await vi.advanceTimersByTimeAsync(3_000);
		handle.bus.emit("answer", { requestId: lateOutside, answers: ["Postgres"], source: "web" }, () => {});

		// Timed out, shown again and dismissed (late again), shown again and answered.
		track(ask(Q, { label: "late-again", budgetMs: 3_000 }));
		await flush(vi);
		const lateAgain = id();
		await vi.advanceTimersByTimeAsync(3_000);
		role.host.reopenLate(lateAgain);
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		role.host.reopenLate(lateAgain);
		await flush(vi);
		fake.current()!.answer("SQLite");
		await flush(vi);

		// Timed out, cancelled from outside while late.
		track(ask(Q, { label: "late-cancelled", budgetMs: 3_000 }));
		await flush(vi);
		const lateCancelled = id();
		await vi.advanceTimersByTimeAsync(3_000);
		handle.bus.emit("answer", { requestId: lateCancelled, cancel: true }, () => {});

		// Timed out, never answered: it expires.
		track(ask(Q, { label: "expired", budgetMs: 3_000 }));
		await flush(vi);
		const expired = id();
		await vi.advanceTimersByTimeAsync(3_000);
		await vi.advanceTimersByTimeAsync(60_000);

		expect(events.of(answered)).toEqual(["queued", "shown", "settled:answered"]);
		expect(events.of(dismissed)).toEqual(["queued", "shown", "settled:dismissed"]);
		expect(events.of(lateOutside)).toEqual(["queued", "shown", "late", "settled:answered-outside"]);
		expect(events.of(lateAgain)).toEqual([
			"queued",
			"shown",
			"late",
			"reopened",
			"queued",
			"shown",
			"late-again",
			"reopened",
			"queued",
			"shown",
			"settled:answered",
		]);
		expect(events.of(lateCancelled)).toEqual(["queued", "shown", "late", "settled:cancelled-outside"]);
		expect(events.of(expired)).toEqual(["queued", "shown", "late", "settled:expired"]);
		expect(events.settledCounts()).toEqual([1, 1, 1, 1, 1, 1]);
	});

	it("handed over to the next host, host gone at quit, and handed over with no next host: each settles once", async () => {
		const book = late();
		const { ask, handle, role } = relay({}, { book });
		const events = heard(handle);
		track(ask(Q, { label: "handed-over" }));
		await flush(vi);
		const handedOver = handle.snapshot()!.open[0]!.requestId;
		role.release("new", "The host session ended (new).");
		const next = fakeUI();
		const nextRole = claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "next-host", book })!;
		await flush(vi);
		next.current()!.answer("SQLite");
		await flush(vi);

		// The next host quits with a question open and one late: each settles host-gone.
		track(ask(Q, { label: "late-host-gone", budgetMs: 3_000 }));
		await flush(vi);
		const lateHostGone = handle.snapshot()!.open[0]!.requestId;
		await vi.advanceTimersByTimeAsync(3_000);
		track(ask(Q, { label: "host-gone" }));
		await flush(vi);
		const hostGone = handle.snapshot()!.open[0]!.requestId;
		nextRole.release("quit", "The host session ended (quit).");
		await flush(vi);

		// A host is replaced and nobody takes over within the grace: it settles host-gone, once.
		const third = fakeUI();
		const thirdRole = claimHostRole(handle, { ui: third.ui, surface: dialogSurface(third.ui), sessionId: "third-host" })!;
		track(ask(Q, { label: "nobody-took-over" }));
		await flush(vi);
		const nobody = handle.snapshot()!.open[0]!.requestId;
		thirdRole.release("reload", "The host session ended (reload).");
		await vi.advanceTimersByTimeAsync(1_000);

		expect(events.of(handedOver)).toEqual(["queued", "shown", "queued", "shown", "settled:answered"]);
		expect(events.of(hostGone)).toEqual(["queued", "shown", "settled:host-gone"]);
		expect(events.of(lateHostGone)).toEqual(["queued", "shown", "late", "settled:host-gone"]);
		expect(events.of(nobody)).toEqual(["queued", "shown", "settled:host-gone"]);
		expect(events.settledCounts()).toEqual([1, 1, 1, 1]);
	});
});
