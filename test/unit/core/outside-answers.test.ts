import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type OutsideAnswerReply, parseOutsideAnswer, resolveOutsideAnswer } from "../../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import type { SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const batch = [
	{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
	{ id: "targets", question: "Which targets?", options: ["linux", "mac"], multiSelect: true },
	{ id: "name", question: "Project name?" },
	{ id: "go", question: "Ship it?", kind: "confirm" as const },
];

/** Sends an outside answer the way another extension would: on the shared bus, with a reply callback. */
function answerFromOutside(handle: SharedHandle, payload: unknown): OutsideAnswerReply[] {
	const replies: OutsideAnswerReply[] = [];
	handle.bus.emit("answer", payload, (reply) => replies.push(reply));
	return replies;
}

async function openRequest() {
	const setup = relay();
	const settled: Envelope[] = [];
	void setup.ask(batch, { label: "planner" }).then((e) => settled.push(e));
	await flush(vi);
	const requestId = setup.handle.snapshot()!.open[0]!.requestId;
	return { ...setup, settled, requestId };
}

describe("answers from outside the terminal", () => {
	it("applies a whole, valid answer, closes the open dialog and settles the call", async () => {
		const { handle, fake, settled, requestId } = await openRequest();
		const replies = answerFromOutside(handle, { requestId, answers: ["SQLite", ["mac", "bsd"], { answer: "atlas" }, true] });
		await flush(vi);
		expect(replies).toEqual([{ ok: true }]);
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(settled[0]?.status).toBe("ok");
		expect(settled[0]?.answers).toEqual([
			{ id: "db", question: "Which database?", answer: "SQLite", kind: "option", source: "outside" },
			{ id: "targets", question: "Which targets?", answer: "mac, bsd", values: ["mac", "bsd"], kind: "other", source: "outside" },
			{ id: "name", question: "Project name?", answer: "atlas", kind: "text", source: "outside" },
			{ id: "go", question: "Ship it?", answer: "yes", kind: "confirm", source: "outside" },
		]);
	});

	it("keeps answers already given at the keyboard: the first answer wins", async () => {
		const { handle, fake, settled, requestId } = await openRequest();
		fake.current()!.answer("Postgres");
		await flush(vi);
		expect(answerFromOutside(handle, { requestId, answers: ["SQLite", ["linux"], "x", "no"] })).toEqual([{ ok: true }]);
		await flush(vi);
		expect(settled[0]?.answers.map((a) => [a.answer, a.source])).toEqual([
			["Postgres", "dialog"],
			["linux", "outside"],
			["x", "outside"],
			["no", "outside"],
		]);
	});

	it("reports a late answer and never applies it", async () => {
		const { handle, settled, requestId } = await openRequest();
		answerFromOutside(handle, { requestId, answers: ["SQLite", ["mac"], "a", "yes"] });
		await flush(vi);
		expect(answerFromOutside(handle, { requestId, answers: ["Postgres", ["linux"], "b", "no"] })).toEqual([
			{ ok: false, code: "not_found", reason: expect.stringContaining("already settled") },
		]);
		expect(settled).toHaveLength(1);
		expect(settled[0]?.answers[0]?.answer).toBe("SQLite");
	});

	it("refuses values that were not offered, all or nothing, and leaves the dialog open", async () => {
		const { handle, fake, settled, requestId } = await openRequest();
		const [reply] = answerFromOutside(handle, { requestId, answers: ["MySQL", ["linux", "linux"], 3, "maybe"] });
		expect(reply).toMatchObject({ ok: false, code: "invalid_answer" });
		const reason = (reply as { reason: string }).reason;
		expect(reason).toContain('answers[0]: "MySQL" was not offered');
		expect(reason).toContain("answers[1]: repeats a value");
		expect(reason).toContain("answers[2]: must be text");
		expect(reason).toContain("answers[3]: must be yes or no");
		await flush(vi);
		expect(settled).toHaveLength(0);
		expect(fake.current()?.closedBy).toBeUndefined();
	});

	it("refuses a payload of the wrong shape and an unknown request id", async () => {
		const { handle, requestId } = await openRequest();
		expect(answerFromOutside(handle, "yes")[0]).toMatchObject({ ok: false, code: "invalid_payload" });
		expect(answerFromOutside(handle, { requestId })[0]).toMatchObject({ ok: false, code: "invalid_payload" });
		expect(answerFromOutside(handle, { requestId, answers: ["SQLite"] })[0]).toMatchObject({
			ok: false,
			code: "invalid_payload",
			reason: expect.stringContaining("expected 4 answers"),
		});
		expect(answerFromOutside(handle, { requestId, cancel: "please" })[0]).toMatchObject({ ok: false, code: "invalid_payload" });
		expect(answerFromOutside(handle, { requestId: "guess", answers: [] })[0]).toMatchObject({ ok: false, code: "not_found" });
	});

	it('marks the answers with the source the payload names: "web", or "outside" when it names none', async () => {
		const { handle, settled, requestId } = await openRequest();
		expect(answerFromOutside(handle, { requestId, answers: ["SQLite", ["mac"], "atlas", "no"], source: "web" })).toEqual([{ ok: true }]);
		await flush(vi);
		expect(settled[0]?.answers.map((a) => a.source)).toEqual(["web", "web", "web", "web"]);
	});

	it("refuses a source it does not know, all or nothing", async () => {
		const { handle, fake, settled, requestId } = await openRequest();
		for (const source of ["dialog", "shared", "WEB", "", 1, null]) {
			const [reply] = answerFromOutside(handle, { requestId, answers: ["SQLite", ["mac"], "atlas", "no"], source });
			expect(reply, JSON.stringify(source)).toMatchObject({ ok: false, code: "invalid_payload", reason: expect.stringContaining('"outside", "web"') });
		}
		await flush(vi);
		expect(settled).toHaveLength(0);
		expect(fake.current()?.closedBy).toBeUndefined();
	});

	it("cancels from outside: the dialog closes and the call ends timeout-or-cancelled", async () => {
		const { handle, fake, settled, requestId } = await openRequest();
		expect(answerFromOutside(handle, { requestId, cancel: true })).toEqual([{ ok: true }]);
		await flush(vi);
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(settled[0]).toMatchObject({ status: "timeout-or-cancelled", note: expect.stringContaining("cancelled from outside") });
	});
});

describe("notes on outside answers", () => {
	it(`carries a note of up to ${2_000} characters on the answer, trimmed`, async () => {
		const { handle, settled, requestId } = await openRequest();
		const note = ` ${"n".repeat(1_998)} `;
		expect(
			answerFromOutside(handle, {
				requestId,
				answers: [{ answer: "SQLite", note }, { values: ["mac"], note: "only mac" }, "atlas", { answer: "yes", note: "   " }],
			}),
		).toEqual([{ ok: true }]);
		await flush(vi);
		expect(settled[0]?.answers.map((a) => a.note)).toEqual(["n".repeat(1_998), "only mac", undefined, undefined]);
	});

	it("refuses a note that is too long or not text, and applies nothing", async () => {
		const { handle, settled, requestId } = await openRequest();
		expect(
			answerFromOutside(handle, { requestId, answers: [{ answer: "SQLite", note: "n".repeat(2_001) }, { values: ["mac"], note: 5 }, "atlas", true] }),
		).toEqual([{ ok: false, code: "invalid_answer", reason: "answers[0]: note must be text of at most 2000 characters; answers[1]: note must be text" }]);
		await flush(vi);
		expect(settled).toEqual([]);
	});
});

describe("the answer check on its own (parseOutsideAnswer, resolveOutsideAnswer)", () => {
	const checked = validateAskParams({
		questions: [
			{ question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
			{ question: "Which targets?", options: ["linux", "mac", "win"], multiSelect: true, allowOther: true },
			{ question: "Project name?" },
			{ question: "Ship it?", kind: "confirm" },
			{ question: "Which editor?", options: ["vim", "emacs"] },
		],
	});
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	const questions = checked.questions;
	const resolve = (values: unknown[]) => resolveOutsideAnswer(questions, values as never);

	it("refuses a payload of the wrong shape, naming what is wrong", () => {
		const refusals: [unknown, string][] = [
			[null, "the payload must be an object"],
			["text", "the payload must be an object"],
			[[{ requestId: "r" }], "the payload must be an object"],
			[{ answers: [] }, "requestId must be a non-empty string"],
			[{ requestId: "", answers: [] }, "requestId must be a non-empty string"],
			[{ requestId: 7, answers: [] }, "requestId must be a non-empty string"],
			[{ requestId: "r", cancel: false }, "a cancel is { requestId, cancel: true } and nothing else"],
			[{ requestId: "r", cancel: true, answers: [] }, "a cancel is { requestId, cancel: true } and nothing else"],
			[{ requestId: "r" }, "answers must be an array with one answer per question, in question order"],
			[{ requestId: "r", answers: "yes" }, "answers must be an array with one answer per question, in question order"],
		];
		for (const [raw, reason] of refusals)
			expect(parseOutsideAnswer(raw), JSON.stringify(raw)).toEqual({ ok: false, reply: { ok: false, code: "invalid_payload", reason } });
		expect(parseOutsideAnswer({ requestId: "r", cancel: true })).toMatchObject({ ok: true, message: { requestId: "r", cancel: true } });
		expect(parseOutsideAnswer({ requestId: "r", answers: ["a"] })).toMatchObject({ ok: true, message: { requestId: "r", answers: ["a"] } });
	});

	it("resolves every kind of answer, marked as from outside", () => {
		const result = resolve(["SQLite", ["win", "linux", " riscv "], { answer: "atlas" }, "Y", { answer: "vim" }]);
		expect(result).toEqual({
			ok: true,
			answers: [
				{ question: "Which database?", answer: "SQLite", kind: "option", source: "outside" },
				{ question: "Which targets?", answer: "linux, win,  riscv ", kind: "other", values: ["linux", "win", " riscv "], source: "outside" },
				{ question: "Project name?", answer: "atlas", kind: "text", source: "outside" },
				{ question: "Ship it?", answer: "yes", kind: "confirm", source: "outside" },
				{ question: "Which editor?", answer: "vim", kind: "option", source: "outside" },
			],
		});
		const values = (answer: unknown) =>
			(resolve(["Postgres", { values: ["mac"] }, "x", answer, "emacs"]) as { answers: { answer: string; kind: string }[] }).answers;
		expect(values({ values: ["mac"] })).toBeUndefined();
		for (const yes of [true, "yes", "y", "TRUE", { answer: true }, { answer: "Yes" }]) expect(values(yes)?.[3]?.answer, JSON.stringify(yes)).toBe("yes");
		for (const no of [false, "no", "N", "false", { answer: false }]) expect(values(no)?.[3]?.answer, JSON.stringify(no)).toBe("no");
		expect(values("no")?.[1]).toMatchObject({ answer: "mac", kind: "option" });
	});

	it("takes recommended: true only on the question's recommended option, and says so on the answer", () => {
		const one = (recommended?: string) => {
			const checked = validateAskParams({
				questions: [{ question: "Which database?", options: ["Postgres", "SQLite"], ...(recommended ? { recommended } : {}) }],
			});
			if (!checked.ok) throw new Error(checked.problems.join("; "));
			return checked.questions[0]!;
		};
		const q = one("SQLite");
		const plain = one();
		expect(resolveOutsideAnswer([q], [{ answer: "SQLite", recommended: true }], "web")).toEqual({
			ok: true,
			answers: [{ question: "Which database?", answer: "SQLite", kind: "option", recommended: true, source: "web" }],
		});
		expect(resolveOutsideAnswer([q], [{ answer: "SQLite", recommended: false }], "web")).toMatchObject({ ok: true, answers: [{ answer: "SQLite" }] });
		expect((resolveOutsideAnswer([q], [{ answer: "SQLite", recommended: false }], "web") as { answers: object[] }).answers[0]).not.toHaveProperty(
			"recommended",
		);
		for (const [question, value] of [
			[q, { answer: "Postgres", recommended: true }],
			[plain, { answer: "SQLite", recommended: true }],
			[q, { answer: "SQLite", recommended: "yes" }],
		] as const)
			expect(resolveOutsideAnswer([question], [value as never]).ok, JSON.stringify(value)).toBe(false);
	});

	it("takes a typed answer to a choice that allows it, trimmed, as other", () => {
		const result = resolve(["Postgres", ["mac"], "x", "no", "  helix  "]);
		expect(result.ok && result.answers[4]).toEqual({ question: "Which editor?", answer: "helix", kind: "other", source: "outside" });
	});

	it("refuses the wrong count, and names every bad answer at once, applying none", () => {
		expect(resolve(["Postgres"])).toEqual({ ok: false, reply: { ok: false, code: "invalid_payload", reason: "expected 5 answers, one per question, got 1" } });
		const result = resolve(["MySQL", ["mac", "mac"], 42, "maybe", ["vim"]]);
		expect(result).toEqual({
			ok: false,
			reply: {
				ok: false,
				code: "invalid_answer",
				reason: [
					'answers[0]: "MySQL" was not offered',
					"answers[1]: repeats a value",
					"answers[2]: must be text",
					"answers[3]: must be yes or no",
					"answers[4]: must be one option's label",
				].join("; "),
			},
		});
		const more = resolve([{ answer: 1 }, [], "x", "yes", "   "]);
		expect(more.ok ? [] : more.reply).toMatchObject({
			reason: ["answers[0]: must be one option's label", "answers[1]: must be a non-empty array of option labels", 'answers[4]: "" was not offered'].join("; "),
		});
		const bad = resolve(["Postgres", ["mac", 3], "x", "yes", "vim"]);
		expect(bad.ok ? "" : (bad.reply as { reason: string }).reason).toBe("answers[1]: must be a non-empty array of option labels");
		const notOffered = resolve(["Postgres", ["mac", " "], "x", "yes", "vim"]);
		expect(notOffered.ok ? "" : (notOffered.reply as { reason: string }).reason).toBe('answers[1]: " " was not offered');
	});

	it("refuses null, a non-array values and non-string values by their shape, without throwing", () => {
		const nulls = resolve([null, null, null, null, null]);
		expect(nulls.ok ? "" : (nulls.reply as { reason: string }).reason).toBe(
			[
				"answers[0]: must be one option's label",
				"answers[1]: must be a non-empty array of option labels",
				"answers[2]: must be text",
				"answers[3]: must be yes or no",
				"answers[4]: must be one option's label",
			].join("; "),
		);
		// A values that is not an array, and non-strings repeated: the shape is named, not a repeat.
		for (const targets of [{ values: "mac" }, { values: 5 }, ["mac", 3, 3]]) {
			const result = resolve(["Postgres", targets, "x", "yes", "vim"]);
			expect(result.ok ? "" : (result.reply as { reason: string }).reason, JSON.stringify(targets)).toBe(
				"answers[1]: must be a non-empty array of option labels",
			);
		}
	});

	it("takes only a whole yes or no word for a confirm", () => {
		for (const word of ["yesterday", "nay", "seven"]) {
			const result = resolve(["Postgres", ["mac"], "x", word, "vim"]);
			expect(result.ok ? "" : (result.reply as { reason: string }).reason, word).toBe("answers[3]: must be yes or no");
		}
	});
});
