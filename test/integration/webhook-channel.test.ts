/**
 * docs/extending.md's worked example on a real `pi --mode rpc` host: the webhook channel
 * (examples/webhook-channel/), loaded as an extension of its own beside the bridge, registers itself
 * and posts each relayed request to a local receiver standing in for the webhook; the test answers,
 * declines and sends bad answers to the request's answer URL as the receiver would. One host for the file.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookPost } from "../../examples/webhook-channel/webhook-channel.ts";
import { until } from "../support/until.ts";
import { awayAsk, writeAwayAsker } from "./harness/away-asker.ts";
import { isNotify, type PiRpc, PiRpcFixture, REPO_ROOT } from "./harness/pi-cli.ts";

const EXAMPLE = join(REPO_ROOT, "examples/webhook-channel/index.ts");

/** The webhook's receiver: every post it got, in order. */
async function receiver() {
	const posts: WebhookPost[] = [];
	const server = createServer(async (req: IncomingMessage, res) => {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		posts.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as WebhookPost);
		res.writeHead(204).end();
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return { url: `http://127.0.0.1:${port}/hook`, posts, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Posts `body` (JSON unless a string) to `url`: the status and the reply. */
async function send(url: string, body: unknown, method = "POST") {
	const response = await fetch(url, { method, ...(method === "GET" ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });
	const text = await response.text();
	return { status: response.status, reply: text ? (JSON.parse(text) as { ok: boolean; code?: string; reason?: string }) : undefined };
}

describe("the webhook channel of docs/extending.md, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	let hook: Awaited<ReturnType<typeof receiver>>;
	let pi: PiRpc;
	beforeAll(async () => {
		hook = await receiver();
		const piEnv = run.createEnv({ env: { WEBHOOK_CHANNEL_URL: hook.url } });
		pi = run.startPi({ args: ["--extension", writeAwayAsker(piEnv), "--extension", EXAMPLE] });
		await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith("webhook channel: posting requests to"), { from: 0, what: "the channel's start" });
	}, 120_000);
	afterAll(async () => {
		await run.stop();
		await hook.close();
	});

	/** The request post of `requestId`'s asker label, once the receiver has it. */
	const requestPost = async (label: string) => {
		await until(() => hook.posts.some((p) => p.type === "request" && p.asker.label === label), `the request of ${label}`, 15_000);
		return hook.posts.find((p) => p.type === "request" && p.asker.label === label) as Extract<WebhookPost, { type: "request" }>;
	};
	const endPosts = (requestId: string) => hook.posts.filter((p) => p.type === "ended" && p.requestId === requestId);

	it("posts each relayed request to the webhook; an answer posted to its answer URL reaches the asker once, and the end is posted", async () => {
		const planner = await awayAsk(pi, "planner", [
			{ id: "db", header: "Storage", question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite", allowOther: false },
			{ id: "go", question: "Ship it now?", kind: "confirm" },
		]);
		const asked = await requestPost("planner");
		expect(asked).toMatchObject({
			requestId: expect.any(String),
			asker: { label: "planner" },
			questions: [
				{ id: "db", header: "Storage", question: "Which database?", kind: "choice", options: ["Postgres", "SQLite"], recommended: "SQLite" },
				{ id: "go", question: "Ship it now?", kind: "confirm" },
			],
			deadline: expect.any(Number),
		});
		expect(asked.answerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/answer\/[A-Za-z0-9_-]{24}$/);

		expect(await send(asked.answerUrl, { answers: ["SQLite", "yes"] })).toEqual({ status: 200, reply: { ok: true } });
		expect(await planner.result).toMatchObject({
			status: "ok",
			requestId: asked.requestId,
			answers: [
				{ id: "db", answer: "SQLite", kind: "option", source: "outside" },
				{ id: "go", answer: "yes", kind: "confirm", source: "outside" },
			],
		});
		await until(() => endPosts(asked.requestId).length === 1, "the end's post", 15_000);
		expect(endPosts(asked.requestId)).toEqual([{ type: "ended", requestId: asked.requestId, status: "ok", end: "answered-outside" }]);
		// A second answer comes too late: refused, and the asker got one result.
		const again = await send(asked.answerUrl, { answers: ["Postgres", "no"] });
		expect(again).toEqual({ status: 410, reply: { ok: false, code: "not_found", reason: "the request has ended (ok); nothing was applied" } });
		expect(pi.frames.filter((f) => isNotify(f) && String(f.message).startsWith("away:result ") && String(f.message).includes('"planner"'))).toHaveLength(1);
	});

	it("refuses a bad answer, any random body and a wrong request with a clear error that changes nothing; a decline ends the call as declined", async () => {
		const reviewer = await awayAsk(pi, "reviewer", [
			{ question: "Which region?", options: ["eu-west", "us-east"], allowOther: false },
			{ question: "Tags?", options: ["fast", "cheap", "safe"], multiSelect: true, allowOther: false },
		]);
		const { answerUrl, requestId } = await requestPost("reviewer");
		const refusals: [unknown, number, string, string][] = [
			[{ answers: ["mars", ["fast"]] }, 422, "invalid_answer", 'answers[0]: "mars" was not offered'],
			[{ answers: ["eu-west", ["fast", "fast"]] }, 422, "invalid_answer", "answers[1]: repeats a value"],
			[{ answers: ["eu-west"] }, 400, "invalid_payload", "expected 2 answers, one per question, got 1"],
			[{ answers: "eu-west" }, 400, "invalid_payload", "answers must be an array with one answer per question, in question order"],
			[{ cancel: "yes" }, 400, "invalid_payload", "a cancel is { requestId, cancel: true } and nothing else"],
			[["eu-west", ["fast"]], 400, "invalid_payload", 'the body must be a JSON object: {"answers": [...]} or {"cancel": true}'],
			["{not json", 400, "invalid_payload", "the body is not JSON"],
			["x".repeat(70_000), 413, "invalid_payload", "the body is larger than 65536 bytes"],
		];
		for (const [body, status, code, reason] of refusals) expect(await send(answerUrl, body)).toEqual({ status, reply: { ok: false, code, reason } });
		expect(await send(answerUrl, undefined, "GET")).toEqual({ status: 405, reply: { ok: false, code: "invalid_payload", reason: "an answer is a POST" } });
		const unknown = `${answerUrl.slice(0, -24)}${"A".repeat(24)}`;
		expect(await send(unknown, { answers: ["eu-west", ["fast"]] })).toEqual({
			status: 404,
			reply: { ok: false, code: "not_found", reason: "no open request has this answer URL" },
		});

		// Random bodies and paths: never a 5xx, never an answer taken.
		const origin = new URL(answerUrl).origin;
		await fc.assert(
			fc.asyncProperty(fc.jsonValue(), fc.oneof(fc.constant(new URL(answerUrl).pathname), fc.webPath()), async (body, path) => {
				const { status } = await send(`${origin}${path.startsWith("/") ? path : `/${path}`}`, body);
				expect([400, 404, 405, 413, 422]).toContain(status);
			}),
			{ numRuns: 60 },
		);
		expect(endPosts(requestId)).toEqual([]);

		// Still open and unchanged: the decline ends it as Esc in the terminal would.
		expect(await send(answerUrl, { cancel: true })).toEqual({ status: 200, reply: { ok: true } });
		expect(await reviewer.result).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [] });
		await until(() => endPosts(requestId).length === 1, "the decline's end post", 15_000);
		expect(endPosts(requestId)).toEqual([{ type: "ended", requestId, status: "timeout-or-cancelled", end: "cancelled-outside" }]);
	});
});
