/**
 * One clock for one request: the terminal form and the web page both say the time left with
 * `timeLeftText` (model/time-left.ts), from the dialog host's deadlines: the time of what is on
 * screen, and the call's budget when it differs. The page runs the very same function (served at
 * the top of its script).
 */
import vm from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { timeLeftText } from "../../../extensions/checkpoint-bridge/model/time-left.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { formSurface } from "../../../extensions/checkpoint-bridge/surfaces/terminal-form/surface.ts";
import { Board } from "../../../extensions/checkpoint-bridge/surfaces/web/live/board.ts";
import { pageScript } from "../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { fakeCustomUI } from "../support/fake-custom-ui.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

const MIN = 60_000;

describe("timeLeftText", () => {
	it("says the question's time, and the call's when it differs, each labelled", () => {
		const now = Date.now();
		expect(timeLeftText({ question: now + 3 * MIN, call: now + 5 * MIN - 1_000 }, now)).toBe("question 3:00 left · call 4:59");
		expect(timeLeftText({ question: now + 9 * MIN, call: now + 15 * MIN }, now), "a form of several: the form's time").toBe("question 9:00 left · call 15:00");
		expect(timeLeftText({ question: now + 4 * MIN, call: now + 4 * MIN }, now), "capped by the call: one time").toBe("question 4:00 left");
		expect(timeLeftText({ question: now + 12_300, call: now + 12_000 }, now), "the same second").toBe("question 0:13 left · call 0:12");
		expect(timeLeftText({ question: now + 12_000, call: now + 12_000 }, now)).toBe("question 0:12 left");
		expect(timeLeftText({ call: now + 5 * MIN }, now), "queued: only the call's").toBe("call 5:00 left");
		expect(timeLeftText({ question: now + 3 * MIN, call: 0 }, now)).toBe("question 3:00 left · call no limit");
		expect(timeLeftText({ question: 0, call: 0 }, now)).toBe("no time limit");
		expect(timeLeftText({ call: 0 }, now)).toBe("no time limit");
		expect(timeLeftText({ question: now + 2 * 3_600_000 + 5_000, call: now + 2 * 3_600_000 + 5_000 }, now)).toBe("question 2:00:05 left");
		expect(timeLeftText({ question: now - 5_000, call: now - 5_000 }, now), "past: nothing left").toBe("question 0:00 left");
	});

	it("counts down with the clock, both times together", () => {
		const deadlines = { question: Date.now() + 3 * MIN, call: Date.now() + 5 * MIN };
		expect(timeLeftText(deadlines, Date.now())).toBe("question 3:00 left · call 5:00");
		vi.advanceTimersByTime(61_000);
		expect(timeLeftText(deadlines, Date.now())).toBe("question 1:59 left · call 3:59");
	});

	it("is served to the page as the very same function, and says the same there", () => {
		const context = vm.createContext({});
		// Only the formatter: the rest of the script needs a DOM.
		const script = pageScript();
		vm.runInContext(script.slice(0, script.indexOf("\n// checkpoint-bridge answer page")), context);
		const served = vm.runInContext("timeLeftText", context) as typeof timeLeftText;
		const now = Date.now();
		for (const deadlines of [
			{ question: now + 3 * MIN, call: now + 5 * MIN - 1_000 },
			{ question: now + 9 * MIN, call: now + 15 * MIN },
			{ call: now + 5 * MIN },
			{ question: 0, call: 0 },
		])
			expect(served(deadlines, now)).toBe(timeLeftText(deadlines, now));
	});
});

describe("the dialog host's deadlines: one source for the terminal and the page", () => {
	function host(surface: "form" | "dialogs") {
		const handle = createHandle();
		const forms = fakeCustomUI();
		const dialogs = fakeUI();
		claimHostRole(handle, {
			ui: { notify: () => {} },
			surface: surface === "form" ? formSurface(forms.ui, { keyGuardMs: 0 }) : dialogSurface(dialogs.ui),
			sessionId: HOST_SESSION,
		});
		const board = new Board(handle);
		const ask = (questions: { question: string; options?: string[] }[], budgetMs: number, dialogTimeoutMs: number) =>
			void askViaHost({ handle, asker: { label: "planner", sessionId: "planner-session" }, questions, budgetMs, dialogTimeoutMs });
		return { handle, forms, dialogs, board, ask };
	}

	it("the terminal form's header and the page's card say the same labelled times, from the host's deadlines", async () => {
		const { forms, board, ask } = host("form");
		const start = Date.now();
		ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], 5 * MIN, 3 * MIN);
		await flush(vi);
		const [card] = board.cards();
		expect(card).toMatchObject({ state: "shown", deadline: start + 5 * MIN, questionDeadline: start + 3 * MIN });
		const page = () => timeLeftText({ question: board.cards()[0]!.questionDeadline, call: board.cards()[0]!.deadline }, Date.now());
		const header = () => forms.current()!.screen().split("\n")[1];
		expect(header()).toBe(" [planner] · question 3:00 left · call 5:00 · 1 question");
		expect(page()).toBe("question 3:00 left · call 5:00");
		vi.advanceTimersByTime(1_500);
		expect(header()).toBe(" [planner] · question 2:59 left · call 4:59 · 1 question");
		expect(page()).toBe("question 2:59 left · call 4:59");
	});

	it("RPC dialogs one at a time: each question gets its own deadline, never past the call's; a queued request has the call's only", async () => {
		const { dialogs, board, ask } = host("dialogs");
		const start = Date.now();
		ask(
			[
				{ question: "One?", options: ["a", "b"] },
				{ question: "Two?", options: ["a", "b"] },
			],
			4 * MIN,
			3 * MIN,
		);
		ask([{ question: "Later?", options: ["a", "b"] }], 10 * MIN, 3 * MIN);
		await flush(vi);
		expect(board.cards().map((c) => c.questionDeadline)).toEqual([start + 3 * MIN, undefined]);
		vi.advanceTimersByTime(2 * MIN);
		dialogs.current()!.answer("a");
		await flush(vi);
		// The second question's own 3 minutes are cut to the 2 left of the call.
		expect(board.cards()[0]).toMatchObject({ question: 1, questionDeadline: start + 4 * MIN });
		expect(timeLeftText({ question: board.cards()[0]!.questionDeadline, call: board.cards()[0]!.deadline }, Date.now())).toBe("question 2:00 left");
		expect(timeLeftText({ call: board.cards()[1]!.deadline }, Date.now())).toBe("call 8:00 left");
	});
});
