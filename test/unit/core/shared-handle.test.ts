/**
 * The shared handle on its own (core/shared/shared-handle.ts): the host claim and its seal, and parking
 * requests of a host being replaced.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PROTOCOL_VERSION, type RelayResult } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { ParkedRequest } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";
import { createHandle, HANDLE_KEY, sharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const claim = (sessionId: string) => ({ sessionId, protocol: PROTOCOL_VERSION });
const result = (id: string): RelayResult => ({ v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [] });
const parked = (id: string): ParkedRequest => ({
	request: { v: PROTOCOL_VERSION, id, asker: { label: id, sessionId: id }, questions: [{ question: `${id}?` }], deadline: 0, dialogTimeoutMs: 0, createdAt: 0 },
	entries: [],
	queuedAt: 0,
});

describe("the host claim", () => {
	it("goes to the first claimant, with a seal; the role is free again only when its holder releases it", () => {
		const handle = createHandle();
		expect(handle.host()).toBeUndefined();
		const first = handle.claimHost(claim("first"));
		expect(first?.seal).toBeTypeOf("function");
		expect(handle.claimHost(claim("second"))).toBeUndefined();
		expect(handle.host()?.sessionId).toBe("first");
		expect(first!.release()).toBe(true);
		expect(handle.host()).toBeUndefined();
		expect(first!.release()).toBe(false);
		const second = handle.claimHost(claim("second"));
		expect(handle.host()?.sessionId).toBe("second");
		// An old capability cannot free a later claim.
		expect(first!.release()).toBe(false);
		expect(handle.host()?.sessionId).toBe("second");
		expect(second!.release()).toBe(true);
	});

	it("keeps its own frozen copy of the claim's public facts: the claimant's object cannot change them", () => {
		const handle = createHandle();
		const mine = claim("first");
		handle.claimHost(mine);
		mine.sessionId = "changed";
		expect(handle.host()).toEqual({ sessionId: "first", protocol: PROTOCOL_VERSION });
		expect(Object.isFrozen(handle.host())).toBe(true);
	});

	it("takes as the host's only replies that went through a claimant's seal for that very request, whoever wrote an equal one", () => {
		const handle = createHandle();
		const { seal } = handle.claimHost(claim("host"))!;
		const sealed = seal(result("r1"));
		expect(sealed).toEqual(result("r1"));
		expect(Object.isFrozen(sealed)).toBe(true);
		expect(handle.isFromHost(sealed, "r1")).toBe(true);
		expect(handle.isFromHost(sealed, "r2")).toBe(false);
		expect(handle.isFromHost(result("r1"), "r1")).toBe(false);
		expect(handle.isFromHost({ ...sealed }, "r1")).toBe(false);
		for (const junk of [null, undefined, 42, "reply", true]) expect(handle.isFromHost(junk, "r1")).toBe(false);
		expect(handle.isFromHost(sealed, undefined as unknown as string)).toBe(false);
		// Another handle's seal is not this one's.
		const other = createHandle().claimHost(claim("elsewhere"))!;
		expect(handle.isFromHost(other.seal(result("r1")), "r1")).toBe(false);
	});

	it("pins the bus's methods as own, read-only, hidden properties", () => {
		const handle = createHandle();
		for (const name of ["emit", "on", "once", "off", "removeListener", "addListener", "removeAllListeners", "listeners", "listenerCount", "eventNames"])
			expect(Object.getOwnPropertyDescriptor(handle.bus, name), name).toMatchObject({ writable: false, configurable: false, enumerable: false });
		expect(() => Object.assign(handle.bus, { emit: () => true })).toThrow();
	});

	it("takes no sealed reply without a request id as the answer to a request without one", () => {
		const handle = createHandle();
		const { seal } = handle.claimHost(claim("host"))!;
		const { id: _id, ...idless } = result("r1");
		const sealed = seal(idless as unknown as RelayResult);
		expect(handle.isFromHost(sealed, undefined as unknown as string)).toBe(false);
	});

	it("reports the host's snapshot, and none without a host", () => {
		const handle = createHandle();
		expect(handle.snapshot()).toBeUndefined();
		const snapshot = { v: 1 as const, takenAt: 5, open: [] };
		handle.claimHost({ ...claim("host"), snapshot: () => snapshot });
		expect(handle.snapshot()).toBe(snapshot);
	});

	it("is registered once per target, read-only and hidden, and every copy gets the same one", () => {
		const target = {};
		const handle = sharedHandle(target);
		expect(sharedHandle(target)).toBe(handle);
		expect(Object.getOwnPropertyDescriptor(target, HANDLE_KEY)).toMatchObject({ value: handle, writable: false, configurable: false, enumerable: false });
		expect(Object.isFrozen(handle)).toBe(true);
		expect(sharedHandle({})).not.toBe(handle);
	});
});

describe("parking requests of a host being replaced", () => {
	it("hands every parked request to the next host, oldest first, and forgets its timer and listener", () => {
		const handle = createHandle();
		const expired = vi.fn();
		handle.park([parked("a"), parked("b")], 1_000, expired);
		handle.park([parked("c")], 1_000, expired);
		expect(handle.bus.listenerCount("cancel")).toBe(1);
		expect(handle.takeParked().map((p) => p.request.id)).toEqual(["a", "b", "c"]);
		expect(handle.takeParked()).toEqual([]);
		expect(handle.bus.listenerCount("cancel")).toBe(0);
		expect(vi.getTimerCount()).toBe(0);
		vi.advanceTimersByTime(10_000);
		expect(expired).not.toHaveBeenCalled();
	});

	it("gives them to `expire` once the grace is over when no host took them, and only then", () => {
		const handle = createHandle();
		const expired = vi.fn();
		handle.park([parked("a")], 1_000, expired);
		vi.advanceTimersByTime(500);
		// Parking more restarts the grace for everything parked.
		handle.park([parked("b")], 1_000, expired);
		vi.advanceTimersByTime(999);
		expect(expired).not.toHaveBeenCalled();
		vi.advanceTimersByTime(1);
		expect(expired).toHaveBeenCalledTimes(1);
		expect(expired.mock.calls[0]![0].map((p: ParkedRequest) => p.request.id)).toEqual(["a", "b"]);
		expect(handle.takeParked()).toEqual([]);
		expect(handle.bus.listenerCount("cancel")).toBe(0);
	});

	it("drops a parked request whose asker gives up, and nothing else", () => {
		const handle = createHandle();
		handle.park([parked("a"), parked("b")], 1_000, () => {});
		handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: "a", reason: "cancelled" });
		handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: "unknown", reason: "timeout" });
		(handle.bus.emit as (event: string, payload: unknown) => boolean)("cancel", null);
		expect(handle.takeParked().map((p) => p.request.id)).toEqual(["b"]);
	});

	it("parks nothing, and starts no timer, for a host that held nothing", () => {
		const handle = createHandle();
		const expired = vi.fn();
		handle.park([], 1_000, expired);
		expect(vi.getTimerCount()).toBe(0);
		expect(handle.bus.listenerCount("cancel")).toBe(0);
		vi.advanceTimersByTime(1_000);
		expect(expired).not.toHaveBeenCalled();
	});
});
