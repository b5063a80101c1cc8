import { describe, expect, it } from "vitest";
import { callBudget, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_DIALOG_TIMEOUT_MS, readConfig } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";

describe("budgets", () => {
	it("defaults to 300 s per call and 180 s per dialog", () => {
		expect(readConfig({})).toEqual({ callTimeoutMs: 300_000, dialogTimeoutMs: 180_000, warnings: [] });
		expect([DEFAULT_CALL_TIMEOUT_MS, DEFAULT_DIALOG_TIMEOUT_MS]).toEqual([300_000, 180_000]);
	});

	it("takes the defaults from the environment, clamped to [1 s, 1 h]", () => {
		expect(readConfig({ CHECKPOINT_BRIDGE_TIMEOUT_MS: "45000", CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "20000" })).toMatchObject({
			callTimeoutMs: 45_000,
			dialogTimeoutMs: 20_000,
		});
		expect(readConfig({ CHECKPOINT_BRIDGE_TIMEOUT_MS: "5", CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "99999999" })).toMatchObject({
			callTimeoutMs: 1_000,
			dialogTimeoutMs: 3_600_000,
		});
	});

	it("ignores a variable that is not a positive number and says which", () => {
		const config = readConfig({ CHECKPOINT_BRIDGE_TIMEOUT_MS: "soon", CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "-3" });
		expect(config).toMatchObject({ callTimeoutMs: 300_000, dialogTimeoutMs: 180_000 });
		expect(config.warnings).toEqual([expect.stringContaining("CHECKPOINT_BRIDGE_TIMEOUT_MS"), expect.stringContaining("CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS")]);
	});

	it("lets a call's timeoutMs override the default, clamped to [1 s, 1 h]", () => {
		const config = readConfig({ CHECKPOINT_BRIDGE_TIMEOUT_MS: "45000" });
		expect(callBudget(undefined, config)).toBe(45_000);
		expect(callBudget(2_500, config)).toBe(2_500);
		expect(callBudget(10, config)).toBe(1_000);
		expect(callBudget(36_000_000, config)).toBe(3_600_000);
	});
});
