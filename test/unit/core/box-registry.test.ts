/** The process's delivery box is one per process, found by name (core/delivery/names.ts, delivery.ts). */
import { describe, expect, it } from "vitest";
import { deliveryBox } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { boxInProcess } from "../../../extensions/checkpoint-bridge/core/delivery/names.ts";

describe("the process's box", () => {
	it("lives under checkpoint-bridge.deliveries in the process's registry, where every copy and release finds it; a target without one has none", () => {
		const target = {};
		expect(boxInProcess(target)).toBe(false);
		const made = deliveryBox(() => "host", target);
		expect(boxInProcess(target)).toBe(true);
		expect((target as Record<symbol, unknown>)[Symbol.for("checkpoint-bridge.deliveries")]).toBe(made);
		expect(deliveryBox(() => "other", target)).toBe(made);
	});
});
