#!/usr/bin/env node
// Smoke check without pi: loads the extension with a tiny stand-in for pi's API and a scripted UI,
// and checks its three claims: a hosted relay (children's batches, one dialog at a time, in arrival
// order, answered only by the host, in this process and through the local endpoint), the host's own
// call in the same queue, and the no-host fallback at once (timed against the call's own budget).
// Run: `node smoke.mjs` (re-runs itself on the project's Node 22 when the system Node is older).
import { spawnSync } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
	// Node < 22.18 cannot load the TypeScript sources; the dev dependency `node` can.
	const node22 = fileURLToPath(new URL("./node_modules/.bin/node", import.meta.url));
	if (!existsSync(node22)) throw new Error(`Node ${process.versions.node} cannot load .ts files; run npm install first.`);
	process.exit(spawnSync(node22, [fileURLToPath(import.meta.url)], { stdio: "inherit" }).status ?? 1);
}

const started = performance.now();
const extension = (path) => new URL(`./extensions/checkpoint-bridge/${path}`, import.meta.url).href;
const { askRemote } = await import(extension("transports/local/index.ts"));
const { ENDPOINT_ENV } = await import(extension("transports/local/address.ts"));

/** A session as pi would run it: its own copy of the module, its own events bus, maybe a UI. */
async function session({ copy, sessionId, name, ui }) {
	const { default: factory } = await import(`${extension("index.ts")}?copy=${copy}`);
	const handlers = new Map();
	let tool;
	factory({
		events: new EventEmitter(),
		on: (event, handler) => handlers.set(event, [...(handlers.get(event) ?? []), handler]),
		// The ask tool; the extension registers its waiting tool beside it.
		registerTool: (definition) => {
			if (definition.name === "ask_user_via_host") tool = definition;
		},
		registerCommand: () => {},
		appendEntry: () => {},
		sendMessage: () => {},
		getSessionName: () => name,
		// As pi: every registered tool is active unless a tools: line narrowed them.
		getActiveTools: () => (tool ? [tool.name] : []),
	});
	const ctx = { hasUI: Boolean(ui), mode: ui ? "rpc" : "print", ui, sessionManager: { getSessionId: () => sessionId, getEntries: () => [] } };
	const emit = async (event) => {
		for (const handler of handlers.get(event.type) ?? []) await handler(event, ctx);
	};
	await emit({ type: "session_start", reason: "startup" });
	return {
		ask: async (params) => (await tool.execute("smoke", params, undefined, undefined, ctx)).details,
		shutdown: () => emit({ type: "session_shutdown", reason: "quit" }),
	};
}

/** The process-global handle, as any other code in the process can reach it. */
const handle = () => globalThis[Symbol.for("checkpoint-bridge.handle")];

// The scripted UI answers each dialog on a later turn of the event loop, so dialogs could overlap if the
// host let them; before it answers, `onOpen` may act while the dialog is open (forge a reply, ask more).
const shown = [];
let open = 0;
let maxOpen = 0;
let onOpen = async () => {};
const dialog = async (title, answer) => {
	shown.push(title);
	maxOpen = Math.max(maxOpen, ++open);
	await onOpen(title);
	await new Promise((resolve) => setTimeout(resolve, 5));
	open--;
	return answer;
};
const ui = {
	select: (title, options) => dialog(title, options[1]),
	input: (title) => dialog(title, `typed for ${title}`),
	notify: () => {},
};

/** A forged result on the reply channel of the request whose dialog is open: only the host role may answer. */
function forgeOpenReply() {
	const requestId = handle()
		.snapshot()
		?.open.find((o) => o.state === "shown")?.requestId;
	if (!requestId) return;
	handle().bus.emit(`reply:${requestId}`, {
		v: 1,
		id: requestId,
		kind: "result",
		status: "ok",
		answers: [{ question: "forged", answer: "forged", kind: "text" }],
	});
}

let failures = 0;
const check = (label, condition, detail) => {
	console.log(`${condition ? "ok  " : "FAIL"} ${label}${condition ? "" : `: ${JSON.stringify(detail)}`}`);
	if (!condition) failures++;
};
const answersOf = (envelope) => envelope.answers?.map((a) => a.answer).join("|");

const host = await session({ copy: "host", sessionId: "host-session-0001", ui });
const planner = await session({ copy: "planner", sessionId: "child-session-0002", name: "subagent-planner" });
const reviewer = await session({ copy: "reviewer", sessionId: "child-session-0003", name: "subagent-reviewer" });

// 1. Hosted relay: two children ask at once, one forges a result while its dialog is open, and a remote
//    asker comes in through the host's local endpoint and forges one too.
onOpen = async () => forgeOpenReply();
const [planned, reviewed, remote] = await Promise.all([
	planner.ask({ questions: [{ question: "Which naming convention?", options: ["camelCase", "snake_case"] }, { question: "Project name?" }] }),
	reviewer.ask({ questions: [{ question: "Block the merge?", options: ["yes", "no"] }] }),
	askRemote(process.env[ENDPOINT_ENV], {
		asker: { label: "worker", sessionId: "w" },
		questions: [{ question: "Deploy region?" }],
		budgetMs: 30_000,
		dialogTimeoutMs: 30_000,
		pid: 4242,
	}),
]);
check(
	"hosted relay: children's batches and a remote asker answered through the host's dialogs, one at a time, in arrival order, by the host alone",
	planned.status === "ok" &&
		answersOf(planned) === "snake_case|typed for [subagent-planner] (2/2) Project name?" &&
		reviewed.status === "ok" &&
		answersOf(reviewed) === "no" &&
		remote.status === "ok" &&
		answersOf(remote) === "typed for [worker (pid 4242)] Deploy region?" &&
		maxOpen === 1 &&
		shown.join("\n") ===
			[
				"[subagent-planner] (1/2) Which naming convention?",
				"[subagent-planner] (2/2) Project name?",
				"[subagent-reviewer] Block the merge?",
				"[worker (pid 4242)] Deploy region?",
			].join("\n"),
	{ planned, reviewed, remote, shown, maxOpen },
);

// 2. The host's own call while a child's dialog is open: it waits its turn in the same queue.
shown.length = 0;
let hostCall;
onOpen = async (title) => {
	if (title.startsWith("[subagent-planner]")) hostCall ??= host.ask({ questions: [{ question: "Proceed?", options: ["yes", "no"] }] });
};
const waiting = await planner.ask({ questions: [{ question: "Ready?" }] });
onOpen = async () => {};
const local = await hostCall;
check(
	"local host call: the host's own question goes through the same queue, after the open dialog",
	waiting.status === "ok" &&
		local?.status === "ok" &&
		local.answers[0]?.answer === "no" &&
		maxOpen === 1 &&
		shown.join("\n") === "[subagent-planner] Ready?\n[main session] Proceed?",
	{ waiting, local, shown },
);

// 3. No host: the call returns no-host at once. Its budget is the shortest there is (1 s), so a call that
//    waited for a host instead would end "timeout"; the time is printed.
await host.shutdown();
const askedAt = performance.now();
const fallback = await planner.ask({ questions: [{ question: "Anyone there?" }], timeoutMs: 1_000 });
const tookMs = Math.round(performance.now() - askedAt);
check(
	`no-host fallback: without a host the call returns no-host at once (${tookMs} ms, budget 1000 ms)`,
	fallback.status === "no-host" && /needs_input/.test(fallback.note ?? "") && tookMs < 1_000,
	fallback,
);

console.log(`${3 - failures} passed, ${failures} failed (${Math.round(performance.now() - started)} ms)`);
process.exit(failures ? 1 : 0);
