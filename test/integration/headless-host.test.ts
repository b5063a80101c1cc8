/**
 * The bin `checkpoint-bridge-host` (a host with no screen, ADR-0035) on the real pi: started in a
 * directory with the page and a notify command, it is the host that a `pi -p` run there asks, as it
 * would ask a pi host; the notification's one-tap POST answers, a GET only shows a confirmation. A
 * background pi-subagents child (pi 0.85) and a `pi -p` on another "machine" over a real nats-server
 * ask it too. SIGTERM ends it cleanly: the asker waiting is told, the advertisement is withdrawn, and
 * the next headless run gets no-host at once. With no surface set it exits at once, naming the variables.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditFile } from "../../extensions/checkpoint-bridge/headless-host.ts";
import { advertDir, advertPath } from "../../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { until } from "../support/until.ts";
import { actionsRecorder, type HeadlessBin, startHeadlessBin } from "./harness/headless-host.ts";
import { NATS_SERVER_MISSING, type NatsServer, startNatsServer } from "./harness/nats-server.ts";
import {
	answerPairs,
	BACKGROUND_CHILDREN,
	baseArgs,
	childTranscripts,
	createPiEnv,
	envelopesIn,
	NOT_ON_OLDEST_PI,
	onDevPiOnly,
	PI_VERSION,
	type PiEnv,
	runPi,
	toolResultsIn,
} from "./harness/pi-cli.ts";

const QUESTION = "Which database?";
const ASK = { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } };

describe.skipIf(NATS_SERVER_MISSING)("checkpoint-bridge-host: a host with no screen", () => {
	let piEnv: PiEnv;
	let nats: NatsServer;
	let host: HeadlessBin;
	let recorder: ReturnType<typeof actionsRecorder>;
	const others: PiEnv[] = [];

	beforeAll(async () => {
		nats = await startNatsServer();
		piEnv = createPiEnv({ agents: ["checkpoint-planner"] });
		recorder = actionsRecorder(join(piEnv.root, "notified"));
		Object.assign(piEnv.env, {
			CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0",
			CHECKPOINT_BRIDGE_NOTIFY_COMMAND: recorder.command,
			XDG_STATE_HOME: join(piEnv.root, "state"),
		});
		// The askers in the directory share its environment, the NATS variable excepted: they find the bin by its advertisement.
		host = startHeadlessBin(piEnv.cwd, { ...piEnv.env, CHECKPOINT_BRIDGE_NATS: nats.url });
		await host.line(/the host of .*with no screen/, 30_000);
	}, 60_000);

	afterAll(async () => {
		await host?.stop("SIGKILL");
		await nats?.cleanup();
		for (const env of others) env.cleanup();
		piEnv?.cleanup();
	});

	it("prints the page's URL, its token on that one line only, and serves the room", async () => {
		const url = host.pageUrl();
		expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/t\/[\w-]+\/$/);
		const token = /\/t\/([\w-]+)\//.exec(url!)![1]!;
		await host.line(/serving room "default" on NATS/);
		expect([...host.stdout, ...host.stderr].filter((line) => line.includes(token))).toHaveLength(1);
	});

	it("a pi -p asker waits; the one-tap GET answers nothing, the POST answers; stdout and the audit trail say where and when", async () => {
		piEnv.writeScript(ASK);
		let settled = false;
		const running = runPi(piEnv, [...baseArgs(), "-p", "Pick the database."], 90_000).finally(() => (settled = true));
		const actions = await recorder.forQuestion(QUESTION, 90_000);
		expect(actions.asker).toMatch(/Pick the database/);
		const sqlite = actions.buttons.find((b) => b.label === "SQLite")!;
		// A GET (a mail scanner, a link preview) only shows the confirmation page.
		const looked = await fetch(sqlite.answer);
		expect(looked.status).toBe(200);
		expect(await looked.text()).toContain(QUESTION);
		await sleep(500);
		expect(settled, "the asker still waits after the GET").toBe(false);
		const before = Date.now();
		const tapped = await fetch(sqlite.answer, { method: "POST" });
		expect({ status: tapped.status, body: await tapped.text() }).toEqual({ status: 200, body: "answered: SQLite\n" });
		const run = await running;
		expect(run.code, run.stderr.slice(-2_000)).toBe(0);
		const [envelope] = envelopesIn(run.stdout);
		expect(envelope?.status).toBe("ok");
		expect(answerPairs(envelope)).toEqual([{ question: QUESTION, answer: "SQLite" }]);
		const line = await host.line(/ ok, answered through the link the notify command sent at /);
		expect(line).toContain(`"${QUESTION}"`);
		const trail = auditFile(hostDir(host), { XDG_STATE_HOME: piEnv.env.XDG_STATE_HOME! });
		expect(statSync(trail).mode & 0o777, "the audit trail is the user's alone").toBe(0o600);
		expect(statSync(dirname(trail)).mode & 0o777).toBe(0o700);
		const audit = readFileSync(trail, "utf8")
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l));
		const record = audit.find((r) => r.questions[0] === QUESTION);
		expect(record).toMatchObject({ status: "ok", answers: [{ answer: "SQLite", source: "web", place: "notify-link" }] });
		expect(record.settledAt).toBeGreaterThanOrEqual(before);
	});

	it.skipIf(!BACKGROUND_CHILDREN)(
		`a background pi-subagents child asks through it and gets the one-tap answer ${BACKGROUND_CHILDREN ? "" : `(needs pi 0.85; this is pi ${PI_VERSION})`}`,
		async () => {
			const question = "Which storage backend?";
			piEnv.writeScript({
				main: { subagent: { agent: "checkpoint-planner", task: "Plan the storage layer.", async: true } },
				children: { "checkpoint-planner": { questions: [{ question, options: ["sqlite", "postgres"] }] } },
			});
			const running = runPi(piEnv, [...baseArgs({ subagents: true }), "-p", "Plan the storage layer in the background."], 150_000);
			const actions = await recorder.forQuestion(question, 150_000);
			expect(actions.asker).toMatch(/checkpoint-planner/);
			const tapped = await fetch(actions.buttons.find((b) => b.label === "postgres")!.answer, { method: "POST" });
			expect(tapped.status).toBe(200);
			await host.line(/\[.*checkpoint-planner.*\] ok, answered through the link the notify command sent/);
			// The child's own tool result, in the transcript pi-subagents wrote for it.
			const results = await until(
				() =>
					childTranscripts(piEnv)
						.flatMap((t) => toolResultsIn(t.records, "ask_user_via_host"))
						.find((r) => r.includes("postgres")),
				"the child's tool result",
				90_000,
				100,
			);
			expect(answerPairs(envelopesIn(results)[0])).toEqual([{ question, answer: "postgres" }]);
			await running;
		},
	);

	it.skipIf(NOT_ON_OLDEST_PI)(onDevPiOnly("a pi -p on another machine asks over NATS and gets the answer given on the page's one-tap link"), async () => {
		const question = "Deploy the staging build?";
		const remote = createPiEnv({
			script: { main: { ask: { questions: [{ question, options: ["now", "tomorrow"] }] } } },
			env: { CHECKPOINT_BRIDGE_NATS: nats.url },
		});
		others.push(remote);
		const running = runPi(remote, [...baseArgs(), "-p", "Deploy."], 90_000);
		const actions = await recorder.forQuestion(question, 90_000);
		expect(actions.asker).toMatch(/\(.+:\d+\)$|Deploy/);
		expect((await fetch(actions.buttons.find((b) => b.label === "now")!.answer, { method: "POST" })).status).toBe(200);
		const run = await running;
		expect(run.code, run.stderr.slice(-2_000)).toBe(0);
		expect(answerPairs(envelopesIn(run.stdout)[0])).toEqual([{ question, answer: "now" }]);
	});

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("a wait: false question survives a SIGKILL and restart of the bin; its one-tap answer reaches a later run's wait_for_host_answers"),
		async () => {
			const question = "Which region for the replica?";
			piEnv.writeScript({ main: { ask: { questions: [{ question, options: ["eu-west", "us-east"] }], wait: false } as never } });
			const asked = await runPi(piEnv, [...baseArgs(), "-p", "Ask about the replica, answer later."], 90_000);
			expect(asked.code, asked.stderr.slice(-2_000)).toBe(0);
			const requestId = /\\?"requestId\\?":\s*\\?"([\w-]+)\\?"/.exec(asked.stdout)?.[1];
			expect(requestId, asked.stdout.slice(0, 1_000)).toBeDefined();
			await recorder.forQuestion(question, 30_000);
			// Killed: nothing of it gets to say goodbye; the request is in the store of the directory.
			expect((await host.stop("SIGKILL")).signal).toBe("SIGKILL");
			const again = actionsRecorder(join(piEnv.root, "notified-again"));
			host = startHeadlessBin(piEnv.cwd, { ...piEnv.env, CHECKPOINT_BRIDGE_NATS: nats.url, CHECKPOINT_BRIDGE_NOTIFY_COMMAND: again.command });
			await host.line(/the host of .*with no screen/, 30_000);
			const actions = await again.forQuestion(question, 30_000);
			expect((await fetch(actions.buttons.find((b) => b.label === "us-east")!.answer, { method: "POST" })).status).toBe(200);
			await host.line(/ ok, answered through the link the notify command sent at /);
			// A later run, knowing only the id, waits on it.
			piEnv.writeScript({ main: { call: { tool: "wait_for_host_answers", arguments: { requestIds: [requestId], timeoutMs: 10_000 } } } });
			const later = await runPi(piEnv, [...baseArgs(), "-p", "Wait for the replica's answer."], 90_000);
			expect(later.code, later.stderr.slice(-2_000)).toBe(0);
			expect(later.stdout).toContain(requestId);
			expect(later.stdout).toMatch(/"answer":\s*"us-east"/);
			recorder = again;
		},
	);

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly(
			"SIGTERM: the asker waiting is told the host ended, the bin exits 0 and withdraws its advertisement; the next headless run gets no-host at once; a wait: false question stays written down for the next run",
		),
		async () => {
			piEnv.writeScript({ main: { ask: { questions: [{ question: "Keep the old logs?", options: ["keep", "delete"] }], wait: false } as never } });
			expect((await runPi(piEnv, [...baseArgs(), "-p", "Ask about the logs."], 90_000)).code).toBe(0);
			await recorder.forQuestion("Keep the old logs?", 30_000);
			const question = "Merge the branch?";
			piEnv.writeScript({ main: { ask: { questions: [{ question, options: ["yes", "no"] }] } } });
			const running = runPi({ ...piEnv, env: { ...piEnv.env, CHECKPOINT_BRIDGE_HOST_GRACE_MS: "0" } }, [...baseArgs(), "-p", "Merge."], 90_000);
			await recorder.forQuestion(question, 90_000);
			const advert = advertPath(advertDir(piEnv.env.TMPDIR!), piEnv.cwd);
			expect(existsSync(advert)).toBe(true);
			const sent = Date.now();
			const exit = await host.stop("SIGTERM");
			expect(exit.code).toBe(0);
			expect(exit.at - sent).toBeLessThan(5_000);
			expect(host.stdout.at(-1)).toBe("checkpoint-bridge-host: stopped (SIGTERM)");
			const run = await running;
			const [envelope] = envelopesIn(run.stdout);
			expect(envelope).toMatchObject({ status: "no-host" });
			expect(envelope!.note).toMatch(/checkpoint-bridge-host was stopped by SIGTERM/);
			expect(existsSync(advert)).toBe(false);

			piEnv.writeScript(ASK);
			const after = await runPi(piEnv, [...baseArgs(), "-p", "Pick the database."], 90_000);
			const [none] = envelopesIn(after.stdout);
			expect(none).toMatchObject({ status: "no-host", answers: [] });
			expect(none!.waitedMs).toBeLessThan(2_000);

			// Started again, the host takes the question asked with wait: false back and notifies it again.
			const again = actionsRecorder(join(piEnv.root, "notified-after-stop"));
			host = startHeadlessBin(piEnv.cwd, { ...piEnv.env, CHECKPOINT_BRIDGE_NOTIFY_COMMAND: again.command });
			await host.line(/asked before the restart\] asks: "Keep the old logs\?"/, 30_000);
			await again.forQuestion("Keep the old logs?", 30_000);
		},
	);
});

/** The directory the bin says it is the host of (its real path). */
function hostDir(host: HeadlessBin): string {
	const line = host.stdout.find((l) => / the host of /.test(l))!;
	return /the host of (.+) \(pid \d+\)/.exec(line)![1]!;
}

describe("checkpoint-bridge-host with no surface", () => {
	it.skipIf(NOT_ON_OLDEST_PI)(onDevPiOnly("exits 2 within 5 s, naming the variables, and advertises nothing"), async () => {
		const piEnv = createPiEnv({ env: { CHECKPOINT_BRIDGE_NOTIFY_COMMAND: "true" } });
		try {
			const started = Date.now();
			const bin = startHeadlessBin(piEnv.cwd, piEnv.env);
			const exit = await bin.exited;
			expect(exit.at - started).toBeLessThan(5_000);
			expect(exit.code).toBe(2);
			const said = bin.stderr.join("\n");
			for (const name of ["CHECKPOINT_BRIDGE_WEB", "CHECKPOINT_BRIDGE_MAIL_TO", "CHECKPOINT_BRIDGE_NOTIFY_COMMAND"]) expect(said).toContain(name);
			expect(bin.stdout.join("")).toBe("");
			expect(existsSync(advertPath(advertDir(piEnv.env.TMPDIR!), piEnv.cwd))).toBe(false);
		} finally {
			piEnv.cleanup();
		}
	});
});
