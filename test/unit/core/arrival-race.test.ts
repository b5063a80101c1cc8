/**
 * Issue 23, item 6: two background askers arrive together; the first one's form opens, and its
 * "asks 1 question" notice was gone from the screen (two runs in three) while the second's said
 * "(1 ahead)". The race: pi's TUI shows a notice that follows another with nothing drawn between in
 * the other's place (InteractiveMode.showStatus), so whenever the second request came before
 * anything else reached the chat, its notice wiped out the first. Driven here through pi's own
 * showStatus, on pi's own chat container.
 */
import { InteractiveMode } from "@earendil-works/pi-coding-agent";
import { Container, Text } from "@earendil-works/pi-tui";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** pi's chat as its TUI keeps it: `showStatus` of InteractiveMode on a chat container, nothing else. */
function piChat() {
	const chat = { chatContainer: new Container(), ui: { requestRender: () => {} } } as unknown as { chatContainer: Container; lastStatusMessage: string };
	let others = 0;
	const showStatus = (InteractiveMode.prototype as unknown as { showStatus(this: unknown, message: string): void }).showStatus;
	return {
		notify: (message: string) => showStatus.call(chat, message),
		/** Status lines on screen: the chat holds a spacer and a text for each; the last one reads lastStatusMessage. */
		statusLines: () => (chat.chatContainer.children.length - others) / 2,
		lastStatus: () => chat.lastStatusMessage,
		/** Something else reaches the chat (a tool call, a message). */
		other: () => {
			others++;
			chat.chatContainer.addChild(new Text("tool output", 0, 0));
		},
	};
}

describe("arrival notices on pi's TUI, two askers arriving together", () => {
	it("pi's chat shows back-to-back notices in one place (the race's cause)", () => {
		const chat = piChat();
		chat.notify("first");
		chat.notify("second");
		expect(chat.statusLines()).toBe(1);
		expect(chat.lastStatus()).toBe("second");
	});

	it("the line left on screen names both askers: the first, whose form is open, and the second, queued behind it", async () => {
		const chat = piChat();
		const { fake, ask } = relay();
		fake.ui.notify = (message: string, type?: string) => {
			if (type !== "warning") chat.notify(message);
		};
		void ask([{ question: "Does the missing test block the merge?", kind: "confirm" }], { label: "subagent-reviewer (pid 19163)" });
		void ask([{ question: "Which test suite should run first?", options: ["unit", "e2e"] }], { label: "subagent-tester (pid 19169)" });
		await flush(vi);
		expect(fake.current()!.title).toContain("[subagent-reviewer (pid 19163)]");
		expect(chat.statusLines()).toBe(1);
		expect(chat.lastStatus()).toBe(
			"checkpoint-bridge: [subagent-reviewer (pid 19163)] asks 1 question; [subagent-tester (pid 19169)] asks 1 question (1 ahead)",
		);
	});

	it("a notice after other chat content starts afresh, and an answered request is not restated", async () => {
		const chat = piChat();
		const { fake, ask } = relay({ respond: (dialog) => dialog.answer("Yes") });
		fake.ui.notify = (message: string, type?: string) => {
			if (type !== "warning") chat.notify(message);
		};
		await ask([{ question: "Ship?", kind: "confirm" }], { label: "a" });
		chat.other();
		void ask([{ question: "Name?" }], { label: "b" });
		await flush(vi);
		expect(chat.statusLines()).toBe(2);
		expect(chat.lastStatus()).toBe("checkpoint-bridge: [b] asks 1 question");
	});
});
