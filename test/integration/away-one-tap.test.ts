/**
 * One-tap answers against a real `pi --mode rpc` host with a real asker: the ntfy recipe of
 * docs/away-from-the-keyboard.md, run as the notify command against a stand-in ntfy server, and a
 * phone played as ntfy plays it (the JSON message read, an `http` button POSTed with no body);
 * then a one-tap link opened in a real headless Chromium: a GET only confirms, its button answers;
 * and a request of two questions answered by two POSTs, one per question, as ntfy sends them.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fakeNtfy, pressAction } from "../support/ntfy.ts";
import { awayAsk, writeAwayAsker } from "./harness/away-asker.ts";
import { browserForFile, HAS_CHROMIUM } from "./harness/browser.ts";
import { PiRpcFixture, REPO_ROOT } from "./harness/pi-cli.ts";

const browser = browserForFile("away-one-tap.test.ts");

/** The recipe's command, exactly as the docs page gives it. */
function ntfyRecipe(): string {
	const page = readFileSync(join(REPO_ROOT, "docs/away-from-the-keyboard.md"), "utf8");
	const block = /<!-- recipe: ntfy -->\n```sh\n([\s\S]*?)```/.exec(page)?.[1];
	const command = block && /export CHECKPOINT_BRIDGE_NOTIFY_COMMAND='([^']*)'/.exec(block)?.[1];
	if (!command) throw new Error("docs/away-from-the-keyboard.md has no ntfy recipe");
	return command;
}

/** What the phone does on a tap of an `http` button: its method (POST by default), no body, no Origin. */
const tap = (action: { url?: string; method?: string }) => pressAction(action);

describe.skipIf(!HAS_CHROMIUM)("one-tap answers, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	let ntfy: Awaited<ReturnType<typeof fakeNtfy>>;
	beforeAll(async () => {
		ntfy = await fakeNtfy();
	});
	afterAll(() => ntfy.close());
	afterEach(() => run.stop());

	it("ntfy's recipe, played by a phone: the buttons answer once, the notification is updated when the request ends; in Chromium a one-tap link only shows a confirmation, its button answers", async () => {
		const piEnv = run.createEnv({
			env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0", NTFY_SERVER: ntfy.origin, NTFY_TOPIC: "cb-topic", CHECKPOINT_BRIDGE_NOTIFY_COMMAND: ntfyRecipe() },
		});
		const pi = run.startPi({ args: ["--extension", writeAwayAsker(piEnv)] });
		await pi.command("get_state", {}, 90_000);

		// 1. The phone: a notification with three buttons; "Postgres" pressed.
		const planner = await awayAsk(pi, "planner", [{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }]);
		const until = async (count: number) => {
			for (let i = 0; i < 400 && ntfy.received.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 25));
			expect(ntfy.received.length, "publishes").toBeGreaterThanOrEqual(count);
			return ntfy.received[count - 1]!.json;
		};
		const asked = await until(1);
		expect(asked).toMatchObject({ topic: "cb-topic", message: "Which database?", title: "planner asks" });
		const sequence = asked.sequence_id;
		expect(sequence).toMatch(/^[A-Za-z0-9_-]+$/);
		const actions = asked.actions!;
		expect(actions.map((a) => [a.action, a.label, a.method, a.clear])).toEqual([
			["http", "SQLite", "POST", true],
			["http", "Postgres", "POST", true],
			["http", "Decline", "POST", true],
		]);
		expect(asked.click).toMatch(/\/r\/[A-Za-z0-9_-]+\/\?via=notify$/);
		expect(await tap(actions[1]!)).toEqual({ status: 200, body: "answered: Postgres\n" });
		expect((await planner.result).answers).toEqual([{ question: "Which database?", answer: "Postgres", kind: "option", source: "web" }]);
		// The end run updates the same notification, and the other button no longer answers.
		const ended = await until(2);
		expect(ended).toEqual({
			topic: "cb-topic",
			sequence_id: sequence,
			message: "Which database?",
			title: "planner: answered through the link the notify command sent",
			priority: 2,
		});
		const late = await tap(actions[0]!);
		expect(late.status).toBe(410);
		expect(late.body).toContain("this request has ended: answered through the link the notify command sent");

		// 2. A browser (a mail scanner would do the same): the GET shows a confirmation and answers nothing.
		const reviewer = await awayAsk(pi, "reviewer", [{ question: "Deploy now?", kind: "confirm" }]);
		const confirmAsked = await until(3);
		const [yes] = confirmAsked.actions!;
		expect(yes!.label).toBe("Yes");
		const page = await browser.browser.newPage();
		const shown = await page.goto(yes!.url!, { waitUntil: "domcontentloaded" });
		expect(shown?.status()).toBe(200);
		expect(await page.$eval("#question", (h) => h.textContent)).toBe("Deploy now?");
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(ntfy.received).toHaveLength(3);
		await Promise.all([page.waitForNavigation({ waitUntil: "domcontentloaded" }), page.click("#confirm")]);
		expect(await page.$eval("#result", (p) => p.textContent)).toBe("answered: Yes");
		expect((await reviewer.result).answers).toEqual([{ question: "Deploy now?", answer: "yes", kind: "confirm", source: "web" }]);
		// Reloading the confirmation page now says how it ended.
		expect((await page.goto(yes!.url!))?.status()).toBe(410);
		await page.close();
	});
});

describe("one tap per question, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("a request of two questions is answered by two POSTs as ntfy sends them: the first records its question's choice, the second answers the whole request", async () => {
		const piEnv = run.createEnv({ env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" } });
		const out = join(piEnv.root, "actions.json");
		// A notify command that keeps the actions JSON, as a chat bot building its buttons from it would read it.
		piEnv.env.CHECKPOINT_BRIDGE_NOTIFY_COMMAND = `[ "$CHECKPOINT_BRIDGE_EVENT" = asked ] && printf %s "$CHECKPOINT_BRIDGE_ACTIONS" > ${JSON.stringify(out)}; exit 0`;
		const pi = run.startPi({ args: ["--extension", writeAwayAsker(piEnv)] });
		await pi.command("get_state", {}, 90_000);
		const planner = await awayAsk(pi, "planner", [
			{ question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false },
			{ question: "Deploy now?", kind: "confirm" },
		]);
		for (let i = 0; i < 400 && !existsSync(out); i++) await new Promise((resolve) => setTimeout(resolve, 25));
		const actions = JSON.parse(readFileSync(out, "utf8")) as { buttons: unknown[]; questions: { buttons: { label: string; answer: string }[] }[] };
		expect(actions.buttons).toEqual([]);
		const [db, deploy] = actions.questions.map((q) => q.buttons);
		let settled = false;
		void planner.result.then(() => (settled = true));
		expect(await tap({ url: db!.find((b) => b.label === "SQLite")!.answer })).toEqual({
			status: 202,
			body: 'recorded: SQLite for "Which database?"; nothing is answered until each question has a choice\nstill waiting: "Deploy now?"\n',
		});
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(settled).toBe(false);
		expect(await tap({ url: deploy!.find((b) => b.label === "Yes")!.answer })).toEqual({ status: 200, body: "answered: SQLite / Yes\n" });
		expect((await planner.result).answers).toEqual([
			{ question: "Which database?", answer: "SQLite", kind: "option", source: "web" },
			{ question: "Deploy now?", answer: "yes", kind: "confirm", source: "web" },
		]);
		expect((await tap({ url: db![1]!.answer })).status).toBe(410);
	});
});
