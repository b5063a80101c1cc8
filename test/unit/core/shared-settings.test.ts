/**
 * The settings every part reads (core/shared/config.ts, late-config.ts) and the host's tool-missing
 * notices (core/asking/tool-missing.ts), value by value: each variable read under its own name, a
 * blank or padded value as a user writes it, the bounds, and a notice shown once per key, within a
 * bounded memory of keys.
 */
import { describe, expect, it } from "vitest";
import { noticeOnce } from "../../../extensions/checkpoint-bridge/core/asking/tool-missing.ts";
import {
	DEFAULT_DIALOG_TIMEOUT_MS,
	graceEnd,
	NO_LIMIT,
	readConfig,
	readHostGrace,
	shorterLimit,
} from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { DEFAULT_LATE_EXPIRY_MS, lateAnswersOn, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";

describe("the budgets and the host grace", () => {
	it("the shorter of two limits, no limit being the longest", () => {
		expect([shorterLimit(NO_LIMIT, 5_000), shorterLimit(5_000, NO_LIMIT), shorterLimit(3_000, 5_000), shorterLimit(NO_LIMIT, NO_LIMIT)]).toEqual([
			5_000,
			5_000,
			3_000,
			NO_LIMIT,
		]);
	});

	it("the dialog budget is read from CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS; a blank value is the default, without a warning", () => {
		expect(readConfig({ CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "60000" }).dialogTimeoutMs).toBe(60_000);
		expect(readConfig({ CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "   " })).toMatchObject({ dialogTimeoutMs: DEFAULT_DIALOG_TIMEOUT_MS, warnings: [] });
	});

	it("the host grace is read from CHECKPOINT_BRIDGE_HOST_GRACE_MS, spaces around it allowed", () => {
		expect(readHostGrace({ CHECKPOINT_BRIDGE_HOST_GRACE_MS: " 5000 " })).toEqual({ graceMs: 5_000 });
	});

	it("a grace ends after its length, or just before the call's deadline when that comes first", () => {
		expect(graceEnd(1_000, NO_LIMIT, 10_000)).toBe(11_000);
		expect(graceEnd(1_000, 10_500, 10_000)).toBe(10_475);
		expect(graceEnd(1_000, 20_000, 10_000)).toBe(11_000);
	});
});

describe("the late-answer settings", () => {
	it("late answers are off only with 0, spaces around it allowed", () => {
		expect([lateAnswersOn({}), lateAnswersOn({ CHECKPOINT_BRIDGE_LATE_ANSWERS: " 0 " }), lateAnswersOn({ CHECKPOINT_BRIDGE_LATE_ANSWERS: "1" })]).toEqual([
			true,
			false,
			true,
		]);
	});

	it("the expiry is read from CHECKPOINT_BRIDGE_LATE_EXPIRY_MS when it is a positive number, else the default", () => {
		const expiry = (value?: string) => readLateConfig(value === undefined ? {} : { CHECKPOINT_BRIDGE_LATE_EXPIRY_MS: value }).expiryMs;
		expect(expiry("60000")).toBe(60_000);
		for (const bad of [undefined, "", "0", "-5", "soon", "Infinity"]) expect(expiry(bad), String(bad)).toBe(DEFAULT_LATE_EXPIRY_MS);
		expect(expiry("1e20")).toBe(2_147_483_647);
	});
});

describe("the tool-missing notices at the host", () => {
	it("shows each key's notice once, and nothing for what is not a notice", () => {
		const shown: string[] = [];
		const take = noticeOnce((message) => void shown.push(message));
		for (const bad of [undefined, null, {}, { key: 1, message: "m" }, { key: "k" }, { key: "k", message: 2 }]) take(bad as never);
		take({ key: "tool-missing:a", message: "first" });
		take({ key: "tool-missing:a", message: "again" });
		take({ key: "tool-missing:b", message: "second" });
		expect(shown).toEqual(["first", "second"]);
	});

	it("remembers at most 256 keys: past them a new key shows nothing, so a stream of keys cannot grow it", () => {
		const shown: string[] = [];
		const take = noticeOnce((message) => void shown.push(message));
		for (let i = 0; i < 257; i++) take({ key: `k${i}`, message: `m${i}` });
		expect(shown).toHaveLength(256);
		expect(shown.at(-1)).toBe("m255");
	});
});
