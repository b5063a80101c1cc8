/**
 * The page's board across a host replacement (/new, /reload): the replaced host parks its
 * requests and the next one adopts them under the same ids, without a settled event. Cards, their
 * links and the notify command must carry over, not start again.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { askViaHost } from "../../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import type { SettledEvent } from "../../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { ANSWER_IN_TRACE } from "../../../../extensions/checkpoint-bridge/model/answer-places.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { Board, outcomeText } from "../../../../extensions/checkpoint-bridge/surfaces/web/live/board.ts";
import { tempDir } from "../../../support/temp-dir.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { linkPathOf, pagePath, pageWithRelay, postAnswer, raw, readEvents } from "./support.ts";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
	for (const step of cleanup) await step();
	cleanup = [];
});

describe("web page board", () => {
	it("keeps cards, links and their single notification while a new host adopts the requests", async () => {
		const dir = tempDir("cb-board-");
		const s = await pageWithRelay({ notifyCommand: () => `touch "${dir}/$CHECKPOINT_BRIDGE_ASKER-$$"` });
		cleanup.push(() => s.page.close());
		const runs = async (count: number) => {
			for (let i = 0; i < 200 && readdirSync(dir).length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
			return readdirSync(dir)
				.map((name) => name.split("-")[0])
				.sort();
		};
		const first = await s.ask([{ question: "First?", options: ["a", "b"] }], { label: "one" });
		const second = await s.ask([{ question: "Second?", options: ["c", "d"] }], { label: "two" });
		const links = [s.page.linkFor(first.requestId)!, s.page.linkFor(second.requestId)!];
		expect(await runs(2)).toEqual(["one", "two"]);

		s.role.release("reload", "replaced");
		const fake = fakeUI();
		const next = claimHostRole(s.handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "next-host" });
		cleanup.push(async () => next?.release("quit", "test over"));
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([first.requestId, second.requestId]);
		// The adoption emits a queued event per request: no second notification for either.
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(
			readdirSync(dir)
				.map((name) => name.split("-")[0])
				.sort(),
		).toEqual(["one", "two"]);
		// Same links, still alive, and the request they name answers through the new host.
		expect([s.page.linkFor(first.requestId), s.page.linkFor(second.requestId)]).toEqual(links);
		const link = new URL(links[1]!).pathname;
		expect((await raw(s.page, { path: link })).status).toBe(200);
		expect((await postAnswer(s.page, `${link}answer`, { answers: ["d"] })).status).toBe(200);
		expect((await second.call).answers).toMatchObject([{ answer: "d", source: "web" }]);
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId: first.requestId, answers: ["a"] })).status).toBe(200);
		expect((await first.call).status).toBe("ok");
	});

	it("a request answered with another asker's answer given on the page is traced as shared, not as answered in the terminal", async () => {
		const s = await pageWithRelay();
		cleanup.push(async () => {
			s.role.release("quit", "test over");
			await s.page.close();
		});
		const first = await s.ask([{ question: "Same?", options: ["a", "b"] }], { label: "planner" });
		const second = await s.ask([{ question: "Same?", options: ["a", "b"] }], { label: "reviewer" });
		const body = { requestId: first.requestId, answers: ["b"], tab: "tab-b" };
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, body)).status).toBe(200);
		expect((await second.call).answers).toMatchObject([{ answer: "b", source: "shared", sharedWith: ["planner"] }]);
		const tracesOf = async (query: string) => {
			const [state] = await readEvents(s.page, `${pagePath(s.page)}events${query}`, (events) => events.length > 0);
			return state!.data.traces.map((t: Record<string, unknown>) => `[${t.asker}] ${t.outcome}`);
		};
		expect(await tracesOf("?tab=tab-a"), "another tab").toEqual([
			"[planner] answered on the page, in another tab",
			"[reviewer] answered with planner's answer (given on the page, in another tab)",
		]);
		expect(await tracesOf("?tab=tab-b"), "the tab that answered").toEqual([
			"[planner] answered on the page, in this tab",
			"[reviewer] answered with planner's answer (given on the page, in this tab)",
		]);
		expect(await tracesOf(""), "a tab that names none reads it as any other tab").toEqual(await tracesOf("?tab=tab-a"));
		const again = await postAnswer(s.page, `${pagePath(s.page)}answer`, body);
		expect(again.body).toBe("not applied: this request is already closed (answered on the page, in this tab)\n");
	});

	it("an answer through a request's link, or through the link the notify command sent, is traced as given there", async () => {
		const s = await pageWithRelay();
		cleanup.push(async () => {
			s.role.release("quit", "test over");
			await s.page.close();
		});
		const linked = await s.ask([{ question: "Linked?", options: ["a", "b"] }], { label: "linked" });
		const notified = await s.ask([{ question: "Notified?", options: ["a", "b"] }], { label: "notified" });
		expect((await postAnswer(s.page, `${linkPathOf(s.page, linked.requestId)}answer`, { answers: ["a"], tab: "t1" })).status).toBe(200);
		expect((await postAnswer(s.page, `${linkPathOf(s.page, notified.requestId)}answer`, { answers: ["a"], via: "notify" })).status).toBe(200);
		const [state] = await readEvents(s.page, `${pagePath(s.page)}events?tab=t1`, (events) => events.length > 0);
		expect(state!.data.traces.map((t: Record<string, unknown>) => t.outcome)).toEqual([
			"answered through the request's own link",
			"answered through the link the notify command sent",
		]);
		expect(
			state!.data.traces.every((t: Record<string, unknown>) => !("tab" in t) && !("outcomeHere" in t)),
			"what is kept for the tab is not sent",
		).toBe(true);
	});

	it("a trace says what was answered, not only where: each answer's value, several values joined, a long one cut; none for a dismissal", async () => {
		const s = await pageWithRelay();
		cleanup.push(async () => {
			s.role.release("quit", "test over");
			await s.page.close();
		});
		const store = await s.ask(
			[
				{ question: "Which store?", options: ["Postgres", "SQLite"] },
				{ question: "Which checks?", options: ["lint", "unit", "e2e"], multiSelect: true },
				{ question: "Why?" },
			],
			{ label: "planner" },
		);
		const answers = ["SQLite", ["lint", "e2e"], "x".repeat(200)];
		expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId: store.requestId, answers, tab: "t1" })).status).toBe(200);
		const dismissed = await s.ask([{ question: "Dismissed?" }], { label: "reviewer" });
		s.fake.current()!.answer(undefined);
		await dismissed.call;
		const [state] = await readEvents(s.page, `${pagePath(s.page)}events?tab=t1`, (events) => events.length > 0);
		const [answered, none] = state!.data.traces as Record<string, unknown>[];
		expect(answered).toMatchObject({ asker: "planner", outcome: "answered on the page, in this tab" });
		expect(answered!.answered).toEqual(["SQLite", "lint, e2e", `${"x".repeat(ANSWER_IN_TRACE - 1)}…`]);
		expect(none).toMatchObject({ asker: "reviewer", outcome: "dismissed in the terminal, or its dialog timed out" });
		expect(none).not.toHaveProperty("answered");
	});

	it("refuses a tab id or a via it does not know, naming what is wrong, and applies nothing", async () => {
		const s = await pageWithRelay();
		cleanup.push(async () => {
			s.role.release("quit", "test over");
			await s.page.close();
		});
		const open = await s.ask([{ question: "Kept?", options: ["a", "b"] }], { label: "kept" });
		const answer = `${pagePath(s.page)}answer`;
		const tabProblem = "tab must be 1 to 64 letters, digits, - or _, or left out\n";
		for (const tab of ["", "a b", "x".repeat(65), 7, ["t"]]) {
			const refused = await postAnswer(s.page, answer, { requestId: open.requestId, answers: ["a"], tab });
			expect([refused.status, refused.body], JSON.stringify(tab)).toEqual([400, tabProblem]);
		}
		for (const via of ["page", "", 1]) {
			const refused = await postAnswer(s.page, `${linkPathOf(s.page, open.requestId)}answer`, { answers: ["a"], via });
			expect(refused.status, JSON.stringify(via)).toBe(400);
			expect(refused.body).toMatch(/^via must be "notify"/);
		}
		const stream = await raw(s.page, { path: `${pagePath(s.page)}events?tab=${encodeURIComponent("<tab>")}` });
		expect([stream.status, stream.body]).toEqual([400, tabProblem]);
		expect(s.settled, "nothing was applied").toEqual([]);
	});

	it("names how a request ended", () => {
		const answer = (source: "dialog" | "web" | "outside" | "shared", sharedWith?: string[]) => ({
			question: "q",
			answer: "a",
			kind: "text" as const,
			source,
			...(sharedWith ? { sharedWith } : {}),
		});
		expect(outcomeText("ok", [answer("dialog")])).toBe("answered in the terminal");
		expect(outcomeText("ok", [answer("dialog"), answer("shared", ["planner"])])).toBe("answered in the terminal and with planner's answer");
		expect(outcomeText("ok", [answer("shared", ["planner"]), answer("shared", ["planner"])])).toBe("answered with planner's answer");
		expect(outcomeText("ok", [answer("web")])).toBe("answered in the browser");
		expect(outcomeText("ok", [answer("dialog"), answer("web")])).toBe("answered in the browser and in the terminal");
		expect(outcomeText("ok", [answer("web"), answer("shared", ["a"]), answer("shared", ["b"])])).toBe(
			"answered in the browser and with a's answer and with b's answer",
		);
		expect(outcomeText("ok", [answer("outside")])).toBe("answered from outside the terminal");
		expect(outcomeText("timeout", [])).toBe("ran out of time");
		expect(outcomeText("cancelled", [])).toBe("withdrawn by the asker");
		expect(outcomeText("no-host", [])).toBe("closed: the host session ended");
		expect(outcomeText("timeout-or-cancelled", [], "cancelled-outside")).toBe("cancelled from outside the terminal");
		expect(outcomeText("timeout-or-cancelled", [])).toBe("dismissed in the terminal, or its dialog timed out");
	});
});

/** A host on a fake UI and a board watching it, both gone when the test ends. */
function boardOnHost() {
	const handle = createHandle();
	const fake = fakeUI();
	const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" })!;
	const board = new Board(handle);
	cleanup.push(async () => {
		board.close();
		role.release("quit", "test over");
	});
	return { handle, fake, role, board };
}

describe("how the board learns a request's end", () => {
	it("from the typed end the settled event carries: an outside cancel and a dismiss are told apart without reading the note", async () => {
		const { handle, fake, role, board } = boardOnHost();
		const cancelled = askViaHost({ handle, asker: { label: "a", sessionId: "a" }, questions: [{ question: "A?" }], budgetMs: 60_000, dialogTimeoutMs: 60_000 });
		const dismissed = askViaHost({ handle, asker: { label: "b", sessionId: "b" }, questions: [{ question: "B?" }], budgetMs: 60_000, dialogTimeoutMs: 60_000 });
		const [first, second] = board.cards().map((card) => card.requestId);
		handle.bus.emit("answer", { v: 1, requestId: first, cancel: true }, () => {});
		expect((await cancelled).status).toBe("timeout-or-cancelled");
		await new Promise((resolve) => setImmediate(resolve));
		fake.current()!.answer(undefined);
		expect((await dismissed).status).toBe("timeout-or-cancelled");
		expect(board.trace(first!)?.outcome).toBe("cancelled from outside the terminal");
		expect(board.trace(second!)?.outcome).toBe("dismissed in the terminal, or its dialog timed out");
		// The note's words say nothing to the board: a dismiss whose note mentions "outside" is still a dismiss.
		const third = askViaHost({ handle, asker: { label: "c", sessionId: "c" }, questions: [{ question: "C?" }], budgetMs: 60_000, dialogTimeoutMs: 60_000 });
		const [card] = board.cards();
		const outcome: SettledEvent["outcome"] = {
			status: "timeout-or-cancelled",
			answers: [],
			note: "Closed outside office hours.",
			reason: "dismissed",
			end: "dismissed",
		};
		const event: SettledEvent = { ...handle.snapshot()!.open[0]!, v: 1, settledAt: Date.now(), outcome };
		handle.bus.emit("observe:settled", event);
		expect(board.trace(card!.requestId)?.outcome).toBe("dismissed in the terminal, or its dialog timed out");
		role.release("quit", "test over");
		expect((await third).status).toBe("no-host");
	});

	it("decides by the end, the status only for an event without one: ends of one status read apart, and an end wins over a status that disagrees", async () => {
		expect(outcomeText("timeout-or-cancelled", [], "dialog-timeout")).toBe("closed unanswered at its dialog's own time limit");
		expect(outcomeText("timeout", [], "expired")).toBe("expired unanswered after it went late");
		expect(outcomeText("error", [], "refused")).toBe("failed at the host: the answer did not fit its questions");
		const { handle, role, board } = boardOnHost();
		// A real dialog that reaches its own time limit, beside one the human dismisses: both end timeout-or-cancelled.
		const timedOut = askViaHost({
			handle,
			asker: { label: "slow", sessionId: "slow" },
			questions: [{ question: "Slow?" }],
			budgetMs: 60_000,
			dialogTimeoutMs: 100,
		});
		const [slow] = board.cards().map((card) => card.requestId);
		expect((await timedOut).status).toBe("timeout-or-cancelled");
		expect(board.trace(slow!)).toMatchObject({ end: "dialog-timeout", outcome: "closed unanswered at its dialog's own time limit" });

		const asks = ["one", "two", "three"].map((label) =>
			askViaHost({ handle, asker: { label, sessionId: label }, questions: [{ question: `${label}?` }], budgetMs: 60_000, dialogTimeoutMs: 60_000 }),
		);
		const settle = (index: number, outcome: SettledEvent["outcome"]) => {
			const open = handle.snapshot()!.open[index]!;
			handle.bus.emit("observe:settled", { ...open, v: 1, settledAt: Date.now(), outcome } satisfies SettledEvent);
			return open.requestId;
		};
		// The wire says the call ran out of time; the end says it expired: the end wins.
		const expired = settle(0, { status: "timeout", answers: [], end: "expired" });
		expect(board.trace(expired)).toMatchObject({ end: "expired", outcome: "expired unanswered after it went late" });
		// Handed over, it lives on with the next host: the card and its link stay, whatever the status.
		const handed = settle(1, { status: "no-host", answers: [], end: "handed-over" });
		const link = board.linkSecret(handed);
		expect([board.card(handed)?.requestId, board.trace(handed), link && board.resolveLink(link)]).toEqual([handed, undefined, { open: board.card(handed) }]);
		// An observer before `end`: the status decides.
		const older = settle(2, { status: "cancelled", answers: [] });
		expect(board.trace(older)).toMatchObject({ end: "cancelled", outcome: "withdrawn by the asker" });
		role.release("quit", "test over");
		expect((await Promise.all(asks)).map((e) => e.status)).toEqual(["no-host", "no-host", "no-host"]);
	});
});
