/**
 * Figure 6: the web answer page in a real headless Chromium (Debian's, driven by puppeteer-core).
 * This process holds the host role with a UI whose dialogs stay open (the human is at the page,
 * not at the terminal) and serves the page on a loopback port; one tab shows it. Then, one
 * request at a time:
 * - ask -> card visible: from the askViaHost call to the card being in the tab's DOM (a
 *   MutationObserver in the tab reports it through a puppeteer binding, one CDP message);
 * - web submit -> asker result: from the submit in the tab (triggered over CDP, one message) to
 *   the asker's promise settling with the page's answer.
 * Prints one JSON document on stdout; `{ skipped }` when Chromium is missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { startWebPage } from "../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { HAS_CHROMIUM } from "../test/integration/harness/browser.ts";
import { launchChromium } from "../test/integration/harness/shared-browser.ts";
import { summary } from "./stats.mjs";

const WARMUP = 5;
const SAMPLES = 50;

if (!HAS_CHROMIUM) {
	console.log(JSON.stringify({ skipped: "Chromium not found at /usr/bin/chromium (apt-get install -y chromium)" }));
	process.exit(0);
}

const handle = createHandle();
// Dialogs stay open until the page's answer closes them through their signal.
const never = (_title, _options, opts) => new Promise((resolve) => opts?.signal?.addEventListener("abort", () => resolve(undefined), { once: true }));
const ui = { select: never, input: never, notify() {}, setStatus() {} };
const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
const page = await startWebPage({ handle, address: { host: "127.0.0.1", port: 0, loopback: true }, notifyCommand: () => undefined });

// A Chromium of the bench's own: the tests' shared one lives only while vitest runs.
const profile = mkdtempSync(join(tmpdir(), "cb-bench-chromium-"));
const browser = await launchChromium(profile);
try {
	const tab = await browser.newPage();
	const seen = new Map();
	await tab.exposeFunction("cardSeen", (label) => seen.get(label)?.(performance.now()));
	await tab.goto(page.url);
	await tab.waitForFunction(() => document.getElementById("status")?.textContent === "live", { polling: 10 });
	await tab.evaluate(() => {
		new MutationObserver((records) => {
			for (const record of records)
				for (const node of record.addedNodes)
					if (node instanceof HTMLElement && node.matches("article.card")) window.cardSeen(node.querySelector("h2").textContent.slice(1, -1));
		}).observe(document.getElementById("cards"), { childList: true });
	});

	const visibleMs = [];
	const answeredMs = [];
	for (let i = 0; i < WARMUP + SAMPLES; i++) {
		const label = `asker-${i}`;
		const shown = new Promise((resolve) => seen.set(label, resolve));
		const askedAt = performance.now();
		const call = askViaHost({
			handle,
			asker: { label, sessionId: label },
			questions: [{ question: `Proceed with step ${i}?`, options: ["yes", "no"] }],
			budgetMs: 60_000,
			dialogTimeoutMs: 60_000,
		});
		const visibleAt = await shown;
		const pick = i % 2 ? "no" : "yes";
		const submittedAt = performance.now();
		await tab.evaluate((value) => {
			const card = document.querySelector("article.card");
			card.querySelector(`input[value="${value}"]`).click();
			card.querySelector("form").requestSubmit();
		}, pick);
		const envelope = await call;
		const settledAt = performance.now();
		if (envelope.status !== "ok" || envelope.answers[0]?.answer !== pick || envelope.answers[0]?.source !== "web")
			throw new Error(`step ${i}: ${JSON.stringify(envelope)}`);
		if (i >= WARMUP) {
			visibleMs.push(visibleAt - askedAt);
			answeredMs.push(settledAt - submittedAt);
		}
		// The next card must be a new node: wait for this one to leave.
		await tab.waitForFunction(() => !document.querySelector("article.card"), { polling: 5 });
	}
	console.log(
		JSON.stringify({ chromium: await browser.version(), samples: SAMPLES, askToCardVisibleMs: summary(visibleMs), webSubmitToResultMs: summary(answeredMs) }),
	);
} finally {
	await browser.close();
	rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
	await page.close();
	role?.release("quit", "bench over");
}
