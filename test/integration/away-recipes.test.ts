/**
 * The apprise and Telegram recipes of docs/away-from-the-keyboard.md, each run from the page as
 * the notify command of a real page and relay: Debian's apprise posting to a local `json://` hook,
 * the Telegram recipe's curl and jq against a local stand-in for Telegram's Bot API. They test no
 * part of pi: run on the newest pi only.
 */
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { raw, trackedPages } from "../unit/surfaces/web/support.ts";
import { NOT_ON_OLDEST_PI, REPO_ROOT } from "./harness/pi-cli.ts";

const HAS_APPRISE = existsSync("/usr/bin/apprise");
const HAS_JQ = existsSync("/usr/bin/jq");

/** A recipe's command, exactly as the docs page gives it. */
function recipe(name: string): string {
	const page = readFileSync(join(REPO_ROOT, "docs/away-from-the-keyboard.md"), "utf8");
	const block = new RegExp(`<!-- recipe: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(page)?.[1];
	const command = block && /export CHECKPOINT_BRIDGE_NOTIFY_COMMAND='([^']*)'/.exec(block)?.[1];
	if (!command) throw new Error(`docs/away-from-the-keyboard.md has no ${name} recipe`);
	return command;
}

/** A local server that keeps every POST: its path, Content-Type and body. */
async function hook() {
	const posts: { path: string; type: string; body: string }[] = [];
	const server = http.createServer((req, res) => {
		let body = "";
		req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
		req.on("end", () => {
			posts.push({ path: req.url ?? "", type: String(req.headers["content-type"] ?? ""), body });
			res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true,"result":{}}');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return { port: (server.address() as AddressInfo).port, posts, close: () => server.close() };
}

const pages = trackedPages();
const restore: (() => void)[] = [];
afterEach(async () => {
	for (const undo of restore.splice(0)) undo();
	await pages.closeAll();
});

/** Sets variables the recipe reads (the command inherits this process's environment) until the test ends. */
function setEnv(values: Record<string, string>): void {
	for (const [name, value] of Object.entries(values)) {
		const before = process.env[name];
		process.env[name] = value;
		restore.push(() => (before === undefined ? delete process.env[name] : (process.env[name] = before)));
	}
}

describe("the apprise and Telegram recipes, run as the notify command", () => {
	it.skipIf(!HAS_APPRISE || NOT_ON_OLDEST_PI)("apprise: the question and the request's link, then how it ended", async () => {
		const server = await hook();
		restore.push(server.close);
		setEnv({ APPRISE_URL: `json://127.0.0.1:${server.port}/hook` });
		const s = await pages.setup({ notifyCommand: () => recipe("apprise"), notifyAfterMs: () => 0 });
		const { requestId, call } = await s.ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { label: "planner" });
		await until(() => server.posts.length === 1, "apprise's first post", 20_000);
		expect(JSON.parse(server.posts[0]!.body)).toMatchObject({ title: "planner asks", message: `Which database?\n${s.page.linkFor(requestId)}?via=notify` });
		await until(() => s.fake.current(), "the dialog");
		s.fake.current()!.answer("SQLite");
		await call;
		await until(() => server.posts.length === 2, "apprise's end post", 20_000);
		expect(JSON.parse(server.posts[1]!.body)).toMatchObject({ title: "planner: answered in the terminal", message: "Which database?" });
	});

	it.skipIf(!HAS_JQ || NOT_ON_OLDEST_PI)("Telegram: inline URL buttons open the one-button confirmation, whose button answers; then how it ended", async () => {
		const server = await hook();
		restore.push(server.close);
		setEnv({ TG_API: `http://127.0.0.1:${server.port}`, TG_BOT: "123:abc", TG_CHAT: "42" });
		const s = await pages.setup({ notifyCommand: () => recipe("telegram"), notifyAfterMs: () => 0 });
		const { requestId, call } = await s.ask([{ question: "Deploy now?", kind: "confirm" }], { label: "reviewer" });
		await until(() => server.posts.length === 1, "the bot's first message", 10_000);
		const sent = new URLSearchParams(server.posts[0]!.body);
		expect(server.posts[0]!.path).toBe("/bot123:abc/sendMessage");
		expect(sent.get("chat_id")).toBe("42");
		expect(sent.get("text")).toBe("reviewer asks: Deploy now?");
		const keyboard = JSON.parse(sent.get("reply_markup")!) as { inline_keyboard: { text: string; url: string }[][] };
		const actions = s.page.actionsFor(requestId)!;
		expect(keyboard.inline_keyboard).toEqual([
			[{ text: "Yes", url: actions.buttons[0]!.answer }],
			[{ text: "No", url: actions.buttons[1]!.answer }],
			[{ text: "Open", url: actions.link }],
		]);
		// Telegram opens the button in a browser: the page only asks to confirm; its button answers.
		const path = new URL(keyboard.inline_keyboard[1]![0]!.url).pathname;
		expect((await raw(s.page, { path })).body).toContain('<button type="submit" id="confirm">Answer: No</button>');
		const confirmed = await raw(s.page, {
			method: "POST",
			path,
			headers: { origin: s.page.origin, "content-type": "application/x-www-form-urlencoded" },
			body: "",
		});
		expect(confirmed.body).toContain("answered: No");
		expect((await call).answers[0]).toMatchObject({ answer: "no", kind: "confirm", source: "web" });
		await until(() => server.posts.length === 2, "the bot's end message", 10_000);
		expect(new URLSearchParams(server.posts[1]!.body).get("text")).toBe("reviewer: answered through the link the notify command sent");
	});
});
