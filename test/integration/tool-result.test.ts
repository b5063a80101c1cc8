/**
 * The tool result on the real pi tool pipeline (in-process SDK sessions): an answer that is its
 * question's recommended option says so (`recommended: true`), picked by hand in a dialog.
 */
import { describe, expect, it } from "vitest";
import type { Answer } from "../../extensions/checkpoint-bridge/model/answer.ts";
import { type AskArgs, checkedEnvelope, worldPerTest } from "./harness/sdk-sessions.ts";

const world = worldPerTest();

describe("the tool result through the real pi tool pipeline", () => {
	it("the recommended option picked by hand in the host's dialog comes back marked recommended: true; another pick does not", async () => {
		const { ui } = await world.createHost({ name: "main" });
		const child = await world.createChild({
			name: "chooser",
			ask: {
				questions: [
					{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" },
					{ id: "name", question: "Which codename?", options: ["aurora", "borealis"], recommended: "aurora" },
				],
			} as unknown as AskArgs,
		});
		child.start();
		const first = await ui.waitForDialog((d) => d.seq === 1, 10_000, "the first question");
		first.answer(first.options!.find((o) => o.includes("SQLite"))!);
		const second = await ui.waitForDialog((d) => d.seq === 2, 10_000, "the second question");
		second.answer(second.options!.find((o) => o.includes("borealis"))!);
		await child.done();
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("ok");
		// The harness's envelope type predates `recommended`: read as the extension's own answers.
		expect((envelope.answers as Answer[]).map((a) => [a.id, a.answer, a.recommended])).toEqual([
			["db", "SQLite", true],
			["name", "borealis", undefined],
		]);
	});
});
