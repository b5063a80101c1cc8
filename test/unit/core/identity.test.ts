import { describe, expect, it } from "vitest";
import { activeAgentOf, askerIdentity, MAX_LABEL_LENGTH } from "../../../extensions/checkpoint-bridge/core/identity.ts";

describe("who asks", () => {
	it("names a pi-subagents child by its agent, and its step when it has one", () => {
		expect(askerIdentity("subagent-planner-129c7a75-66d4-48a6-9992-9f3869ab01cd", "s").label).toBe("subagent-planner");
		expect(askerIdentity("subagent-planner-129c7a75-66d4-48a6-9992-9f3869ab01cd-1", "s").label).toBe("subagent-planner");
		expect(askerIdentity("subagent-code-reviewer-129c7a75-66d4-48a6-9992-9f3869ab01cd-2", "s").label).toBe("subagent-code-reviewer#2");
	});

	it("names a child whose run id is not a uuid by the agent of its system prompt", () => {
		expect(askerIdentity("subagent-tester-r7k2p-2", "s", "tester").label).toBe("subagent-tester#2");
		expect(askerIdentity("subagent-code-reviewer-r7k2p", "s", "Code Reviewer").label).toBe("subagent-code-reviewer");
		expect(activeAgentOf('You are…\n<active_agent name="tester"/>\n')).toBe("tester");
		expect(askerIdentity("subagent-tester-r7k2p", "s", "planner").label).toBe("subagent-tester-r7k2p");
	});

	it("keeps any other session name, shortened to fit a title", () => {
		expect(askerIdentity("planner: draft the API", "s").label).toBe("planner: draft the API");
		const long = askerIdentity("x".repeat(100), "s").label;
		expect(long).toHaveLength(MAX_LABEL_LENGTH);
		expect(long.endsWith("…")).toBe(true);
	});

	it("falls back to the first 8 characters of the session id", () => {
		expect(askerIdentity(undefined, "01a22a01-f9b5-77ab")).toEqual({ label: "01a22a01", sessionId: "01a22a01-f9b5-77ab" });
		expect(askerIdentity("   ", "abcdef0123").label).toBe("abcdef01");
	});
});
