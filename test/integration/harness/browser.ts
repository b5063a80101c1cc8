/**
 * A real headless Chromium (Debian's `chromium`, driven by puppeteer-core) for the web answer
 * page's tests: a context of its own for each file or test that asks, in the project's one Chromium
 * (shared-browser.ts), nothing fetched from the network, and a screenshot of each test under the
 * run's output directory.
 */
import { existsSync, mkdirSync } from "node:fs";
import { get } from "node:http";
import { join, resolve } from "node:path";
import puppeteer, { type BrowserContext, type ElementHandle, type Page } from "puppeteer-core";
import { afterAll, beforeAll, inject } from "vitest";
import { CHROMIUM } from "./shared-browser.ts";

/** Whether Chromium is installed (`apt-get install -y chromium`; .ci/run installs it). */
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Interval of waitForFunction checks: the default (animation frames) never runs in a tab in the background. */
export const POLL_MS = 25;

const REPO_ROOT = resolve(import.meta.dirname, "../../..");
/** Where this run's screenshots go: `.tmp/test-output/web-page/<run>/`. */
const OUTPUT_DIR = join(REPO_ROOT, ".tmp/test-output/web-page", new Date().toISOString().replace(/[:.]/g, "-"));

/** The DevTools endpoint of the project's one Chromium (shared-browser.ts), launched by the first to ask. */
function sharedEndpoint(): Promise<string> {
	return new Promise((resolve, reject) => {
		get({ socketPath: inject("browserEndpoint"), path: "/" }, (response) => {
			let body = "";
			response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
			response.on("end", () => (response.statusCode === 200 ? resolve(body) : reject(new Error(body))));
		}).on("error", reject);
	});
}

/**
 * A browser of the caller's own: a context (its own cookies, storage and windows) in the project's one
 * Chromium. `close` closes the context and leaves Chromium to the other files.
 */
export async function openBrowser(): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
	const connection = await puppeteer.connect({ browserWSEndpoint: await sharedEndpoint() });
	const browser = await connection.createBrowserContext();
	return {
		browser,
		async close() {
			await browser.close().catch(() => {});
			await connection.disconnect().catch(() => {});
		},
	};
}

/**
 * A browser context for the test file: opened before its tests, closed after them. Where Chromium is
 * missing nothing is opened and `file` says once that its tests are skipped (they skip on HAS_CHROMIUM).
 */
export function browserForFile(file: string): { readonly browser: BrowserContext } {
	let launched: Awaited<ReturnType<typeof openBrowser>> | undefined;
	if (!HAS_CHROMIUM) console.warn(`${file}: skipped: Chromium is not installed (${CHROMIUM})`);
	beforeAll(async () => {
		if (HAS_CHROMIUM) launched = await openBrowser();
	});
	afterAll(async () => {
		await launched?.close();
	});
	return {
		get browser() {
			if (!launched) throw new Error(`${file}: no browser outside the file's tests`);
			return launched.browser;
		},
	};
}

/** A tab that records what the page did that it should not: dialogs (alert), page errors, requests off the host. */
export async function openTab(browser: BrowserContext, url: string, viewport = { width: 1024, height: 900 }) {
	const page = await browser.newPage();
	await page.setViewport(viewport);
	const dialogs: string[] = [];
	const errors: string[] = [];
	const foreignRequests: string[] = [];
	const origin = new URL(url).origin;
	page.on("dialog", (dialog) => {
		dialogs.push(dialog.message());
		void dialog.dismiss();
	});
	page.on("pageerror", (error) => errors.push(String(error)));
	page.on("console", (message) => {
		if (message.type() === "error" && !/favicon|status of 4\d\d/.test(message.text())) errors.push(message.text());
	});
	page.on("request", (request) => {
		if (!request.url().startsWith(origin) && !request.url().startsWith("data:")) foreignRequests.push(request.url());
	});
	await page.goto(url, { waitUntil: "domcontentloaded" });
	await page.waitForFunction(() => document.getElementById("status")?.textContent === "live", { timeout: 20_000, polling: POLL_MS });
	return { page, dialogs, errors, foreignRequests };
}

/** Saves a full-page screenshot under OUTPUT_DIR and prints where. */
export async function screenshot(page: Page, name: string): Promise<string> {
	mkdirSync(OUTPUT_DIR, { recursive: true });
	// A tab in the background is not painted.
	await page.bringToFront();
	const path = join(OUTPUT_DIR, `${name.replace(/[^a-z0-9-]+/gi, "-").slice(0, 80)}.png`) as `${string}.png`;
	await page.screenshot({ path, fullPage: true });
	console.log(`screenshot: ${path}`);
	return path;
}

/** The card of the request asked by `asker` (its title is `[asker]`), once it is on the page. */
export async function cardOf(page: Page, asker: string, timeoutMs = 30_000): Promise<ElementHandle<Element>> {
	await page.waitForFunction(
		(label) => [...document.querySelectorAll("article.card h2")].some((h) => h.textContent === `[${label}]`),
		{ timeout: timeoutMs, polling: POLL_MS },
		asker,
	);
	return (
		await page.evaluateHandle((label) => [...document.querySelectorAll("article.card")].find((c) => c.querySelector("h2")?.textContent === `[${label}]`), asker)
	).asElement() as ElementHandle<Element>;
}

/** Waits until no card of `asker` is on the page. */
export function cardGone(page: Page, asker: string, timeoutMs = 30_000) {
	return page.waitForFunction(
		(label) => ![...document.querySelectorAll("article.card h2")].some((h) => h.textContent === `[${label}]`),
		{ timeout: timeoutMs, polling: POLL_MS },
		asker,
	);
}

/** Fills question `index` (0-based) of a card: radio/checkbox labels are clicked, text typed (the answer, Other, the note). */
export async function fill(page: Page, card: ElementHandle<Element>, index: number, action: { pick?: string[]; type?: string; other?: string; note?: string }) {
	// Clicks reach only the tab in front.
	await page.bringToFront();
	const box = (await card.$$("fieldset.question"))[index]!;
	for (const label of action.pick ?? []) {
		const inputs = await box.$$("input[type=radio], input[type=checkbox]");
		let clicked = false;
		for (const input of inputs) {
			if (
				(await input.evaluate((i) => (i as HTMLInputElement).value)) === label ||
				(await input.evaluate((i) => i.closest("label")?.querySelector(".label")?.textContent)) === label
			) {
				await input.click();
				clicked = true;
				break;
			}
		}
		if (!clicked) throw new Error(`question ${index}: no choice ${JSON.stringify(label)}`);
	}
	if (action.type !== undefined) await (await box.$("input[type=text]:not(.other):not(.note), textarea"))!.type(action.type);
	if (action.other !== undefined) await (await box.$("input.other"))!.type(action.other);
	if (action.note !== undefined) await (await box.$("input.note"))!.type(action.note);
}

/** Clicks the card's submit button. */
export async function submit(card: ElementHandle<Element>) {
	await card.frame.page().bringToFront();
	await (await card.$("button[type=submit]"))!.click();
}
