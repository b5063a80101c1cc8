/**
 * The page's forms open elsewhere (another extension's questionnaire in the host's terminal): the
 * live stream carries them to the page's tabs only, `POST …/form` answers them through the one
 * answer check and the tool's verdict, each refusal is a 4xx with its reason, and random input
 * never gets a 5xx nor reaches the tool.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormsElsewhere, type SubmitToTool } from "../../../../extensions/checkpoint-bridge/core/answering/elsewhere.ts";
import { propertyRun } from "../../support/property-policy.ts";
import { linkPathOf, pagePath, pageWithRelay, postAnswer, raw, readEvents } from "./support.ts";

const closed = [
	{ id: "stack", question: "Which stack?", options: ["TypeScript", "Go"], allowOther: false },
	{ id: "checks", question: "Which checks run?", options: ["Lint", "E2E"], multiSelect: true, allowOther: false },
];

let s: Awaited<ReturnType<typeof pageWithRelay>>;
const forms = new FormsElsewhere({ verdictTimeoutMs: 300 });
/** What reached the tool. */
const reached: unknown[] = [];
let verdict: Awaited<ReturnType<SubmitToTool>> | "never" = { ok: true };
let answerable: string;
let readOnly: string;
let requestId: string;

beforeAll(async () => {
	s = await pageWithRelay({ forms });
	answerable = forms.add({
		tool: "pi-agent-ask",
		title: "Release plan",
		questions: closed,
		submit: (answers) => {
			reached.push(answers);
			return verdict === "never" ? new Promise(() => {}) : Promise.resolve(verdict);
		},
	});
	readOnly = forms.add({ tool: "rpiv-ask-user-question", questions: closed });
	requestId = (await s.ask([{ question: "Relay's own?", options: ["a", "b"], allowOther: false }], { label: "planner" })).requestId;
});
afterAll(async () => {
	s.role.release("quit", "test over");
	await s.page.close();
});

const post = (body: unknown, headers: Record<string, string | null> = {}, path = `${pagePath(s.page)}form`) => postAnswer(s.page, path, body, headers);

describe("web page: forms open in the terminal", () => {
	it("the page's stream has them from the start and gets each change; a request link's has none", async () => {
		let extra: string | undefined;
		const page = readEvents(s.page, `${pagePath(s.page)}events`, (e) => {
			// Once the state is in, a form opens and ends.
			if (e.length === 1 && extra === undefined) {
				extra = forms.add({ tool: "pi-agent-ask", questions: closed, submit: async () => ({ ok: true }) });
				forms.remove(extra);
			}
			return e.some((x) => x.event === "form-gone");
		});
		const events = await page;
		expect(events[0]!.event).toBe("state");
		expect(events[0]!.data.forms.map((f: { id: string }) => f.id)).toEqual([answerable, readOnly]);
		expect(events[0]!.data.forms[0]).toMatchObject({ tool: "pi-agent-ask", title: "Release plan", answerable: true });
		expect(events.slice(1).map((e) => [e.event, e.data.form?.id ?? e.data.id])).toEqual([
			["form", extra],
			["form-gone", extra],
		]);
		// A request link's stream: its own request, no forms, and no form events.
		const link = await readEvents(s.page, `${linkPathOf(s.page, requestId)}events`, (e) => {
			if (e.length === 1) forms.remove(forms.add({ tool: "pi-agent-ask", questions: closed }));
			return e.length >= 1;
		});
		expect(link).toHaveLength(1);
		expect(link[0]!.data).toMatchObject({ scope: "request", forms: [] });
	});

	it("answers a form: 200 once the one answer check and the tool take it, the verdict on the stream", async () => {
		reached.length = 0;
		verdict = { ok: true };
		const response = await post({ formId: answerable, answers: ["Go", ["Lint", "E2E"]] });
		expect(response.status, response.body).toBe(200);
		expect(JSON.parse(response.body)).toEqual({ ok: true });
		expect(reached).toHaveLength(1);
		expect(forms.get(answerable)!.verdict).toMatchObject({ ok: true });
	});

	it("refuses, each with its reason: a request link, another method, a foreign origin, a body that is no JSON object, no formId, an unknown or read-only form, answers the check refuses, the tool's refusal or silence", async () => {
		reached.length = 0;
		const base = pagePath(s.page);
		const cases: [string, Promise<{ status: number; body: string }>, number, RegExp][] = [
			["request link", post({ formId: answerable, answers: [] }, {}, `${linkPathOf(s.page, requestId)}form`), 404, /answered on the page itself/],
			["GET", raw(s.page, { path: `${base}form` }), 405, /POST/],
			["foreign origin", post({ formId: answerable, answers: [] }, { origin: "http://evil.example" }), 403, /refused: only the page itself/],
			["no origin", post({ formId: answerable, answers: [] }, { origin: null }), 403, /does not say where it comes from/],
			["not JSON", post("{", {}), 400, /not valid JSON/],
			["wrong type", post({}, { "content-type": "text/plain" }), 415, /must be JSON/],
			["too large", post({ formId: answerable, answers: ["x".repeat(70_000)] }), 413, /larger than/],
			["array", post([1]), 400, /must be a JSON object/],
			["no formId", post({ answers: [] }), 400, /formId must be a non-empty string/],
			["unknown form", post({ formId: "form-999", answers: [] }), 404, /no form open in the terminal has this id/],
			["read-only", post({ formId: readOnly, answers: ["Go", ["Lint"]] }), 409, /takes no answer from outside the terminal/],
			["answers not an array", post({ formId: answerable, answers: "Go" }), 400, /answers must be an array/],
			["too few", post({ formId: answerable, answers: ["Go"] }), 400, /expected 2 answers/],
			["not offered", post({ formId: answerable, answers: ["Rust", ["Lint"]] }), 422, /"Rust" was not offered/],
		];
		for (const [what, response, status, reason] of cases) {
			const got = await response;
			expect(got.status, `${what}: ${got.body}`).toBe(status);
			expect(got.body, what).toMatch(reason);
		}
		expect(reached, "nothing refused reaches the tool").toEqual([]);
		verdict = { ok: false, reason: "invalid_answer: stack needs a reviewer" };
		let got = await post({ formId: answerable, answers: ["Go", ["Lint"]] });
		expect([got.status, got.body.trim()]).toEqual([409, "pi-agent-ask refused the answer: invalid_answer: stack needs a reviewer"]);
		verdict = "never";
		got = await post({ formId: answerable, answers: ["Go", ["Lint"]] });
		expect(got.status).toBe(409);
		expect(got.body).toMatch(/did not confirm the answer within 300 ms/);
		verdict = { ok: true };
	});

	it("random input: never a 5xx, nothing reaches the tool", async () => {
		reached.length = 0;
		const base = pagePath(s.page);
		const printable = fc.string({ unit: fc.constantFrom(..." !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~") });
		const body = fc.oneof(
			printable,
			fc.json(),
			fc
				.record(
					{
						formId: fc.oneof(fc.constantFrom(answerable, readOnly, "form-0"), printable, fc.anything()),
						answers: fc.oneof(fc.anything(), fc.array(fc.oneof(fc.anything(), printable, fc.array(printable)), { maxLength: 3 })),
					},
					{ requiredKeys: [] },
				)
				.map((v) => JSON.stringify(v) ?? ""),
			fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
		);
		const headers = fc.record(
			{
				origin: fc.oneof(fc.constant(s.page.origin), printable),
				"content-type": fc.oneof(fc.constant("application/json"), printable),
				"sec-fetch-site": fc.constantFrom("same-origin", "cross-site"),
			},
			{ requiredKeys: [] },
		);
		const path = fc.constantFrom(`${base}form`, `${linkPathOf(s.page, requestId)}form`, `${base}form/x`, `${base}form?x=1`);
		await fc.assert(
			fc.asyncProperty(fc.constantFrom("POST", "GET", "PUT", "DELETE"), path, headers, body, async (method, target, given, payload) => {
				const response = await raw(s.page, { method, path: target, headers: given, body: method === "GET" ? undefined : payload });
				expect(response.status, `${method} ${target}: ${response.body}`).toBeGreaterThanOrEqual(200);
				expect(response.status, `${method} ${target}: ${response.body}`).toBeLessThan(500);
			}),
			propertyRun(150),
		);
		// Random answers to closed choices cannot pass the one answer check, so none reached the tool.
		expect(reached).toEqual([]);
		expect(forms.list().map((f) => f.id)).toEqual([answerable, readOnly]);
		// Nor did the relay's own request change.
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
		expect(s.settled).toEqual([]);
	});
});
