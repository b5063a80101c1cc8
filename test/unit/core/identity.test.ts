import { describe, expect, it } from "vitest";
import {
	activeAgentOf,
	askerIdentity,
	checkedAsker,
	dirName,
	firstPrompt,
	labelIn,
	MAX_LABEL_LENGTH,
	markedAsker,
	sessionAsker,
} from "../../../extensions/checkpoint-bridge/core/shared/identity.ts";

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

	it("names an unnamed session by the first words of its task and its directory: a `pi -p` run, never a bare session id", () => {
		const cwd = "/home/ana/projects/checkout-service";
		expect(askerIdentity(undefined, "019ae0a1-2b3c", undefined, { task: "Fix the flaky payment tests and report back", cwd })).toEqual({
			label: '"Fix the flaky payment…" in checkout-service',
			sessionId: "019ae0a1-2b3c",
		});
		expect(askerIdentity("   ", "s", undefined, { task: "  Run\n the   job.  ", cwd: "/srv/app/" }).label).toBe('"Run the job." in app');
		// A word longer than the room is cut inside it; a terminal escape in a task is not carried into the title.
		expect(askerIdentity(undefined, "s", undefined, { task: `${"x".repeat(40)} y` }).label).toBe(`"${"x".repeat(24)}…"`);
		expect(askerIdentity(undefined, "s", undefined, { task: "\x1b[2Jwipe" }).label).not.toContain("\x1b");
		// Nothing asked yet: the session, marked as one, and where it runs.
		expect(askerIdentity(undefined, "01a22a01-f9b5-77ab", undefined, { cwd })).toEqual({
			label: "session 9b5-77ab in checkout-service",
			sessionId: "01a22a01-f9b5-77ab",
		});
		expect(askerIdentity("   ", "abcdef0123").label).toBe("session cdef0123");
		// Two sessions started a second apart (pi's uuidv7 ids): told apart.
		const [first, second] = ["019ae0a1-2b3c-7d4e-8f50-61a2b3c4d5e6", "019ae0a1-2f1a-7b2c-9d3e-4f5a6b7c8d9e"];
		expect(askerIdentity(undefined, first).label).not.toBe(askerIdentity(undefined, second).label);
	});

	it("names the unnamed main session as such; a named one by its name; a child stays its agent, a named session its name, whatever its task", () => {
		expect(askerIdentity(undefined, "s", undefined, { main: true, task: "do it", cwd: "/p" }).label).toBe("main session");
		expect(askerIdentity("release prep", "s", undefined, { main: true }).label).toBe("release prep");
		expect(askerIdentity("subagent-tester-r7k2p-2", "s", "tester", { main: false, task: "test it" }).label).toBe("subagent-tester#2");
		expect(askerIdentity("nightly", "s", undefined, { task: "Run the job", cwd: "/p" }).label).toBe("nightly");
	});

	it("a directory is named by its last part, the home directory as ~, an MCP client by its name in it", () => {
		expect(dirName("/a/b/c/")).toBe("c");
		expect(dirName(process.env.HOME)).toBe("~");
		expect(dirName("/")).toBe("/");
		expect(dirName(undefined)).toBeUndefined();
		expect(labelIn("Claude Code", "/work/api")).toBe("Claude Code in api");
		expect(labelIn("x".repeat(60), "/w")).toHaveLength(MAX_LABEL_LENGTH);
	});

	it("a session's task is its first prompt, read until there is one and then kept; not read when a name says more", () => {
		let entries: { type: string; message?: unknown }[] = [];
		let reads = 0;
		const me = sessionAsker(() => undefined);
		me.started({ sessionId: "p-1", systemPrompt: () => "", cwd: "/work/shop", task: () => (reads++, firstPrompt(entries)) });
		expect(me.identity().label).toBe("session p-1 in shop");
		entries = [
			{ type: "model_change" },
			{ type: "message", message: { role: "user", content: [{ type: "text", text: "Bump the" }, { type: "image" }, { type: "text", text: "version" }] } },
			{ type: "message", message: { role: "user", content: "later prompt" } },
		];
		expect(me.identity().label).toBe('"Bump the  version" in shop'.replace("  ", " "));
		const after = reads;
		me.identity();
		expect(reads).toBe(after);
		const main = sessionAsker(() => undefined);
		main.started({ sessionId: "m", systemPrompt: () => "", main: () => true, task: () => (reads++, "never read") });
		expect(main.identity().label).toBe("main session");
		expect(reads).toBe(after);
		expect(firstPrompt([{ type: "message", message: { role: "assistant", content: "x" } }])).toBeUndefined();
	});

	it("a session names itself one way: its agent read from the prompt until found, then kept; a call's own reads win; a new start reads afresh", () => {
		let name: string | undefined = "subagent-tester-r7k2p-2";
		let reads = 0;
		const prompt = (agent: string | undefined) => () => (reads++, agent ? `<active_agent name="${agent}"/>` : "no agent here");
		const me = sessionAsker(() => name);
		expect(me.identity()).toEqual({ label: "subagent-tester-r7k2p-2", sessionId: "unknown" });
		me.started({ sessionId: "child-1", systemPrompt: prompt("tester") });
		// A child says it is one: its late answer may start a turn of the host's model once it is gone (core/delivery/delivery.ts).
		expect(me.identity()).toEqual({ label: "subagent-tester#2", sessionId: "child-1", kind: "agent" });
		expect(me.agent()).toBe("tester");
		expect(reads).toBe(1);
		expect(me.identity({ sessionId: "child-1b", systemPrompt: prompt("planner") })).toEqual({
			label: "subagent-tester#2",
			sessionId: "child-1b",
			kind: "agent",
		});
		expect(reads).toBe(1);
		name = "renamed";
		expect(me.identity().label).toBe("renamed");
		me.started({ sessionId: "main", systemPrompt: prompt(undefined) });
		expect(me.agent()).toBeUndefined();
		expect(me.agent()).toBeUndefined();
		expect(reads).toBe(3);
	});

	it("a remote asker is marked with where it asks from, in its label and its session id", () => {
		expect(markedAsker({ label: "planner", sessionId: "s1" }, "pid 42")).toEqual({ label: "planner (pid 42)", sessionId: "pid 42/s1" });
		expect(markedAsker({ label: "", sessionId: "0123456789" }, "box:7")).toEqual({ label: "session 23456789 (box:7)", sessionId: "box:7/0123456789" });
	});

	it("an asker's kind (agent, mcp) is kept by the host's check and the transports' mark; any other kind is no kind", () => {
		expect(markedAsker({ label: "claude", sessionId: "mcp-1", kind: "mcp" }, "pid 8")).toMatchObject({ kind: "mcp" });
		expect(markedAsker({ label: "planner", sessionId: "s1", kind: "agent" }, "pid 9")).toMatchObject({ kind: "agent" });
		expect(markedAsker({ label: "x", sessionId: "s", kind: "host" } as never, "pid 1")).not.toHaveProperty("kind");
		const checked = (kind: unknown) => checkedAsker({ label: "x", sessionId: "s", kind });
		expect(checked("mcp")).toMatchObject({ ok: true, asker: { kind: "mcp" } });
		expect(checked("agent")).toMatchObject({ ok: true, asker: { kind: "agent" } });
		expect(checked("root")).toMatchObject({ ok: true, asker: { label: "x", sessionId: "s" } });
		expect((checked("root") as { asker: object }).asker).not.toHaveProperty("kind");
	});
});
