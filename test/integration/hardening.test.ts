/**
 * Issue 30's attacks on the real pi 1.6 host in RPC mode, by a runaway extension (fixtures/flood.ts):
 * in a `pi -p` run reaching the host's endpoint (its confirms and notices), and in a foreground
 * pi-subagents child in the host's own process (a select of 100 options of 1 MB, 100 notices of
 * 1 MB and 10,000 small ones, pi-agent-ask forms of 50 prompts of 1 MB and of 4,000 alike labels).
 * While a child floods, this side asks the host for its state every 100 ms and measures how long
 * each answer takes: the host must answer within 1 s throughout.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installRelayAgent } from "./fixtures/relay-agent.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import {
	baseArgs,
	childTranscripts,
	createPiEnv,
	type Frame,
	hostEndpoint,
	isDialog,
	isNotify,
	type PiEnv,
	type PiRpc,
	PiRpcFixture,
	REPO_ROOT,
	runPi,
	toolResultsIn,
} from "./harness/pi-cli.ts";

const FLOOD_EXT = join(REPO_ROOT, "test/integration/fixtures/flood.ts");
const SWITCH = { CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1" };
/** pi-subagents compiles its TypeScript on start: allow for it on a busy machine. */
const CHILD_MS = 120_000;
/** The host answers every state request within this long while a child floods. */
const HOST_ANSWERS_WITHIN_MS = 1_000;
const MEGABYTE = 1_000_000;
const MAIN_QUESTION = "Which release goes out today?";

const isStatus = (f: Frame) => f.type === "extension_ui_request" && f.method === "setStatus" && f.statusKey === "checkpoint-bridge";
/** How many requests the host's status line says wait, from its latest status. */
/** Requests the host holds, from its status line: the one shown, then `N queued`. */
const waiting = (pi: PiRpc) => {
	const status = pi.frames.filter(isStatus).at(-1)?.statusText ?? "";
	return (status.includes("shown: ") ? 1 : 0) + Number(/(\d+) queued/.exec(status)?.[1] ?? 0);
};

/** Asks the host for its state every 100 ms until stopped; resolves with when each was asked and how long its answer took. */
function measureHost(pi: PiRpc): { stop(): Promise<{ sent: number; tookMs: number }[]> } {
	let stopped = false;
	const answers: { sent: number; tookMs: number }[] = [];
	const loop = (async () => {
		while (!stopped) {
			const sent = Date.now();
			await pi.command("get_state", {}, 60_000);
			answers.push({ sent, tookMs: Date.now() - sent });
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
	})();
	return {
		async stop() {
			stopped = true;
			await loop;
			return answers;
		},
	};
}

/** What the flood tool reported, from the child transcripts. */
const floodReports = (piEnv: PiEnv) =>
	childTranscripts(piEnv)
		.flatMap((t) => toolResultsIn(t.records, "flood"))
		.map((text) => JSON.parse(/flood: (\{.*\})/.exec(text)?.[1] ?? "null") as Record<string, unknown> | null);

const CHILD_ATTACKS = {
	"flood-select": { what: "select", count: 100, size: MEGABYTE },
	"flood-notices": { what: "notices", count: 100, size: MEGABYTE },
	"flood-many-notices": { what: "notices", count: 10_000, size: 1 },
	"flood-form": { what: "form", count: 50, size: MEGABYTE },
	"flood-labels": { what: "labels", count: 4_000 },
} as const;

const script: ScriptConfig = {
	prompts: {
		ask: { ask: { questions: [{ question: MAIN_QUESTION, options: ["1.4", "1.5"] }] } },
		...Object.fromEntries(Object.keys(CHILD_ATTACKS).map((agent) => [agent, { subagent: { agent, task: "Flood." } }])),
	},
	childCalls: Object.fromEntries(Object.entries(CHILD_ATTACKS).map(([agent, args]) => [agent, { tool: "flood", arguments: args }])),
};

describe("a runaway extension cannot bury the human or freeze the host (issue 30)", () => {
	const run = new PiRpcFixture();
	let child: PiEnv | undefined;
	afterEach(async () => {
		await run.stop();
		child?.cleanup();
		child = undefined;
	});

	it("a pi -p run opening 1,000 confirms at once holds 16 at the host, however many connections its pool opens; the main question goes next, ahead of them (the fair queue, ADR-0024); its 10,000 notices reach the human as 20", {
		timeout: 240_000,
	}, async () => {
		const piEnv = run.createEnv({ script });
		const pi = run.startPi();
		const endpoint = await hostEndpoint(piEnv);
		child = createPiEnv({
			script: { main: { call: { tool: "flood", arguments: { what: "confirms", count: 1_000 } } } },
			env: { ...SWITCH, CHECKPOINT_BRIDGE_ENDPOINT: endpoint },
		});
		const confirms = runPi(child, [...baseArgs(), "--extension", FLOOD_EXT, "-p", "Flood."], 180_000);
		await pi.waitForDialog({ timeoutMs: CHILD_MS, failOn: () => false });
		// The flood is taken in once the host's count of waiting requests stops changing.
		let seen = -1;
		for (let still = 0; still < 20; still = waiting(pi) === seen ? still + 1 : 0) {
			seen = waiting(pi);
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		expect(waiting(pi), "requests the host holds for the pi -p run").toBe(16);

		const start = pi.mark();
		await pi.prompt("ask");
		await pi.waitFor((f) => isStatus(f) && waiting(pi) === seen + 1, { from: start, timeoutMs: 30_000, what: "the main question queued" });
		// The human dismisses flood dialogs until the main question shows: how many stood before it.
		let current = pi.frames.filter(isDialog).at(-1)!;
		let ahead = 0;
		while (!String(current.title).includes(MAIN_QUESTION)) {
			ahead++;
			const from = pi.mark();
			pi.cancel(current);
			current = await pi.waitForDialog({ from, timeoutMs: 30_000, failOn: () => false });
		}
		const answered = pi.mark();
		pi.answer(current, "1.5");
		// The host session's own question goes first: only the flood dialog on screen when it was asked stood before it.
		expect(ahead, "flood dialogs shown before the main question").toBeLessThanOrEqual(1);
		await pi.waitForSettled({ from: start });
		// The flood's other dialogs waited behind it: the human dismisses them until the run ends.
		let finished = false;
		const flooded = confirms.finally(() => (finished = true));
		for (let from = answered; !finished; ) {
			const next = await pi.waitForDialog({ from, timeoutMs: 1_000, failOn: () => false }).catch(() => undefined);
			if (!next) continue;
			from = pi.frames.indexOf(next) + 1;
			pi.cancel(next);
		}
		const done = await flooded;
		expect(done.code, done.stderr.slice(-2_000)).toBe(0);
		expect(done.stdout).toMatch(/yes\\?":0,\\?"no\\?":1000/);

		// Its notices ride the endpoint: one window of 20 for the whole endpoint.
		const notices = createPiEnv({
			script: { main: { call: { tool: "flood", arguments: { what: "notices", count: 10_000 } } } },
			env: { ...SWITCH, CHECKPOINT_BRIDGE_ENDPOINT: endpoint },
		});
		try {
			const sent = await runPi(notices, [...baseArgs(), "--extension", FLOOD_EXT, "-p", "Flood."], 120_000);
			expect(sent.code, sent.stderr.slice(-2_000)).toBe(0);
			await new Promise((resolve) => setTimeout(resolve, 1_000));
			expect(pi.frames.filter((f) => isNotify(f) && /^\[[^\]]+ \(pid \d+\)\] \d+ x$/.test(String(f.message)))).toHaveLength(20);
		} finally {
			notices.cleanup();
		}
	});

	it("a foreground child's select of 100 options of 1 MB, 100 notices of 1 MB and 10,000 small ones, and pi-agent-ask forms of 50 prompts of 1 MB and of 4,000 alike labels: the host answers within 1 s throughout", {
		timeout: 600_000,
	}, async () => {
		const piEnv = run.createEnv({ script, env: SWITCH });
		for (const agent of Object.keys(CHILD_ATTACKS)) installRelayAgent(piEnv.agentDir, agent, FLOOD_EXT);
		const pi = run.startPi({ subagents: true });
		await hostEndpoint(piEnv, CHILD_MS).catch((error: Error) => {
			throw new Error(`${error.message}\n${pi.diagnostics()}`);
		});
		const slowest: Record<string, number> = {};
		const reportOf = (agent: string) => {
			const { what, count } = CHILD_ATTACKS[agent as keyof typeof CHILD_ATTACKS];
			return floodReports(piEnv).find((r) => r?.what === what && r.count === count) as { floodStart: number; floodEnd: number } & Record<string, unknown>;
		};

		for (const agent of Object.keys(CHILD_ATTACKS)) {
			const start = pi.mark();
			const measured = measureHost(pi);
			await pi.prompt(agent);
			if (agent === "flood-select") {
				const select = await pi.waitForDialog({ from: start, timeoutMs: CHILD_MS });
				expect(select.options).toHaveLength(100);
				// Each option cut to the relayed dialog's bound, marked, and numbered apart.
				expect(select.options.every((o: string) => [...o].length <= 2_000 && /…( \(\d+\))?$/.test(o))).toBe(true);
				pi.answer(select, select.options[7]);
			}
			await pi.waitForToolEnd("subagent", { from: start, timeoutMs: CHILD_MS });
			await pi.waitForSettled({ from: start, timeoutMs: CHILD_MS });
			const answers = await measured.stop();
			// Only what the flood itself did counts: pi-subagents starting the child (loading its extensions) stalls the host too.
			const { floodStart, floodEnd } = reportOf(agent);
			const during = answers.filter(({ sent, tookMs }) => sent <= floodEnd && sent + tookMs >= floodStart);
			// A flood that fell between two asks (they come every 100 ms) held the host no longer than it lasted.
			slowest[agent] = during.length > 0 ? Math.max(...during.map((a) => a.tookMs)) : floodEnd - floodStart;
		}
		console.log(`slowest state answer while each child flooded (ms): ${JSON.stringify(slowest)}`);
		for (const [agent, ms] of Object.entries(slowest)) expect(ms, `${agent}: the host's slowest answer`).toBeLessThan(HOST_ANSWERS_WITHIN_MS);

		expect(reportOf("flood-select")).toMatchObject({ picked: "xxxxxxxx" });
		expect(reportOf("flood-form")).toMatchObject({ refused: expect.stringContaining("the form has 50 questions, at most 10") });
		expect(reportOf("flood-labels")).toMatchObject({ refused: expect.stringContaining("question 1 has 4000 options, at most 12") });
		// 10,100 notices from children of this process: one window of 20 (the two floods came within 10 s of each other or not).
		const relayed = pi.frames.filter((f) => isNotify(f) && String(f.message).startsWith("[subagent-flood-"));
		expect(relayed.length).toBeLessThanOrEqual(40);
		expect(relayed.every((f) => [...String(f.message)].length <= 2_000 + 40)).toBe(true);
	});
});
