/**
 * The dialog queue with a surface that shows a whole request at once (`Surface.askRequest`, the
 * terminal form), driven by a scripted surface: which answers count, how the call ends, and when a
 * form that closes near the call's deadline is the call's timeout.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RequestOutcome, RequestPrompt, Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { DialogHost, type HostEvents } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { CLOCK_TOLERANCE_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest, type RelayResult } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { flush } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const NAME: QuestionInput = { question: "Name?" };
const CITY: QuestionInput = { question: "City?" };
const DB: QuestionInput = { id: "db", question: "Which database?", options: ["Postgres", "SQLite"] };
const typed = (question: QuestionInput, answer: string): Answer => ({ question: question.question, answer, kind: "text" });
const picked = (answer: string): Answer => ({ question: DB.question, id: "db", answer, kind: "option" });

const TIMEOUT_NOTE = "The call's budget ran out before every question was answered.";
const form = (questions: number) => `the form of ${questions} question${questions === 1 ? "" : "s"}`;
const dismissedNote = (questions: number, answered: number) => `The user dismissed ${form(questions)}; ${answered} answered.`;
const timedOutNote = (questions: number, answered: number) =>
	`Nobody answered ${form(questions)} within its own time limit (the user may not be there); ${answered} answered.`;

function request(
	id: string,
	questions: QuestionInput[],
	options: { session?: string; budgetMs?: number; dialogTimeoutMs?: number; answers?: Answer[] } = {},
): RelayRequest {
	const { session = "asker", budgetMs = 3_600_000, dialogTimeoutMs = 60_000, answers } = options;
	return {
		v: PROTOCOL_VERSION,
		id,
		asker: { label: session, sessionId: `${session}-session` },
		questions,
		deadline: Date.now() + budgetMs,
		dialogTimeoutMs,
		createdAt: Date.now(),
		...(answers ? { answers } : {}),
	};
}

/** Resolves when the form is told to close. */
const closing = (prompt: RequestPrompt) =>
	new Promise<void>((resolve) => (prompt.signal.aborted ? resolve() : prompt.signal.addEventListener("abort", () => resolve(), { once: true })));
/** Stays open until told to close, then hands back what it was given. */
const untilClosed = async (prompt: RequestPrompt): Promise<RequestOutcome> => {
	await closing(prompt);
	return { ended: "dismissed", answers: [...prompt.known] };
};

/** A dialog host whose surface shows whole requests, each form played by the next script. */
function formHost(scripts: ((prompt: RequestPrompt) => Promise<RequestOutcome>)[], events?: HostEvents) {
	const replies: RelayReply[] = [];
	const prompts: RequestPrompt[] = [];
	const surface: Surface = {
		ask: () => Promise.reject(new Error("a whole-request surface is never asked one question")),
		askRequest: (prompt) => {
			prompts.push(prompt);
			const script = scripts.shift();
			return script ? script(prompt) : Promise.reject(new Error("no form expected"));
		},
	};
	const host = new DialogHost({ ui: { notify: () => {} }, surface, sessionId: "host-session", reply: (r) => replies.push(r), ...(events ? { events } : {}) });
	const result = (id = "r1") => replies.find((r): r is RelayResult => r.id === id && r.kind === "result");
	/** What the asker of `id` was told, in order: progress stages with their question or position, then the result's status. */
	const told = (id = "r1") => replies.filter((r) => r.id === id).map((r) => (r.kind === "result" ? r.status : `${r.stage}${r.question ?? r.position ?? ""}`));
	return { host, prompts, result, told };
}

describe("a request whose questions are known already", () => {
	it("settles ok without the form when every answer was carried with it", async () => {
		const { host, prompts, result } = formHost([]);
		host.serve(request("r1", [NAME, CITY], { answers: [typed(NAME, "Ada"), typed(CITY, "Turin")] }));
		await flush(vi);
		expect(prompts).toHaveLength(0);
		expect(result()).toMatchObject({ status: "ok", answers: [{ answer: "Ada" }, { answer: "Turin" }] });
		expect(host.snapshot().open).toEqual([]);
	});

	it("settles ok without a second form when another asker's form answered its only question", async () => {
		const { host, prompts, result } = formHost([async () => ({ ended: "submitted", answers: [typed(NAME, "Ada")] })]);
		host.serve(request("r1", [NAME], { session: "a" }));
		host.serve(request("r2", [NAME], { session: "b" }));
		await flush(vi);
		expect(prompts).toHaveLength(1);
		expect(result("r2")).toMatchObject({ status: "ok", answers: [{ answer: "Ada", source: "shared", sharedWith: ["a"] }] });
	});

	it("shows the form with the known answers and keeps it open for the per-dialog limit once per open question", async () => {
		const { host, prompts, result } = formHost([untilClosed]);
		host.serve(request("r1", [NAME, CITY], { answers: [typed(NAME, "Ada")], dialogTimeoutMs: 60_000 }));
		await flush(vi);
		// Shown as carried from before the restart (issue 45): the asker's word, not an answer given here.
		expect(prompts[0]!.known).toEqual([{ ...typed(NAME, "Ada"), source: "carried" }, undefined]);
		await vi.advanceTimersByTimeAsync(60_000 - 1);
		expect(result()).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(result()).toMatchObject({ status: "timeout-or-cancelled", answers: [{ answer: "Ada" }], note: timedOutNote(2, 1), reason: "dialog-timeout" });
	});
});

describe("the form's final answers count", () => {
	it("an answer changed in the form's review replaces the one reported before", async () => {
		const { host, result, told } = formHost([
			async (prompt) => {
				prompt.onAnswer?.(0, typed(NAME, "Ada"));
				prompt.onShown?.(1);
				prompt.onAnswer?.(1, typed(CITY, "Turin"));
				return { ended: "submitted", answers: [typed(NAME, "Grace"), typed(CITY, "Turin")] };
			},
		]);
		host.serve(request("r1", [NAME, CITY]));
		await flush(vi);
		expect(told()).toEqual(["queued1", "shown0", "answered0", "shown1", "answered1", "ok"]);
		expect(result()!.answers).toEqual([
			{ ...typed(NAME, "Grace"), source: "dialog" },
			{ ...typed(CITY, "Turin"), source: "dialog" },
		]);
	});

	it("an answer withdrawn in the form is not in the result", async () => {
		const { host, result } = formHost([
			async (prompt) => {
				prompt.onAnswer?.(0, typed(NAME, "Ada"));
				prompt.onAnswer?.(1, typed(CITY, "Turin"));
				return { ended: "dismissed", answers: [typed(NAME, "Ada"), undefined] };
			},
		]);
		host.serve(request("r1", [NAME, CITY]));
		await flush(vi);
		expect(result()).toEqual({
			v: PROTOCOL_VERSION,
			id: "r1",
			kind: "result",
			status: "timeout-or-cancelled",
			answers: [{ ...typed(NAME, "Ada"), source: "dialog" }],
			note: dismissedNote(2, 1),
			reason: "dismissed",
		});
	});

	it("a shared answer stands whatever the form returns for it", async () => {
		const { host, prompts, result } = formHost([
			async () => ({ ended: "submitted", answers: [typed(NAME, "Ada")] }),
			async () => ({ ended: "submitted", answers: [{ ...typed(NAME, "Grace"), source: "dialog" }, typed(CITY, "Turin")] }),
		]);
		host.serve(request("r1", [NAME], { session: "a" }));
		host.serve(request("r2", [NAME, CITY], { session: "b" }));
		await flush(vi);
		expect(prompts[1]!.known).toMatchObject([{ answer: "Ada", source: "shared" }, undefined]);
		expect(result("r2")).toMatchObject({
			status: "ok",
			answers: [
				{ answer: "Ada", source: "shared", sharedWith: ["a"] },
				{ answer: "Turin", source: "dialog" },
			],
		});
	});
});

describe("answers that fail the answer check", () => {
	it("one reported while the form is open ends the call with error naming the question and closes the form; what the form reports after counts for nothing", async () => {
		let prompt!: RequestPrompt;
		const { host, result, told } = formHost([
			async (p) => {
				prompt = p;
				p.onAnswer?.(1, picked("Oracle"));
				await closing(p);
				p.onShown?.(0);
				p.onAnswer?.(0, typed(NAME, "Ada"));
				return { ended: "submitted", answers: [typed(NAME, "Ada"), picked("Postgres")] };
			},
		]);
		host.serve(request("r1", [NAME, DB]));
		await flush(vi);
		expect(prompt.signal.aborted).toBe(true);
		expect(prompt.signal.reason).toBe("refused");
		expect(result()).toMatchObject({
			status: "error",
			answers: [],
			note: 'The host dialog\'s answer to question 2 is of kind "option", but a value was typed.',
		});
		expect(told()).toEqual(["queued1", "shown0", "error"]);
		expect(host.snapshot().open).toEqual([]);
	});

	it("one the form hands back when it closes ends the call with error naming the question", async () => {
		const { host, result } = formHost([async () => ({ ended: "submitted", answers: [typed(NAME, "Ada"), picked("Oracle")] })]);
		host.serve(request("r1", [NAME, DB]));
		await flush(vi);
		expect(result()).toMatchObject({ status: "error", note: 'The host dialog\'s answer to question 2 is of kind "option", but a value was typed.' });
	});

	it("one the form hands back marked as shared, for a question nobody shared, is checked all the same", async () => {
		const { host, result } = formHost([async () => ({ ended: "submitted", answers: [typed(NAME, "Ada"), { ...picked("Oracle"), source: "shared" }] })]);
		host.serve(request("r1", [NAME, DB]));
		await flush(vi);
		expect(result()).toMatchObject({ status: "error", note: expect.stringMatching(/^The host dialog's answer to question 2 /) });
	});

	it("a valid one it marks as shared, for a question nobody shared, counts as given in the form", async () => {
		const { host, result } = formHost([async () => ({ ended: "submitted", answers: [typed(NAME, "Ada"), { ...picked("SQLite"), source: "shared" }] })]);
		host.serve(request("r1", [NAME, DB]));
		await flush(vi);
		expect(result()).toMatchObject({
			status: "ok",
			answers: [
				{ answer: "Ada", source: "dialog" },
				{ answer: "SQLite", source: "dialog" },
			],
		});
	});
});

describe("what the form reports when it should not", () => {
	it("a move or an answer for a question the request does not have changes nothing", async () => {
		const { host, result, told } = formHost([
			async (prompt) => {
				prompt.onShown?.(2);
				prompt.onAnswer?.(2, typed(NAME, "Ada"));
				prompt.onAnswer?.(0, typed(NAME, "Ada"));
				return { ended: "submitted", answers: [typed(NAME, "Ada")] };
			},
		]);
		host.serve(request("r1", [NAME]));
		await flush(vi);
		expect(told()).toEqual(["queued1", "shown0", "answered0", "ok"]);
		expect(result()!.answers).toEqual([{ ...typed(NAME, "Ada"), source: "dialog" }]);
	});

	it("a move or an answer after the call ended changes nothing, not even for an asker waiting on the same question", async () => {
		const { host, prompts, result, told } = formHost([
			async (prompt) => {
				await closing(prompt);
				prompt.onShown?.(0);
				prompt.onAnswer?.(0, typed(NAME, "Ada"));
				return { ended: "submitted", answers: [typed(NAME, "Ada")] };
			},
			async () => ({ ended: "submitted", answers: [typed(NAME, "Grace"), typed(CITY, "Turin")] }),
		]);
		host.serve(request("r1", [NAME], { session: "a", budgetMs: 10_000 }));
		host.serve(request("r2", [NAME, CITY], { session: "b" }));
		await vi.advanceTimersByTimeAsync(10_000);
		expect(result("r1")).toMatchObject({ status: "timeout", answers: [], note: TIMEOUT_NOTE });
		expect(told("r1")).toEqual(["queued1", "shown0", "timeout"]);
		expect(prompts[1]!.known).toEqual([undefined, undefined]);
		expect(result("r2")).toMatchObject({
			status: "ok",
			answers: [
				{ answer: "Grace", source: "dialog" },
				{ answer: "Turin", source: "dialog" },
			],
		});
	});

	it("observers see each question the human moves to", async () => {
		const shown = vi.fn();
		const { host } = formHost(
			[
				async (prompt) => {
					prompt.onShown?.(1);
					return { ended: "submitted", answers: [typed(NAME, "Ada"), typed(CITY, "Turin")] };
				},
			],
			{ shown },
		);
		host.serve(request("r1", [NAME, CITY]));
		await flush(vi);
		expect(shown.mock.calls.map(([observed, index]) => [observed.requestId, index])).toEqual([
			["r1", 0],
			["r1", 1],
		]);
	});
});

describe("how the form ends", () => {
	it("submitted with every question answered: ok", async () => {
		const { host, result } = formHost([async () => ({ ended: "submitted", answers: [typed(NAME, "Ada")] })]);
		host.serve(request("r1", [NAME]));
		await flush(vi);
		expect(result()).toEqual({ v: PROTOCOL_VERSION, id: "r1", kind: "result", status: "ok", answers: [{ ...typed(NAME, "Ada"), source: "dialog" }] });
	});

	it.each([
		["submitted with a question left open", { ended: "submitted", answers: [typed(NAME, "Ada"), undefined] }, 1],
		["dismissed with every question answered", { ended: "dismissed", answers: [typed(NAME, "Ada"), typed(CITY, "Turin")] }, 2],
		["dismissed with nothing answered", { ended: "dismissed", answers: [] }, 0],
	] as const)("%s: timeout-or-cancelled, saying how many were answered", async (_, outcome, answered) => {
		const { host, result } = formHost([async () => ({ ended: outcome.ended, answers: [...outcome.answers] })]);
		host.serve(request("r1", [NAME, CITY]));
		await flush(vi);
		expect(result()).toMatchObject({ status: "timeout-or-cancelled", note: dismissedNote(2, answered), reason: "dismissed" });
		expect(result()!.answers).toHaveLength(answered);
	});
});

describe("a form that closes near the call's deadline", () => {
	/** Closes by itself `early` ms before the deadline it was given, as a form whose timer fires early would. */
	const closesEarly = (early: number) => async (prompt: RequestPrompt) => {
		await new Promise((resolve) => setTimeout(resolve, prompt.deadline - early - Date.now()));
		return { ended: "dismissed" as const, answers: [] };
	};

	it.each([
		[CLOCK_TOLERANCE_MS, "timeout", TIMEOUT_NOTE],
		[CLOCK_TOLERANCE_MS + 1, "timeout-or-cancelled", dismissedNote(2, 0)],
	])("when the call's budget is what the form gets, closing %i ms before the deadline is %s", async (early, status, note) => {
		const { host, prompts, result } = formHost([closesEarly(early)]);
		// Two open questions at 30 s each: the form's limit is exactly the call's budget.
		host.serve(request("r1", [NAME, CITY], { budgetMs: 60_000, dialogTimeoutMs: 30_000 }));
		await flush(vi);
		expect(prompts[0]!.deadline).toBe(Date.now() + 60_000);
		await vi.advanceTimersByTimeAsync(60_000 - early);
		expect(result()).toMatchObject({ status, note });
	});

	it("when the call has less time than the form's limit, the form is given the call's deadline", async () => {
		const { host, prompts, result } = formHost([closesEarly(CLOCK_TOLERANCE_MS)]);
		host.serve(request("r1", [NAME], { budgetMs: 20_000, dialogTimeoutMs: 60_000 }));
		await flush(vi);
		expect(prompts[0]!.deadline).toBe(Date.now() + 20_000);
		await vi.advanceTimersByTimeAsync(20_000 - CLOCK_TOLERANCE_MS);
		expect(result()).toMatchObject({ status: "timeout", note: TIMEOUT_NOTE });
	});

	it("one that closes at its own limit while the call had longer is timeout-or-cancelled, however close the deadline", async () => {
		const { host, result } = formHost([untilClosed]);
		host.serve(request("r1", [NAME], { budgetMs: 60_001, dialogTimeoutMs: 60_000 }));
		await vi.advanceTimersByTimeAsync(60_000);
		expect(result()).toEqual({
			v: PROTOCOL_VERSION,
			id: "r1",
			kind: "result",
			status: "timeout-or-cancelled",
			answers: [],
			note: timedOutNote(1, 0),
			reason: "dialog-timeout",
		});
	});
});
