/**
 * The web answer page in a real headless Chromium against a real pi host: an SDK session bound
 * with a UI, started with CHECKPOINT_BRIDGE_WEB, and relayed children (in-process sessions with
 * their own module copies, as pi-subagents makes them). Each test saves a screenshot under
 * .tmp/test-output/web-page/<run>/ and prints its path.
 */
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { askViaHost } from "../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { formSurface } from "../../extensions/checkpoint-bridge/surfaces/terminal-form/surface.ts";
import { startWebPage } from "../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { fakeCustomUI } from "../unit/support/fake-custom-ui.ts";
import { fakeUI } from "../unit/support/fake-ui.ts";
import { decodePixels } from "../unit/support/qr-decode.ts";
import { browserForFile, cardGone, cardOf, fill, HAS_CHROMIUM, openTab, POLL_MS, screenshot, submit } from "./harness/browser.ts";
import { type AskArgs, checkedEnvelope, PiWorld, type ProgrammaticUI } from "./harness/sdk-sessions.ts";

const ANNOUNCE = /^checkpoint-bridge: answer in a browser at (http:\/\/127\.0\.0\.1:\d+\/t\/[A-Za-z0-9_-]{43}\/)$/;
const XSS = "<img src=x onerror=alert(1)>";

const browser = browserForFile("web-page.test.ts");
let world: PiWorld;
const saved: Record<string, string | undefined> = {};
const setEnv = (name: string, value: string) => {
	if (!(name in saved)) saved[name] = process.env[name];
	process.env[name] = value;
};

beforeEach(() => {
	world = new PiWorld();
	setEnv("CHECKPOINT_BRIDGE_WEB", "127.0.0.1:0");
});
afterEach(async () => {
	await world.close();
	for (const [name, value] of Object.entries(saved)) {
		if (value === undefined) delete process.env[name];
		else process.env[name] = value;
		delete saved[name];
	}
});

/** A host serving the page; the URL as it announced it. */
async function hostWithPage(): Promise<{ ui: ProgrammaticUI; url: string }> {
	const { ui } = await world.createHost({ name: "main" });
	const line = await ui.waitFor(() => ui.notifications.find((n) => ANNOUNCE.test(n.message)), 10_000, "the page's announcement");
	return { ui, url: ANNOUNCE.exec(line.message)![1]! };
}

async function askingChild(name: string, ask: unknown) {
	const child = await world.createChild({ name, ask: ask as AskArgs });
	child.start();
	return child;
}

const portRefuses = (url: string) =>
	new Promise<boolean>((resolve) => http.get(url, () => resolve(false)).on("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED")));

describe.skipIf(!HAS_CHROMIUM)("web answer page in Chromium, SDK host", () => {
	it("Enter in a text field goes to the next open question, and sends the card once every question has an answer", async () => {
		const { ui, url } = await hostWithPage();
		const child = await askingChild("namer", {
			questions: [
				{ id: "name", question: "Project name?", placeholder: "type a name and press Enter" },
				{ id: "license", question: "Which license?", options: ["MIT", "Apache-2.0"] },
			],
		});
		const dialog = await ui.waitForDialog((d) => d.title.startsWith("[namer]"), 10_000, "the child's first dialog");
		const tab = await openTab(browser.browser, url);
		const card = await cardOf(tab.page, "namer");
		await fill(tab.page, card, 0, { type: "atlas" });
		await tab.page.keyboard.press("Enter");
		// Not sent: the license is open, so Enter moved there.
		expect(await tab.page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe("q1");
		expect(dialog.open).toBe(true);
		await fill(tab.page, card, 1, { pick: ["MIT"] });
		await (await card.$("input[name=q0]"))!.focus();
		await tab.page.keyboard.press("Enter");
		await child.done(20_000);
		expect(checkedEnvelope(child).answers).toEqual([
			{ id: "name", question: "Project name?", answer: "atlas", kind: "text", source: "web" },
			{ id: "license", question: "Which license?", answer: "MIT", kind: "option", source: "web" },
		]);
	});

	it("a request's QR code reads as its own link and nothing else; Accept the recommendations answers with them, naming a question without one; no time limit shown", async () => {
		const { ui, url } = await hostWithPage();
		const child = await askingChild("phone", {
			timeoutMs: 0,
			questions: [
				{ id: "db", header: "Storage", question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" },
				{ id: "areas", question: "Which areas?", options: ["api", "cli", "docs"], multiSelect: true, recommended: "docs" },
				{ id: "codename", question: "Codename?", options: ["aurora", "borealis"] },
			],
		});
		const dialog = await ui.waitForDialog((d) => d.title.startsWith("[phone]"), 10_000, "the child's first dialog");
		const tab = await openTab(browser.browser, url);
		const card = await cardOf(tab.page, "phone");
		// The call has no budget; the dialog the host shows still has its own time.
		expect(await card.$eval(".countdown", (c) => c.textContent)).toMatch(/^question \d:\d\d left · call no limit$/);
		expect(await card.$eval("figcaption", (c) => c.textContent)).toBe("open on your phone");
		await tab.page.waitForFunction(() => (document.querySelector<HTMLImageElement>(".qr img")?.naturalWidth ?? 0) > 0, { polling: POLL_MS, timeout: 10_000 });
		// The code as the browser drew it, read back in Node by jsqr.
		const drawn = await card.evaluate((c) => {
			const image = c.querySelector<HTMLImageElement>(".qr img")!;
			const canvas = document.createElement("canvas");
			canvas.width = canvas.height = 512;
			const g = canvas.getContext("2d")!;
			g.fillStyle = "#fff";
			g.fillRect(0, 0, 512, 512);
			g.drawImage(image, 0, 0, 512, 512);
			return { pixels: [...g.getImageData(0, 0, 512, 512).data], link: c.querySelector<HTMLAnchorElement>("a.own-link")!.href };
		});
		const read = decodePixels(new Uint8ClampedArray(drawn.pixels), 512, 512);
		expect(read, "the code is the request's own link").toBe(drawn.link);
		expect(read).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/r\/[\w-]{43}\/$/);
		expect(read, "never the page token").not.toContain(new URL(url).pathname.split("/")[2]);
		await screenshot(tab.page, "qr-and-accept");

		// Accept: the two with a recommendation are filled, the third is named and nothing is sent.
		await tab.page.bringToFront();
		await (await card.$("button.accept"))!.click();
		expect(await card.$eval(".message", (m) => m.textContent)).toBe("No recommendation to accept for: 3. Codename?. Answer it, then send.");
		expect(dialog.open).toBe(true);
		await fill(tab.page, card, 2, { pick: ["borealis"] });
		await (await card.$("button.accept"))!.click();
		await child.done(20_000);
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("ok");
		expect(envelope.answers).toEqual([
			{ id: "db", question: "Which database?", answer: "SQLite", kind: "option", recommended: true, source: "web" },
			{ id: "areas", question: "Which areas?", answer: "docs", kind: "option", values: ["docs"], recommended: true, source: "web" },
			{ id: "codename", question: "Codename?", answer: "borealis", kind: "option", source: "web" },
		]);
		expect(tab.dialogs).toEqual([]);
	});

	it("shows a relayed child's request as a card with every question kind; one submit answers all of them with source web and closes the host's dialog", async () => {
		const { ui, url } = await hostWithPage();
		const child = await askingChild("deployer", {
			questions: [
				{
					id: "db",
					header: "Storage",
					question: "Which database?",
					details: "Both work with the ORM.",
					options: [
						{ label: "Postgres", description: "relational, needs a server" },
						{ label: "SQLite", description: "one file" },
					],
					recommended: "SQLite",
				},
				{ id: "targets", question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true },
				{ id: "license", question: "Which license?", options: ["MIT", "Apache-2.0"] },
				{ id: "go", question: "Ship it now?", kind: "confirm" },
				{ id: "name", question: "Project name?", placeholder: "e.g. atlas" },
			],
		});
		const dialog = await ui.waitForDialog((d) => d.title.startsWith("[deployer]"), 10_000, "the child's first dialog");
		const tab = await openTab(browser.browser, url);
		const card = await cardOf(tab.page, "deployer");
		const view = await card.evaluate((c) => ({
			where: c.querySelector(".where")?.textContent,
			countdown: c.querySelector(".countdown")?.textContent,
			legends: [...c.querySelectorAll("legend")].map((l) => l.textContent),
			details: c.querySelector(".details")?.textContent,
			firstChoices: [...c.querySelectorAll("fieldset")][0]!.querySelectorAll(".choice .label").length,
			recommended: [...c.querySelectorAll("fieldset")][0]!.querySelector(".choice")?.textContent,
			kinds: [...c.querySelectorAll("fieldset")].map((f) => [...f.querySelectorAll("input")].map((i) => i.type).join(",")),
			placeholder: c.querySelector<HTMLInputElement>("fieldset:last-of-type input")?.placeholder,
		}));
		expect(view.where).toBe("question 1 on screen in the terminal");
		expect(view.countdown).toMatch(/^question \d+:\d\d left · call \d+:\d\d$/);
		expect(view.legends).toEqual([
			"(1/5) Storage: Which database?",
			"(2/5) Which targets?",
			"(3/5) Which license?",
			"(4/5) Ship it now?",
			"(5/5) Project name?",
		]);
		expect(view.details).toBe("Both work with the ORM.");
		// The recommended option first, marked, with its description; "Other" offered (allowOther defaults on).
		expect(view.recommended).toBe("SQLiterecommendedone file");
		// Each question ends with its note field (a note goes with the answer, as in the terminal form).
		expect(view.kinds).toEqual([
			"radio,radio,radio,text,text",
			"checkbox,checkbox,checkbox,text,text",
			"radio,radio,radio,text,text",
			"radio,radio,text",
			"text,text",
		]);
		expect(view.placeholder).toBe("e.g. atlas");

		// Sent incomplete: the page says what is missing and sends nothing.
		await submit(card);
		expect(await card.$eval(".message", (m) => m.textContent)).toBe("Question 1: pick one.");
		expect(dialog.open).toBe(true);
		await fill(tab.page, card, 0, { pick: ["SQLite"] });
		// Answering clears what the last send said.
		expect(await card.$eval(".message", (m) => m.textContent)).toBe("");
		await fill(tab.page, card, 1, { pick: ["mac", "linux"], other: "bsd" });
		await fill(tab.page, card, 2, { pick: ["Other"], other: "BSD-3-Clause" });
		await fill(tab.page, card, 3, { pick: ["No"] });
		await fill(tab.page, card, 4, { type: "atlas" });
		await screenshot(tab.page, "every-question-kind-filled");
		await submit(card);

		await child.done(20_000);
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("ok");
		expect(envelope.answers).toEqual([
			{ id: "db", question: "Which database?", answer: "SQLite", kind: "option", source: "web", recommended: true },
			{ id: "targets", question: "Which targets?", answer: "linux, mac, bsd", kind: "other", values: ["linux", "mac", "bsd"], source: "web" },
			{ id: "license", question: "Which license?", answer: "BSD-3-Clause", kind: "other", source: "web" },
			{ id: "go", question: "Ship it now?", answer: "no", kind: "confirm", source: "web" },
			{ id: "name", question: "Project name?", answer: "atlas", kind: "text", source: "web" },
		]);
		// The host's dialog closed at once, and no other was opened.
		expect(dialog.outcome).toEqual({ how: "signal" });
		expect(ui.dialogs).toHaveLength(1);
		await cardGone(tab.page, "deployer");
		expect(await tab.page.$eval("#traces", (t) => t.textContent)).toContain("[deployer] answered on the page, in this tab");
		expect(tab.dialogs).toEqual([]);
		expect(tab.errors).toEqual([]);
		expect(tab.foreignRequests).toEqual([]);
		await tab.page.close();
	});

	it("a request answered in the terminal leaves the page at once with a trace; the page closes with the host", async () => {
		const { ui, url } = await hostWithPage();
		const tab = await openTab(browser.browser, url);
		expect(await tab.page.$eval("#empty", (e) => e.textContent)).toBe("No open questions. New ones appear here as they are asked.");
		const child = await askingChild("reviewer", { questions: [{ question: "Does the missing test block the merge?", options: ["blocks", "follow-up"] }] });
		await cardOf(tab.page, "reviewer");
		const dialog = await ui.waitForDialog((d) => d.title.startsWith("[reviewer]"));
		dialog.answer("follow-up");
		await cardGone(tab.page, "reviewer", 5_000);
		expect(await tab.page.$eval("#traces", (t) => t.textContent)).toContain("[reviewer] answered in the RPC client's dialog");
		await screenshot(tab.page, "answered-in-the-terminal");
		await child.done();
		expect(checkedEnvelope(child).answers).toEqual([
			{ question: "Does the missing test block the merge?", answer: "follow-up", kind: "option", source: "dialog" },
		]);
		// Quit: the page stops serving, and its tab is told it is disconnected or reconnecting.
		await world.sessions[0]!.shutdown();
		expect(await portRefuses(url)).toBe(true);
		await tab.page.close();
	});

	it("two tabs race: one wins, the other is told and its answer is not applied", async () => {
		const { url } = await hostWithPage();
		const child = await askingChild("tagger", { questions: [{ question: "Tag the release?", options: ["v1.0.0", "v1.0.0-rc.1"] }] });
		const a = await openTab(browser.browser, url);
		const b = await openTab(browser.browser, url);
		const cardA = await cardOf(a.page, "tagger");
		const cardB = await cardOf(b.page, "tagger");
		await fill(a.page, cardA, 0, { pick: ["v1.0.0"] });
		await fill(b.page, cardB, 0, { pick: ["v1.0.0-rc.1"] });
		// B submits first but its request is held on the way, so A's answer arrives first.
		await b.page.evaluate(() => {
			const real = window.fetch.bind(window);
			(window as unknown as { release?: () => void }).release = undefined;
			window.fetch = (...args: Parameters<typeof fetch>) =>
				new Promise((resolve) => ((window as unknown as { release: () => void }).release = () => resolve(real(...args))));
		});
		await submit(cardB);
		await b.page.waitForFunction(() => typeof (window as unknown as { release?: () => void }).release === "function", { polling: POLL_MS, timeout: 20_000 });
		await submit(cardA);
		await child.done();
		expect(checkedEnvelope(child).answers).toEqual([{ question: "Tag the release?", answer: "v1.0.0", kind: "option", source: "web" }]);
		await b.page.evaluate(() => (window as unknown as { release: () => void }).release());
		await b.page.waitForFunction(() => !document.getElementById("notice")!.hidden, { polling: POLL_MS, timeout: 20_000 });
		expect(await b.page.$eval("#notice", (n) => n.textContent)).toBe(
			"[tagger] not applied: this request is already closed (answered on the page, in another tab)",
		);
		await cardGone(b.page, "tagger");
		expect(await b.page.$eval("#traces", (t) => t.textContent)).toContain("[tagger] answered on the page, in another tab");
		await screenshot(b.page, "two-tabs-the-losing-tab");
		expect(await a.page.$eval("#notice", (n) => (n as HTMLElement).hidden)).toBe(true);
		expect(checkedEnvelope(child).answers[0]!.answer).toBe("v1.0.0");
		await a.page.close();
		await b.page.close();
	});

	it("a shared answer given in a second tab: both askers' traces say what was answered, the page and which tab, never the terminal", async () => {
		const { ui, url } = await hostWithPage();
		const same = { questions: [{ question: "Which license?", options: ["MIT", "Apache-2.0"] }] };
		const planner = await askingChild("planner", same);
		const dialog = await ui.waitForDialog((d) => d.title.startsWith("[planner]"), 10_000, "the planner's dialog");
		const reviewer = await askingChild("reviewer", same);
		const a = await openTab(browser.browser, url);
		const b = await openTab(browser.browser, url);
		await cardOf(a.page, "reviewer");
		const card = await cardOf(b.page, "planner");
		await fill(b.page, card, 0, { pick: ["Apache-2.0"] });
		await submit(card);
		await Promise.all([planner.done(), reviewer.done()]);
		expect(checkedEnvelope(reviewer).answers).toMatchObject([{ answer: "Apache-2.0", source: "shared", sharedWith: ["planner"] }]);
		expect(dialog.outcome).toEqual({ how: "signal" });
		const traces = async (tab: typeof a) => {
			await tab.page.waitForFunction(() => document.querySelectorAll("#traces li").length === 2, { polling: POLL_MS, timeout: 20_000 });
			return tab.page.$$eval("#traces li", (items) => items.map((li) => li.textContent!.replace(/ · [^·]*$/, "")).sort());
		};
		expect(await traces(a), "the other tab").toEqual([
			"[planner] answered on the page, in another tab: Apache-2.0",
			"[reviewer] answered with planner's answer (given on the page, in another tab): Apache-2.0",
		]);
		expect(await traces(b), "the tab that answered").toEqual([
			"[planner] answered on the page, in this tab: Apache-2.0",
			"[reviewer] answered with planner's answer (given on the page, in this tab): Apache-2.0",
		]);
		await screenshot(a.page, "shared-answer-other-tab");
		await a.page.close();
		await b.page.close();
	});

	it("a request's own link (from the notify command) shows and answers that request only, and is dead once it settles", async () => {
		const dir = tempDir("cb-web-notify-");
		setEnv("CHECKPOINT_BRIDGE_NOTIFY_COMMAND", `printf '%s' "$CHECKPOINT_BRIDGE_URL" > "${dir}/$CHECKPOINT_BRIDGE_ASKER"`);
		const { ui } = await hostWithPage();
		const first = await askingChild("planner", { questions: [{ question: "Which naming convention?", options: ["camelCase", "snake_case"] }] });
		await ui.waitForDialog((d) => d.title.startsWith("[planner]"));
		const second = await askingChild("writer", { questions: [{ question: "Project name?", placeholder: "e.g. atlas" }] });
		// The shell creates the file before printf writes into it: wait for its text, not the file.
		const written = (name: string) => existsSync(join(dir, name)) && readFileSync(join(dir, name), "utf8").length > 0;
		for (let i = 0; i < 500 && !(written("writer") && written("planner")); i++) await new Promise((resolve) => setTimeout(resolve, 20));
		const link = readFileSync(join(dir, "writer"), "utf8");
		expect(link, "the request's own link, marked as the notify command's").toMatch(/^http:\/\/127\.0\.0\.1:\d+\/r\/[A-Za-z0-9_-]{43}\/\?via=notify$/);
		const tab = await openTab(browser.browser, link, { width: 390, height: 844 });
		const card = await cardOf(tab.page, "writer");
		// Only that request: the planner's, open at the same time, is not on it.
		expect(await tab.page.$$eval("article.card h2", (h) => h.map((x) => x.textContent))).toEqual(["[writer]"]);
		expect(await tab.page.$("a.own-link")).toBeNull();
		expect(await tab.page.$eval("#history", (h) => (h as HTMLElement).hidden)).toBe(true);
		await fill(tab.page, card, 0, { type: "atlas" });
		await submit(card);
		await second.done();
		expect(checkedEnvelope(second).answers).toEqual([{ question: "Project name?", answer: "atlas", kind: "text", source: "web" }]);
		await tab.page.waitForFunction(
			() => document.getElementById("status")!.textContent === "This request has settled: answered through the link the notify command sent.",
			{
				polling: POLL_MS,
				timeout: 20_000,
			},
		);
		await screenshot(tab.page, "request-link-settled");
		const dead = await tab.page.goto(link);
		expect(dead?.status()).toBe(410);
		expect(await dead?.text()).toBe("this request has settled: answered through the link the notify command sent\n");
		// The planner's request was never touched.
		expect(ui.openDialogs().map((d) => d.title)).toEqual(["[planner] Which naming convention?"]);
		ui.openDialogs()[0]!.answer("snake_case");
		await first.done();
		await tab.page.close();
	});

	it("one clock on the page and in the terminal form for the same request: the question's time and the call's, each labelled", async () => {
		// The terminal form as pi's TUI builds it (the real component, drawn with pi-tui's width handling), on a handle of its own.
		const handle = createHandle();
		const forms = fakeCustomUI();
		const role = claimHostRole(handle, { ui: { notify: () => {} }, surface: formSurface(forms.ui, { keyGuardMs: 0 }), sessionId: "clock-host" })!;
		const page = await startWebPage({ handle, address: { host: "127.0.0.1", port: 0, loopback: true }, notifyCommand: () => undefined });
		const ask = (label: string) =>
			askViaHost({
				handle,
				asker: { label, sessionId: `${label}-session` },
				questions: [{ question: `${label}: which database?`, options: ["Postgres", "SQLite"] }],
				budgetMs: 300_000,
				dialogTimeoutMs: 180_000,
			});
		try {
			const calls = [ask("shown"), ask("queued")];
			const tab = await openTab(browser.browser, page.url);
			const shown = await cardOf(tab.page, "shown");
			const queued = await cardOf(tab.page, "queued");
			const terminal = () => forms.current()!.screen().split("\n")[1]!;
			// Right after a tick of the page's countdown both read the same clock; a second boundary between the two reads is tried
			// again (on a busy machine the two reads can straddle one several times in a row).
			let same: { page: string; terminal: string } | undefined;
			for (let i = 0; i < 10 && !same; i++) {
				const before = await shown.$eval(".countdown", (c) => c.textContent);
				await tab.page.waitForFunction(
					(card, was) => card.querySelector(".countdown")!.textContent !== was,
					{ polling: POLL_MS, timeout: 5_000 },
					shown,
					before,
				);
				const read = { page: (await shown.$eval(".countdown", (c) => c.textContent))!, terminal: terminal() };
				if (read.terminal.includes(` · ${read.page} · `)) same = read;
			}
			expect(same, "the page's countdown is the terminal's").toBeDefined();
			expect(same!.page).toMatch(/^question 2:5\d left · call 4:5\d$/);
			expect(same!.terminal).toBe(` [shown] · ${same!.page} · 1 question`);
			expect(await queued.$eval(".countdown", (c) => c.textContent), "a queued request has only the call's time").toMatch(/^call 4:5\d left$/);
			await screenshot(tab.page, "one-clock");
			forms.current()!.press("enter");
			await tab.page.waitForFunction(
				(card) => /^question 2:5\d left · call 4:5\d$/.test(card.querySelector(".countdown")!.textContent ?? ""),
				{ polling: POLL_MS, timeout: 5_000 },
				queued,
			);
			forms.current()!.press("enter");
			expect((await Promise.all(calls)).map((e) => e.status)).toEqual(["ok", "ok"]);
			await tab.page.close();
		} finally {
			role.release("quit", "test over");
			await page.close();
		}
	});

	it("the page tells ends apart by the typed end: a dismiss and a dialog's own timeout (one status) read differently, both marked unanswered", async () => {
		const handle = createHandle();
		const fake = fakeUI();
		const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "ends-host" })!;
		const page = await startWebPage({ handle, address: { host: "127.0.0.1", port: 0, loopback: true }, notifyCommand: () => undefined });
		const ask = (label: string, dialogTimeoutMs: number) =>
			askViaHost({
				handle,
				asker: { label, sessionId: label },
				questions: [{ question: `${label}?`, options: ["a", "b"] }],
				budgetMs: 60_000,
				dialogTimeoutMs,
			});
		try {
			const tab = await openTab(browser.browser, page.url);
			const answered = ask("answered", 60_000);
			await cardOf(tab.page, "answered");
			fake.current()!.answer("a");
			const dismissed = ask("dismissed", 60_000);
			await cardOf(tab.page, "dismissed");
			fake.current()!.answer(undefined);
			const slow = ask("slow", 200);
			expect((await Promise.all([answered, dismissed, slow])).map((e) => e.status)).toEqual(["ok", "timeout-or-cancelled", "timeout-or-cancelled"]);
			await tab.page.waitForFunction(() => document.querySelectorAll("#traces li").length === 3, { polling: POLL_MS, timeout: 20_000 });
			const traces = await tab.page.$$eval("#traces li", (items) =>
				items.map((li) => ({
					text: li.textContent!.replace(/ · [^·]*$/, ""),
					end: (li as HTMLElement).dataset.end,
					unanswered: li.classList.contains("unanswered"),
				})),
			);
			expect(traces.reverse()).toEqual([
				{ text: "[answered] answered in the terminal: a", end: "answered", unanswered: false },
				{ text: "[dismissed] dismissed in the terminal, or its dialog timed out", end: "dismissed", unanswered: true },
				{ text: "[slow] closed unanswered at its dialog's own time limit", end: "dialog-timeout", unanswered: true },
			]);
			await screenshot(tab.page, "ends-told-apart");
			expect(tab.errors).toEqual([]);
			await tab.page.close();
		} finally {
			role.release("quit", "test over");
			await page.close();
		}
	});

	it("an asker's text is shown as text and runs nothing", async () => {
		const { url } = await hostWithPage();
		await askingChild("prober", {
			questions: [
				{
					header: "<b>h</b>",
					question: XSS,
					details: `<script>alert(2)</script>`,
					options: [{ label: XSS, description: "<i onmouseover=alert(3)>d</i>" }, "plain"],
				},
				{ question: "Name?", placeholder: '"><img src=x onerror=alert(4)>' },
			],
		});
		const tab = await openTab(browser.browser, url);
		const card = await cardOf(tab.page, "prober");
		const seen = await card.evaluate((c) => ({
			legend: c.querySelector("legend")?.textContent,
			details: c.querySelector(".details")?.textContent,
			option: c.querySelector(".choice .label")?.textContent,
			// The QR code of its own link is the one image the page itself adds.
			elements: [...c.querySelectorAll("img, script, b, i")].filter((e) => !e.closest("figure.qr")).length,
		}));
		expect(seen).toEqual({ legend: `(1/2) <b>h</b>: ${XSS}`, details: "<script>alert(2)</script>", option: XSS, elements: 0 });
		await card.hover();
		await new Promise((resolve) => setTimeout(resolve, 300));
		await screenshot(tab.page, "asker-text-as-text");
		expect(tab.dialogs).toEqual([]);
		expect(tab.errors).toEqual([]);
		expect(tab.foreignRequests).toEqual([]);
		await tab.page.close();
	});

	it("fits a 390 px phone screen without horizontal scrolling", async () => {
		const { url } = await hostWithPage();
		const long = "a".repeat(120);
		await askingChild("planner-of-the-storage-layer-migration", {
			questions: [
				{
					header: "Storage",
					question: `Which storage backend should ${long} use?`,
					details: `/very/long/path/${long}/file.ts`,
					options: [
						{
							label: `option-${"x".repeat(70)}`,
							description: "d".repeat(190),
							preview: `const storage = createStorage({ path: "${long}" });\n  return storage;`,
						},
						"short",
					],
				},
				{ question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true },
			],
		});
		const tab = await openTab(browser.browser, url, { width: 390, height: 844 });
		await cardOf(tab.page, "planner-of-the-storage-layer-migration");
		const widths = await tab.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth, body: document.body.scrollWidth }));
		expect(widths.inner).toBe(390);
		// An option's preview (code) is shown as text, wrapped.
		expect(await tab.page.$eval("pre.preview", (p) => p.textContent)).toContain("const storage = createStorage(");
		expect(widths.scroll).toBeLessThanOrEqual(390);
		expect(widths.body).toBeLessThanOrEqual(390);
		await screenshot(tab.page, "phone-390px");
		await tab.page.close();
	});
});
