/**
 * The child screens' registry (core/answering/screens.ts): one per process, found by every copy of the
 * extension, and which host session's terminal draws child screens now.
 */
import { describe, expect, it } from "vitest";
import { screens, terminalDraws, terminalHere } from "../../../extensions/checkpoint-bridge/core/answering/screens.ts";

describe("the child screens' registry", () => {
	it("is one per process, under its own Symbol.for key, so that every copy of the extension finds it", () => {
		const here = {};
		const slot = screens(here);
		expect(screens(here)).toBe(slot);
		expect((here as Record<symbol, unknown>)[Symbol.for("checkpoint-bridge.screens")]).toBe(slot);
		expect(slot).toEqual({ open: new Map(), terminal: undefined });
	});

	it("knows a terminal draws child screens from the host session's word until that session says it no longer does", () => {
		const here = {};
		expect(terminalHere(here)).toBe(false);
		terminalDraws("host-1", true, here);
		expect(terminalHere(here)).toBe(true);
		expect(screens(here).terminal).toBe("host-1");
		// Another session's goodbye is not this one's: its terminal still draws.
		terminalDraws("host-0", false, here);
		expect(screens(here).terminal).toBe("host-1");
		expect(terminalHere(here)).toBe(true);
		// The next host's terminal takes over; the first one's goodbye then changes nothing.
		terminalDraws("host-2", true, here);
		terminalDraws("host-1", false, here);
		expect(screens(here).terminal).toBe("host-2");
		terminalDraws("host-2", false, here);
		expect(screens(here).terminal).toBeUndefined();
		expect(terminalHere(here)).toBe(false);
	});

	it("keeps each process's registry apart", () => {
		const a = {};
		const b = {};
		terminalDraws("host-a", true, a);
		expect(terminalHere(a)).toBe(true);
		expect(terminalHere(b)).toBe(false);
	});
});
