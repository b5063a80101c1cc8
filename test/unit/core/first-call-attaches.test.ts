/**
 * A session that started while its process had no delivery box attaches to the box at its first call,
 * whichever way the call goes (core/delivery/session-box.ts): its late end then reaches it as a message,
 * not the host's session. Its own file: the box is one per process, and no earlier test may have made it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ANSWER_MESSAGE_TYPE } from "../../../extensions/checkpoint-bridge/core/delivery/names.ts";
import { sharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { until } from "../../support/until.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { loadedSession } from "../support/loaded-session.ts";

const sessions: ReturnType<typeof loadedSession>[] = [];
afterEach(async () => {
	for (const session of sessions.splice(0).reverse()) await session.shutdown();
});

describe("a session that started before the process had a box", () => {
	it("attaches at its first waiting call to a host in its process: its late end comes to it as a message", async () => {
		const child = loadedSession({ name: "planner", sessionId: "early-child-0001" });
		sessions.push(child);
		await child.start();
		const ui = fakeUI();
		const host = loadedSession({ name: "main", sessionId: "host-0002", ui: ui.ui });
		sessions.push(host);
		await host.start();
		const envelope = await child.call({ questions: [{ question: "Which database?" }], timeoutMs: 300 });
		expect(envelope.status).toBe("timeout");
		// Answered late, away from the terminal (the page's answer, on the bus).
		const late = sharedHandle().snapshot()?.late ?? [];
		expect(late).toHaveLength(1);
		sharedHandle().bus.emit("answer", { requestId: late[0]!.requestId, answers: ["SQLite"], source: "web" }, () => {});
		await until(() => child.entries.some((e) => e.customType === ANSWER_MESSAGE_TYPE), "the late end in the asking session");
		expect(child.entries.filter((e) => e.customType === ANSWER_MESSAGE_TYPE)).toHaveLength(1);
		expect(host.entries.filter((e) => e.customType === ANSWER_MESSAGE_TYPE)).toEqual([]);
	});
});
