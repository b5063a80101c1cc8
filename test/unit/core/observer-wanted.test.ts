/**
 * Lifecycle notifications are built only when something takes them (`HostEvents.wanted`): observer
 * events while somebody listens on the bus, settled records always for the audit trail.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DialogHost, type HostEvents } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { OBSERVER_EVENTS } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const request = (id: string): RelayRequest => ({
	v: PROTOCOL_VERSION,
	id,
	asker: { label: "asker", sessionId: "asker-session" },
	questions: [{ question: "Go?", kind: "confirm" }],
	deadline: Date.now() + 60_000,
	dialogTimeoutMs: 60_000,
	createdAt: Date.now(),
});

/** A dialog host whose every lifecycle hook is a spy, answering each dialog with Yes. */
function spiedHost(wanted?: HostEvents["wanted"]) {
	const fake = fakeUI({ respond: (d) => queueMicrotask(() => d.answer("Yes")) });
	const events = { queued: vi.fn(), shown: vi.fn(), settled: vi.fn(), changed: vi.fn(), ...(wanted ? { wanted } : {}) };
	const host = new DialogHost({ ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host", reply: () => {}, events });
	return { host, events, fake };
}

describe("HostEvents.wanted", () => {
	it("keeps the queued, shown and settled hooks from being called while it says no; changed still is", async () => {
		const wanted = vi.fn((_name: string) => false);
		const { host, events, fake } = spiedHost(wanted);
		host.serve(request("r1"));
		await flush(vi);
		expect(fake.dialogs).toHaveLength(1);
		expect(host.snapshot().open.length).toBe(0);
		expect(wanted.mock.calls.map(([name]) => name)).toEqual(["queued", "shown", "settled"]);
		for (const hook of [events.queued, events.shown, events.settled]) expect(hook).not.toHaveBeenCalled();
		// Taken in, shown (the status line names what is on screen), settled.
		expect(events.changed).toHaveBeenCalledTimes(3);
	});

	it("calls every hook without it, and when it throws", async () => {
		for (const wanted of [
			undefined,
			() => {
				throw new Error("broken");
			},
		]) {
			const { host, events } = spiedHost(wanted);
			host.serve(request("r1"));
			await flush(vi);
			expect([events.queued, events.shown, events.settled].map((hook) => hook.mock.calls.length)).toEqual([1, 1, 1]);
		}
	});
});

describe("the host role", () => {
	it("emits observer events to an observer that starts listening midway, and records every settled request for the audit trail", async () => {
		const onSettled = vi.fn();
		const { handle, fake, ask } = relay({}, { onSettled });
		const first = ask([{ question: "First?" }], { label: "a" });
		await flush(vi);
		const seen: string[] = [];
		for (const name of Object.values(OBSERVER_EVENTS)) handle.bus.on(name, () => void seen.push(name));
		const second = ask([{ question: "Second?" }], { label: "b" });
		await flush(vi);
		fake.current()!.answer("one");
		await first;
		await flush(vi);
		fake.current()!.answer("two");
		await second;
		// The first request's queued and shown events went to nobody; everything after reached the observer.
		expect(seen).toEqual(["observe:queued", "observe:settled", "observe:shown", "observe:settled"]);
		expect(onSettled.mock.calls.map(([record]) => record.questions)).toEqual([["First?"], ["Second?"]]);
	});
});
