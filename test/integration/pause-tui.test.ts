/**
 * `/checkpoints pause` and `resume` in the real interactive TUI (tmux), on the pi under test (issue 43,
 * ADR-0024): a `pi -p` asker's question waits while paused (no form, the footer says
 * "paused · 1 waiting" with who), `/checkpoints resume` opens its form, and the answer reaches the asker.
 */
import { afterEach, describe, expect, it } from "vitest";
import { baseArgs, createPiEnv, envelopesIn, hostEndpoint, NODE_BIN, PI_CLI, PI_VERSION, type PiEnv, runPi } from "./harness/pi-cli.ts";
import { EXIT_MARKER, TmuxSession, tmuxAvailable } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("pause-tui.test.ts: skipped: tmux is not installed (CI installs it)");
const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;
const QUESTION = "Paused in the terminal: go ahead?";

describe.skipIf(!hasTmux)(`pause and resume in the real TUI, pi ${PI_VERSION}`, () => {
	let tmux: TmuxSession | undefined;
	const envs: PiEnv[] = [];
	afterEach(async () => {
		await tmux?.dispose();
		for (const env of envs.splice(0)) env.cleanup();
	});

	it("/checkpoints pause: a pi -p asker's question waits, the footer names who; /checkpoints resume opens its form and the answer reaches the asker", async () => {
		const piEnv = createPiEnv({ script: {} });
		envs.push(piEnv);
		const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>/dev/null`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		tmux = new TmuxSession();
		const session = tmux;
		await session.start({ command, cwd: piEnv.cwd, width: 120, height: 40 });
		await session.waitFor("tui-host", 60_000, "pi's editor and footer", new RegExp(EXIT_MARKER));
		const endpoint = await hostEndpoint(piEnv, 60_000);

		await session.prompt("/checkpoints pause", "checkpoint-bridge: paused", { what: "the pause notice" });
		const asker = createPiEnv({
			script: { main: { ask: { questions: [{ question: QUESTION, options: ["go", "stop"] }] } } },
			env: { CHECKPOINT_BRIDGE_ENDPOINT: endpoint },
		});
		envs.push(asker);
		const asking = runPi(asker, [...baseArgs(), "-p", "Ask the user."], 90_000);
		let screen = await session.waitFor(/checkpoint-bridge: paused · 1 waiting: \S/, 90_000, "the paused footer");
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		screen = await session.screen();
		expect(screen, "no form while paused").not.toContain(QUESTION);

		screen = await session.prompt("/checkpoints resume", QUESTION, { what: "the form, after resume" });
		expect(screen).not.toMatch(/paused · /);
		await session.formTakesKeys();
		// Enter picks "go"; a form that asks to review first takes one more.
		for (let attempt = 0; attempt < 3 && envelopesIn((await Promise.race([asking, delay(2_000)]))?.stdout ?? "").length === 0; attempt++)
			await session.keys("Enter");
		const done = await asking;
		expect(envelopesIn(done.stdout).map((e) => [e.status, e.answers[0]?.answer])).toEqual([["ok", "go"]]);
	}, 240_000);
});

const delay = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));
