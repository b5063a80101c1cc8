/**
 * The terminal form on the relay: a whole request per form, under the same guarantees as the
 * dialogs (one at a time, closed at once when its call ends, a failure is that call's `error`).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole, HANDOVER_GRACE_MS } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import type { RelayProgress } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { lazyFormSurface } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/lazy.ts";
import { type CustomUI, formSurface, showForm } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/surface.ts";
import { fakeCustomUI } from "../../support/fake-custom-ui.ts";
import { flush, HOST_SESSION } from "../../support/relay.ts";
import { ansiTheme, questions } from "./support.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** These tests press keys the moment a form is built; the key guard has tests of its own. */
const NO_GUARD = { keyGuardMs: 0 };
const db: QuestionInput = { id: "db", question: "Which database?", options: ["Postgres", "SQLite"] };
const targets: QuestionInput = { id: "targets", question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true };

function formRelay(options: { failNext?: () => unknown; lazy?: boolean } = {}) {
	const handle = createHandle();
	const fake = fakeCustomUI(options);
	const surface = options.lazy ? lazyFormSurface(fake.ui, NO_GUARD) : formSurface(fake.ui, NO_GUARD);
	const role = claimHostRole(handle, { ui: fake.ui, surface, sessionId: HOST_SESSION })!;
	const ask = (questions: QuestionInput[], args: { label?: string; budgetMs?: number; signal?: AbortSignal; onProgress?: (p: RelayProgress) => void } = {}) => {
		const { label = "child", budgetMs = 300_000, ...rest } = args;
		const state: { envelope?: Envelope } = {};
		void askViaHost({ handle, asker: { label, sessionId: `${label}-session` }, questions, budgetMs, dialogTimeoutMs: 180_000, ...rest }).then(
			(e) => (state.envelope = e),
		);
		return state;
	};
	return { handle, fake, role, ask };
}

describe("one form per request", () => {
	it("shows the whole request in one form and returns every answer with source dialog", async () => {
		const { fake, ask, role } = formRelay({ lazy: true });
		const call = ask([db, targets], { label: "subagent-planner" });
		await flush(vi);
		expect(fake.forms).toHaveLength(1);
		expect(fake.current()!.screen()).toContain("[subagent-planner] · form 5:00 left · 2 questions");
		expect(fake.current()!.options?.blocked).toEqual({ kind: "question", message: "[subagent-planner] asks 2 questions" });
		fake.current()!.press("down", "enter", "space", "down", "down", "space", "enter", "enter");
		await flush(vi);
		expect(call.envelope).toMatchObject({
			status: "ok",
			answers: [
				{ id: "db", answer: "SQLite", kind: "option", source: "dialog" },
				{ id: "targets", answer: "linux, windows", values: ["linux", "windows"], kind: "option", source: "dialog" },
			],
		});
		expect(fake.open).toHaveLength(0);
		expect(role.host.stats).toMatchObject({ questionsAsked: 2, dialogsShown: 1 });
	});

	it("one form at a time for the whole process, in arrival order", async () => {
		const { fake, ask } = formRelay();
		const calls = ["a", "b", "c"].map((label) => ask([{ question: `${label}: name?` }], { label }));
		for (const label of ["a", "b", "c"]) {
			await flush(vi);
			expect(fake.open).toHaveLength(1);
			expect(fake.current()!.screen()).toContain(`[${label}]`);
			fake.current()!.press({ type: `name of ${label}` }, "enter");
		}
		await flush(vi);
		expect(fake.maxOpen).toBe(1);
		expect(calls.map((c) => c.envelope?.answers[0]?.answer)).toEqual(["name of a", "name of b", "name of c"]);
	});

	it("reports shown and answered progress as the human moves and answers", async () => {
		const { fake, ask } = formRelay();
		const stages: string[] = [];
		ask([db, targets], { onProgress: (p) => stages.push(`${p.stage}${p.position ?? p.question ?? ""}`) });
		await flush(vi);
		fake.current()!.press("enter", "space", "shiftTab", "tab", "enter", "enter");
		await flush(vi);
		expect(stages).toEqual(["queued1", "shown0", "answered0", "shown1", "answered1", "shown0", "shown1"]);
	});
});

describe("the form ends with its call", () => {
	it("Esc on the second question: timeout-or-cancelled with the first answer", async () => {
		const { fake, ask } = formRelay();
		const call = ask([db, targets]);
		await flush(vi);
		fake.current()!.press("enter", "down", "escape");
		await flush(vi);
		expect(call.envelope?.status).toBe("timeout-or-cancelled");
		expect(call.envelope?.answers).toEqual([{ id: "db", question: "Which database?", answer: "Postgres", kind: "option", source: "dialog" }]);
	});

	it("the call's budget closes the form at once and keeps what was answered", async () => {
		const { fake, ask } = formRelay();
		const call = ask([db, targets], { budgetMs: 5_000 });
		await flush(vi);
		fake.current()!.press("enter");
		await vi.advanceTimersByTimeAsync(4_999);
		expect(fake.open).toHaveLength(1);
		await vi.advanceTimersByTimeAsync(1);
		expect(call.envelope?.status).toBe("timeout");
		expect(call.envelope?.answers).toMatchObject([{ answer: "Postgres" }]);
		expect(fake.open).toHaveLength(0);
		expect(fake.forms[0]!.closed).toMatchObject({ ended: "dismissed" });
	});

	it("stays open for the per-dialog limit once per open question, then closes: timeout-or-cancelled", async () => {
		const { fake, ask } = formRelay();
		const call = ask([db, targets, { question: "Name?" }], { budgetMs: 3_600_000 });
		await flush(vi);
		fake.current()!.press("enter");
		await vi.advanceTimersByTimeAsync(3 * 180_000 - 1);
		expect(fake.open).toHaveLength(1);
		await vi.advanceTimersByTimeAsync(1);
		expect(call.envelope).toMatchObject({ status: "timeout-or-cancelled", answers: [{ answer: "Postgres" }] });
		expect(fake.open).toHaveLength(0);
	});

	it("a call that ends while the TUI is still building the form closes it as soon as it is built, its countdown stopped", async () => {
		let renders = 0;
		let closedWith: unknown;
		const ui: CustomUI = {
			// Like pi: the factory runs later, and a component closed before pi holds it is never disposed by pi.
			custom: <T>(factory: Parameters<CustomUI["custom"]>[0]) =>
				new Promise<T>((resolve) =>
					setTimeout(() => void factory({ requestRender: () => void renders++ }, ansiTheme, undefined, (r) => resolve((closedWith = r) as T)), 10),
				),
		};
		const abort = new AbortController();
		const shown = showForm(ui, { asker: "a", questions: questions([db]), known: [], signal: abort.signal, deadline: Date.now() + 60_000 });
		abort.abort();
		expect(await shown).toEqual({ ended: "dismissed", answers: [] });
		await vi.advanceTimersByTimeAsync(10);
		expect(closedWith).toMatchObject({ ended: "dismissed" });
		await vi.advanceTimersByTimeAsync(10_000);
		expect(renders).toBe(0);
	});

	it("an abort closes the form at once: cancelled", async () => {
		const { fake, ask } = formRelay();
		const abort = new AbortController();
		const call = ask([db], { signal: abort.signal });
		await flush(vi);
		abort.abort();
		await flush(vi);
		expect(call.envelope?.status).toBe("cancelled");
		expect(fake.open).toHaveLength(0);
	});

	it("an answer from outside closes the form at once; answers given in the form stand", async () => {
		const { fake, ask, handle, role } = formRelay();
		const call = ask([db, targets]);
		await flush(vi);
		fake.current()!.press("enter");
		const id = role.host.snapshot().open[0]!.requestId;
		let reply: unknown;
		handle.bus.emit("answer", { requestId: id, answers: ["SQLite", { values: ["mac"], note: "only mac for now" }] }, (r) => (reply = r));
		await flush(vi);
		expect(reply).toEqual({ ok: true });
		expect(fake.open).toHaveLength(0);
		expect(call.envelope).toMatchObject({
			status: "ok",
			answers: [
				{ answer: "Postgres", source: "dialog" },
				{ answer: "mac", note: "only mac for now", source: "outside" },
			],
		});
	});

	it("a host hand-over closes the form; the next host shows it again with the answers already given", async () => {
		const { fake, ask, role, handle } = formRelay();
		const call = ask([db, targets]);
		await flush(vi);
		fake.current()!.press("enter");
		role.release("new", "The host session ended (new).");
		await flush(vi);
		expect(fake.open).toHaveLength(0);
		await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS / 2);
		const next = fakeCustomUI();
		claimHostRole(handle, { ui: next.ui, surface: formSurface(next.ui, NO_GUARD), sessionId: "replacement" });
		await flush(vi);
		expect(next.current()!.screen()).toContain("[☐ Which targets?]");
		next.current()!.press("shiftTab");
		expect(next.current()!.screen()).toContain("✓ Postgres (answered before)");
		next.current()!.press("tab", "space", "enter", "enter");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "Postgres" }, { answer: "linux" }] });
	});

	it("a form that throws is an error for that call only; the next request is shown", async () => {
		const { fake, ask } = formRelay({ failNext: () => new Error("terminal gone") });
		const broken = ask([db], { label: "broken" });
		const next = ask([db], { label: "next" });
		await flush(vi);
		expect(broken.envelope).toMatchObject({ status: "error" });
		expect(broken.envelope?.note).toContain("The host dialog failed: terminal gone");
		expect(fake.current()!.screen()).toContain("[next]");
		fake.current()!.press("enter");
		await flush(vi);
		expect(next.envelope?.status).toBe("ok");
	});

	it("a form that fails while drawing closes and is an error for that call", async () => {
		let broken = false;
		const theme = {
			fg: (_c: string, t: string) => {
				if (broken) throw new Error("theme gone");
				return t;
			},
			bold: (t: string) => t,
		};
		const handle = createHandle();
		const fake = fakeCustomUI({ theme });
		claimHostRole(handle, { ui: fake.ui, surface: formSurface(fake.ui, NO_GUARD), sessionId: HOST_SESSION });
		const call = askViaHost({ handle, asker: { label: "child", sessionId: "child-session" }, questions: [db], budgetMs: 60_000, dialogTimeoutMs: 60_000 });
		await flush(vi);
		broken = true;
		expect(fake.current()!.screen()).toBe("");
		await flush(vi);
		expect(await call).toMatchObject({ status: "error", note: expect.stringContaining("The host dialog failed: theme gone") });
		expect(fake.open).toHaveLength(0);
	});

	it("an answer a whole-request surface hands back passes the one answer check: one not offered ends the call with error and closes it", async () => {
		const handle = createHandle();
		let closed = false;
		claimHostRole(handle, {
			ui: { notify: () => {} },
			sessionId: HOST_SESSION,
			surface: {
				ask: async () => undefined,
				askRequest: (prompt) =>
					new Promise((resolve) => {
						prompt.signal.addEventListener("abort", () => {
							closed = true;
							resolve({ ended: "dismissed", answers: [] });
						});
						prompt.onAnswer?.(0, { question: "Which database?", id: "db", answer: "Oracle", kind: "option" });
					}),
			},
		});
		const envelope = await askViaHost({
			handle,
			asker: { label: "child", sessionId: "child-session" },
			questions: [db],
			budgetMs: 60_000,
			dialogTimeoutMs: 60_000,
		});
		expect(envelope).toMatchObject({ status: "error", answers: [] });
		expect(envelope.note).toContain('The host dialog\'s answer to question 1 is of kind "option", but a value was typed');
		expect(closed).toBe(true);
	});

	it("a question answered for another asker is shown as answered, not asked again", async () => {
		const { fake, ask } = formRelay();
		const first = ask([db], { label: "first" });
		const second = ask([db, targets], { label: "second" });
		await flush(vi);
		fake.current()!.press("enter");
		await flush(vi);
		expect(first.envelope?.answers[0]).toMatchObject({ answer: "Postgres", sharedWith: ["second"] });
		expect(fake.current()!.screen()).toContain("[☐ Which targets?]");
		fake.current()!.press("space", "enter", "enter");
		await flush(vi);
		expect(second.envelope).toMatchObject({
			status: "ok",
			answers: [
				{ answer: "Postgres", source: "shared" },
				{ answer: "linux", source: "dialog" },
			],
		});
	});
});
