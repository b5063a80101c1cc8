/**
 * Which sessions feed the web page's forms open elsewhere (index.ts): only a session in TUI mode,
 * where pi-agent-ask and rpiv show their own forms; a child's or an RPC host's forms ride the relay
 * as requests instead. Its cards leave with it at shutdown.
 */
import { createEventBus } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { formsElsewhere } from "../../extensions/checkpoint-bridge/core/answering/elsewhere.ts";
import { loadExtensionCopy, playedSessions } from "./support/fake-pi.ts";
import { fakeUI } from "./support/fake-ui.ts";

const sessions = playedSessions();
afterEach(() => sessions.shutdownAll());

const started = (flowId: string) => ({
	version: 1,
	flowId,
	source: "tool",
	questions: [
		{
			id: "stack",
			prompt: "Which stack?",
			options: [
				{ label: "TypeScript", value: "ts" },
				{ label: "Go", value: "go" },
			],
		},
	],
	createdAt: 1,
});
const shown = () =>
	formsElsewhere()
		.list()
		.filter((f) => f.tool === "pi-agent-ask");

describe("the forms open in a session's terminal, on the page", () => {
	it("a TUI session feeds them and takes its cards away at shutdown; RPC and print sessions do not", async () => {
		const copy = await loadExtensionCopy();
		const rpcEvents = createEventBus();
		const childEvents = createEventBus();
		const rpc = sessions.play(copy, { sessionId: "rpc", ui: fakeUI().ui, mode: "rpc", events: rpcEvents });
		const child = sessions.play(copy, { sessionId: "child", mode: "print", events: childEvents });
		await rpc.start();
		await child.start();
		rpcEvents.emit("pi-agent-ask:started", started("rpc-flow"));
		childEvents.emit("pi-agent-ask:started", started("child-flow"));
		expect(shown()).toEqual([]);
		await rpc.shutdown("quit");

		const tuiEvents = createEventBus();
		const tui = sessions.play(copy, { sessionId: "tui", ui: fakeUI().ui, mode: "tui", events: tuiEvents });
		await tui.start();
		tuiEvents.emit("pi-agent-ask:started", started("tui-flow"));
		expect(shown()).toHaveLength(1);
		await tui.shutdown("quit");
		expect(shown()).toEqual([]);
		tuiEvents.emit("pi-agent-ask:started", started("late-flow"));
		expect(shown()).toEqual([]);
	});
});
