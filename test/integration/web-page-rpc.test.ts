/**
 * The web answer page in a real headless Chromium against the real `pi --mode rpc` as host, with
 * pi-subagents foreground children: the page announced in an RPC notify, a child's batch answered
 * in the browser (the RPC client's dialog is dropped: nothing more is asked, a late reply changes
 * nothing), then a child's question answered by the RPC client (its card leaves the page).
 */
import { afterEach, describe, expect, it } from "vitest";
import { PAGE_ANNOUNCEMENT } from "../support/page-link.ts";
import { browserForFile, cardGone, cardOf, fill, HAS_CHROMIUM, openTab, screenshot, submit } from "./harness/browser.ts";
import { childAskResults, isDialog, isNotify, onlyEnvelope, PiRpcFixture } from "./harness/pi-cli.ts";

/** pi-subagents compiles on a cold start: allow for it on a busy machine. */
const FIRST_DIALOG_MS = 90_000;

const browser = browserForFile("web-page-rpc.test.ts");

describe.skipIf(!HAS_CHROMIUM)("web answer page in Chromium, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	afterEach(() => run.stop());

	it("a child's batch answered in the browser reaches the child with source web; a question answered in the RPC client leaves the page", async () => {
		run.createEnv({
			agents: ["checkpoint-planner", "checkpoint-reviewer"],
			env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" },
			script: {
				prompts: {
					plan: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer." } },
					review: { subagent: { agent: "checkpoint-reviewer", task: "Review the change." } },
				},
				children: {
					"checkpoint-planner": {
						questions: [
							{ question: "Which storage backend?", options: ["sqlite", "postgres"] },
							{ question: "Name of the new table?", placeholder: "snake_case" },
						],
					},
					"checkpoint-reviewer": { questions: [{ question: "Does the missing test block the merge?", options: ["blocks the merge", "follow-up issue"] }] },
				},
			},
		});
		const pi = run.startPi({ subagents: true });
		await pi.command("get_state", {}, FIRST_DIALOG_MS);
		// `/checkpoints` shows the page's URL again (pi 0.85 sends no notice before its client's first command).
		const mark = pi.mark();
		await pi.prompt("/checkpoints");
		const report = await pi.waitFor((f) => isNotify(f) && String(f.message).includes("checkpoint-bridge: no questions open."), {
			from: mark,
			what: "the /checkpoints report",
		});
		const url = PAGE_ANNOUNCEMENT.exec(String(report.message))?.[1];
		expect(url, String(report.message)).toBeDefined();
		const announced = pi.frames.filter((f) => isNotify(f) && PAGE_ANNOUNCEMENT.test(String(f.message)) && f !== report);
		if (announced.length) expect(PAGE_ANNOUNCEMENT.exec(String(announced[0]!.message))![1]).toBe(url);
		const tab = await openTab(browser.browser, url!);

		// 1. Answered in the browser.
		let start = pi.mark();
		await pi.prompt("plan");
		const dialog = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		expect(dialog.title).toBe("[subagent-checkpoint-planner] (1/2) Which storage backend?");
		const card = await cardOf(tab.page, "subagent-checkpoint-planner");
		await fill(tab.page, card, 0, { pick: ["postgres"] });
		await fill(tab.page, card, 1, { type: "storage_items" });
		await screenshot(tab.page, "rpc-host-child-batch");
		await submit(card);
		const subagentEnd = await pi.waitForToolEnd("subagent", { from: start, timeoutMs: 60_000 });
		const envelope = onlyEnvelope(childAskResults(subagentEnd)[0]!);
		expect(envelope.status).toBe("ok");
		expect(envelope.answers).toEqual([
			{ question: "Which storage backend?", answer: "postgres", kind: "option", source: "web" },
			{ question: "Name of the new table?", answer: "storage_items", kind: "text", source: "web" },
		]);
		await cardGone(tab.page, "subagent-checkpoint-planner");
		// The client's dialog was dropped: the second question was never asked, and a late reply to the first changes nothing.
		pi.answer(dialog, "sqlite");
		await pi.waitForSettled({ from: start });
		expect(pi.frames.slice(start).filter(isDialog)).toHaveLength(1);
		expect(onlyEnvelope(childAskResults(subagentEnd)[0]!).answers[0]!.answer).toBe("postgres");

		// 2. Answered in the RPC client.
		start = pi.mark();
		await pi.prompt("review");
		const question = await pi.waitForDialog({ from: start, timeoutMs: FIRST_DIALOG_MS });
		await cardOf(tab.page, "subagent-checkpoint-reviewer");
		pi.answer(question, "follow-up issue");
		await cardGone(tab.page, "subagent-checkpoint-reviewer");
		expect(await tab.page.$eval("#traces", (t) => t.textContent)).toContain("[subagent-checkpoint-reviewer] answered in the RPC client's dialog");
		await screenshot(tab.page, "rpc-host-answered-in-the-client");
		const reviewed = onlyEnvelope(childAskResults(await pi.waitForToolEnd("subagent", { from: start, timeoutMs: 60_000 }))[0]!);
		expect(reviewed.answers).toEqual([{ question: "Does the missing test block the merge?", answer: "follow-up issue", kind: "option", source: "dialog" }]);
		expect(tab.errors).toEqual([]);
		expect(tab.foreignRequests).toEqual([]);

		// 3. `/checkpoints web off` closes the page; `/checkpoints web` serves it again, with a new token.
		let from = pi.mark();
		await pi.prompt("/checkpoints web off");
		await pi.waitFor((f) => isNotify(f) && f.message === "checkpoint-bridge: the answer page is closed; its links no longer work", {
			from,
			what: "the closing notice",
		});
		await tab.page.waitForFunction(() => document.getElementById("status")!.textContent !== "live", { polling: 25, timeout: 20_000 });
		from = pi.mark();
		await pi.prompt("/checkpoints web");
		const again = await pi.waitFor((f) => isNotify(f) && PAGE_ANNOUNCEMENT.test(String(f.message)), { from, what: "the new announcement" });
		const next = PAGE_ANNOUNCEMENT.exec(String(again.message))![1]!;
		expect(next).not.toBe(url);
		// Nothing listens where the closed page was.
		await expect(tab.page.goto(url!)).rejects.toThrow(/ERR_CONNECTION_REFUSED/);
		expect((await tab.page.goto(next))?.status()).toBe(200);
		await tab.page.close();
	});
});
