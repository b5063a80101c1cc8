/**
 * Decline from the page, in a real headless Chromium, against a real `pi --mode rpc` host: the
 * card's Decline gives the asker the envelope the terminal's Esc gives, its note saying it was
 * declined on the page; and a relayed permission gate (another extension's confirm, relayed by
 * interop/dialog-relay.ts as a sub-agent's would be) declined on the page is a "no".
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awayAsk, writeAwayAsker } from "./harness/away-asker.ts";
import { browserForFile, HAS_CHROMIUM } from "./harness/browser.ts";
import { BRIDGE_EXT, isNotify, type PiEnv, type PiRpc, PiRpcFixture } from "./harness/pi-cli.ts";

const browser = browserForFile("away-decline.test.ts");
const GATE_REPORT = "gate:result ";

/** A command `/gate` that opens a confirm through the bridge's relayed UI, as another session's extension, and reports what it got. */
function writeGate(piEnv: PiEnv): string {
	const root = dirname(BRIDGE_EXT);
	const file = join(piEnv.root, "gate.ts");
	writeFileSync(
		file,
		`
import { askViaHost } from ${JSON.stringify(join(root, "core", "asking", "asker.ts"))};
import { relayedUI } from ${JSON.stringify(join(root, "interop", "dialog-relay.ts"))};
const HANDLE = Symbol.for("checkpoint-bridge.handle");
export default function gate(pi) {
	let ui;
	pi.on("session_start", (_event, ctx) => { ui = ctx.ui; });
	pi.registerCommand("gate", {
		description: "a relayed permission gate",
		handler: async () => {
			const asker = { label: "gatekeeper", sessionId: "gate-session" };
			const relayed = relayedUI({}, {
				asker: () => asker,
				ask: (options) => askViaHost({ handle: globalThis[HANDLE], ...options }),
				budgetMs: () => 120000,
				notify: () => {},
			});
			void relayed.confirm("Run rm -rf build/?", "The build folder is deleted.").then((confirmed) => ui.notify(${JSON.stringify(GATE_REPORT)} + JSON.stringify({ confirmed }), "info"));
		},
	});
}
`,
	);
	return file;
}

describe.skipIf(!HAS_CHROMIUM)("Decline on the page, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	let pi: PiRpc;
	let pageUrl: string;
	beforeAll(async () => {
		const piEnv = run.createEnv({ env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0" } });
		pi = run.startPi({ args: ["--extension", writeAwayAsker(piEnv), "--extension", writeGate(piEnv)] });
		await pi.command("get_state", {}, 90_000);
		const announced = await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith("checkpoint-bridge: answer in a browser at "), {
			from: 0,
			what: "the page's link",
		});
		pageUrl = String(announced.message).slice("checkpoint-bridge: answer in a browser at ".length);
	}, 120_000);
	afterAll(() => run.stop());

	/** Opens the page, waits for the card of `asker`, presses its Decline; the card's message. */
	async function declineOnPage(asker: string): Promise<string> {
		const page = await browser.browser.newPage();
		try {
			await page.goto(pageUrl, { waitUntil: "domcontentloaded" });
			await page.waitForFunction((who) => [...document.querySelectorAll("article.card h2.asker")].some((h) => h.textContent === `[${who}]`), {}, asker);
			await page.evaluate((who) => {
				const article = [...document.querySelectorAll("article.card")].find((a) => a.querySelector("h2.asker")?.textContent === `[${who}]`);
				(article?.querySelector("button.decline") as HTMLButtonElement | null)?.click();
			}, asker);
			return await page
				.waitForFunction(
					(who) => {
						const article = [...document.querySelectorAll("article.card")].find((a) => a.querySelector("h2.asker")?.textContent === `[${who}]`);
						const text = article?.querySelector(".message")?.textContent ?? "";
						return text.startsWith("Declined") || text.startsWith("Not declined") ? text : !article ? "Declined." : false;
					},
					{},
					asker,
				)
				.then((handle) => handle.jsonValue() as Promise<string>);
		} finally {
			await page.close();
		}
	}

	it("the card's Decline gives the asker Esc's envelope, saying it was declined on the page; a relayed permission gate declined on the page is a no", async () => {
		const planner = await awayAsk(pi, "planner", [{ question: "Which database?", options: ["Postgres", "SQLite"] }]);
		expect(await declineOnPage("planner")).toBe("Declined.");
		const envelope = await planner.result;
		expect(envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [] });
		expect(envelope.note).toContain("The user declined the question on the page.");

		const from = pi.mark();
		await pi.prompt("/gate");
		expect(await declineOnPage("gatekeeper")).toBe("Declined.");
		const report = await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith(GATE_REPORT), { from, what: "the gate's result" });
		expect(JSON.parse(String(report.message).slice(GATE_REPORT.length))).toEqual({ confirmed: false });
	});
});
