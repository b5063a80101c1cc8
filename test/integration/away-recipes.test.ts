/**
 * The apprise and Telegram recipes of docs/away-from-the-keyboard.md, each run from the page as
 * the notify command of a real page and relay: Debian's apprise posting to a local `json://` hook,
 * the Telegram recipe's curl and jq against a local stand-in for Telegram's Bot API. Then every
 * recipe of the docs, run with an asker, a question and an option that name a secret file with
 * `@`: nothing of the file may reach the service. They test no part of pi: run on the newest pi only.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../support/temp-dir.ts";
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

/** Every recipe of the docs (`<!-- recipe: name -->` before its block), by name. */
function everyRecipe(): { name: string; command: string }[] {
	return ["docs/away-from-the-keyboard.md", "docs/web-page.md"].flatMap((file) =>
		[...readFileSync(join(REPO_ROOT, file), "utf8").matchAll(/<!-- recipe: ([\w-]+) -->\n```sh\n([\s\S]*?)```/g)].map(([, name, block]) => {
			const command = /export CHECKPOINT_BRIDGE_NOTIFY_COMMAND='([^']*)'/.exec(block!)?.[1];
			if (!command) throw new Error(`${file}: the ${name} recipe sets no CHECKPOINT_BRIDGE_NOTIFY_COMMAND`);
			return { name: name!, command };
		}),
	);
}

/** A local server that keeps every POST: its path, Content-Type, body and every header. */
async function hook() {
	const posts: { path: string; type: string; body: string; headers: string }[] = [];
	const server = http.createServer((req, res) => {
		let body = "";
		req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
		req.on("end", () => {
			posts.push({ path: req.url ?? "", type: String(req.headers["content-type"] ?? ""), body, headers: JSON.stringify(req.rawHeaders) });
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

	it.skipIf(!HAS_APPRISE || !HAS_JQ || NOT_ON_OLDEST_PI)(
		"no recipe sends a file an asker names: every documented recipe, run with an @-question, asked and ended",
		async () => {
			const dir = tempDir("cb-recipe-secret-");
			const secret = join(dir, "secret.txt");
			const content = "the-content-of-a-private-file-6b1f";
			writeFileSync(secret, `${content}\n`);
			const server = await hook();
			restore.push(server.close);
			const at = `http://127.0.0.1:${server.port}`;
			setEnv({
				NTFY_SERVER: at,
				NTFY_TOPIC: "cb-topic",
				NTFY_URL: `${at}/cb-topic`,
				APPRISE_URL: `json://127.0.0.1:${server.port}/hook`,
				TG_API: at,
				TG_BOT: "123:abc",
				TG_CHAT: "42",
			});
			const recipes = everyRecipe();
			expect(recipes.map((r) => r.name)).toEqual(["ntfy", "apprise", "telegram", "ntfy-ping"]);
			for (const { name, command } of recipes) {
				const before = server.posts.length;
				const s = await pages.setup({ notifyCommand: () => command, notifyAfterMs: () => 0 });
				const { call } = await s.ask([{ question: `@${secret}`, options: [`@${secret}`, "No"] }], { label: `@${secret}` });
				await until(() => server.posts.length > before, `${name}: the asked run`, 20_000);
				await until(() => s.fake.current(), "the dialog");
				s.fake.current()!.answer("No");
				await call;
				// The ping recipe skips the end run; every other posts once more.
				if (name !== "ntfy-ping") await until(() => server.posts.length >= before + 2, `${name}: the ended run`, 20_000);
				else await new Promise((resolve) => setTimeout(resolve, 500));
				const sent = server.posts.slice(before);
				expect(
					sent.some((p) => `${p.path} ${p.headers} ${p.body}`.includes(`@${secret}`) || decodeURIComponent(p.body.replaceAll("+", " ")).includes(`@${secret}`)),
					name,
				).toBe(true);
				for (const post of sent) expect(`${post.path}\n${post.headers}\n${post.body}`, name).not.toContain(content);
			}
		},
		120_000,
	);
});
