/**
 * How a session is named to the human (core/shared/identity.ts), case by case: pi-subagents' names with
 * and without a run id, their steps, agent names made into name parts, a task's first words, a
 * directory, the first prompt among a session's entries, and the asker check's words.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
	activeAgentOf,
	askerIdentity,
	checkedAsker,
	dirName,
	firstPrompt,
	sessionAsker,
	sessionReads,
	UNSTARTED_SESSION_ID,
} from "../../../extensions/checkpoint-bridge/core/shared/identity.ts";

const UUID = "0f8e2b1c-1234-4abc-9def-0123456789ab";
const label = (name: string, agent?: string) => askerIdentity(name, "s", agent).label;

afterEach(() => void vi.unstubAllEnvs());

describe("a pi-subagents child's name", () => {
	it("with a run id: its agent, however long, and its step from the second on; anything around it is no such name", () => {
		expect(label(`subagent-code-reviewer-${UUID}`)).toBe("subagent-code-reviewer");
		expect(label(`subagent-code-reviewer-${UUID.toUpperCase()}-3`)).toBe("subagent-code-reviewer#3");
		expect(label(`subagent-a-${UUID}-1`)).toBe("subagent-a");
		expect(label(`my subagent-a-${UUID}`)).toMatch(/^my subagent-a-0f8e2b1c-/);
		expect(label(`subagent-a-${UUID}x`)).toBe(`subagent-a-${UUID}x`);
		expect(label(`subagent-a-${UUID.replace("0f8e2b1c", "0f8e2b1")}`)).not.toBe("subagent-a");
		expect(label(`subagent-a-${UUID.replace("0123456789ab", "0123456789a")}`)).not.toBe("subagent-a");
		expect(label(`subagent-a-${UUID.replace("9def", "9deg")}`)).not.toBe("subagent-a");
	});

	it("without a run id: by the agent of its prompt made into pi-subagents' name part, and a step of up to three digits at the end", () => {
		expect(label("subagent-my-agent-run-12", "  My  Agent!! ")).toBe("subagent-my-agent#12");
		expect(label("subagent-x-run", "--x--")).toBe("subagent-x");
		expect(label("subagent-a-7-run", "a")).toBe("subagent-a");
		expect(label("subagent-a-run-1234", "a")).toBe("subagent-a");
	});

	it("the agent is read from the active_agent tag, spaces before its end allowed", () => {
		expect(activeAgentOf('You are… <active_agent name="reviewer" />')).toBe("reviewer");
		expect(activeAgentOf('<active_agent name="reviewer"x/>')).toBeUndefined();
	});
});

describe("an unnamed session's task and directory", () => {
	const task = (text: string) => askerIdentity(undefined, "s", undefined, { task: text }).label;
	it("keeps a task of 24 characters whole, cuts a longer one at a word past the middle, without trailing punctuation", () => {
		expect(task("abcdefghij abcdefghij ab")).toBe('"abcdefghij abcdefghij ab"');
		expect(task("abcdefghijk abcdefghijklmnop")).toBe('"abcdefghijk abcdefghijkl…"');
		expect(task("abcdefghijklm abc, ... defgh")).toBe('"abcdefghijklm abc…"');
	});

	it("names the home directory ~ whatever slashes end it", () => {
		vi.stubEnv("HOME", "/home/ada//");
		expect(dirName("/home/ada")).toBe("~");
		expect(dirName("/home/ada///")).toBe("~");
	});
});

describe("a session's first prompt and its reads", () => {
	it("is the first user message's text, its parts joined, whatever is not text left out", () => {
		expect(
			firstPrompt([
				{ type: "custom", message: { role: "user", content: "not a message" } },
				{ type: "message", message: { role: "assistant", content: "no" } },
				{ type: "message", message: { role: "user", content: [null, { type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }] } },
			]),
		).toBe(" a  b");
	});

	it("the directory is the call's own, else the session's; a session not started yet is unknown", () => {
		const asker = sessionAsker(() => undefined);
		expect(asker.identity().sessionId).toBe(UNSTARTED_SESSION_ID);
		asker.started({ sessionId: "s-1", systemPrompt: () => undefined, cwd: "/work/proj" });
		expect(asker.identity({ sessionId: "s-1", systemPrompt: () => undefined }).label).toMatch(/ in proj$/);
		const reads = (cwd?: string) => sessionReads({ sessionManager: { getSessionId: () => "s-2", getEntries: () => [] }, ...(cwd ? { cwd } : {}) }, () => false);
		expect(reads("/x").cwd).toBe("/x");
		expect(Object.keys(reads())).not.toContain("cwd");
	});
});

describe("the asker a request names", () => {
	it("says what is wrong when it names nobody; a blank label is the session's last 8 characters; spaces squeezed", () => {
		expect(checkedAsker(undefined)).toEqual({ ok: false, reason: "The request does not say who asks." });
		expect(checkedAsker({ label: "  ", sessionId: "pid 7/0123456789" })).toEqual({
			ok: true,
			asker: { label: "session 23456789", sessionId: "pid 7/0123456789" },
		});
		expect(checkedAsker({ label: "  code   reviewer ", sessionId: "s" })).toMatchObject({ asker: { label: "code reviewer" } });
		expect(checkedAsker({ label: "a", sessionId: "s", kind: "agent" })).toMatchObject({ asker: { kind: "agent" } });
	});
});
