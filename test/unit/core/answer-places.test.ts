/**
 * Where an answer was given: the host records the place of every answer (the terminal form, RPC
 * dialogs, the page, a request's link, the notify link, outside; for a shared answer, where the
 * answer it shares was given) in what it reports when a request settles, never in the asker's
 * result; traces say it in the words of model/answer-places.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole, type SettledRecord } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { parseOutsideAnswer } from "../../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import { answeredWhere } from "../../../extensions/checkpoint-bridge/model/answer-places.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { formSurface } from "../../../extensions/checkpoint-bridge/surfaces/terminal-form/surface.ts";
import { fakeCustomUI } from "../support/fake-custom-ui.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const SAME: QuestionInput = { question: "Same?", options: ["a", "b"] };

/** A host on its own handle showing through `surface`, its audit records, and askers. */
function hostWith(surface: (notify: (m: string) => void) => Surface) {
	const handle = createHandle();
	const records: SettledRecord[] = [];
	const ui = { notify: () => {} };
	const role = claimHostRole(handle, { ui, surface: surface(ui.notify), sessionId: HOST_SESSION, onSettled: (r) => records.push(r) })!;
	const ask = (questions: QuestionInput[], label: string) => {
		const state: { envelope?: Envelope } = {};
		void askViaHost({ handle, asker: { label, sessionId: `${label}-session` }, questions, budgetMs: 300_000, dialogTimeoutMs: 180_000 }).then(
			(e) => (state.envelope = e),
		);
		return state;
	};
	const where = (label: string) => answeredWhere(records.find((r) => r.asker === label)!.answers);
	return { handle, role, records, ask, where };
}

describe("the place of each answer", () => {
	it("RPC dialogs: recorded as the RPC client's, and a shared answer as given there; the askers' results carry no place", async () => {
		const fake = fakeUI();
		const { ask, records, where } = hostWith(() => dialogSurface(fake.ui, "rpc"));
		const planner = ask([SAME], "planner");
		const reviewer = ask([SAME], "reviewer");
		await flush(vi);
		fake.current()!.answer("b");
		await flush(vi);
		expect(records.map((r) => r.answers.map((a) => a.place))).toEqual([["rpc"], ["rpc"]]);
		expect(where("planner")).toBe("in the RPC client's dialog");
		expect(where("reviewer")).toBe("with planner's answer (given in the RPC client's dialog)");
		for (const call of [planner, reviewer]) expect(call.envelope!.answers.every((a) => !("place" in a))).toBe(true);
	});

	it("the terminal form: recorded as the terminal's", async () => {
		const fake = fakeCustomUI();
		const { ask, where } = hostWith(() => formSurface(fake.ui, { keyGuardMs: 0 }));
		const planner = ask([SAME, { question: "Name?" }], "planner");
		await flush(vi);
		fake.current()!.press("enter", { type: "atlas" }, "enter", "enter");
		await flush(vi);
		expect(planner.envelope).toMatchObject({ status: "ok" });
		expect(where("planner")).toBe("in the terminal");
	});

	it("the web page, a request's link, the notify link and outside: each recorded as named, the first answer's place standing", async () => {
		const fake = fakeUI();
		const { handle, ask, records, where } = hostWith(() => dialogSurface(fake.ui, "rpc"));
		const places = ["page", "link", "notify-link", undefined] as const;
		const askers = places.map((_, i) => ask([{ question: `Q${i}?`, options: ["a", "b"] }], `asker${i}`));
		await flush(vi);
		const open = handle.snapshot()!.open;
		places.forEach((place, i) =>
			handle.bus.emit("answer", { requestId: open[i]!.requestId, answers: ["a"], ...(place ? { source: "web", place } : {}) }, (reply: unknown) =>
				expect(reply).toEqual({ ok: true }),
			),
		);
		await flush(vi);
		expect(askers.every((a) => a.envelope?.status === "ok")).toBe(true);
		expect(records.map((r) => r.answers[0]!.place)).toEqual(["page", "link", "notify-link", "outside"]);
		expect(places.map((_, i) => where(`asker${i}`))).toEqual([
			"on the page",
			"through the request's own link",
			"through the link the notify command sent",
			"from outside the terminal",
		]);
	});

	it("a shared answer given on the page is traced as given on the page, not in the terminal", async () => {
		const fake = fakeCustomUI();
		const { handle, ask, where } = hostWith(() => formSurface(fake.ui, { keyGuardMs: 0 }));
		ask([SAME], "planner");
		const reviewer = ask([SAME], "reviewer");
		await flush(vi);
		handle.bus.emit("answer", { requestId: handle.snapshot()!.open[0]!.requestId, answers: ["b"], source: "web", place: "page" }, () => {});
		await flush(vi);
		expect(reviewer.envelope).toMatchObject({ status: "ok", answers: [{ answer: "b", source: "shared", sharedWith: ["planner"] }] });
		expect(where("planner")).toBe("on the page");
		expect(where("reviewer")).toBe("with planner's answer (given on the page)");
	});

	it("an answer outside names a place only from the web page's places, with source web, or mail, with source outside", () => {
		const problem = 'place must be one of "page", "link", "notify-link" with source "web", "mail" with source "outside", or left out';
		for (const bad of [
			{ requestId: "r", answers: [], source: "web", place: "terminal" },
			{ requestId: "r", answers: [], place: "page" },
			{ requestId: "r", answers: [], source: "web", place: 7 },
			{ requestId: "r", answers: [], source: "web", place: "mail" },
			{ requestId: "r", answers: [], place: "outside" },
		])
			expect(parseOutsideAnswer(bad)).toEqual({ ok: false, reply: { ok: false, code: "invalid_payload", reason: problem } });
		expect(parseOutsideAnswer({ requestId: "r", answers: [], source: "web", place: "link" })).toMatchObject({ ok: true, message: { place: "link" } });
		expect(parseOutsideAnswer({ requestId: "r", answers: [], place: "mail" })).toMatchObject({ ok: true, message: { source: "outside", place: "mail" } });
		// No place given, no place key: the answers it builds name none.
		expect(parseOutsideAnswer({ requestId: "r", answers: [], source: "web" })).toStrictEqual({
			ok: true,
			message: { requestId: "r", answers: [], source: "web" },
		});
		expect(parseOutsideAnswer({ requestId: "r", cancel: true })).toStrictEqual({ ok: true, message: { requestId: "r", cancel: true, source: "outside" } });
	});
});

describe("answeredWhere", () => {
	const answer = (fields: Partial<Answer>): Answer => ({ question: "q", answer: "a", kind: "option", ...fields });
	it("names each place once, the page's first, and a shared answer with whose it was and where that was given", () => {
		expect(answeredWhere([answer({ source: "dialog", place: "terminal" }), answer({ source: "web", place: "page" })])).toBe("on the page and in the terminal");
		expect(answeredWhere([answer({ source: "shared", sharedWith: ["planner"], place: "link" })])).toBe(
			"with planner's answer (given through the request's own link)",
		);
		expect(answeredWhere([answer({ source: "shared", sharedWith: ["planner"] })]), "a place nobody recorded is not made up").toBe("with planner's answer");
		expect(answeredWhere([answer({ source: "web" })]), "a web answer without a place").toBe("in the browser");
		expect(answeredWhere([answer({ source: "web", place: "page" })], { page: "on the page, in this tab" })).toBe("on the page, in this tab");
		expect(answeredWhere([])).toBe("in the terminal");
		expect(answeredWhere([answer({ source: "outside", place: "mail" }), answer({ source: "web", place: "notify-link" })])).toBe(
			"through the link the notify command sent and by mail",
		);
	});

	it("says each place in its own words, in the page's order, an answer that names neither place nor source as the terminal's", () => {
		const places = ["outside", "rpc", "terminal", "mail", "notify-link", "link", "page"] as const;
		expect(answeredWhere(places.map((place) => answer({ source: place === "mail" ? "outside" : "dialog", place })))).toBe(
			"on the page and through the request's own link and through the link the notify command sent and by mail and in the terminal and in the RPC client's dialog and from outside the terminal",
		);
		expect(answeredWhere([answer({}), answer({ source: "web", place: "page" })])).toBe("on the page and in the terminal");
		expect(answeredWhere([answer({ source: "carried" }), answer({ source: "dialog", place: "rpc" })])).toBe(
			"in the RPC client's dialog and carried from before the restart",
		);
		expect(answeredWhere([answer({ source: "shared" })]), "a shared answer whose owner is not named").toBe("with another asker's answer");
	});
});
