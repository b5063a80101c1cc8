/**
 * An answer given at the deadline (issue 30, finding 4; ADR-0019), on real pi 1.6 hosts in RPC
 * mode: an asker in this process asks over the host's local endpoint, or over a real nats-server,
 * and the human answers 1 to 8 ms before the call's deadline, many times. Whatever the host took
 * and recorded in its audit trail (`get_entries`) is what the asker gets, every time.
 */
import { afterAll, beforeAll, describe, type ExpectStatic, it } from "vitest";
import type { Envelope } from "../../extensions/checkpoint-bridge/model/result.ts";
import { askRemote } from "../../extensions/checkpoint-bridge/transports/local/client.ts";
import { closePooledConnections } from "../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { connectBroker } from "../../extensions/checkpoint-bridge/transports/nats/broker.ts";
import { askOverNats } from "../../extensions/checkpoint-bridge/transports/nats/index.ts";
import { NATS_SERVER_MISSING, type NatsServer, natsConfigOf, roomServedAt, startNatsServer } from "./harness/nats-server.ts";
import { hostEndpoint, PI_VERSION, type PiEnv, type PiRpc, PiRpcFixture } from "./harness/pi-cli.ts";

const BUDGET_MS = 1_200;
/** Each answer comes this many ms before the deadline, in turn. */
const EARLY_MS = [1, 2, 3, 4, 5, 6, 7, 8];
const ROUNDS = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The host's audit records, by question. */
async function auditByQuestion(pi: PiRpc): Promise<Map<string, { status: string; answers: { answer: string }[] }>> {
	const response = await pi.command("get_entries");
	const entries = (response.data?.entries ?? []) as {
		type: string;
		customType?: string;
		data?: { questions: string[]; status: string; answers: { answer: string }[] };
	}[];
	return new Map(entries.filter((e) => e.type === "custom" && e.customType === "checkpoint-bridge" && e.data).map((e) => [e.data!.questions[0]!, e.data!]));
}

/** Runs the race `ROUNDS × EARLY_MS` times through `ask`; returns each trial's asker result and audit record. */
async function race(expect: ExpectStatic, pi: PiRpc, tag: string, ask: (question: string) => Promise<Envelope>) {
	const trials: { question: string; early: number; envelope: Envelope }[] = [];
	for (let round = 0; round < ROUNDS; round++)
		for (const early of EARLY_MS) {
			const question = `${tag} ${round}-${early}: ship it?`;
			const from = pi.mark();
			const startedAt = Date.now();
			const call = ask(question);
			const dialog = await pi.waitForDialog({ from, timeoutMs: 10_000, failOn: () => false });
			expect(String(dialog.title)).toContain(question);
			await sleep(startedAt + BUDGET_MS - early - Date.now());
			pi.answer(dialog, "Yes");
			trials.push({ question, early, envelope: await call });
		}
	const audit = await auditByQuestion(pi);
	const outcomes = trials.map(({ question, early, envelope }) => ({
		early,
		asker: [envelope.status, envelope.answers.map((a) => a.answer)],
		audit: [audit.get(question)?.status, audit.get(question)?.answers.map((a) => a.answer)],
	}));
	const okCount = outcomes.filter((o) => o.asker[0] === "ok").length;
	console.log(`${tag}: ${okCount} of ${outcomes.length} answered in time, the rest timed out`);
	// The race is real only when some answers land and some do not, or all land: never none.
	expect(okCount, "answers the host took before its deadline").toBeGreaterThan(0);
	return outcomes;
}

describe.skipIf(PI_VERSION !== "1.6")("an answer at the deadline: the asker's result and the host's audit agree every time (ADR-0019)", () => {
	// A host shows one dialog at a time: each race gets a host of its own, so the two run at once.
	const localRun = new PiRpcFixture();
	const natsRun = new PiRpcFixture();
	let nats: NatsServer | undefined;
	let localEnv: PiEnv;
	let localPi: PiRpc;
	let natsPi: PiRpc;

	beforeAll(async () => {
		if (!NATS_SERVER_MISSING) nats = await startNatsServer();
		// The local race's host is on the same nats-server too, in a room of its own.
		localEnv = localRun.createEnv({ env: nats ? { CHECKPOINT_BRIDGE_NATS: nats.url, CHECKPOINT_BRIDGE_ROOM: "local-race" } : {} });
		localPi = localRun.startPi();
		if (nats) {
			natsRun.createEnv({ env: { CHECKPOINT_BRIDGE_NATS: nats.url } });
			natsPi = natsRun.startPi();
		}
		await Promise.all([hostEndpoint(localEnv), nats && hostEndpoint(natsRun.piEnv!).then(() => roomServedAt(nats!.url))]);
	}, 120_000);

	afterAll(async () => {
		closePooledConnections();
		await Promise.all([localRun.stop(), natsRun.stop()]);
		await nats?.kill();
	});

	it.concurrent("over the local endpoint, 16 times", { timeout: 180_000 }, async ({ expect }) => {
		const endpoint = await hostEndpoint(localEnv);
		const outcomes = await race(expect, localPi, "local", (question) =>
			askRemote(endpoint, {
				asker: { label: "racer", sessionId: "racer-session" },
				questions: [{ question, kind: "confirm" }],
				budgetMs: BUDGET_MS,
				dialogTimeoutMs: BUDGET_MS,
			}),
		);
		for (const outcome of outcomes) expect(outcome.asker, `answered ${outcome.early} ms before the deadline`).toEqual(outcome.audit);
	});

	it.skipIf(NATS_SERVER_MISSING).concurrent("over a real nats-server, 16 times", { timeout: 180_000 }, async ({ expect }) => {
		const config = natsConfigOf({ CHECKPOINT_BRIDGE_NATS: nats!.url });
		const outcomes = await race(expect, natsPi, "nats", (question) =>
			askOverNats({
				asker: { label: "racer", sessionId: "racer-nats" },
				questions: [{ question, kind: "confirm" }],
				budgetMs: BUDGET_MS,
				dialogTimeoutMs: BUDGET_MS,
				connect: () => connectBroker(config, { name: "racer" }),
				config,
			}),
		);
		for (const outcome of outcomes) expect(outcome.asker, `answered ${outcome.early} ms before the deadline`).toEqual(outcome.audit);
	});
});
