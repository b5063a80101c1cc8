/**
 * A request of several questions, answered one tap per question: each option of each confirm or
 * choice has its own URL, a tap records that question's choice in the away layer, and only the tap
 * that leaves no question without a choice answers the request, whole, through the outside-answer
 * API. Refusals say why and change nothing; random taps never answer early, never get a 5xx.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { OutsideAnswerReply } from "../../../../../extensions/checkpoint-bridge/core/shared/outside-answers.ts";
import type { Question } from "../../../../../extensions/checkpoint-bridge/model/question.ts";
import { ntfyActionList } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/notify-life.ts";
import { OneTap } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/one-tap.ts";
import { tapRoute } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/tap-route.ts";
import { linkPathOf, postAnswer, raw, trackedPages } from "../support.ts";

const pages = trackedPages();
const servers: http.Server[] = [];
afterEach(async () => {
	await pages.closeAll();
	for (const server of servers.splice(0)) server.close();
});

/** A POST exactly as ntfy's `http` action sends it: no body, no Origin, no Content-Type. */
const ntfyPost = (page: Parameters<typeof raw>[0], url: string) =>
	raw(page, { method: "POST", path: new URL(url).pathname, headers: { "user-agent": "ntfy/1.22" } });

/** The route alone, on a loopback server, with a host the test plays (`reply` decides each answer). */
async function routeAlone(questions: Question[], reply: (payload: any) => Promise<OutsideAnswerReply | "no-host" | "no-reply">) {
	const oneTap = new OneTap();
	const asked: any[] = [];
	const server = http.createServer((req, res) =>
		tapRoute({ oneTap, origins: new Set(), askHost: (payload) => (asked.push(payload), reply(payload)) }, req, res, (req.url ?? "").slice(3)),
	);
	servers.push(server);
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const address = { host: "127.0.0.1", port: (server.address() as AddressInfo).port, loopback: true };
	const actions = oneTap.actionsFor(
		{ requestId: "req-1", asker: "planner", questions },
		`http://127.0.0.1:${address.port}`,
		"http://127.0.0.1/r/x/?via=notify",
	);
	return { oneTap, asked, page: { address }, actions };
}

const twoChoices: Question[] = [
	{ question: "Database?", kind: "choice", options: [{ label: "Postgres" }, { label: "SQLite" }] },
	{ question: "Cache?", kind: "choice", options: [{ label: "none" }, { label: "redis" }] },
];

describe("one tap per question, several questions", () => {
	it("each option of each confirm or choice gets its own URL; a POST records that question's choice (202, what still waits), another option replaces it, and the tap that leaves no question without a choice answers the whole request at once", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask(
			[
				{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite", allowOther: false },
				{ question: "Deploy now?", kind: "confirm" },
			],
			{ label: "planner" },
		);
		const actions = s.page.actionsFor(requestId)!;
		// No whole-request button (the confirm has no recommendation): ntfy's notification shows only "Decline" (its click opens the link).
		expect(actions.buttons).toEqual([]);
		expect(ntfyActionList(actions).map((a) => [a.label, a.url])).toEqual([["Decline", actions.decline.answer]]);
		const [db, deploy] = actions.questions.map((q) => q.buttons!);
		expect(db!.map((b) => b.label)).toEqual(["SQLite", "Postgres"]);
		expect(deploy!.map((b) => b.label)).toEqual(["Yes", "No"]);
		expect(actions.questions[0]!.options!.map((o) => o.answer)).toEqual(db!.map((b) => b.answer));
		for (const b of [...db!, ...deploy!]) expect(b.answer).toMatch(new RegExp(`^${s.page.origin}/a/[A-Za-z0-9_-]{43}$`));

		const first = await ntfyPost(s.page, db![0]!.answer);
		expect(first).toMatchObject({
			status: 202,
			body: 'recorded: SQLite for "Which database?"; nothing is answered until each question has a choice\nstill waiting: "Deploy now?"\n',
		});
		const replaced = await ntfyPost(s.page, db![1]!.answer);
		expect(replaced).toMatchObject({ status: 202, body: expect.stringContaining('recorded: Postgres for "Which database?" (instead of "SQLite")') });
		// A used URL stays used; nothing answered so far.
		expect(await ntfyPost(s.page, db![0]!.answer)).toMatchObject({ status: 410, body: expect.stringContaining("this link was used already (SQLite)") });
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
		expect(s.fake.current()?.closedBy).toBeUndefined();
		expect(s.settled).toEqual([]);

		expect(await ntfyPost(s.page, deploy![1]!.answer)).toMatchObject({ status: 200, body: "answered: Postgres / No\n" });
		expect((await call).answers).toEqual([
			expect.objectContaining({ question: "Which database?", answer: "Postgres", source: "web" }),
			expect.objectContaining({ question: "Deploy now?", answer: "no", kind: "confirm", source: "web" }),
		]);
		// Every URL of the request is dead now, saying how it ended.
		expect(await ntfyPost(s.page, deploy![0]!.answer)).toMatchObject({ status: 410, body: expect.stringContaining("this request has ended") });
	});

	it("free text among them: the response names what still waits and gives the request's link; a GET only confirms, its button's page says what was recorded; the request answered elsewhere drops the choices and kills the URLs", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask(
			[
				{ question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
				{ question: "Name it?", kind: "text" },
			],
			{ label: "planner" },
		);
		const actions = s.page.actionsFor(requestId)!;
		expect(actions.questions[1]!.buttons).toBeUndefined();
		const [postgres] = actions.questions[0]!.buttons!;
		const path = new URL(postgres!.answer).pathname;
		const shown = await raw(s.page, { path });
		expect(shown.status).toBe(200);
		expect(shown.body).toContain('<h1 id="question">Which database?</h1>');
		expect(shown.body).toContain('id="part"');
		// The confirmation page's button, as Chromium sends it: a page back.
		const posted = await raw(s.page, {
			method: "POST",
			path,
			headers: { origin: "null", "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
			body: "",
		});
		expect(posted.status).toBe(202);
		expect(posted.body).toContain('<p id="result">recorded: Postgres for &quot;Which database?&quot;');
		expect(posted.body).toContain('<ul id="waiting"><li>&quot;Name it?&quot; (free text: on the request&#39;s link)</li></ul>');
		expect(posted.body).toContain(`<a id="link" href="${actions.link}">`);
		expect(s.settled).toEqual([]);
		// Answered on the request's link: the whole request, as the page sends it.
		const link = linkPathOf(s.page, requestId);
		const answered = await postAnswer(s.page, `${link}answer`, { answers: ["SQLite", "db-one"] });
		expect(answered.status).toBe(200);
		expect((await call).answers.map((a) => a.answer)).toEqual(["SQLite", "db-one"]);
		expect(await ntfyPost(s.page, actions.questions[0]!.buttons![1]!.answer)).toMatchObject({
			status: 410,
			body: expect.stringContaining("this request has ended"),
		});
	});

	it("refuses, each with its reason and nothing left recorded: no host (409, the URL answers later), a tap while the set is being applied (409), a set the host refuses (422, the choice taken back), a request ended meanwhile", async () => {
		let hostReply: (payload: any) => Promise<OutsideAnswerReply | "no-host" | "no-reply"> = async () => "no-host";
		const r = await routeAlone(twoChoices, (payload) => hostReply(payload));
		const [db, cache] = r.actions.questions.map((q) => q.buttons!);
		expect(await ntfyPost(r.page, db![0]!.answer)).toMatchObject({ status: 202 });
		// The last choice, no host: nothing applied, the URL answers again, the choice was not kept.
		expect(await ntfyPost(r.page, cache![0]!.answer)).toMatchObject({
			status: 409,
			body: expect.stringContaining("no session holds the host role right now; nothing was applied"),
		});
		expect(r.asked).toHaveLength(1);
		// The host refuses the set: 422, and the question waits again.
		hostReply = async () => ({ ok: false, code: "invalid_answer", reason: "not an option" }) as OutsideAnswerReply;
		expect(await ntfyPost(r.page, cache![0]!.answer)).toMatchObject({ status: 422, body: expect.stringContaining("not applied: not an option") });
		expect(r.asked.map((p) => p.answers)).toEqual([
			["Postgres", "none"],
			["Postgres", "none"],
		]);
		// While a set is with the host, a further tap is refused and can be made again.
		let release!: (reply: OutsideAnswerReply) => void;
		hostReply = () => new Promise((resolve) => (release = resolve));
		const completing = ntfyPost(r.page, cache![1]!.answer);
		for (let i = 0; i < 100 && r.asked.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 5));
		expect(r.asked).toHaveLength(3);
		expect(await ntfyPost(r.page, db![1]!.answer)).toMatchObject({
			status: 409,
			body: expect.stringContaining("being applied right now; nothing was recorded"),
		});
		release({ ok: false, code: "invalid_answer", reason: "changed meanwhile" } as OutsideAnswerReply);
		expect(await completing).toMatchObject({ status: 422 });
		// Taken back: the cache question waits again, and the database one can be changed.
		expect(await ntfyPost(r.page, db![1]!.answer)).toMatchObject({
			status: 202,
			body: expect.stringContaining('(instead of "Postgres")'),
		});
		// The request ends: every URL dies, the recorded choice with it.
		r.oneTap.end("req-1", "withdrawn by the asker");
		expect(await ntfyPost(r.page, cache![0]!.answer)).toMatchObject({
			status: 410,
			body: expect.stringContaining("this request has ended: withdrawn by the asker"),
		});
		expect(r.asked).toHaveLength(3);
	});

	it("the away layer keeps choices only while the request is open: ended, they are gone, and a URL given back finds nothing to record into", () => {
		const oneTap = new OneTap();
		const actions = oneTap.actionsFor({ requestId: "req-1", asker: "planner", questions: twoChoices }, "http://h", "http://h/r/x/");
		const secrets = actions.questions.flatMap((q) => q.buttons!.map((b) => new URL(b.answer).pathname.slice(3)));
		const entry = oneTap.take(secrets[0]!)!;
		expect(oneTap.choose(entry)).toMatchObject({ kind: "recorded", unanswered: [{ question: "Cache?", tappable: true }] });
		// Two choices of the confirm, the rest of the choice's, and the request's Decline.
		expect(oneTap.size).toBe(4);
		oneTap.end("req-1", "answered in the terminal");
		expect(oneTap.size).toBe(0);
		expect(oneTap.choose(entry)).toEqual({ kind: "ended" });
		oneTap.giveBack(secrets[0]!, entry);
		expect(oneTap.lookup(secrets[0]!)).toEqual({ dead: "this request has ended: answered in the terminal" });
	});

	it("random taps and input: never a 5xx, never a changed request, never an answer before every question has a choice, and the answer is the last choice of each", async () => {
		const s = await pages.setup();
		const printable = fc.string({ unit: fc.constantFrom(..." !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~"), maxLength: 20 });
		const tapOrJunk = fc.oneof(
			fc.record({ question: fc.nat(2), option: fc.nat(1), origin: fc.constantFrom(undefined, "https://evil.example") }),
			fc.record({ method: fc.constantFrom("GET", "HEAD", "PUT", "DELETE"), question: fc.nat(2), option: fc.nat(1) }),
			fc.record({ junk: printable }),
		);
		await fc.assert(
			fc.asyncProperty(fc.array(tapOrJunk, { maxLength: 12 }), async (taps) => {
				const { requestId, call } = await s.ask(
					[
						{ question: "A?", options: ["a1", "a2"], allowOther: false },
						{ question: "B?", kind: "confirm" },
						{ question: "C?", options: ["c1", "c2"], allowOther: false },
					],
					{ label: "planner" },
				);
				const buttons = s.page.actionsFor(requestId)!.questions.map((q) => q.buttons!);
				const chosen = new Map<number, string>();
				const used = new Set<string>();
				let answered = false;
				const post = async (question: number, option: number) => {
					const url = buttons[question]![option]!.answer;
					const got = await ntfyPost(s.page, url);
					expect(got.status).toBeLessThan(500);
					if (answered || used.has(url)) return expect(got.status).toBe(410);
					used.add(url);
					chosen.set(question, buttons[question]![option]!.label);
					answered = chosen.size === 3;
					expect(got.status).toBe(answered ? 200 : 202);
				};
				for (const tap of taps) {
					if ("junk" in tap) {
						const got = await raw(s.page, { method: "POST", path: `/a/${tap.junk.replace(/[^A-Za-z0-9_-]/g, "")}x` });
						expect(got.status).toBe(404);
					} else if ("method" in tap) {
						const got = await raw(s.page, { method: tap.method, path: new URL(buttons[tap.question]![tap.option]!.answer).pathname });
						expect(got.status).toBeLessThan(500);
					} else if (tap.origin) {
						const got = await raw(s.page, {
							method: "POST",
							path: new URL(buttons[tap.question]![tap.option]!.answer).pathname,
							headers: { origin: tap.origin },
						});
						expect(got.status).toBe(403);
					} else await post(tap.question, tap.option);
					if (!answered) {
						expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toContain(requestId);
						expect(s.settled.filter((e) => e.requestId === requestId)).toEqual([]);
					}
				}
				// Finish it by taps on the questions still without a choice (their URLs are all unused).
				for (let q = 0; q < 3; q++) if (!chosen.has(q)) await post(q, 0);
				const envelope = await call;
				expect(envelope.answers!.map((a) => a.answer)).toEqual([chosen.get(0), chosen.get(1) === "Yes" ? "yes" : "no", chosen.get(2)]);
			}),
			{ numRuns: 40 },
		);
		expect(s.handle.snapshot()!.open).toEqual([]);
	});
});
