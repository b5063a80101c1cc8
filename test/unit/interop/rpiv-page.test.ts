/**
 * rpiv-ask-user-question's questionnaire open in the host's terminal, as a read-only card: its
 * 2.11.0 events (`rpiv:ask-user:prompt` with the questions, `rpiv:ask-user:blocked` { active })
 * on pi's own event bus. The real package in the real TUI is test/integration/pi-agent-ask.test.ts.
 */

import { createEventBus } from "@earendil-works/pi-coding-agent";
import { ASK_USER_BLOCKED_EVENT, ASK_USER_PROMPT_EVENT } from "@juicesharp/rpiv-ask-user-question/events";
import { describe, expect, it, vi } from "vitest";
import { FormsElsewhere, MAX_FORMS_ELSEWHERE } from "../../../extensions/checkpoint-bridge/core/answering/elsewhere.ts";
import { RPIV, rpivOnPage } from "../../../extensions/checkpoint-bridge/interop/rpiv-page.ts";

const prompt = (question: string, extra: Record<string, unknown> = {}) => ({
	questions: [
		{
			question,
			header: "DB\x1b]0;pwned\x07",
			multiSelect: false,
			options: [
				{ label: "Postgres", description: "relational", hasPreview: false },
				{ label: "SQLite", description: "embedded", hasPreview: true },
			],
		},
	],
	...extra,
});

function setup() {
	const bus = createEventBus();
	const forms = new FormsElsewhere();
	const stop = rpivOnPage(bus, forms);
	return { bus, forms, stop };
}

describe("rpiv's questionnaire in the host's terminal, on the page", () => {
	it("the events are 2.11.0's", () => {
		expect([ASK_USER_PROMPT_EVENT, ASK_USER_BLOCKED_EVENT]).toEqual(["rpiv:ask-user:prompt", "rpiv:ask-user:blocked"]);
	});

	it("a read-only card from the wait's start to its end, with the prompt's questions sanitised", async () => {
		const { bus, forms } = setup();
		bus.emit(ASK_USER_PROMPT_EVENT, prompt("Which database?"));
		// A prompt alone is no card: a questionnaire that fails to load never waits.
		expect(forms.list()).toEqual([]);
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: true });
		const [form] = forms.list();
		expect(form).toMatchObject({ tool: RPIV, answerable: false });
		expect(form!.questions).toMatchObject([
			{ header: "DB", question: "Which database?", options: [{ label: "Postgres", description: "relational" }, { label: "SQLite" }] },
		]);
		expect(await forms.submit(form!.id, ["Postgres"])).toMatchObject({ ok: false, code: "read-only" });
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: false });
		expect(forms.list()).toEqual([]);
	});

	it("without ids an end closes the newest card; with a toolCallId it closes its own", () => {
		const { bus, forms } = setup();
		bus.emit(ASK_USER_PROMPT_EVENT, prompt("First?"));
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: true });
		bus.emit(ASK_USER_PROMPT_EVENT, prompt("Second?"));
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: true });
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: false });
		expect(forms.list().map((f) => f.questions[0]?.question)).toEqual(["First?"]);
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: false });
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: false });
		expect(forms.list()).toEqual([]);

		bus.emit(ASK_USER_PROMPT_EVENT, prompt("A?", { toolCallId: "a" }));
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: true, toolCallId: "a" });
		bus.emit(ASK_USER_PROMPT_EVENT, prompt("B?", { toolCallId: "b" }));
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: true, toolCallId: "b" });
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: false, toolCallId: "a" });
		expect(forms.list().map((f) => f.questions[0]?.question)).toEqual(["B?"]);
	});

	it("odd payloads change nothing or show a card without questions; the stop removes its cards", () => {
		const { bus, forms, stop } = setup();
		bus.emit(ASK_USER_BLOCKED_EVENT, "yes");
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: "true" });
		expect(forms.list()).toEqual([]);
		bus.emit(ASK_USER_PROMPT_EVENT, { questions: "many" });
		bus.emit(ASK_USER_BLOCKED_EVENT, { active: true });
		expect(forms.list()).toMatchObject([{ tool: RPIV, questions: [] }]);
		stop();
		expect(forms.list()).toEqual([]);
	});
});

describe("questionnaires that never end (issue 30, finding 9)", () => {
	it("1,000 waits without an end leave the adapter holding no more cards than the forms keep (16)", () => {
		const { bus, forms, stop } = setup();
		for (let i = 0; i < 1_000; i++) {
			bus.emit(ASK_USER_PROMPT_EVENT, prompt(`Q${i}?`));
			bus.emit(ASK_USER_BLOCKED_EVENT, { active: true });
		}
		expect(forms.list()).toHaveLength(MAX_FORMS_ELSEWHERE);
		const removed = vi.spyOn(forms, "remove");
		stop();
		expect(removed).toHaveBeenCalledTimes(MAX_FORMS_ELSEWHERE);
		expect(forms.list()).toEqual([]);
	});
});
