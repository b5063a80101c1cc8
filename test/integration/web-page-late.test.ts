/**
 * A late question on the web page, in a real headless Chromium against the real `pi --mode rpc`: a
 * call with `timeoutMs: 3000` ends `timeout`; its question stays on the page as a card marked late
 * (its own link still alive), is answered there, and the answer reaches the asking session once, as
 * the `checkpoint-bridge:answer` message.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PAGE_ANNOUNCEMENT } from "../support/page-link.ts";
import { browserForFile, fill, HAS_CHROMIUM, openTab, POLL_MS, screenshot, submit } from "./harness/browser.ts";
import { ASK_TOOL, isAnswerMessage, isNotify, onlyEnvelope, PiRpcFixture, resultText } from "./harness/pi-cli.ts";

const FIRST_DIALOG_MS = 60_000;

const browser = browserForFile("web-page-late.test.ts");

describe.skipIf(!HAS_CHROMIUM)("a late question on the web page, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("a call with timeoutMs 3000 ends timeout; its card stays, marked late, its link alive; answered on the page, the answer reaches the session once", async () => {
		run.createEnv({
			env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
			script: { main: { ask: { questions: [{ question: "Which database?", options: ["Postgres", "SQLite"] }], timeoutMs: 3_000 } } },
		});
		const rpc = run.startPi();
		await rpc.command("get_state", {}, FIRST_DIALOG_MS);
		const mark = rpc.mark();
		await rpc.prompt("/checkpoints");
		const report = await rpc.waitFor((f) => isNotify(f) && PAGE_ANNOUNCEMENT.test(String(f.message)), { from: mark, what: "the page's address" });
		const url = PAGE_ANNOUNCEMENT.exec(String(report.message))![1]!;
		const tab = await openTab(browser.browser, url);

		const start = rpc.mark();
		await rpc.prompt("Set up the storage.");
		await rpc.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		const card = () =>
			tab.page.$eval("article.card", (c) => ({
				late: c.classList.contains("late-question"),
				where: c.querySelector(".where")?.textContent,
				link: c.querySelector<HTMLAnchorElement>("a.own-link")?.href,
			}));
		await tab.page.waitForFunction(() => document.querySelectorAll("article.card").length === 1, { polling: POLL_MS, timeout: 30_000 });
		const before = await card();
		expect(before.late).toBe(false);
		expect(before.link).toBeDefined();
		// The request's own link, opened while the call still waits.
		const linkTab = await openTab(browser.browser, before.link!);
		await linkTab.page.waitForFunction(() => document.querySelectorAll("article.card").length === 1, { polling: POLL_MS, timeout: 30_000 });

		const ended = onlyEnvelope(resultText((await rpc.waitForToolEnd(ASK_TOOL, { from: start, timeoutMs: 30_000 })).result));
		expect(ended.status).toBe("timeout");
		expect(ended.note).toContain("marked late");
		await rpc.waitForSettled({ from: start });

		// The same card, marked late: who asked heads it, how long ago it was asked is in its meta line; the same link.
		await tab.page.waitForFunction(() => document.querySelector("article.card")?.classList.contains("late-question") === true, {
			polling: POLL_MS,
			timeout: 30_000,
		});
		const after = await card();
		expect(after.where).toMatch(/^late: /);
		expect(after.link).toBe(before.link);
		expect(await tab.page.$eval("article.card .countdown", (c) => c.textContent)).toMatch(/^asked 0 min ago, late since 0 min ago$/);
		expect(await tab.page.$eval("article.card h2", (h) => h.textContent)).toMatch(/^\[.+\]$/);
		// The link's stream did not end: its tab shows the card, late, too.
		await linkTab.page.waitForFunction(() => document.querySelector("article.card")?.classList.contains("late-question") === true, {
			polling: POLL_MS,
			timeout: 30_000,
		});
		expect(await linkTab.page.$eval("#status", (s) => s.textContent)).toBe("live");
		await screenshot(tab.page, "late-question-card");

		await sleep(2_000);
		const answeredAt = rpc.mark();
		const handle = (await tab.page.$("article.card"))!;
		await fill(tab.page, handle, 0, { pick: ["SQLite"] });
		await submit(handle);
		const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, what: "the late answer message" });
		expect(message.message.details).toMatchObject({
			late: true,
			requestId: ended.requestId,
			envelope: { status: "ok", answers: [{ question: "Which database?", answer: "SQLite" }] },
		});
		await tab.page.waitForFunction(() => document.querySelectorAll("article.card").length === 0, { polling: POLL_MS, timeout: 30_000 });
		expect(await tab.page.$eval("#traces", (t) => t.textContent)).toContain("answered on the page, in this tab");
		await rpc.waitForSettled({ from: rpc.frames.indexOf(message) });
		await sleep(500);
		expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
		expect(tab.errors).toEqual([]);
		expect(linkTab.errors).toEqual([]);
		expect(tab.foreignRequests).toEqual([]);
		await linkTab.page.close();
		await tab.page.close();
	});
});
