/**
 * The webhook channel of docs/extending.md (examples/webhook-channel/) against a host role on a
 * private handle and a local receiver: what it posts and skips, what it announces at a claim, a
 * receiver that fails, and what a release closes. Its answers on a real pi host: the integration file.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type WebhookPost, webhookChannel } from "../../examples/webhook-channel/webhook-channel.ts";
import { RequestBook } from "../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { until } from "../support/until.ts";
import { HOST_SESSION, relay } from "./support/relay.ts";

type RequestPost = Extract<WebhookPost, { type: "request" }>;

/** A receiver whose answer status the test sets; every post it got, in order. */
async function receiver() {
	const posts: WebhookPost[] = [];
	const state = { status: 204 };
	const server = createServer(async (req, res) => {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		posts.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as WebhookPost);
		res.writeHead(state.status).end();
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
	return { url, posts, state, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const close of closers.splice(0).reverse()) await close();
});

async function setUp() {
	const hook = await receiver();
	const host = relay({}, { book: new RequestBook({ ...readLateConfig({}), expiryMs: 60_000 }) });
	const notices: { message: string; type?: string }[] = [];
	const ui = { notify: (message: string, type?: string) => void notices.push({ message, type }) };
	const channel = webhookChannel(() => ({ url: hook.url }));
	closers.push(hook.close, () => channel.release(true));
	const requests = () => hook.posts.filter((p): p is RequestPost => p.type === "request");
	return { hook, host, notices, ui, channel, requests };
}

describe("the webhook channel", () => {
	it("announces at its claim what is already open, posts each relayed request but not the host's own, and a late request's update", async () => {
		const { hook, host, ui, channel, requests, notices } = await setUp();
		void host.ask([{ question: "Before the claim?", options: ["a", "b"] }], { label: "early" });
		await until(() => host.handle.snapshot()?.open.length === 1, "the first request open", 5_000);
		await channel.claim(host.handle, ui);
		expect(notices[0]?.message).toMatch(/^webhook channel: posting requests to http:\/\/127\.0\.0\.1:\d+; answers taken at http:\/\/127\.0\.0\.1:\d+$/);
		await until(() => requests().length === 1, "the open request announced", 5_000);
		expect(requests()[0]).toMatchObject({ asker: { label: "early" }, questions: [{ question: "Before the claim?", kind: "choice", options: ["a", "b"] }] });

		void host.ask([{ question: "Mine?" }], { label: "main session", sessionId: HOST_SESSION });
		void host.ask([{ question: "Late?", kind: "confirm" }], { label: "hasty", budgetMs: 300 });
		await until(() => hook.posts.some((p) => p.type === "late"), "the late post", 5_000);
		const hasty = requests().find((p) => p.asker.label === "hasty")!;
		expect(hook.posts.find((p) => p.type === "late")).toEqual({ type: "late", requestId: hasty.requestId, expiresAt: expect.any(Number) });
		// The host's own question, asked at its keyboard, is never posted.
		expect(requests().map((p) => p.asker.label)).toEqual(["early", "hasty"]);
		// Still answerable late, through its URL.
		const late = await fetch(hasty.answerUrl, { method: "POST", body: JSON.stringify({ answers: ["yes"] }) });
		expect(late.status).toBe(200);
		await until(() => hook.posts.some((p) => p.type === "ended" && p.requestId === hasty.requestId), "the late one's end", 5_000);
	});

	it("a receiver that fails is said once, and again only after a post went through; the request stays answerable", async () => {
		const { hook, host, ui, channel, requests, notices } = await setUp();
		await channel.claim(host.handle, ui);
		hook.state.status = 500;
		const first = host.ask([{ question: "One?", options: ["x", "y"] }], { label: "one" });
		void host.ask([{ question: "Two?", options: ["x", "y"] }], { label: "two" });
		await until(() => hook.posts.length === 2, "both posts tried", 5_000);
		const warnings = () => notices.filter((n) => n.type === "warning").map((n) => n.message);
		await until(() => warnings().length === 1, "the warning", 5_000);
		expect(warnings()).toEqual(["webhook channel: cannot post to the webhook (HTTP 500); requests go on in the terminal"]);
		const answered = await fetch(requests()[0]!.answerUrl, { method: "POST", body: JSON.stringify({ answers: ["y"] }) });
		expect(answered.status).toBe(200);
		expect(await first).toMatchObject({ status: "ok", answers: [{ answer: "y", source: "outside" }] });
		await until(() => hook.posts.length === 3, "the end tried", 5_000);
		expect(warnings()).toHaveLength(1);
		hook.state.status = 204;
		void host.ask([{ question: "Three?" }], { label: "three" });
		await until(() => hook.posts.length === 4, "a post through", 5_000);
		hook.state.status = 502;
		void host.ask([{ question: "Four?" }], { label: "four" });
		await until(() => warnings().length === 2, "the second warning", 5_000);
		expect(warnings()[1]).toBe("webhook channel: cannot post to the webhook (HTTP 502); requests go on in the terminal");
	});

	it("a release closes its answer server; the next claim announces what is open again under a new answer URL", async () => {
		const { host, ui, channel, requests } = await setUp();
		await channel.claim(host.handle, ui);
		void host.ask([{ question: "Across?", options: ["x", "y"] }], { label: "across" });
		await until(() => requests().length === 1, "the request", 5_000);
		const before = requests()[0]!;
		await channel.release(false);
		await expect(fetch(before.answerUrl, { method: "POST", body: JSON.stringify({ answers: ["x"] }) })).rejects.toThrow();
		await channel.claim(host.handle, ui);
		await until(() => requests().length === 2, "announced again", 5_000);
		const after = requests()[1]!;
		expect(after.requestId).toBe(before.requestId);
		expect(after.answerUrl).not.toBe(before.answerUrl);
		expect((await fetch(after.answerUrl, { method: "POST", body: JSON.stringify({ answers: ["x"] }) })).status).toBe(200);
	});

	it("refuses a claim with a URL that is not http(s), or an address it cannot listen on, saying why", async () => {
		const { host, ui } = await setUp();
		await expect(webhookChannel(() => ({ url: "ftp://example.org/x" })).claim(host.handle, ui)).rejects.toThrow(
			'the webhook URL "ftp://example.org/x" is not an http(s) URL',
		);
		await expect(webhookChannel(() => ({ url: "http://127.0.0.1:9/", listen: "203.0.113.9:0" })).claim(host.handle, ui)).rejects.toThrow(/EADDRNOTAVAIL/);
	});
});
