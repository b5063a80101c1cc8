/**
 * Which surface index.ts picks, and that the form's module (and pi-tui) loads on the first TUI
 * question, not when the extension loads.
 */
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KEY_GUARD_MS } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/component.ts";
import { fakeCustomUI } from "../../support/fake-custom-ui.ts";
import { loadExtensionCopy, playSession } from "../../support/fake-pi.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { loadedWith, packagesLoadedWith } from "../../support/static-graph.ts";

const ROOT = resolve(import.meta.dirname, "../../../../extensions/checkpoint-bridge");

const sessions: ReturnType<typeof playSession>[] = [];
afterEach(async () => {
	for (const s of sessions.splice(0)) await s.shutdown();
});

describe("the terminal form loads on the first TUI question", () => {
	it("index.ts does not import the form or pi-tui when the extension loads", () => {
		expect(loadedWith(ROOT, "index.ts").filter((f) => f.includes("terminal-form/"))).toEqual([]);
		expect(packagesLoadedWith(ROOT, "index.ts").filter((f) => f.startsWith("@earendil-works/"))).toEqual([]);
	});

	it("in the TUI a request is one form (ctx.ui.custom), not pi's dialogs", async () => {
		const custom = fakeCustomUI();
		const dialogs = fakeUI();
		const host = playSession(await loadExtensionCopy(), { sessionId: "tui-host", mode: "tui", ui: { ...dialogs.ui, ...custom.ui } });
		sessions.push(host);
		await host.start();
		const call = host.call({ questions: [{ question: "Ship it?", kind: "confirm" }, { question: "Name?" }] });
		// The first TUI question loads the form and pi-tui: on a busy machine that takes longer than a moment.
		await expect.poll(() => custom.current(), { timeout: 10_000 }).toBeDefined();
		// The form index.ts picks has the key guard: drawn, keys count only after KEY_GUARD_MS.
		custom.current()!.screen();
		custom.current()!.press("down", "enter");
		await new Promise((r) => setTimeout(r, KEY_GUARD_MS));
		custom.current()!.press("down", "enter", { type: "atlas" }, "enter", "enter");
		expect(await call).toMatchObject({
			status: "ok",
			answers: [
				{ answer: "yes", kind: "confirm" },
				{ answer: "atlas", kind: "text" },
			],
		});
		expect(dialogs.dialogs).toEqual([]);
	});

	it("an RPC host keeps pi's select and input dialogs", async () => {
		const custom = fakeCustomUI();
		const dialogs = fakeUI({ respond: (d) => d.answer(d.method === "select" ? "Yes" : "atlas") });
		const host = playSession(await loadExtensionCopy(), { sessionId: "rpc-host", mode: "rpc", ui: { ...dialogs.ui, ...custom.ui } });
		sessions.push(host);
		await host.start();
		expect(await host.call({ questions: [{ question: "Ship it?", kind: "confirm" }] })).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		expect(dialogs.dialogs.map((d) => d.method)).toEqual(["select"]);
		expect(custom.forms).toEqual([]);
	});
});
