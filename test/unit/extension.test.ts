import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HANDLE_KEY, type SharedHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { loadExtensionCopy, playedSessions, playSession } from "./support/fake-pi.ts";
import { fakeUI } from "./support/fake-ui.ts";

const question = { question: "Ship it?", options: ["yes", "no"] };
const shared = () => (globalThis as Record<symbol, SharedHandle | undefined>)[HANDLE_KEY];
const sessions = playedSessions();
const session = sessions.play;

beforeEach(() => vi.useFakeTimers());
afterEach(async () => {
	// The handle is process-global: every test leaves the host role free.
	await sessions.shutdownAll();
	vi.useRealTimers();
	vi.unstubAllEnvs();
});

describe("shared state across module copies", () => {
	it("relays from one copy of the extension to the host in another copy through globalThis", async () => {
		const hostCopy = await loadExtensionCopy();
		const childCopy = await loadExtensionCopy();
		expect(childCopy).not.toBe(hostCopy);
		const ui = fakeUI({ respond: (d) => d.answer("yes") });
		const host = session(hostCopy, { sessionId: "host-0000-1111", ui: ui.ui });
		const child = session(childCopy, { sessionId: "child-2222-3333", name: "subagent-planner" });
		await host.start();
		await child.start();
		const envelope = await child.call({ questions: [question] });
		expect(envelope).toMatchObject({ status: "ok", answers: [{ question: "Ship it?", answer: "yes" }], asker: "subagent-planner" });
		expect(ui.dialogs[0]?.title).toBe("[subagent-planner] Ship it?");
		expect(Object.getOwnPropertyDescriptor(globalThis, HANDLE_KEY)).toMatchObject({ writable: false, configurable: false });
	});

	it("names the unnamed host session's own model the main session, and an unnamed headless asker by the first words of its task, never by its session id", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI({ respond: (d) => d.answer("no") });
		const host = session(copy, { sessionId: "abcdef0123456789", ui: ui.ui });
		await host.start();
		await host.call({ questions: [question] });
		expect(ui.dialogs[0]?.title).toBe("[main session] Ship it?");
		const headless = session(copy, { sessionId: "0123456789abcdef" });
		await headless.start();
		(headless.entries as unknown[]).push({ type: "message", message: { role: "user", content: "Deploy the staging build tonight please" } });
		await headless.call({ questions: [question] });
		expect(ui.dialogs[1]?.title).toBe('["Deploy the staging build…"] Ship it?');
	});
});

describe("a session without the tool active (a tools: line)", () => {
	it("tells the host once per agent; a session with the tool active says nothing", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI();
		await session(copy, { sessionId: "host", ui: ui.ui }).start();
		await session(copy, { sessionId: "with-tool", name: "subagent-planner-1" }).start();
		expect(ui.notices).toEqual([]);
		for (const id of ["narrowed-1", "narrowed-2"]) await session(copy, { sessionId: id, name: "subagent-reviewer-1", activeTools: ["read"] }).start();
		expect(ui.notices.map((n) => [n.type, n.message])).toEqual([
			[
				"warning",
				'checkpoint-bridge: sub-agent "subagent-reviewer-1" cannot ask you: its agent file\'s tools: line leaves out ask_user_via_host (its model reads "Tool ask_user_via_host not found"). Use excludeTools: instead of tools: in that agent file.',
			],
		]);
	});
});

describe("host claim", () => {
	it("goes to the first session with a UI; sessions without a UI never claim", async () => {
		const copy = await loadExtensionCopy();
		const headless = session(copy, { sessionId: "headless" });
		await headless.start();
		expect(shared()?.host()).toBeUndefined();
		expect((await headless.call({ questions: [question] })).status).toBe("no-host");

		const first = session(copy, { sessionId: "first", ui: fakeUI().ui });
		const second = session(copy, { sessionId: "second", ui: fakeUI().ui });
		await first.start();
		await second.start();
		expect(shared()?.host()?.sessionId).toBe("first");
	});

	it("is released at shutdown and claimed by the next session with a UI that starts", async () => {
		const copy = await loadExtensionCopy();
		const first = session(copy, { sessionId: "first", ui: fakeUI().ui });
		await first.start();
		await first.shutdown("new");
		expect(shared()?.host()).toBeUndefined();
		const replacement = session(copy, { sessionId: "replacement", ui: fakeUI().ui });
		await replacement.start();
		expect(shared()?.host()?.sessionId).toBe("replacement");
	});

	it("is not kept by a session pi replaced while its start still claimed (a /resume typed at once), whose stale context is never read again", async () => {
		const copy = await loadExtensionCopy();
		// Not shut down again after the test: pi ends a replaced session once.
		const first = playSession(copy, { sessionId: "first", ui: fakeUI().ui });
		const starting = first.start();
		await first.shutdown("resume");
		staleAsPiMakesIt(first.ctx);
		await expect(starting).resolves.toBeUndefined();
		expect(shared()?.host()).toBeUndefined();
		const replacement = session(copy, { sessionId: "replacement", ui: fakeUI().ui });
		await replacement.start();
		expect(shared()?.host()?.sessionId).toBe("replacement");
	});

	it("leaves a start alone whose session pi replaced before the start reached it", async () => {
		const copy = await loadExtensionCopy();
		const replaced = playSession(copy, { sessionId: "replaced", ui: fakeUI().ui });
		staleAsPiMakesIt(replaced.ctx);
		await expect(replaced.start()).resolves.toBeUndefined();
		expect(shared()?.host()).toBeUndefined();
	});

	it("settles what the host held with no-host and a note when the host session ends", async () => {
		const copy = await loadExtensionCopy();
		const host = session(copy, { sessionId: "host", ui: fakeUI().ui });
		const child = session(copy, { sessionId: "child" });
		await host.start();
		const pending = child.call({ questions: [question] });
		await vi.advanceTimersByTimeAsync(0);
		await host.shutdown("quit");
		const envelope = await pending;
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toContain("host session ended (quit)");
	});
});

describe("the tool", () => {
	it("returns error naming every problem for bad parameters, without showing anything", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI();
		const host = session(copy, { sessionId: "host", ui: ui.ui });
		await host.start();
		const envelope = await host.call({ questions: [{ question: "" }, { question: "A", options: ["x", "x"] }] });
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain("questions[0].question: is empty");
		expect(envelope.note).toContain('questions[1].options[1]: duplicates "x"');
		expect(ui.dialogs).toHaveLength(0);
	});

	it("clamps timeoutMs to at least 1 s", async () => {
		const copy = await loadExtensionCopy();
		const host = session(copy, { sessionId: "host", ui: fakeUI().ui });
		await host.start();
		let settled = false;
		const pending = host.call({ questions: [question], timeoutMs: 10 }).finally(() => (settled = true));
		await vi.advanceTimersByTimeAsync(999);
		expect(settled).toBe(false);
		await vi.advanceTimersByTimeAsync(1);
		expect((await pending).status).toBe("timeout");
	});

	it("takes its default budget from CHECKPOINT_BRIDGE_TIMEOUT_MS", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_TIMEOUT_MS", "2000");
		const copy = await loadExtensionCopy();
		const host = session(copy, { sessionId: "host", ui: fakeUI().ui });
		await host.start();
		const pending = host.call({ questions: [question] });
		await vi.advanceTimersByTimeAsync(2_000);
		expect((await pending).status).toBe("timeout");
	});

	it("never throws for environmental failures: they become an error envelope", async () => {
		const copy = await loadExtensionCopy();
		const broken = session(copy, { sessionId: "x" });
		broken.ctx.sessionManager.getSessionId = () => {
			throw new Error("session manager is gone");
		};
		const envelope = await broken.call({ questions: [question] });
		expect(envelope).toMatchObject({ status: "error", note: expect.stringContaining("session manager is gone") });
	});

	it("settles as cancelled when pi aborts the tool call", async () => {
		const copy = await loadExtensionCopy();
		const ui = fakeUI();
		const host = session(copy, { sessionId: "host", ui: ui.ui });
		await host.start();
		const abort = new AbortController();
		const pending = host.call({ questions: [question] }, abort.signal);
		await vi.advanceTimersByTimeAsync(0);
		abort.abort();
		expect((await pending).status).toBe("cancelled");
		expect(ui.dialogs[0]?.closedBy).toBe("signal");
	});
});

/** pi's context after the session was replaced (/resume, /new, /fork, /reload): every read throws. */
function staleAsPiMakesIt(ctx: object): void {
	for (const key of ["hasUI", "mode", "ui", "sessionManager"])
		Object.defineProperty(ctx, key, {
			get() {
				throw new Error("This extension ctx is stale after session replacement or reload.");
			},
		});
}
