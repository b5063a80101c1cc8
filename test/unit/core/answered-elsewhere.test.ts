/**
 * The terminal says when and where a request was answered away from it: a request answered on the
 * page, through one-tap's link or from outside (mail, another extension) gets one info notice at the
 * host, `[asker] answered <where> at HH:MM: <what>`; one answered in the host's own dialog gets none.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { answeredElsewhere } from "../../../extensions/checkpoint-bridge/core/host/arrival-notices.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers({ now: new Date(2026, 11, 6, 9, 12, 30) }));
afterEach(() => vi.useRealTimers());

const told = (fake: ReturnType<typeof relay>["fake"]) => fake.notices.filter((n) => n.message.includes(" answered ")).map((n) => [n.message, n.type]);

describe("a request answered away from the terminal", () => {
	it.each([
		["the page", { source: "web", place: "page" }, "on the page"],
		["one-tap's link", { source: "web", place: "notify-link" }, "through the link the notify command sent"],
		["a mail reply", { source: "outside", place: "mail" }, "by mail"],
		["another extension", { source: "outside" }, "from outside the terminal"],
	])("answered through %s: the terminal says where and when, with what was given", async (_how, from, where) => {
		const { handle, fake, ask } = relay({}, { onSettled: () => {} });
		const call = ask([{ question: "Which store?", options: ["Postgres", "SQLite"] }, { question: "Name?" }], { label: "planner" });
		await flush(vi);
		const requestId = handle.snapshot()!.open[0]!.requestId;
		handle.bus.emit("answer", { requestId, answers: ["SQLite", "atlas"], ...from }, () => {});
		expect((await call).status).toBe("ok");
		expect(told(fake)).toEqual([[`checkpoint-bridge: [planner] answered ${where} at 09:12: SQLite; atlas`, "info"]]);
	});

	it("answered in the host's own dialog, or dismissed there: no such notice", async () => {
		const { fake, ask } = relay({}, { onSettled: () => {} });
		const answered = ask([{ question: "Which store?", options: ["Postgres", "SQLite"] }], { label: "planner" });
		await flush(vi);
		fake.current()!.answer("SQLite");
		expect((await answered).status).toBe("ok");
		const dismissed = ask([{ question: "Name?" }], { label: "reviewer" });
		await flush(vi);
		fake.current()!.answer(undefined);
		await dismissed;
		expect(told(fake)).toEqual([]);
	});
});

describe("answeredElsewhere", () => {
	const at = new Date(2026, 11, 6, 7, 5).getTime();
	const answer = (over: Partial<Answer>): Answer => ({ question: "Q?", answer: "a", kind: "option", ...over });

	it("names only the answers given away from the terminal, several values joined, a long one cut", () => {
		expect(
			answeredElsewhere(
				"planner",
				[answer({ source: "dialog", place: "terminal" }), answer({ answer: "x", values: ["b", "c"], source: "web", place: "page" })],
				at,
			),
		).toBe("checkpoint-bridge: [planner] answered on the page at 07:05: b, c");
		expect(answeredElsewhere("p", [answer({ answer: "y".repeat(120), source: "web", place: "link" })], at)).toBe(
			`checkpoint-bridge: [p] answered through the request's own link at 07:05: ${"y".repeat(79)}…`,
		);
	});

	it("says nothing for answers given here, shared from another asker, or carried from before a restart", () => {
		expect(answeredElsewhere("p", [], at)).toBeUndefined();
		expect(answeredElsewhere("p", [answer({ source: "dialog" }), answer({ place: "rpc" })], at)).toBeUndefined();
		expect(answeredElsewhere("p", [answer({ source: "shared", place: "page", sharedWith: ["q"] }), answer({ source: "carried" })], at)).toBeUndefined();
	});
});
