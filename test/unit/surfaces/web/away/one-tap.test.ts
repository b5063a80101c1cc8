/**
 * One-tap answers on a real page: each button's URL answers its request with its option once, by
 * POST as ntfy sends it (no Origin, no body); a GET only shows a confirmation page; every refusal
 * says why and changes nothing; random input never crashes the page, changes a request or gets a 5xx.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { claimHostRole } from "../../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { dialogSurface } from "../../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { ntfyActionList } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/notify-life.ts";
import { fakeUI } from "../../../support/fake-ui.ts";
import { raw, trackedPages } from "../support.ts";

const pages = trackedPages();
afterEach(() => pages.closeAll());

/** A POST exactly as ntfy's `http` action sends it by default: no body, no Origin, no Content-Type. */
const ntfyPost = (page: Parameters<typeof raw>[0], url: string) =>
	raw(page, { method: "POST", path: new URL(url).pathname, headers: { "user-agent": "ntfy/1.22" } });

describe("one-tap answers", () => {
	it("each option of a single question gets its own URL under the page's origin; a POST as ntfy sends it answers once, and the request's other URLs die", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask([{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }], { label: "planner" });
		const actions = s.page.actionsFor(requestId)!;
		expect(actions.link).toBe(`${s.page.linkFor(requestId)}?via=notify`);
		expect(actions.buttons.map((b) => b.label)).toEqual(["SQLite", "Postgres"]);
		expect(actions.questions[0]!.options).toEqual([
			{ label: "SQLite", recommended: true, answer: actions.buttons[0]!.answer },
			{ label: "Postgres", answer: actions.buttons[1]!.answer },
		]);
		for (const b of actions.buttons) expect(b.answer).toMatch(new RegExp(`^${s.page.origin}/a/[A-Za-z0-9_-]{43}$`));
		// The same URLs every time it is asked (the reminder, a mail).
		expect(s.page.actionsFor(requestId)).toEqual(actions);
		const answered = await ntfyPost(s.page, actions.buttons[1]!.answer);
		expect(answered).toMatchObject({ status: 200, body: "answered: Postgres\n" });
		const envelope = await call;
		expect(envelope.status).toBe("ok");
		expect(envelope.answers).toEqual([expect.objectContaining({ answer: "Postgres", source: "web" })]);
		// Used, and ended: each says so, and nothing changes.
		expect(await ntfyPost(s.page, actions.buttons[1]!.answer)).toMatchObject({
			status: 410,
			body: expect.stringMatching(/^this request has ended: answered through the link the notify command sent/),
		});
		expect(await ntfyPost(s.page, actions.buttons[0]!.answer)).toMatchObject({ status: 410, body: expect.stringContaining("this request has ended") });
		expect((await raw(s.page, { path: new URL(actions.buttons[0]!.answer).pathname })).status).toBe(410);
		expect(s.page.actionsFor(requestId)).toBeUndefined();
	});

	it("a GET only shows a one-button confirmation page; the request stays open", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask([{ question: "Ship <it>?", kind: "confirm" }], { label: "reviewer" });
		const [yes, no] = s.page.actionsFor(requestId)!.buttons;
		expect([yes!.label, no!.label]).toEqual(["Yes", "No"]);
		for (const method of ["GET", "HEAD", "GET"]) {
			const shown = await raw(s.page, { method, path: new URL(yes!.answer).pathname });
			expect(shown.status).toBe(200);
			expect(shown.headers["content-security-policy"]).toContain("form-action 'self'");
			if (method === "GET")
				expect(shown.body).toContain('<h1 id="question">Ship &lt;it&gt;?</h1><form method="post"><button type="submit" id="confirm">Answer: Yes</button>');
		}
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
		// The confirmation page's button, as Chromium sends it under no-referrer: Origin null, same-origin; answered with a page.
		const posted = await raw(s.page, {
			method: "POST",
			path: new URL(no!.answer).pathname,
			headers: { origin: "null", "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
			body: "",
		});
		expect(posted.status).toBe(200);
		expect(posted.body).toContain('<p id="result">answered: No</p>');
		expect((await call).answers[0]).toMatchObject({ answer: "no", kind: "confirm" });
	});

	it("several questions: one button accepts every recommendation, the only one on ntfy's notification; free text and multi-selects get none, only the request's link", async () => {
		const s = await pages.setup();
		const both = await s.ask(
			[
				{ question: "Database?", options: ["Postgres", "SQLite"], recommended: "SQLite" },
				{ question: "Cache?", options: ["none", "redis"], recommended: "none" },
			],
			{ label: "planner" },
		);
		const actions = s.page.actionsFor(both.requestId)!;
		expect(actions.buttons.map((b) => b.label)).toEqual(["Accept the recommendations"]);
		// Each option of each question has a URL of its own, which only records that question's choice (see choices.test.ts); not a notification button.
		expect(actions.questions.map((q) => q.buttons!.map((b) => b.label))).toEqual([
			["SQLite", "Postgres"],
			["none", "redis"],
		]);
		expect(actions.questions.flatMap((q) => q.options!.map((o) => o.answer))).toEqual(actions.questions.flatMap((q) => q.buttons!.map((b) => b.answer)));
		expect(ntfyActionList(actions).map((a) => [a.label, a.url])).toEqual([
			["Accept the recommendations", actions.buttons[0]!.answer],
			["Decline", actions.decline.answer],
		]);
		expect((await ntfyPost(s.page, actions.buttons[0]!.answer)).status).toBe(200);
		expect((await both.call).answers.map((a) => a.answer)).toEqual(["SQLite", "none"]);
		const text = await s.ask([{ question: "Name?" }], { label: "planner" });
		const multi = await s.ask([{ question: "Targets?", options: ["linux", "mac"], multiSelect: true }], { label: "planner" });
		for (const { requestId } of [text, multi]) {
			const none = s.page.actionsFor(requestId)!;
			expect(none.buttons).toEqual([]);
			expect(ntfyActionList(none).map((a) => a.label)).toEqual(["Decline"]);
		}
	});

	it("refuses, each with its reason and nothing applied: an unknown link, another method, a foreign origin or site, a body, a wrong Host, a link used or ended", async () => {
		const s = await pages.setup();
		const { requestId } = await s.ask([{ question: "Which?", options: ["a", "b", "c"] }], { label: "planner" });
		const [a] = s.page.actionsFor(requestId)!.buttons;
		const path = new URL(a!.answer).pathname;
		const cases: [string, Parameters<typeof raw>[1], number, string][] = [
			["unknown", { method: "POST", path: "/a/unknownsecretunknownsecretunknownsecret123" }, 404, "no request has this one-tap link"],
			["unknown GET", { path: "/a/x" }, 404, "no request has this one-tap link"],
			["PUT", { method: "PUT", path }, 405, "a one-tap link is opened with GET and answers with POST"],
			["foreign origin", { method: "POST", path, headers: { origin: "https://evil.example" } }, 403, 'answers from "https://evil.example" are refused'],
			["cross-site", { method: "POST", path, headers: { "sec-fetch-site": "cross-site" } }, 403, "answers from another site"],
			["null origin", { method: "POST", path, headers: { origin: "null" } }, 403, 'answers from "null" are refused'],
			["body", { method: "POST", path, body: "x".repeat(5_000) }, 413, "a one-tap answer carries no body"],
			["host", { method: "POST", path, headers: { host: "evil.example" } }, 403, "does not name this server"],
			["slash", { method: "POST", path: `${path}/` }, 404, "not found"],
		];
		for (const [what, request, status, reason] of cases) {
			const got = await raw(s.page, request);
			expect([what, got.status, got.body]).toEqual([what, status, expect.stringContaining(reason)]);
		}
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
		expect(s.fake.current()?.closedBy).toBeUndefined();
	});

	it("no host for a moment (one being replaced): 409, nothing applied, and the URL still answers once the next host took the request", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask([{ question: "Which?", options: ["a", "b"] }], { label: "planner" });
		const [a] = s.page.actionsFor(requestId)!.buttons;
		s.role.release("reload", "replaced");
		const refused = await ntfyPost(s.page, a!.answer);
		expect(refused).toMatchObject({ status: 409, body: "no session holds the host role right now; nothing was applied, try again in a moment\n" });
		const fake = fakeUI();
		const next = claimHostRole(s.handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "next-host" })!;
		try {
			expect(await ntfyPost(s.page, a!.answer)).toMatchObject({ status: 200, body: "answered: a\n" });
			expect((await call).answers[0]).toMatchObject({ answer: "a", source: "web" });
		} finally {
			next.release("quit", "test over");
		}
	});

	it("under the public origin when one is set", async () => {
		const s = await pages.setup({ publicUrl: "https://box.tailnet.example" });
		const { requestId } = await s.ask([{ question: "Which?", options: ["a", "b"] }], { label: "planner" });
		const actions = s.page.actionsFor(requestId)!;
		expect(actions.link.startsWith("https://box.tailnet.example/r/")).toBe(true);
		for (const b of actions.buttons) expect(b.answer).toMatch(/^https:\/\/box\.tailnet\.example\/a\//);
		// Through the proxy: its Host, no Origin.
		expect((await raw(s.page, { method: "POST", path: new URL(actions.buttons[0]!.answer).pathname, headers: { host: "box.tailnet.example" } })).status).toBe(
			200,
		);
	});

	it("random input: never a 5xx, never a changed request", async () => {
		const s = await pages.setup();
		// Closed choices: no random bytes can be a valid answer, and the one-tap URLs are never posted to with a valid secret.
		const { requestId } = await s.ask([{ question: "Which?", options: ["a", "b"], allowOther: false }], { label: "planner" });
		const [a] = s.page.actionsFor(requestId)!.buttons;
		const secret = new URL(a!.answer).pathname.slice(3);
		const printable = fc.string({ unit: fc.constantFrom(..." !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~") });
		const pathChars = fc.string({ unit: fc.constantFrom(..."abcXYZ019-_./%?=&"), maxLength: 50 });
		await fc.assert(
			fc.asyncProperty(
				fc.oneof(
					pathChars.map((p) => `/a/${p}`),
					pathChars.map((p) => `/a/${secret}/${p}`),
					fc.constantFrom(`/a/${secret.slice(1)}`, `/a/${secret}x`, "/a/", "/a"),
				),
				fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"),
				fc.record({ origin: printable, "content-type": printable, "sec-fetch-site": printable }, { requiredKeys: [] }),
				fc.oneof(fc.constant(undefined), printable, fc.json()),
				async (path, method, headers, body) => {
					const got = await raw(s.page, { method, path, headers, ...(body === undefined ? {} : { body }) });
					expect(got.status).toBeLessThan(500);
				},
			),
			{ numRuns: 150 },
		);
		// The real URL with a foreign origin among them: still open, still one dialog.
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
		expect(s.fake.current()?.closedBy).toBeUndefined();
		expect(s.settled).toEqual([]);
	});
});
