/**
 * The shared handle on its own (core/shared/shared-handle.ts): the host claim and its seal, and the
 * claim of a 0.1.0 copy refused (ADR-0034: the handle keeps no parking lot).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PROTOCOL_VERSION, type RelayResult } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle, HANDLE_KEY, sharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const claim = (sessionId: string) => ({ sessionId, protocol: PROTOCOL_VERSION });
const result = (id: string): RelayResult => ({ v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [] });

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

describe("what the handle refuses", () => {
	it("a claim that is no object (null, a string) is refused without a throw, and the role stays free", () => {
		const handle = createHandle();
		for (const bad of [null, "host", 42]) expect(handle.claimHost(bad as never)).toBeUndefined();
		expect(handle.host()).toBeUndefined();
		expect(handle.claimHost(claim("real"))?.seal).toBeTypeOf("function");
	});

	it("a reply sealed in place by another handle's host is sealed again as a copy: only this host's seal counts here", () => {
		const other = createHandle().claimHost(claim("other"))!;
		const handle = createHandle();
		const mine = handle.claimHost(claim("mine"))!;
		const reply = other.sealBuilt!(result("r1"));
		const sealed = mine.sealBuilt!(reply);
		expect(sealed).not.toBe(reply);
		expect(sealed).toEqual(reply);
		expect(handle.isFromHost(sealed, "r1")).toBe(true);
		expect(handle.isFromHost(reply, "r1")).toBe(false);
	});
});

describe("a copy of 0.1.0 in the same process (ADR-0034's cut-off)", () => {
	it("its claim, made with a claim id, is refused: it never holds the role half claimed, and a copy of this release still claims it", () => {
		const handle = createHandle();
		const older = handle.claimHost({ claimId: "0.1.0-claim", sessionId: "older", protocol: PROTOCOL_VERSION } as Parameters<typeof handle.claimHost>[0]);
		expect(older).toBeUndefined();
		expect(handle.host()).toBeUndefined();
		expect(handle.claimHost(claim("newer"))?.seal).toBeTypeOf("function");
		expect(handle.host()?.sessionId).toBe("newer");
	});

	it("the handle has no parking lot: a hand-over lives in the book alone", () => {
		const handle = createHandle() as unknown as Record<string, unknown>;
		expect(handle.park).toBeUndefined();
		expect(handle.takeParked).toBeUndefined();
	});
});
