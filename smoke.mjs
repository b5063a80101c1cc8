#!/usr/bin/env node
// Smoke check without pi: loads the extension with a tiny stand-in for pi's API and a scripted UI,
// and plays three scenarios (a relayed batch, the host's own call, the no-host fallback).
// Run: `node smoke.mjs` (re-runs itself on the project's Node 22 when the system Node is older).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { EventEmitter } from "node:events";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
	// Node < 22.18 cannot load the TypeScript sources; the dev dependency `node` can.
	const node22 = fileURLToPath(new URL("./node_modules/.bin/node", import.meta.url));
	if (!existsSync(node22)) throw new Error(`Node ${process.versions.node} cannot load .ts files; run npm install first.`);
	process.exit(spawnSync(node22, [fileURLToPath(import.meta.url)], { stdio: "inherit" }).status ?? 1);
}

const started = performance.now();
const extensionUrl = new URL("./extensions/checkpoint-bridge/index.ts", import.meta.url);

/** A session as pi would run it: its own copy of the module, its own events bus, maybe a UI. */
async function session({ copy, sessionId, name, ui }) {
	const { default: factory } = await import(`${extensionUrl.href}?copy=${copy}`);
	const handlers = new Map();
	let tool;
	factory({
		events: new EventEmitter(),
		on: (event, handler) => handlers.set(event, [...(handlers.get(event) ?? []), handler]),
		registerTool: (definition) => (tool = definition),
		registerCommand: () => {},
		getSessionName: () => name,
	});
	const ctx = { hasUI: Boolean(ui), mode: ui ? "rpc" : "print", ui, sessionManager: { getSessionId: () => sessionId } };
	const emit = async (event) => { for (const handler of handlers.get(event.type) ?? []) await handler(event, ctx); };
	await emit({ type: "session_start", reason: "startup" });
	return {
		ask: async (params) => (await tool.execute("smoke", params, undefined, undefined, ctx)).details,
		shutdown: () => emit({ type: "session_shutdown", reason: "quit" }),
	};
}

const shown = [];
const ui = {
	select: async (title, options) => (shown.push(title), options[1]),
	input: async (title) => (shown.push(title), "typed answer"),
	notify: (message) => shown.push(`notify: ${message}`),
};

let failures = 0;
const check = (label, condition, detail) => {
	console.log(`${condition ? "ok  " : "FAIL"} ${label}${condition ? "" : `: ${JSON.stringify(detail)}`}`);
	if (!condition) failures++;
};

const host = await session({ copy: "host", sessionId: "host-session-0001", ui });
const child = await session({ copy: "child", sessionId: "child-session-0002", name: "subagent-planner" });

const relayed = await child.ask({ questions: [{ question: "Which naming convention?", options: ["camelCase", "snake_case"] }, { question: "Project name?" }] });
check("hosted relay: a child's batch is answered through the host's dialogs",
	relayed.status === "ok" && relayed.answers.map((a) => a.answer).join("|") === "snake_case|typed answer" &&
	shown.includes("[subagent-planner] (1/2) Which naming convention?"), { relayed, shown });

const local = await host.ask({ questions: [{ question: "Proceed?", options: ["yes", "no"] }] });
check("local host call: the host's own question goes through the same queue", local.status === "ok" && local.answers[0]?.answer === "no", local);

await host.shutdown();
const fallback = await child.ask({ questions: [{ question: "Anyone there?" }] });
check("no-host fallback: without a host the call returns no-host at once", fallback.status === "no-host" && /needs_input/.test(fallback.note ?? ""), fallback);

console.log(`${3 - failures} passed, ${failures} failed (${Math.round(performance.now() - started)} ms)`);
process.exit(failures ? 1 : 0);
