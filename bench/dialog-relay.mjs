/**
 * Figure 9: what relaying another extension's dialog costs (CHECKPOINT_BRIDGE_RELAY_DIALOGS=1,
 * ADR-0012). Two real pi sessions in this process, built as the SDK tests and pi-subagents build
 * them: a host bound with a UI that answers every dialog at once, and a child with its own loader
 * (so its own module copies) bound with `{ mode: "print" }` and no UI, which checkpoint-bridge gives
 * the relayed UI. The same `ctx.ui.confirm(title, message)` is called from an extension in each:
 * in the host it goes straight to the host's UI; in the child it becomes a request of the host's
 * queue, shown as a Yes / No dialog, and the answer comes back as `true`. Calls one at a time, host
 * and child in interleaved blocks, each timed from the call to its promise settling. Prints one
 * JSON document on stdout.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { quietUI } from "../test/integration/harness/quiet-ui.ts";
import { summary } from "./stats.mjs";

// Read by checkpoint-bridge when it loads: set before any session does.
process.env.CHECKPOINT_BRIDGE_RELAY_DIALOGS = "1";
const { createAgentSession, createEventBus, DefaultResourceLoader, SessionManager, SettingsManager } = await import("@earendil-works/pi-coding-agent");

const here = dirname(fileURLToPath(import.meta.url));
const BRIDGE = join(here, "../extensions/checkpoint-bridge/index.ts");
/** Calls per block a side, blocks a side, and unrecorded warm-up calls a side. */
const PER_BLOCK = 100;
const BLOCKS = 20;
const WARMUP = 300;
const AGENT = "reviewer";
const TITLE = "Run rm -rf build/?";
const MESSAGE = "The build folder is deleted.";

const root = mkdtempSync(join(tmpdir(), "cb-bench-dialog-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const cwd = join(root, "work");
const agentDir = join(root, "agent");
mkdirSync(cwd, { recursive: true });
process.env.PI_CODING_AGENT_DIR = agentDir;

const noop = () => {};
/** Dialogs the host's UI showed for the child: one per relayed confirm, titled with who asks. */
let relayedShown = 0;
/** The host's human: every dialog answered at once, a relayed confirm (a Yes / No select) with Yes. Every method of ExtensionUIContext, since pi spreads it. */
const hostUI = {
	select(title, options) {
		if (title === `[subagent-${AGENT}] ${TITLE}\n${MESSAGE}` && options?.join() === "Yes,No") relayedShown++;
		return Promise.resolve(options?.[0]);
	},
	confirm: () => Promise.resolve(true),
	input: () => Promise.resolve(undefined),
	editor: () => Promise.resolve(undefined),
	notify: noop,
	theme: undefined,
	...quietUI(),
};

/** A session loading checkpoint-bridge and an extension that hands out its context; resolves with the session and that context. */
async function session(bind, child = false) {
	let context;
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
	const loader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		eventBus: createEventBus(),
		additionalExtensionPaths: [BRIDGE],
		extensionFactories: [
			(pi) =>
				pi.on("session_start", (_event, ctx) => {
					context = ctx;
					if (child) pi.setSessionName(`subagent-${AGENT}-${randomUUID()}`);
				}),
		],
		// What pi-subagents gives a child: its agent's prompt, with the tag that names the agent.
		...(child ? { systemPrompt: `<active_agent name="${AGENT}"/>\n\nYou are ${AGENT}.` } : {}),
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
	});
	// As pi-subagents does for a child: pi then drops its extension cache, and this session gets its own module copies.
	loader.loaded = true;
	await loader.reload();
	const { errors } = loader.getExtensions();
	if (errors.length > 0) throw new Error(`extension load failed: ${JSON.stringify(errors)}`);
	const { session: created } = await createAgentSession({
		cwd,
		agentDir,
		settingsManager,
		resourceLoader: loader,
		sessionManager: SessionManager.inMemory(cwd),
		noTools: "builtin",
	});
	await created.bindExtensions(bind);
	if (!context) throw new Error("session_start did not run");
	return { session: created, ctx: context };
}

const host = await session({ uiContext: hostUI, mode: "rpc" });
const child = await session({ mode: "print" }, true);
if (!host.ctx.hasUI) throw new Error("the host session has no UI");
if (!child.ctx.hasUI || child.ctx.mode !== "rpc") throw new Error(`the child did not get the relayed UI (hasUI ${child.ctx.hasUI}, mode ${child.ctx.mode})`);

const SIDES = { host: host.ctx, child: child.ctx };
/** CPU time of this thread in µs: unlike wall time it leaves out the time the process waits for a core on a busy machine. */
const threadCpuUs = () => {
	const { user, system } = process.threadCpuUsage();
	return user + system;
};
/** Thread CPU spent in each side's timed blocks, in µs. */
const cpuUs = { host: 0, child: 0 };

/** `n` confirms one after another from `side`; their latencies in µs. Fails on any answer but `true`. */
async function block(side, n) {
	const { ui } = SIDES[side];
	const latenciesUs = new Float64Array(n);
	const cpuStart = threadCpuUs();
	for (let i = 0; i < n; i++) {
		const start = performance.now();
		const answer = await ui.confirm(TITLE, MESSAGE);
		latenciesUs[i] = (performance.now() - start) * 1000;
		if (answer !== true) throw new Error(`${side}: a confirm answered Yes came back as ${JSON.stringify(answer)}`);
	}
	cpuUs[side] += threadCpuUs() - cpuStart;
	return latenciesUs;
}

await block("host", WARMUP);
await block("child", WARMUP);
cpuUs.host = cpuUs.child = 0;
const samples = { host: [], child: [] };
for (let b = 0; b < BLOCKS; b++) {
	// Alternating which side goes first, so neither always follows the other's garbage.
	for (const side of b % 2 === 0 ? ["host", "child"] : ["child", "host"]) samples[side].push(...(await block(side, PER_BLOCK)));
}

const childCalls = WARMUP + PER_BLOCK * BLOCKS;
if (relayedShown !== childCalls) throw new Error(`the host showed ${relayedShown} relayed Yes / No dialogs for ${childCalls} confirms of the child`);
for (const { session: s } of [child, host]) s.dispose();
const calls = PER_BLOCK * BLOCKS;
const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;
const side = (name) => ({ e2eUs: { ...summary(samples[name]), mean: mean(samples[name]) }, cpuPerCallUs: cpuUs[name] / calls });
const result = { calls, host: side("host"), child: side("child") };
result.addedP50Us = result.child.e2eUs.p50 - result.host.e2eUs.p50;
result.addedCpuPerCallUs = result.child.cpuPerCallUs - result.host.cpuPerCallUs;
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
