/**
 * A host with no screen and pi's terminal in one directory (ADR-0035: the terminal takes over while it
 * runs and hands back when it ends), both orders, on the real TUI in tmux: whichever started first,
 * a `pi -p` asker of the directory is asked in the terminal while it runs, never notified by the
 * bin; once the terminal quits, the next asker reaches the bin, and its one-tap link answers.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { advertDir, advertPath } from "../../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { until } from "../support/until.ts";
import { actionsRecorder, type HeadlessBin, startHeadlessBin } from "./harness/headless-host.ts";
import { baseArgs, createPiEnv, envelopesIn, NODE_BIN, PI_CLI, PI_VERSION, type PiEnv, type RunResult, runPi } from "./harness/pi-cli.ts";
import { EXIT_MARKER, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("headless-host-tui.test.ts: skipped: tmux is not installed (CI installs it)");
const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
const delay = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));

describe.skipIf(!hasTmux)(`a host with no screen and pi's terminal in one directory, pi ${PI_VERSION}`, () => {
	let tmux: TmuxSession | undefined;
	let bin: HeadlessBin | undefined;
	let piEnv: PiEnv | undefined;
	afterEach(async () => {
		await tmux?.dispose();
		await bin?.stop("SIGKILL");
		piEnv?.cleanup();
		tmux = bin = piEnv = undefined;
	});

	/** The pid the directory's advertisement names now. */
	const advertised = (env: PiEnv) => {
		const file = advertPath(advertDir(env.env.TMPDIR!), env.cwd);
		return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { pid: number }).pid : undefined;
	};

	function setUp() {
		const env = createPiEnv();
		piEnv = env;
		const recorder = actionsRecorder(join(env.root, "notified"));
		const startBin = async () => {
			bin = startHeadlessBin(env.cwd, {
				...env.env,
				CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0",
				CHECKPOINT_BRIDGE_NOTIFY_COMMAND: recorder.command,
				XDG_STATE_HOME: join(env.root, "state"),
			});
			await bin.line(/the host of .*with no screen/, 30_000);
			return bin;
		};
		const startTerminal = async () => {
			const envPart = Object.entries({ ...env.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
			const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
			const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>/dev/null`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
			tmux = new TmuxSession();
			await tmux.start({ command, cwd: env.cwd, width: 120, height: 40 });
			await tmux.waitFor("tui-host", 60_000, "pi's editor and footer", new RegExp(EXIT_MARKER));
			return tmux;
		};
		/** A `pi -p` of the directory asking `question`; nothing tells it where the host is but the advertisement. */
		const ask = (question: string): Promise<RunResult> => {
			env.writeScript({ main: { ask: { questions: [{ question, options: ["go", "stop"] }] } } });
			return runPi(env, [...baseArgs(), "-p", "Ask the user."], 90_000);
		};
		return { env, recorder, startBin, startTerminal, ask };
	}

	/** Answers the form on screen with its first option, pressing Enter until the asker has its answer. */
	async function answerInTerminal(session: TmuxSession, question: string, asking: Promise<RunResult>): Promise<RunResult> {
		await session.waitFor(question, 60_000, "the form in the terminal");
		await session.formTakesKeys();
		for (let attempt = 0; attempt < 3 && envelopesIn((await Promise.race([asking, delay(2_000)]))?.stdout ?? "").length === 0; attempt++)
			await session.keys("Enter");
		return asking;
	}

	/** The terminal's part, then its end: while it runs it is asked, and the bin notifies nobody; once it quits, the bin is asked again. */
	async function terminalThenBin(setup: ReturnType<typeof setUp>, session: TmuxSession, host: HeadlessBin): Promise<void> {
		const { env, recorder, ask } = setup;
		const first = await answerInTerminal(session, "Asked while the terminal runs?", ask("Asked while the terminal runs?"));
		expect(envelopesIn(first.stdout).map((e) => [e.status, e.answers[0]?.answer])).toEqual([["ok", "go"]]);
		expect(
			host.stdout.some((l) => l.includes("Asked while the terminal runs?")),
			"the bin never took it",
		).toBe(false);
		await expect(recorder.forQuestion("Asked while the terminal runs?", 300)).rejects.toThrow(/timed out/);

		await session.keys("C-d");
		await session.waitFor(`${EXIT_MARKER}0`, 20_000, "the terminal's clean exit");
		await until(() => advertised(env) === host.pid, "the advertisement handed back to the bin", 10_000, 20);
		const asking = ask("Asked once the terminal quit?");
		const actions = await recorder.forQuestion("Asked once the terminal quit?", 90_000);
		expect((await fetch(actions.buttons.find((b) => b.label === "stop")!.answer, { method: "POST" })).status).toBe(200);
		expect(envelopesIn((await asking).stdout).map((e) => [e.status, e.answers[0]?.answer])).toEqual([["ok", "stop"]]);
	}

	it("the bin first, then the terminal: the terminal takes the directory over while it runs and hands it back when it quits", async () => {
		const setup = setUp();
		const host = await setup.startBin();
		expect(advertised(setup.env)).toBe(host.pid);
		const session = await setup.startTerminal();
		await until(() => advertised(setup.env) !== host.pid || undefined, "the terminal's advertisement", 30_000, 20);
		await terminalThenBin(setup, session, host);
	}, 240_000);

	it("the terminal first, then the bin: the bin stands by while the terminal runs and takes the directory when it quits", async () => {
		const setup = setUp();
		const session = await setup.startTerminal();
		const terminal = await until(() => advertised(setup.env), "the terminal's advertisement", 30_000, 20);
		const host = await setup.startBin();
		expect(advertised(setup.env), "the bin stands by").toBe(terminal);
		await terminalThenBin(setup, session, host);
	}, 240_000);
});
