/**
 * Random input against the page, with two requests open (one reached through the page, one
 * through its own link): whatever the method, path, headers and body, the answer is never a 5xx
 * and no open request changes (none settles, no dialog closes).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkPathOf, pagePath, pageWithRelay, raw } from "./support.ts";

let s: Awaited<ReturnType<typeof pageWithRelay>>;
let ids: string[] = [];
beforeAll(async () => {
	s = await pageWithRelay();
	// Closed choices only: random data cannot be a valid answer to these, so nothing may change.
	const closed = [
		{ question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
		{ question: "Which targets?", options: ["linux", "mac"], multiSelect: true, allowOther: false },
	];
	ids = [(await s.ask(closed, { label: "planner" })).requestId, (await s.ask(closed, { label: "reviewer" })).requestId];
});
afterAll(async () => {
	s.role.release("quit", "test over");
	await s.page.close();
});

const printable = fc.string({ unit: fc.constantFrom(..." !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~") });
const pathChars = fc.string({ unit: fc.constantFrom(..."abcXYZ019-_./%?=&"), maxLength: 40 });

describe("web page: random input", () => {
	it("never a 5xx, never a changed request", async () => {
		const page = s.page;
		const base = pagePath(page);
		const link = linkPathOf(page, ids[1]!);
		const wrongToken = base.replace(/.\/$/, "_/");
		const path = fc.oneof(
			fc.constantFrom(base, `${base}answer`, `${base}app.js`, link, `${link}answer`, wrongToken, `${wrongToken}answer`, "/", "/t/", "/r/"),
			pathChars.map((p) => `/${p}`),
			pathChars.map((p) => `${base}${p}`),
			pathChars.map((p) => `${link}${p}`),
		);
		const own = `${page.address.host}:${page.address.port}`;
		const headers = fc.record(
			{
				host: fc.oneof(fc.constant(own), fc.constant(`localhost:${page.address.port}`), printable),
				origin: fc.oneof(fc.constant(page.origin), fc.constant("null"), printable),
				"content-type": fc.oneof(fc.constant("application/json"), fc.constant("application/json; charset=utf-8"), printable),
				"sec-fetch-site": fc.constantFrom("same-origin", "cross-site", "same-site", "none"),
				"x-random": printable,
			},
			{ requiredKeys: [] },
		);
		const answers = fc.array(fc.oneof(fc.anything(), printable, fc.array(printable)), { maxLength: 4 });
		const body = fc.oneof(
			printable,
			fc.json(),
			fc
				.record(
					{
						requestId: fc.oneof(fc.constantFrom(...ids), printable, fc.anything()),
						answers,
						source: fc.oneof(fc.constant("web"), printable),
						cancel: fc.anything(),
					},
					{ requiredKeys: [] },
				)
				.map((v) => JSON.stringify(v) ?? ""),
			fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
		);
		await fc.assert(
			fc.asyncProperty(fc.constantFrom("GET", "POST", "PUT", "HEAD", "OPTIONS", "DELETE"), path, headers, body, async (method, target, given, payload) => {
				// A GET of the live stream never ends by itself: it is covered by the server tests.
				fc.pre(!(method === "GET" && /\/events(\?|$)/.test(target)));
				const response = await raw(page, {
					method,
					path: target,
					headers: { host: own, ...given },
					body: method === "GET" || method === "HEAD" ? undefined : payload,
				});
				expect(response.status, `${method} ${target}`).toBeGreaterThanOrEqual(200);
				expect(response.status, `${method} ${target} ${JSON.stringify(given)} ${String(payload).slice(0, 200)}: ${response.body}`).toBeLessThan(500);
				if (response.status >= 400 && method !== "HEAD") expect(response.body).toMatch(/^[^\n]+\n$/);
				expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual(ids);
				expect(s.settled).toEqual([]);
				expect(s.fake.dialogs.every((d) => d.closedBy === undefined)).toBe(true);
			}),
			{ numRuns: 300 },
		);
	});
});
