/**
 * A page started after its host already holds requests (a pi host starts its page after its claim,
 * when the requests written down before a restart are back): the notify command and ntfy take them
 * up as if just asked, under their ids, and their ends follow; the host's own request is not taken up.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startWebPage } from "../../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { fakeNtfy } from "../../../../support/ntfy.ts";
import { tempDir } from "../../../../support/temp-dir.ts";
import { until } from "../../../../support/until.ts";
import { relay } from "../../../support/relay.ts";
import { raw } from "../support.ts";

describe("a page started after the claim", () => {
	it("the notify command and ntfy take up the relayed requests already held, once each, and tell their end under the same id and sequence id", async () => {
		const log = join(tempDir("cb-page-after-"), "runs.log");
		const command = `printf '%s\\t%s\\t%s\\n' "$CHECKPOINT_BRIDGE_EVENT" "$CHECKPOINT_BRIDGE_REQUEST_ID" "$CHECKPOINT_BRIDGE_ACTIONS" >> ${JSON.stringify(log)}`;
		const runs = () => {
			try {
				return readFileSync(log, "utf8")
					.split("\n")
					.filter(Boolean)
					.map((line) => line.split("\t") as [string, string, string]);
			} catch {
				return [];
			}
		};
		const ntfy = await fakeNtfy();
		const r = relay();
		const held = r.ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { label: "planner" });
		void r.ask([{ question: "Own?" }], { label: "host", sessionId: "host-session-id" });
		await until(() => r.handle.snapshot()?.open.length === 2, "both requests held");
		const requestId = r.handle.snapshot()!.open.find((o) => o.asker.label === "planner")!.requestId;
		const page = await startWebPage({
			handle: r.handle,
			address: { host: "127.0.0.1", port: 0, loopback: true },
			notifyCommand: () => command,
			notifyAfterMs: () => 0,
			ntfy: { server: ntfy.origin, topic: "cb-topic" },
			ntfyRetryMs: 10,
		});
		try {
			await until(() => runs().length === 1 && ntfy.received.length === 1, "the request taken up", 5_000);
			const [event, id, actions] = runs()[0]!;
			expect([event, id]).toEqual(["asked", requestId]);
			expect(ntfy.received[0]!.json.sequence_id).toBe(requestId);
			const sqlite = (JSON.parse(actions) as { buttons: { label: string; answer: string }[] }).buttons.find((b) => b.label === "SQLite")!;
			expect(await raw(page, { method: "POST", path: new URL(sqlite.answer).pathname })).toMatchObject({ status: 200, body: "answered: SQLite\n" });
			expect((await held).status).toBe("ok");
			await until(() => runs().length === 2 && ntfy.received.length === 2, "the end", 5_000);
			expect(runs()[1]!.slice(0, 2)).toEqual(["ended", requestId]);
			expect(ntfy.received[1]!.json).toMatchObject({ sequence_id: requestId, title: "planner: answered through the link the notify command sent" });
		} finally {
			r.role.release("quit", "test over");
			await page.close();
			await ntfy.close();
		}
	});
});
