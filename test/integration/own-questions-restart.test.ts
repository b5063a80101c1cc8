/**
 * Issue 33 item 4 on the real pi CLI: the host session's own question survives a crash. pi in RPC
 * mode with a session file asks its own question; pi is killed (SIGKILL); `pi --continue` opens the
 * question again, marked as asked before the restart; the answer arrives as exactly one message in
 * the session file; a reopened question the human dismisses does not open again. The same through
 * `/resume` in the real TUI (tmux): a new pi, `/resume`, the killed session picked, the question open
 * again marked, answered in the form, one message. Screens of the TUI case: .tmp/own-questions-tui/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import {
	baseArgs,
	createPiEnv,
	isDialog,
	NODE_BIN,
	NOT_ON_OLDEST_PI,
	onDevPiOnly,
	PI_CLI,
	PI_VERSION,
	type PiEnv,
	PiRpc,
	REPO_ROOT,
	resultText,
} from "./harness/pi-cli.ts";
import { EXIT_MARKER, ScreenCaptures, squeezed, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const QUESTION = "Which database should the service use?";
const QUEUED = "Deploy where once it is built?";
let piEnv: PiEnv | undefined;
let running: PiRpc | undefined;
const terminals: TmuxSession[] = [];

afterEach(async () => {
	await running?.close();
	for (const terminal of terminals.splice(0)) await terminal.dispose();
	piEnv?.cleanup();
	running = undefined;
	piEnv = undefined;
});

/** pi's arguments with its session kept in `sessions` (the suite's runs otherwise keep none). */
const sessionArgs = (env: PiEnv, extra: string[] = []) => [
	...baseArgs().filter((arg) => arg !== "--no-session"),
	"--session-dir",
	join(env.root, "sessions"),
	...extra,
];

/** pi in RPC mode with its session kept. */
function startPi(env: PiEnv, extra: string[] = []): PiRpc {
	running = new PiRpc(env, sessionArgs(env, extra));
	return running;
}

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
/** The interactive pi in tmux with its session kept; its pid is written to `pid` in the pane's first breath. */
async function startTui(env: PiEnv, name: string): Promise<{ terminal: TmuxSession; pid: () => number }> {
	const pidFile = join(env.root, `${name}.pid`);
	const envPart = Object.entries({ ...env.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
	const pi = `exec env -i ${envPart.join(" ")} ${[NODE_BIN, PI_CLI, ...sessionArgs(env)].map(quote).join(" ")} 2>${quote(join(env.root, `${name}.stderr`))}`;
	const terminal = new TmuxSession();
	terminals.push(terminal);
	await terminal.start({
		command: `sh -c ${quote(`echo $$ > ${quote(pidFile)}; ${pi}`)}; echo "${EXIT_MARKER}$?"; sleep 30`,
		cwd: env.cwd,
		width: 120,
		height: 40,
	});
	return { terminal, pid: () => Number(readFileSync(pidFile, "utf8")) };
}

type Entry = {
	type: string;
	customType?: string;
	data?: { requestId?: string };
	message?: { role?: string; customType?: string };
	content?: unknown;
	details?: { envelope?: { waitedMs?: number } };
};
/** The entries of the one session file (`one`), or of every session file in turn. */
function sessionEntries(env: PiEnv, one = true): Entry[] {
	const dir = join(env.root, "sessions");
	const files = readdirSync(dir, { recursive: true })
		.map(String)
		.filter((f) => f.endsWith(".jsonl"));
	if (one) expect(files).toHaveLength(1);
	return files.flatMap((file) =>
		readFileSync(join(dir, file), "utf8")
			.split("\n")
			.filter(Boolean)
			.map((line) => JSON.parse(line) as Entry),
	);
}
const answerMessages = (entries: Entry[]) => entries.filter((e) => e.type === "custom_message" && e.customType === "checkpoint-bridge:answer");
/**
 * An answer message of a reopened question: its text says the question was asked before the restart
 * (its call is gone, queued or not), and its wait counts from then: at least from `askedBy` (the first
 * pi had asked it) to `answeredAt` (the answer given after the restart).
 */
function expectAskedBeforeRestart(message: Entry, askedBy: number, answeredAt: number): void {
	expect(message.content).toMatch(/^checkpoint-bridge: the human answered the question you asked before the restart \(request [\w-]+\)\. /);
	expect(message.details?.envelope?.waitedMs).toBeGreaterThanOrEqual(answeredAt - askedBy);
}

/**
 * `pi --continue`: each question (by its text) opens again, one at a time, marked as asked before the
 * restart; answered with its value, each is one message in the session saying so. `askedBy`: a time
 * by which the first pi had asked them all.
 */
async function answerReopened(env: PiEnv, values: Record<string, string>, askedBy: number): Promise<void> {
	const pi = startPi(env, ["--continue"]);
	let from = 0;
	let firstAnswerAt: number | undefined;
	for (let left = Object.keys(values).length; left > 0; left--) {
		const again = await pi.waitForDialog({ from, timeoutMs: 60_000 });
		const question = Object.keys(values).find((q) => again.title?.includes(q));
		expect(question, again.title).toBeDefined();
		expect(JSON.stringify(again)).toContain("asked before the restart");
		from = pi.mark();
		firstAnswerAt ??= Date.now();
		pi.answer(again, values[question!]!);
	}
	await pi.waitFor((f) => f.type === "agent_end", { from, timeoutMs: 60_000 });
	await pi.close();
	const messages = answerMessages(sessionEntries(env));
	expect(messages).toHaveLength(Object.keys(values).length);
	for (const value of Object.values(values)) expect(messages.filter((m) => JSON.stringify(m).includes(value))).toHaveLength(1);
	for (const message of messages) expectAskedBeforeRestart(message, askedBy, firstAnswerAt!);
}

/** One more `pi --continue`: no dialog opens, and the session still holds `messages` answer messages. */
async function expectNothingReopens(env: PiEnv, messages = 1): Promise<void> {
	const pi = startPi(env, ["--continue"]);
	await pi.command("get_state");
	await new Promise((r) => setTimeout(r, 1_500));
	expect(pi.frames.filter(isDialog)).toHaveLength(0);
	await pi.close();
	expect(answerMessages(sessionEntries(env))).toHaveLength(messages);
}

describe("the host session's own question across a crash (pi --continue)", () => {
	it("opens again after SIGKILL, marked as asked before the restart, a queued one (wait: false) too; each answer is one message, not repeated at the next --continue", async () => {
		// The model asks one question and queues another in the same message.
		const queued = { tool: "ask_user_via_host", arguments: { questions: [{ question: QUEUED, options: ["staging", "prod"] }], wait: false } };
		piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] }, call: queued } } });
		const pi = startPi(piEnv);
		await pi.prompt("pick a database");
		// The queued call returned its receipt: both are recorded.
		await pi.waitFor((f) => f.type === "tool_execution_end" && resultText(f.result).includes('"queued"'), { timeoutMs: 60_000 });
		const first = await pi.waitForDialog({ timeoutMs: 60_000 });
		const askedBy = Date.now();
		expect(first.title).toMatch(/Which database|Deploy where/);
		pi.kill("SIGKILL");
		await pi.exited;

		await answerReopened(piEnv, { [QUESTION]: "Postgres", [QUEUED]: "prod" }, askedBy);

		// Once more: nothing is open, nothing is delivered again.
		await expectNothingReopens(piEnv, 2);
	}, 180_000);

	it("a queued question answered while the model's turn runs a long bash command, pi killed before the turn ends: pi --continue delivers the answer once, asking nothing again", async () => {
		// One assistant message: the queued question and a bash command that outlasts the answer.
		const queued = { tool: "ask_user_via_host", arguments: { questions: [{ question: QUEUED, options: ["staging", "prod"] }], wait: false } };
		piEnv = createPiEnv({ script: { main: { bash: { command: "sleep 20" }, call: queued } } });
		const pi = startPi(piEnv);
		await pi.prompt("build it, and ask where to deploy");
		await pi.waitFor((f) => f.type === "tool_execution_end" && resultText(f.result).includes('"queued"'), { timeoutMs: 60_000 });
		const dialog = await pi.waitForDialog({ timeoutMs: 60_000 });
		pi.answer(dialog, "prod");
		// The delivery is recorded at once; its message waits for the end of the turn, which never comes.
		await until(
			() => sessionEntries(piEnv!).some((e) => e.customType === "checkpoint-bridge:delivered"),
			"the delivery's record in the session file",
			30_000,
			50,
		);
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		pi.kill("SIGKILL");
		await pi.exited;
		expect(answerMessages(sessionEntries(piEnv))).toHaveLength(0);

		const again = startPi(piEnv, ["--continue"]);
		const message = await again.waitFor((f) => f.type === "message_end" && f.message?.customType === "checkpoint-bridge:answer", { timeoutMs: 60_000 });
		expect(JSON.stringify(message.message?.details)).toContain('"answer":"prod"');
		await again.waitFor((f) => f.type === "agent_end", { from: again.frames.indexOf(message), timeoutMs: 60_000 });
		expect(again.frames.filter(isDialog)).toHaveLength(0);
		await again.close();
		const messages = answerMessages(sessionEntries(piEnv));
		expect(messages).toHaveLength(1);
		expect(messages[0]?.content).toMatch(/^checkpoint-bridge: the human answered the question you asked before the restart \(request [\w-]+\)\. /);

		await expectNothingReopens(piEnv);
	}, 180_000);

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("a reopened question the human dismisses does not open on the next --continue"),
		async () => {
			piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } } });
			let pi = startPi(piEnv);
			await pi.prompt("pick a database");
			await pi.waitForDialog({ timeoutMs: 60_000 });
			pi.kill("SIGKILL");
			await pi.exited;

			pi = startPi(piEnv, ["--continue"]);
			const again = await pi.waitForDialog({ timeoutMs: 60_000 });
			const from = pi.mark();
			pi.cancel(again);
			await pi.waitFor((f) => f.type === "message_end" && f.message?.customType === "checkpoint-bridge:answer", { from, timeoutMs: 30_000 });
			await pi.close();
			expect(answerMessages(sessionEntries(piEnv))[0]?.content).toMatch(
				/^checkpoint-bridge: the question you asked before the restart \(request [\w-]+\) ended "timeout-or-cancelled" without every answer: /,
			);

			await expectNothingReopens(piEnv);
		},
		180_000,
	);

	it("opens again after a quit (stdin closed while the question is open) and is answered once", async () => {
		piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } } });
		const pi = startPi(piEnv);
		await pi.prompt("pick a database");
		await pi.waitForDialog({ timeoutMs: 60_000 });
		const askedBy = Date.now();
		await pi.close();

		await answerReopened(piEnv, { [QUESTION]: "SQLite" }, askedBy);
	}, 180_000);
});

const hasTmux = tmuxAvailable();
const captures = new ScreenCaptures(join(REPO_ROOT, ".tmp", "own-questions-tui", `pi-${PI_VERSION}`));
describe.skipIf(!hasTmux)(
	`the host session's own question across a crash (/resume in the real TUI)${hasTmux ? "" : ": skipped, tmux is not installed"}`,
	() => {
		it("pi killed with its question open; a new pi, /resume, the session picked: the question opens again marked, answered once", async () => {
			piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } } });
			const first = await startTui(piEnv, "first");
			try {
				// The footer names the model once pi is ready for a prompt.
				await first.terminal.waitFor("faux-1", 60_000, "pi's footer");
				captures.save("asked", await first.terminal.prompt("pick a database", QUESTION, { timeoutMs: 10_000, what: "the own question's form" }));
				const askedBy = Date.now();
				process.kill(first.pid(), "SIGKILL");
				await first.terminal.waitFor(EXIT_MARKER, 15_000, "pi killed");

				const second = await startTui(piEnv, "second");
				await second.terminal.waitFor("faux-1", 60_000, "pi's footer");
				// The first Enter may only complete the command in the editor's menu: Enter again until the selector shows.
				captures.save("resume-list", await second.terminal.prompt("/resume", "Resume Session", { timeoutMs: 5_000, what: "the session selector" }));
				await second.terminal.waitFor("pick a database", 10_000, "the killed session in the selector");
				await second.terminal.keys("Enter");
				const reopened = await second.terminal.waitFor(QUESTION, 30_000, "the question opened again");
				captures.save("reopened", reopened);
				expect(squeezed(reopened)).toContain(squeezed("asked before the restart"));
				await second.terminal.formTakesKeys();
				const answeredAt = Date.now();
				await second.terminal.keys("Enter");
				// The new pi's own session may have a file too: the answer is looked for in every one.
				const messages = await until(
					() => {
						const found = answerMessages(sessionEntries(piEnv!, false));
						return found.length > 0 && found;
					},
					"the answer message in the session",
					30_000,
					100,
				);
				captures.save("answered", await second.terminal.screen());
				expect(messages).toHaveLength(1);
				expect(JSON.stringify(messages[0])).toContain("Postgres");
				expectAskedBeforeRestart(messages[0]!, askedBy, answeredAt);
				await second.terminal.keys("C-d");
				await second.terminal.waitFor(EXIT_MARKER, 15_000, "a clean exit");
				expect(answerMessages(sessionEntries(piEnv, false))).toHaveLength(1);
			} finally {
				if (captures.files.length) console.log(captures.report("own-questions-restart.test.ts (TUI)"));
			}
		}, 180_000);
	},
);
