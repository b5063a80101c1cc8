/**
 * What the host role makes of a settled request (core/host/host-role.ts): the observers' outcome with
 * a note and a reason only when the end has them; the cancel notice, never for the host's own model;
 * where an answer was given, told once the request is answered; nothing of a hand-over nobody took in
 * the released host's audit trail. And what it shows of relayed notices, and a host with no screen.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HANDOVER_GRACE_MS, type SettledRecord } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { OBSERVER_EVENTS, type SettledEvent } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION, type RelayNotice } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, HOST_SESSION, relay, track } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers({ now: new Date(2026, 11, 6, 9, 12, 30) }));
afterEach(() => vi.useRealTimers());

describe("the settled event observers get", () => {
	it("has a note and a reason only when the end has them", async () => {
		const { ask, fake, handle } = relay();
		const outcomes: SettledEvent["outcome"][] = [];
		handle.bus.on(OBSERVER_EVENTS.settled, (event) => void outcomes.push(event.outcome));
		const answered = ask([{ question: "Go?" }]);
		await flush(vi);
		fake.current()!.answer("yes");
		await answered;
		const dismissed = ask([{ question: "Stop?" }]);
		await flush(vi);
		fake.current()!.answer(undefined);
		await dismissed;
		expect(outcomes.map((o) => Object.keys(o))).toEqual([
			["status", "answers", "end"],
			["status", "answers", "note", "reason", "end"],
		]);
		expect(outcomes[1]).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", end: "dismissed" });
	});
});

describe("the cancel notice", () => {
	it("says nothing of the host's own model's cancel, also when an audit trail records it", async () => {
		const records: SettledRecord[] = [];
		const { ask, fake } = relay({}, { onSettled: (record) => void records.push(record) });
		const own = new AbortController();
		void ask([{ question: "Mine?" }], { label: "main session", sessionId: HOST_SESSION, signal: own.signal });
		await flush(vi);
		own.abort();
		await flush(vi);
		expect(records.map((r) => r.status)).toEqual(["cancelled"]);
		expect(fake.notices.filter((n) => n.message.includes("cancelled"))).toEqual([]);
	});
});

describe("answers given on a surface away from the terminal", () => {
	const told = (notices: { message: string }[]) => notices.filter((n) => n.message.includes(" answered ")).map((n) => n.message);
	/** Two questions asked on the page, the first answered there: the second is shown. */
	const firstAnsweredOnPage = async (auditTrail = true) => {
		const page = fakeUI();
		const { ask, fake, handle } = relay({}, { surface: dialogSurface(page.ui, "page"), ...(auditTrail ? { onSettled: () => {} } : {}) });
		const call = ask([{ question: "Which store?", options: ["Postgres", "SQLite"] }, { question: "Name?" }], { label: "planner" });
		await flush(vi);
		page.current()!.answer("SQLite");
		await flush(vi);
		return { page, fake, call, handle };
	};

	it("are told, where and when, once the request is answered", async () => {
		const { page, fake, call } = await firstAnsweredOnPage();
		page.current()!.answer("atlas");
		expect((await call).status).toBe("ok");
		expect(told(fake.notices)).toEqual(["checkpoint-bridge: [planner] answered on the page at 09:12: SQLite; atlas"]);
	});

	it("are told on a host with neither an audit trail nor an observer too", async () => {
		const { page, fake, call, handle } = await firstAnsweredOnPage(false);
		expect(handle.bus.listenerCount(OBSERVER_EVENTS.settled)).toBe(0);
		page.current()!.answer("atlas");
		expect((await call).status).toBe("ok");
		expect(told(fake.notices)).toEqual(["checkpoint-bridge: [planner] answered on the page at 09:12: SQLite; atlas"]);
	});

	it("are not told for a request left unanswered", async () => {
		const { page, fake, call } = await firstAnsweredOnPage();
		page.current()!.answer(undefined);
		expect((await call).status).toBe("timeout-or-cancelled");
		expect(told(fake.notices)).toEqual([]);
	});
});

describe("a hand-over nobody takes", () => {
	it("settles no-host for its asker, and is not written to the audit trail of the host that let go", async () => {
		const records: SettledRecord[] = [];
		const { ask, role } = relay({}, { onSettled: (record) => void records.push(record) });
		const call = track(ask([{ question: "Carried?" }]));
		await flush(vi);
		role.release("new", "The host session ended (new).");
		await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS);
		expect(call.envelope?.status).toBe("no-host");
		expect(records).toEqual([]);
	});
});

describe("relayed notices of other extensions", () => {
	const notice = (over: Partial<RelayNotice> = {}): RelayNotice => ({
		v: PROTOCOL_VERSION,
		asker: { label: "helper", sessionId: "helper-session" },
		message: "hello",
		type: "info",
		...over,
	});

	it("ignores what is not a notice (nothing, null, a string, another protocol's) and shows the next one that is", () => {
		const { handle, fake } = relay();
		// What a session of another extension may put on the bus, as it arrives there.
		const bad: unknown[] = [undefined, null, "hello", 42, notice({ v: PROTOCOL_VERSION + 1 })];
		for (const sent of bad) expect(() => handle.bus.emit("relay:notice", sent as RelayNotice)).not.toThrow();
		handle.bus.emit("relay:notice", notice());
		expect(fake.notices).toEqual([{ message: "[helper] hello", type: "info" }]);
	});
});

describe("a host with no screen", () => {
	it("whose queue is resumed all the same fails the question, saying it has no screen", async () => {
		const { ask, role } = relay({}, { surface: undefined });
		role.host.resume();
		const result = await ask([{ question: "Shown?" }]);
		expect(result.status).toBe("error");
		expect(result.note).toContain("this host has no screen: its questions are answered from outside");
	});
});
