/**
 * One-tap URLs and request links with a store open (ADR-0033, "Secrets that survive"): derived from
 * the store's seed, so a second OneTap or Board over the same store (a host started again) makes the
 * same ones and takes a URL the first made, once; without a store, or with another store, they differ.
 */
import { describe, expect, it } from "vitest";
import type { Question } from "../../../../../extensions/checkpoint-bridge/model/question.ts";
import { OneTap } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/one-tap.ts";
import { memoryStores } from "../../../support/memory-store.ts";

const memoryStore = memoryStores();

const card = (requestId: string) => ({
	requestId,
	asker: "planner",
	questions: [
		{ question: "Which database?", kind: "choice", options: [{ label: "Postgres" }, { label: "SQLite" }], recommended: "SQLite" },
		{ question: "Ship it?", kind: "confirm" },
	] as unknown as Question[],
});
const ORIGIN = "http://127.0.0.1:1";
const urls = (tap: OneTap, requestId: string) => {
	const actions = tap.actionsFor(card(requestId), ORIGIN, `${ORIGIN}/r/x/`);
	return [...actions.buttons, ...actions.questions.flatMap((q) => q.buttons ?? []), actions.decline].map((b) => b.answer);
};
const secretOf = (url: string) => url.slice(`${ORIGIN}/a/`.length);

describe("one-tap URLs that outlive the process", () => {
	it("two OneTaps over one store make the same URLs for a request, each distinct; the second takes a URL the first made, once, and every URL dies with the request", () => {
		const store = memoryStore();
		const lasting = (purpose: string, id: string) => store.secretFor(purpose, id);
		const before = urls(new OneTap(lasting), "req-1");
		expect(new Set(before).size).toBe(before.length);
		for (const url of before) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:1\/a\/[A-Za-z0-9_-]{43}$/);
		const after = new OneTap(lasting);
		// Prepared before anything is sent again: a tap that arrives first is found.
		after.prepare(card("req-1"));
		expect(after.lookup(secretOf(before[0]!))).toMatchObject({
			open: { requestId: "req-1", label: "SQLite", part: { index: 0, value: { answer: "SQLite", recommended: true } } },
		});
		expect(urls(after, "req-1")).toEqual(before);
		expect(after.take(secretOf(before[1]!))).toMatchObject({ requestId: "req-1", label: "Postgres", part: { index: 0, value: "Postgres" } });
		expect(after.take(secretOf(before[1]!))).toBeUndefined();
		expect(after.lookup(secretOf(before[1]!))).toEqual({ dead: "this link was used already (Postgres)" });
		after.end("req-1", "answered by tap");
		for (const url of before.slice(2)) expect(after.lookup(secretOf(url))).toEqual({ dead: "this request has ended: answered by tap" });
		// Another request of the same store gets URLs of its own.
		expect(urls(after, "req-2").some((url) => before.includes(url))).toBe(false);
	});

	it("without a store each OneTap draws fresh URLs; another store's seed makes other ones", () => {
		expect(urls(new OneTap(), "req-1")).not.toEqual(urls(new OneTap(), "req-1"));
		const a = memoryStore();
		const b = memoryStore();
		const fromA = urls(new OneTap((p, id) => a.secretFor(p, id)), "req-1");
		const fromB = urls(new OneTap((p, id) => b.secretFor(p, id)), "req-1");
		expect(fromA.some((url) => fromB.includes(url))).toBe(false);
		// A URL of another store is unknown here.
		expect(new OneTap((p, id) => a.secretFor(p, id)).lookup(secretOf(fromB[0]!))).toBeUndefined();
	});
});
