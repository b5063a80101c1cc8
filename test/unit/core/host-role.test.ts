/**
 * The host role itself (core/host/host-role.ts): the footer's key and wording, the audit record of a
 * settled request, observer events without an audit trail, and a release that happens twice.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { reportToolMissing, toolMissingNotice } from "../../../extensions/checkpoint-bridge/core/asking/tool-missing.ts";
import { claimHostRole, HANDOVER_GRACE_MS, type SettledRecord } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { MAX_NOTICES_PER_WINDOW, NOTICE_WINDOW_MS } from "../../../extensions/checkpoint-bridge/core/shared/notice-window.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay, track } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the footer status", () => {
	it('is set under the key "checkpoint-bridge", naming up to three askers; exactly three name everyone and count nobody', async () => {
		const keys = new Set<string>();
		const texts: (string | undefined)[] = [];
		const { fake, ask } = relay();
		fake.ui.setStatus = (key: string, text: string | undefined) => {
			keys.add(key);
			texts.push(text);
		};
		for (const label of ["a", "b", "c", "d"]) void ask([{ question: `${label}?` }], { label });
		await flush(vi);
		expect([...keys]).toEqual(["checkpoint-bridge"]);
		expect(texts.at(-1)).toBe("checkpoint-bridge: shown: a (0 min) · 3 queued: b (0 min), c (0 min), d (0 min)");
		void ask([{ question: "e?" }], { label: "e" });
		await flush(vi);
		expect(texts.at(-1)).toBe("checkpoint-bridge: shown: a (0 min) · 4 queued: b (0 min), c (0 min), d (0 min) and 1 more");
	});
});

describe("the footer status, drawn once per stretch of work", () => {
	it("a burst of ten questions draws it twice: at the first change, then with what is held once the burst is done", async () => {
		const texts: (string | undefined)[] = [];
		const { fake, ask } = relay();
		fake.ui.setStatus = (_key: string, text: string | undefined) => void texts.push(text);
		const calls = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"].map((label) => track(ask([{ question: `${label}?` }], { label })));
		await flush(vi);
		expect(texts).toEqual([
			"checkpoint-bridge: 1 queued: a (0 min)",
			"checkpoint-bridge: shown: a (0 min) · 9 queued: b (0 min), c (0 min), d (0 min) and 6 more",
		]);
		// Each answer is a stretch of its own: the human's answers are never folded into one redraw.
		fake.current()!.answer("yes");
		await flush(vi);
		expect(texts.at(-1)).toBe("checkpoint-bridge: shown: b (0 min) · 8 queued: c (0 min), d (0 min), e (0 min) and 5 more");
		expect(calls[0]!.envelope?.status).toBe("ok");
	});

	it("a host that lets go draws what is left at once, so nothing of it is drawn over the next host's footer", async () => {
		const texts: (string | undefined)[] = [];
		const { fake, ask, role } = relay();
		fake.ui.setStatus = (_key: string, text: string | undefined) => void texts.push(text);
		void ask([{ question: "a?" }], { label: "a" });
		role.release("quit", "gone");
		expect(texts.at(-1)).toBeUndefined();
		const drawn = texts.length;
		await flush(vi);
		expect(texts).toHaveLength(drawn);
	});
});

describe("the audit record of a settled request", () => {
	it("carries shownAt only when a question was shown, and a note only when the outcome has one", async () => {
		const records: SettledRecord[] = [];
		const { fake, ask } = relay({}, { onSettled: (record) => void records.push(record) });
		const shown = ask([{ question: "Shown?" }], { label: "a" });
		const never = ask([{ question: "Never shown?" }], { label: "b", budgetMs: 1_000 });
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		expect((await never).status).toBe("timeout");
		fake.current()!.answer("yes");
		expect((await shown).status).toBe("ok");
		const [timedOut, answered] = records;
		expect(Object.keys(timedOut!)).not.toContain("shownAt");
		expect(timedOut!.note).toMatch(/budget/i);
		expect(answered!.shownAt).toEqual(expect.any(Number));
		expect(Object.keys(answered!)).not.toContain("note");
	});
});

describe("lifecycle events", () => {
	it("an observer without an audit trail gets queued, shown and settled", async () => {
		const { handle, ask } = relay({ respond: (d) => queueMicrotask(() => d.answer("x")) });
		const seen: string[] = [];
		for (const name of Object.values(OBSERVER_EVENTS)) handle.bus.on(name, () => void seen.push(name));
		await ask([{ question: "Watched?" }]);
		expect(seen).toEqual(["observe:queued", "observe:shown", "observe:settled"]);
	});
});

describe("releasing the role", () => {
	it("a second release changes nothing: what the first parked is adopted by the next host, whose claim stays", async () => {
		const { handle, role, ask } = relay();
		const call = track(ask([{ question: "Carried?" }]));
		await flush(vi);
		role.release("new", "The host session ended (new).");
		role.release("new", "The host session ended (new).");
		const next = fakeUI();
		expect(claimHostRole(handle, { ui: next.ui, surface: dialogSurface(next.ui), sessionId: "replacement" })).toBeDefined();
		// The old role released again once the new one holds the claim: the new host keeps it.
		role.release("quit", "The host session ended (quit).");
		expect(handle.host()?.sessionId).toBe("replacement");
		await flush(vi);
		expect(next.dialogs.map((d) => d.title)).toEqual(["[child] Carried?"]);
		next.current()!.answer("kept");
		await flush(vi);
		expect(call.envelope).toMatchObject({ status: "ok", answers: [{ answer: "kept" }] });
		await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS);
		expect(call.envelope?.status).toBe("ok");
	});
});

describe("notices from sessions without a UI (a child whose tools: line leaves out the tool)", () => {
	it("shows each agent's notice once, as a warning, made safe for the terminal, and none after release", () => {
		const { handle, fake, role } = relay();
		reportToolMissing(handle, "reviewer", "ask_user_via_host");
		reportToolMissing(handle, "reviewer", "ask_user_via_host");
		reportToolMissing(handle, "tester\x1b[2J", "ask_user_via_host");
		expect(fake.notices).toEqual([
			{ message: toolMissingNotice("reviewer", "ask_user_via_host"), type: "warning" },
			{ message: toolMissingNotice("tester", "ask_user_via_host"), type: "warning" },
		]);
		expect(fake.notices[0]!.message).toContain("Use excludeTools: instead of tools:");
		role.release("quit", "bye");
		reportToolMissing(handle, "writer", "ask_user_via_host");
		expect(fake.notices).toHaveLength(2);
	});
});

describe("notices of other extensions from sessions of the host's own process (issue 30, finding 6)", () => {
	const notice = (message: string, origin?: string) => ({
		v: PROTOCOL_VERSION,
		asker: { label: "subagent-flooder", sessionId: "child-session" },
		message,
		type: "info" as const,
		...(origin ? { origin } : {}),
	});

	it("10,000 at once bring the human 20 in 10 s, the next window 20 more; an arrival notice of a request still shows", async () => {
		const { handle, fake, ask } = relay();
		for (let i = 0; i < 10_000; i++) handle.bus.emit("relay:notice", notice(`n${i}`));
		const relayed = () => fake.notices.filter((n) => n.message.startsWith("[subagent-flooder]"));
		expect(relayed()).toHaveLength(MAX_NOTICES_PER_WINDOW);
		void ask([{ question: "Still heard?" }], { label: "planner" });
		await flush(vi);
		expect(fake.notices.at(-1)?.message).toMatch(/^checkpoint-bridge: \[planner\] asks/);
		await vi.advanceTimersByTimeAsync(NOTICE_WINDOW_MS);
		for (let i = 0; i < 100; i++) handle.bus.emit("relay:notice", notice(`later ${i}`));
		expect(relayed()).toHaveLength(2 * MAX_NOTICES_PER_WINDOW);
	});

	it("a notice a transport delivered (it carries an origin) is left to that transport's own window", () => {
		const { handle, fake } = relay();
		for (let i = 0; i < 2 * MAX_NOTICES_PER_WINDOW; i++) handle.bus.emit("relay:notice", notice(`n${i}`));
		handle.bus.emit("relay:notice", notice("from the endpoint", "local:abc"));
		expect(fake.notices.at(-1)?.message).toBe("[subagent-flooder] from the endpoint");
	});
});
