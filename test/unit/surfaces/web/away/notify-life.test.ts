/**
 * A notification's whole life on a real page: the notify command runs when a relayed request is
 * asked (with its one-tap actions), as a reminder while it still waits, and once more when it ends
 * (answered elsewhere, withdrawn), saying how; a request never notified gets no end run.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RequestBook } from "../../../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import type { AwayActions } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/one-tap.ts";
import { startWebPage } from "../../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { tempDir } from "../../../../support/temp-dir.ts";
import { until } from "../../../../support/until.ts";
import { relay } from "../../../support/relay.ts";
import { raw, trackedPages } from "../support.ts";

const pages = trackedPages();
afterEach(() => pages.closeAll());

interface Run {
	event: string;
	requestId: string;
	outcome: string;
	url: string;
	actions: AwayActions | undefined;
	ntfy: string;
}

/** A command that writes what it was given, one file per run. */
function recorder() {
	const dir = tempDir("cb-notify-life-");
	const command = `cd ${dir} && printf '%s\\n%s\\n%s\\n%s\\n%s\\n%s' "$CHECKPOINT_BRIDGE_EVENT" "$CHECKPOINT_BRIDGE_REQUEST_ID" "$CHECKPOINT_BRIDGE_OUTCOME" "$CHECKPOINT_BRIDGE_URL" "$CHECKPOINT_BRIDGE_NTFY_ACTIONS" "$CHECKPOINT_BRIDGE_ACTIONS" > "tmp-$$" && mv "tmp-$$" "run-$(date +%s%N)-$$"`;
	const runs = (): Run[] =>
		readdirSync(dir)
			.filter((f) => f.startsWith("run-"))
			.sort()
			.map((f) => {
				const [event, requestId, outcome, url, ntfy, ...json] = readFileSync(join(dir, f), "utf8").split("\n");
				const text = json.join("\n");
				return {
					event: event!,
					requestId: requestId!,
					outcome: outcome!,
					url: url!,
					ntfy: ntfy!,
					actions: text ? (JSON.parse(text) as AwayActions) : undefined,
				};
			});
	return { command, runs };
}

describe("a notification's whole life", () => {
	it("asked with its actions, reminded while it waits, told how it ended (answered in the terminal), no reminder after", async () => {
		const { command, runs } = recorder();
		const s = await pages.setup({ notifyCommand: () => command, notifyAfterMs: () => 0, notifyRemindMs: () => 300 });
		const first = await s.ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { label: "planner" });
		await until(() => runs().filter((r) => r.event === "reminder").length === 1, "the reminder run", 5_000);
		const [asked, reminder] = runs();
		expect(asked).toMatchObject({ event: "asked", requestId: first.requestId, url: `${s.page.linkFor(first.requestId)}?via=notify` });
		expect(asked!.actions!.buttons.map((b) => b.label)).toEqual(["Postgres", "SQLite"]);
		const button = (label: string, url: string) => ({ action: "http", label, url, method: "POST", clear: true });
		expect(JSON.parse(asked!.ntfy)).toEqual([
			button("Postgres", asked!.actions!.buttons[0]!.answer),
			button("SQLite", asked!.actions!.buttons[1]!.answer),
			button("Decline", asked!.actions!.decline.answer),
		]);
		expect(reminder!.actions).toEqual(asked!.actions);
		// Answered in the terminal: one run more, saying so, with no link and no buttons left.
		s.fake.current()!.answer("SQLite");
		await first.call;
		await until(() => runs().some((r) => r.event === "ended"), "the end run", 5_000);
		expect(runs().at(-1)).toEqual({ event: "ended", requestId: first.requestId, outcome: "answered in the terminal", url: "", ntfy: "", actions: undefined });
		// No second reminder once it ended.
		await new Promise((resolve) => setTimeout(resolve, 500));
		expect(runs().map((r) => r.event)).toEqual(["asked", "reminder", "ended"]);
	});

	it("withdrawn by the asker: the end run says so; with a delay not yet passed, no run at all", async () => {
		const { command, runs } = recorder();
		let delay = 0;
		const s = await pages.setup({ notifyCommand: () => command, notifyAfterMs: () => delay });
		const controller = new AbortController();
		const withdrawn = await s.ask([{ question: "Keep going?", kind: "confirm" }], { label: "planner", signal: controller.signal });
		await until(() => runs().length === 1, "the asked run", 5_000);
		controller.abort();
		await withdrawn.call;
		await until(() => runs().length === 2, "the end run", 5_000);
		expect(runs()[1]).toMatchObject({ event: "ended", outcome: "withdrawn by the asker" });
		delay = 60_000;
		const quick = await s.ask([{ question: "Quick?", kind: "confirm" }], { label: "planner" });
		await until(() => s.fake.current(), "its dialog");
		s.fake.current()!.answer("Yes");
		await quick.call;
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(runs()).toHaveLength(2);
	});

	it("late: its call stopped waiting and the question stays open: one run says so, its buttons still answer, and the end run follows", async () => {
		const { command, runs } = recorder();
		const r = relay({}, { book: new RequestBook(readLateConfig({})) });
		const page = await startWebPage({
			handle: r.handle,
			address: { host: "127.0.0.1", port: 0, loopback: true },
			notifyCommand: () => command,
			notifyAfterMs: () => 0,
		});
		try {
			const call = r.ask([{ question: "Which?", options: ["a", "b"] }], { label: "planner", budgetMs: 1_000, dialogTimeoutMs: 60_000 });
			await until(() => runs().length === 1, "the asked run", 5_000);
			expect((await call).status).toBe("timeout");
			await until(() => runs().some((run) => run.event === "late"), "the late run", 5_000);
			const [asked, late] = runs();
			expect(late).toMatchObject({
				event: "late",
				requestId: asked!.requestId,
				outcome: "late: the asker's call stopped waiting; an answer still reaches it, as a message",
			});
			expect(late!.actions!.buttons).toEqual(asked!.actions!.buttons);
			const tapped = await raw(page, { method: "POST", path: new URL(late!.actions!.buttons[1]!.answer).pathname });
			expect(tapped).toMatchObject({ status: 200, body: "answered: b\n" });
			await until(() => runs().some((run) => run.event === "ended"), "the end run", 5_000);
			expect(runs().map((run) => run.event)).toEqual(["asked", "late", "ended"]);
		} finally {
			r.role.release("quit", "test over");
			await page.close();
		}
	});
});
