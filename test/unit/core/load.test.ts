/**
 * Load: fifty sessions asking at once through the real tool, and 100,000 calls one after another
 * through the relay. Under fake timers (Date included), so budgets are exact and pending timers can
 * be counted. What must hold: every call ok (or the status its scripted outcome calls for), never
 * two dialogs at once, dialogs in arrival order, and nothing left behind: no bus listener, no
 * timer, no held request, no abort listener, and a heap that does not grow with the number of calls.
 */
import { getEventListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { NOTICE_ASKERS_AT_ONCE } from "../../../extensions/checkpoint-bridge/core/host/arrival-notices.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import type { RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle, type SharedHandle, sharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { Envelope, Status } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { loadedSession } from "../support/loaded-session.ts";
import { type Dialog, PropertyUI } from "../support/property-ui.ts";

// Taken before fake timers replace it: the run's duration is real time.
const realNow = performance.now.bind(performance);

beforeEach(() => {
	vi.useFakeTimers();
	vi.setSystemTime(Date.UTC(2025, 0, 1));
});
afterEach(() => vi.useRealTimers());

/** Listener count per bus event: what "back to where it started" is measured against. */
const listeners = (handle: SharedHandle) => Object.fromEntries(handle.bus.eventNames().map((name) => [String(name), handle.bus.listenerCount(name)]));

/** A real garbage collection: `global.gc` when node runs with --expose-gc, else the same function taken from V8 directly. */
function collector(): () => void {
	const exposed = (globalThis as { gc?: () => void }).gc;
	if (exposed) return exposed;
	setFlagsFromString("--expose-gc");
	return runInNewContext("gc") as () => void;
}

// ---------------------------------------------------------------------------------------------
// Fifty sessions through the real tool

const SESSIONS = 50;
const QUESTIONS_PER_SESSION = 20;
const OPTIONS = ["red", "green", "blue"];

/** The answer the human gives to a dialog, derived from its title so each asker can check it got its own. */
const answerFor = (dialog: Pick<Dialog, "kind" | "title" | "options">) =>
	dialog.kind === "select" ? dialog.options![dialog.title.length % dialog.options!.length]! : `answer to ${dialog.title}`;

describe(`${SESSIONS} asking sessions × ${QUESTIONS_PER_SESSION} questions each, against a host UI that answers at once`, () => {
	// Each session asks its 20 questions one call after another, the 50 sessions all at once;
	// once as 20 one-question calls, once as 2 batches of 10 (the most one call may carry).
	it.each([
		{ perCall: 1, calls: 20 },
		{ perCall: 10, calls: 2 },
	])("$calls calls of $perCall question(s) per session: all ok, never two dialogs at once, served in arrival order", async ({ perCall, calls }) => {
		expect(perCall * calls).toBe(QUESTIONS_PER_SESSION);
		const handle = sharedHandle();
		const timersBefore = vi.getTimerCount();
		const ui = new PropertyUI({ respond: (dialog, self) => queueMicrotask(() => self.answer(dialog, answerFor(dialog))) });
		const host = loadedSession({ name: "main", sessionId: "host-session-0000", ui });
		await host.start();
		const workers = Array.from({ length: SESSIONS }, (_, s) =>
			loadedSession({ name: `worker-${String(s).padStart(2, "0")}`, sessionId: `worker-session-${s}` }),
		);
		for (const worker of workers) await worker.start();
		const arrivals: RelayRequest[] = [];
		const recordArrival = (request: RelayRequest) => void arrivals.push(request);
		handle.bus.on("request", recordArrival);
		const hostListeners = listeners(handle);

		const envelopes = await Promise.all(
			workers.map(async (worker, s) => {
				const mine: Envelope[] = [];
				for (let c = 0; c < calls; c++) {
					const questions = Array.from({ length: perCall }, (_, k) => {
						const n = c * perCall + k;
						const question = `w${s} q${n}: ${n % 2 === 0 ? "which colour" : "what name"}?`;
						return n % 2 === 0 ? { question, options: OPTIONS, allowOther: false } : { question };
					});
					const result = await worker.execute({ questions });
					expect(JSON.parse(result.content[0]!.text)).toEqual(result.details);
					mine.push(result.details);
				}
				return mine;
			}),
		);

		// All ok, each asker got exactly the answers given to its own dialogs.
		const byTitle = new Map(ui.dialogs.map((d) => [d.title, answerFor(d)]));
		for (const [s, mine] of envelopes.entries()) {
			const label = `worker-${String(s).padStart(2, "0")}`;
			expect(mine.map((e) => e.status)).toEqual(Array(calls).fill("ok"));
			for (const envelope of mine) {
				expect(envelope.asker).toBe(label);
				for (const [k, { question, answer }] of envelope.answers.entries()) {
					expect(question.startsWith(`w${s} `)).toBe(true);
					const title = `[${label}] ${perCall > 1 ? `(${k + 1}/${perCall}) ` : ""}${question}`;
					expect(answer).toBe(byTitle.get(title));
				}
			}
		}
		// One dialog at a time, every question shown exactly once, in the order the requests arrived.
		expect(ui.overlaps).toEqual([]);
		expect(ui.maxOpen).toBe(1);
		expect(ui.dialogs).toHaveLength(SESSIONS * QUESTIONS_PER_SESSION);
		expect(arrivals).toHaveLength(SESSIONS * calls);
		const expectedTitles = arrivals.flatMap((request) =>
			request.questions.map((q, k) => `[${request.asker.label}] ${perCall > 1 ? `(${k + 1}/${perCall}) ` : ""}${q.question}`),
		);
		expect(ui.dialogs.map((d) => d.title)).toEqual(expectedTitles);
		// Arrival notices are coalesced (arrival-notices.ts): the first askers of the burst are noticed at
		// once, and the summary of the rest is dropped since every request settled before the window closed.
		expect(ui.notices.filter((n) => n.type === "info")).toHaveLength(NOTICE_ASKERS_AT_ONCE);
		// The sessions were interleaved, not served one by one.
		expect(new Set(arrivals.slice(0, SESSIONS).map((r) => r.asker.label)).size).toBe(SESSIONS);

		// Nothing left behind: the host's own listeners only, no timers.
		expect(listeners(handle)).toEqual(hostListeners);
		expect(vi.getTimerCount()).toBe(timersBefore);
		handle.bus.off("request", recordArrival);
		for (const worker of workers) await worker.shutdown();
		await host.shutdown();
		expect(handle.host()).toBeUndefined();
		expect(handle.bus.eventNames()).toEqual([]);
	});
});

// ---------------------------------------------------------------------------------------------
// 100,000 calls one after another

const CALLS = 100_000;
const WARM_UP = 2_000;
const BUDGET_MS = 60_000;
const DIALOG_TIMEOUT_MS = 20_000;

/** What the human (or the tool call) does with each call, and the status it must end with. */
type Plan = "select" | "text" | "refused-then-picked" | "dismiss" | "reject" | "non-string" | "abort" | "budget" | "dialog-timeout";
const EXPECTED: Record<Plan, Status> = {
	select: "ok",
	text: "ok",
	"refused-then-picked": "ok",
	dismiss: "timeout-or-cancelled",
	reject: "error",
	"non-string": "error",
	abort: "cancelled",
	budget: "timeout",
	"dialog-timeout": "timeout-or-cancelled",
};

/** Mostly answered at once; every outcome a call can have comes round regularly; the slow ones (time must pass) once per thousand. */
function planFor(i: number): Plan {
	if (i % 1_000 === 999) return "budget";
	if (i % 1_000 === 499) return "dialog-timeout";
	return (["select", "text", "select", "text", "select", "text", "refused-then-picked", "dismiss", "reject", "non-string", "abort", "select"] as const)[
		i % 12
	]!;
}

describe(`${CALLS.toLocaleString("en")} calls one after another`, () => {
	it("all settle as planned, and listeners, timers, held requests and the heap come back to where they started", async () => {
		const gc = collector();
		const handle = createHandle();
		let plan: Plan = "select";
		let controller = new AbortController();
		let refused = false;
		const ui = new PropertyUI({
			keepHistory: false,
			honourTimeout: false, // the host's own dialog timer is what is under test
			respond: (dialog, self) => {
				const current = plan;
				queueMicrotask(() => {
					switch (current) {
						case "select":
							return self.answer(dialog, dialog.options![1]);
						case "text":
							return self.answer(dialog, "typed");
						case "refused-then-picked":
							// First a value that was not offered; the host asks again and gets a listed one.
							if (refused) return self.answer(dialog, dialog.options![0]);
							refused = true;
							return self.answer(dialog, "not offered");
						case "dismiss":
							return self.answer(dialog, undefined);
						case "reject":
							return self.fail(dialog, new Error("dialog failed"));
						case "non-string":
							return self.answer(dialog, 42);
						case "abort":
							return controller.abort();
						case "budget":
						case "dialog-timeout":
							return; // left open until time runs out
					}
				});
			},
		});
		const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
		if (!role) throw new Error("a fresh handle must accept the claim");
		const atClaim = listeners(handle);
		// One long-lived signal for every call that is not aborted: its abort listeners must not pile up.
		const longLived = new AbortController();
		const asker = { label: "loader", sessionId: "loader-session" };
		const choice = [{ question: "Pick one", options: ["alpha", "beta", "gamma"], allowOther: false }];
		const text = [{ question: "Type something" }];
		const tally = new Map<string, number>();
		const wrong: string[] = [];

		const run = async (from: number, to: number) => {
			for (let i = from; i < to; i++) {
				plan = planFor(i);
				refused = false;
				const aborting = plan === "abort";
				if (aborting) controller = new AbortController();
				const call = askViaHost({
					handle,
					asker,
					questions: (plan === "text" ? text : choice) as never,
					budgetMs: BUDGET_MS,
					dialogTimeoutMs: plan === "budget" ? BUDGET_MS : DIALOG_TIMEOUT_MS,
					signal: aborting ? controller.signal : longLived.signal,
				});
				if (plan === "budget") await vi.advanceTimersByTimeAsync(BUDGET_MS);
				if (plan === "dialog-timeout") await vi.advanceTimersByTimeAsync(DIALOG_TIMEOUT_MS);
				const envelope = await call;
				tally.set(envelope.status, (tally.get(envelope.status) ?? 0) + 1);
				if (envelope.status !== EXPECTED[plan] && wrong.length < 10) wrong.push(`call ${i} (${plan}): ${envelope.status} ${envelope.note ?? ""}`);
			}
		};

		await run(0, WARM_UP);
		gc();
		const baseline = {
			listeners: listeners(handle),
			timers: vi.getTimerCount(),
			held: role.host.snapshot().open.length,
			queued: role.host.queued(0).queuedCount,
			abortListeners: getEventListeners(longLived.signal, "abort").length,
		};
		const heapBefore = process.memoryUsage().heapUsed;
		const started = realNow();
		await run(WARM_UP, CALLS);
		const elapsed = realNow() - started;
		gc();
		const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

		console.log(
			`${(CALLS - WARM_UP).toLocaleString("en")} calls in ${(elapsed / 1000).toFixed(2)} s (${Math.round(((CALLS - WARM_UP) / elapsed) * 1000).toLocaleString("en")}/s); ` +
				`heap growth after GC ${(heapGrowth / 1024 / 1024).toFixed(2)} MB; ${ui.opened.toLocaleString("en")} dialogs; statuses of all ${CALLS.toLocaleString("en")} ${JSON.stringify(Object.fromEntries(tally))}`,
		);
		expect(wrong).toEqual([]);
		expect(ui.overlaps).toEqual([]);
		expect(ui.maxOpen).toBe(1);
		expect(baseline).toEqual({ listeners: atClaim, timers: 0, held: 0, queued: 0, abortListeners: 0 });
		expect({
			listeners: listeners(handle),
			timers: vi.getTimerCount(),
			held: role.host.snapshot().open.length,
			queued: role.host.queued(0).queuedCount,
			abortListeners: getEventListeners(longLived.signal, "abort").length,
		}).toEqual(baseline);
		expect(heapGrowth).toBeLessThan(50 * 1024 * 1024);
		role.release("quit", "end of run");
		expect(handle.bus.eventNames()).toEqual([]);
	}, 180_000);
});
