/**
 * A wait's outcome (model/wait-outcome.ts) from what it left: ok with a note when nothing named was
 * left to wait for (handed back before, or never queued), ok when all ended, timeout naming how many
 * are still open; `delivered` only when something was handed back.
 */
import { describe, expect, it } from "vitest";
import { makeEnvelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { waitOutcome, waitRefused } from "../../../extensions/checkpoint-bridge/model/wait-outcome.ts";

const WORDS = { asker: "this session", handedBack: "delivered before, as a message in this session", stillOpen: "Wait again later." };
const ENDED = makeEnvelope("ok", [], undefined, { requestId: "r1" });

describe("waitOutcome", () => {
	it("nothing left to wait for, all handed back before: ok, saying so, with the ids handed back", () => {
		expect(waitOutcome([], [], ["r1", "r2"], WORDS)).toEqual({
			status: "ok",
			ended: [],
			open: [],
			delivered: ["r1", "r2"],
			note: "Every request named was delivered before, as a message in this session.",
		});
	});

	it("nothing left to wait for and nothing handed back: ok, saying nothing of the asker is queued", () => {
		expect(waitOutcome([], [], [], WORDS)).toEqual({ status: "ok", ended: [], open: [], note: "Nothing of this session is queued." });
	});

	it("all ended: ok with their envelopes and no note, one handed back before named beside them", () => {
		expect(waitOutcome([ENDED], [], [], WORDS)).toEqual({ status: "ok", ended: [ENDED], open: [] });
		expect(waitOutcome([ENDED], [], ["r0"], WORDS)).toEqual({ status: "ok", ended: [ENDED], open: [], delivered: ["r0"] });
	});

	it("some still open: timeout, naming how many and what to do, never to ask them again", () => {
		expect(waitOutcome([ENDED], ["r2", "r3"], [], WORDS)).toEqual({
			status: "timeout",
			ended: [ENDED],
			open: ["r2", "r3"],
			note: "2 still open when the wait ended: Wait again later. Do not ask them again.",
		});
		expect(waitOutcome([], ["r2"], [], WORDS).status).toBe("timeout");
	});

	it("a refused wait is an error that touches nothing named", () => {
		expect(waitRefused("requestIds must name at least one request")).toEqual({
			status: "error",
			ended: [],
			open: [],
			note: "requestIds must name at least one request",
		});
	});
});
