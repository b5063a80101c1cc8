/** The progress line the tool streams while a call waits (tool/progress.ts). */
import { describe, expect, it } from "vitest";
import { progressText } from "../../../extensions/checkpoint-bridge/tool/progress.ts";

describe("progress text", () => {
	it("words the first place in the queue as next", () => {
		expect(progressText({ stage: "queued", position: 1 }, 1)).toBe("checkpoint-bridge: queued, next to be shown");
	});
});
