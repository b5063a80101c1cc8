#!/usr/bin/env node
/**
 * `npm run demo`: the real pi TUI with pi-subagents and checkpoint-bridge, where sub-agents ask you
 * questions through the main session's terminal form: two in the foreground (in pi's own process), then
 * two in the background at once (each in its own runner process, through the host's local endpoint).
 *
 *   npm run demo                                  scripted model, no API key; press Enter to start
 *   npm run demo -- --model <provider/id> [...]   a real model (key from the usual environment
 *                                                 variable, e.g. ANTHROPIC_API_KEY); further
 *                                                 arguments are passed to pi unchanged
 *   npm run demo -- --pi 1.6                      the dev pi (1.6): foreground sub-agents only
 *   npm run demo -- --pi 0.85                     pi 0.85.1 from test/compat/pi-0.85
 *   npm run demo -- --web                         the web page on too; the host shows its link
 *   npm run demo -- --tour                        a tour of ask now / answer later, a late answer from
 *                                                 /checkpoints, a child's own screen, a host restart
 *                                                 that keeps a question and a phone's one-tap answer
 *                                                 (scripted model, dev pi)
 *
 * It needs a terminal: the questions open in pi's interactive TUI, the host. Without one (stdin or
 * stdout not a TTY) pi would fall back to print mode and end at once, so the launcher refuses.
 *
 * pi-subagents' background runner needs `@earendil-works/pi-agent-core/node`, which pi 0.85.x has and
 * pi 1.6.0 lacks. By default the demo runs on the dev pi when its runner works there, else on the
 * pi 0.85.1 install of test/compat/pi-0.85, which it installs first when missing (once, 30-90 s, with progress).
 *
 * Everything runs in a fresh temp dir (config, HOME, TMPDIR, sub-agent scratch space), which is
 * removed when pi exits, so your own pi settings, sessions and credentials are never touched. Only
 * the compiled extensions are kept, in node_modules/.cache, so the next start is quicker.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureCompatInstall } from "../test/compat/ensure.mjs";

const demoDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(demoDir, "..");
/** The pi installs the demo can run on: the dev dependency and the oldest supported pi. */
const PI_INSTALLS = { 1.6: root, 0.85: path.join(root, "test", "compat", "pi-0.85") };
const COMPAT = "0.85";
const bridgeExtension = path.join(root, "extensions", "checkpoint-bridge", "index.ts");
const demoModelExtension = path.join(demoDir, "demo-model.ts");
const introExtension = path.join(demoDir, "intro.ts");
const tourModelExtension = path.join(demoDir, "tour-model.ts");
const tourExtension = path.join(demoDir, "tour.ts");
/**
 * pi compiles extensions with jiti into $TMPDIR/jiti, pi-subagents in 10-20 s, and every background
 * runner process does it again. The run's TMPDIR links here so later starts reuse the compiled files
 * (keyed by source hash, so both pi versions share it safely).
 */
const compileCache = path.join(root, "node_modules", ".cache", "checkpoint-bridge-demo", "jiti");
/** pi's bin keeps V8's compiled code in $TMPDIR/node-compile-cache: linked here too, for the same reason. */
const nodeCompileCache = path.join(root, "node_modules", ".cache", "checkpoint-bridge-demo", "node-compile-cache");
const SCRIPTED_MODEL = "demo/scripted";
const AGENTS = ["planner", "writer", "reviewer", "tester"];
const TOUR_MODEL = "demo-tour/tour";
const TOUR_PROMPT = "Start the checkpoint-bridge tour.";
/** The background step: one workflow whose runs.all starts both children at once; it returns their reports. */
const BACKGROUND_WORKFLOW = [
	"const results = await runs.all([",
	'  { key: "reviewer", agent: "reviewer", task: "Ask the user whether the missing test blocks the merge, then report the answer." },',
	'  { key: "tester", agent: "tester", task: "Ask the user which test suite should run first, then report the answer." },',
	"]);",
	"return results.map((result) => result.output);",
].join("\n");

const installPaths = (installRoot) => ({
	// The script the `pi` command runs (the package's bin): bundled, with Node's compile cache on.
	cli: path.join(installRoot, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js"),
	subagents: path.join(installRoot, "node_modules", "pi-subagents", "index.ts"),
	piManifest: path.join(installRoot, "node_modules", "@earendil-works", "pi-coding-agent", "package.json"),
	agentCoreManifest: path.join(installRoot, "node_modules", "@earendil-works", "pi-agent-core", "package.json"),
});

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));

/** Whether pi-subagents' background runner can start on this install (it imports pi-agent-core's `./node`). */
function backgroundRunnerWorks(installRoot) {
	try {
		return readJson(installPaths(installRoot).agentCoreManifest).exports?.["./node"] !== undefined;
	} catch {
		return false;
	}
}

// The scripted model follows its own script; a real model needs the steps spelled out.
const SCRIPTED_PROMPT = "Run the checkpoint-bridge demo: planner and writer ask in the foreground, then reviewer and tester ask from the background.";
const SCRIPTED_PROMPT_FOREGROUND = "Run the checkpoint-bridge demo: the planner asks a form of two questions, then the writer asks for a project name.";

function realModelPrompt(background) {
	const summary = [
		'reply with a short summary that starts with the line "Demo summary (each line is what that sub-agent reported back):"',
		'followed by one line per sub-agent in the form "- <agent> (foreground|background) received: <answer>", using only what each sub-agent reported.',
	];
	return [
		"Demo of checkpoint-bridge. Follow these steps exactly, one tool call per turn:",
		'1. run the agent "planner" with the subagent tool (async: false) and the task "Ask the user, in one form, which naming convention the project should use and which checks must pass before a merge, then report the answers.";',
		'2. after it has finished, run the agent "writer" the same way with the task "Ask the user what the project should be called, then report the answer.";',
		...(background
			? [
					"3. after it has finished, start reviewer and tester in the background, in parallel, with ONE subagent call whose only argument is this workflowScript:",
					BACKGROUND_WORKFLOW,
					"   then reply in one sentence that they are running, and stop. Their results arrive later as messages: reply",
					'   briefly to a message about one child; when the message "Background task completed: **workflow**" has arrived,',
					`4. ${summary[0]}`,
				]
			: [`3. then ${summary[0]}`]),
		summary[1],
	].join("\n");
}

function usage() {
	return [
		"usage: npm run demo [-- [--tour] [--web] [--pi 1.6|0.85] [--model <provider/id> [more pi arguments]]]",
		"  --tour                 a tour in five scenes (scripted model): ask now and answer later, a timed-out question",
		"                         answered late from /checkpoints, a child's own screen, a host restart that keeps a question,",
		"                         a phone's one-tap answer",
		"  --web                  the web page on too (loopback, any free port); the host prints its link",
		"  --model <provider/id>  a real model (its key from the environment); without it a scripted model, no API key",
		"  --pi 1.6               the dev pi 1.6: the two foreground sub-agents only (its background runner cannot start)",
		"  --pi 0.85              pi 0.85.1 from test/compat/pi-0.85 (the default while the dev pi cannot run background children)",
	].join("\n");
}

function parseArgs(argv) {
	let model;
	let pi;
	let web = false;
	let tour = false;
	const passThrough = [];
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--help" || arg === "-h") {
			console.log(usage());
			process.exit(0);
		} else if (arg === "--web") {
			web = true;
		} else if (arg === "--tour") {
			tour = true;
		} else if (arg === "--model" || arg === "--pi") {
			const value = argv[++i];
			if (!value) throw new Error(`${arg} needs a value`);
			if (arg === "--model") model = value;
			else pi = value;
		} else if (arg.startsWith("--model=")) {
			model = arg.slice("--model=".length);
		} else if (arg.startsWith("--pi=")) {
			pi = arg.slice("--pi=".length);
		} else {
			passThrough.push(arg);
		}
	}
	if (pi !== undefined && !(pi in PI_INSTALLS)) throw new Error(`--pi ${pi}: the demo runs on ${Object.keys(PI_INSTALLS).join(" or ")}`);
	if (tour && model !== undefined) throw new Error("--tour runs its own scripted model: leave out --model");
	return { model, pi, web, tour, passThrough };
}

/**
 * The one line for a run without a terminal, or undefined when stdin and stdout are both TTYs.
 * The web page cannot stand in: its host is the TUI, which needs the terminal too.
 */
function noTerminal() {
	const missing = [process.stdin.isTTY ? "" : "stdin", process.stdout.isTTY ? "" : "stdout"].filter(Boolean);
	if (missing.length === 0) return undefined;
	return `npm run demo needs a terminal (${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not a TTY): the questions open in pi's interactive TUI. Run it in a terminal; --web adds the web page there, it cannot replace the terminal.`;
}

function checkNode() {
	const [major, minor] = process.versions.node.split(".").map(Number);
	if (major < 22 || (major === 22 && minor < 19)) {
		throw new Error(`pi needs Node >= 22.19 but this is ${process.version}. Start the demo with "npm run demo", which uses the Node 22 from node_modules.`);
	}
}

/** Installs test/compat/pi-0.85 when missing (what `npm run setup:compat` does). */
async function installCompat() {
	try {
		await ensureCompatInstall("for the background sub-agents");
	} catch (error) {
		throw new Error(`${error instanceof Error ? error.message : String(error)} Or run "npm run demo -- --pi 1.6" for the foreground part only.`);
	}
}

/** The pi to run: `--pi`, else the dev pi if background children work there, else the compat install. */
async function choosePi(wanted) {
	const key = wanted ?? (backgroundRunnerWorks(PI_INSTALLS["1.6"]) ? "1.6" : COMPAT);
	const installRoot = PI_INSTALLS[key];
	const paths = installPaths(installRoot);
	if (key === COMPAT && !fs.existsSync(paths.cli)) await installCompat();
	for (const file of [paths.cli, paths.subagents, bridgeExtension]) {
		if (!fs.existsSync(file))
			throw new Error(`missing ${path.relative(root, file)}; run "npm install"${key === COMPAT ? ' and "npm run setup:compat"' : ""} first`);
	}
	return { ...paths, version: readJson(paths.piManifest).version, background: backgroundRunnerWorks(installRoot) };
}

/** pi's example `question` tool of the pi the demo runs on: a tool that draws a screen of its own. */
const questionExample = (piManifest) => path.join(path.dirname(piManifest), "examples", "extensions", "question.ts");

/** Write the demo agents into the isolated config dir, loading the bridge (and the scripted model) into each; the tour's child also loads pi's question tool. */
function writeAgents(agentDir, model, tour) {
	const extensions = tour
		? [bridgeExtension, tourModelExtension, questionExample(tour.piManifest)]
		: model === SCRIPTED_MODEL
			? [bridgeExtension, demoModelExtension]
			: [bridgeExtension];
	const target = path.join(agentDir, "agents");
	fs.mkdirSync(target, { recursive: true });
	for (const name of tour ? ["tour-child", "tour-phone"] : AGENTS) {
		const template = fs.readFileSync(path.join(demoDir, "agents", `${name}.md`), "utf8");
		const text = template.replaceAll("{{MODEL}}", model).replaceAll("{{EXTENSIONS}}", extensions.join(", "));
		fs.writeFileSync(path.join(target, `${name}.md`), text);
	}
}

/** The explanation, shown by demo/intro.ts as the TUI header (only there: printed before, it showed twice). */
function explanation(model, pi, web) {
	const scripted = model === SCRIPTED_MODEL;
	return [
		`checkpoint-bridge demo (pi ${pi.version})`,
		"The main agent hands work to sub-agents (pi-subagents). Each asks you with the ask_user_via_host",
		"tool; the request opens here, in the main session, as one form headed with who asks.",
		"  1. planner, foreground: a form of two questions, one tab each (Tab/Shift+Tab move between them):",
		"     a naming convention with a preview of each (Up/Down, Ctrl+N adds a note, Enter picks), then",
		"     the checks to run (Space ticks several, Enter goes on); Review lists your answers, Enter sends",
		"  2. writer, foreground: type a project name (then Enter)",
		...(pi.background
			? [
					"  3. reviewer and tester, background, in parallel: both ask at once from their own processes;",
					"     their forms queue and open one after the other, headed [subagent-... (pid N)]",
				]
			: [`  3. skipped: background sub-agents need pi 0.85; their runner cannot start on pi ${pi.version}`]),
		"The final summary shows which answer reached which sub-agent.",
		web
			? 'Web page on: open the link of the line "answer in a browser at" below (/checkpoints shows it again).'
			: "Answer in a browser too: npm run demo -- --web (or /checkpoints web here).",
		scripted ? "Model: scripted, no API key needed." : `Model: ${model} (main session and sub-agents).`,
		"Press Enter to send the prepared message and start. Quit: Ctrl+C twice quickly (the first press",
		"clears the editor), or Ctrl+D once the editor is empty; Esc first closes an open form.",
	].join("\n");
}

/** The tour's explanation, shown as the TUI header; `restarted`: the header of pi started again by the tour. */
function tourExplanation(pi, restarted) {
	return [
		`checkpoint-bridge tour (pi ${pi.version}) · scripted model, no API key`,
		...(restarted
			? [
					"pi was stopped as a crash would stop it, and the tour started it again (pi --continue).",
					"Tour 4 of 5: the question asked before the restart opens again, marked so; answer it.",
				]
			: [
					"Five scenes, each announced here by the main agent as it happens:",
					"  1. ask now, answer later: a question asked with wait: false; its answer arrives later as a message",
					"  2. a timed-out question answered late: let it time out, then /checkpoints answer 1",
					"  3. a child's own screen: a sub-agent's tool draws its screen here, under who asks",
					"  4. a host restart that keeps a question: pi stops as a crash would and starts again",
					"  5. a phone answers: a stand-in for your phone presses a notification's button; press no key",
					"Answer a form with Up/Down and Enter. Press Enter to send the prepared message and start.",
				]),
		"Quit: Ctrl+D on an empty editor, or Ctrl+C twice quickly; Esc first closes an open form.",
	].join("\n");
}

/** Resets the terminal a killed pi left in raw mode and on its alternate screen. */
function resetTerminal() {
	spawnSync("stty", ["sane"], { stdio: "inherit" });
	process.stdout.write("\x1b[?1049l\x1b[?25h\x1b[0m\x1b[2J\x1b[H");
}

/** Background runners recorded by pi-subagents under the run's temp root (their pids). */
function runnerPids(subagentsRoot) {
	const dir = path.join(subagentsRoot, "async-subagent-runs");
	if (!fs.existsSync(dir)) return [];
	return fs.readdirSync(dir).flatMap((runId) => {
		try {
			const pid = readJson(path.join(dir, runId, "status.json")).pid;
			return Number.isSafeInteger(pid) && pid > 0 ? [pid] : [];
		} catch {
			return [];
		}
	});
}

/** Alive and started for this run (its environment names the run's config dir), so a reused pid is left alone. */
function isOurs(pid, agentDir) {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
		if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
		return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`PI_CODING_AGENT_DIR=${agentDir}`);
	} catch {
		return false;
	}
}

/**
 * Runners outlive pi. Without a host they get "no-host" at once and finish by themselves; give them
 * a moment, then stop whoever is still writing into the temp dir about to be removed.
 */
async function closeRunners(subagentsRoot, agentDir) {
	const left = () => runnerPids(subagentsRoot).filter((pid) => isOurs(pid, agentDir));
	const deadline = Date.now() + 5_000;
	while (left().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
	for (const pid of left()) {
		try {
			process.kill(pid, "SIGTERM");
		} catch {
			// already gone
		}
	}
}

/** A word the shell takes as it is, whatever it holds. */
const shellQuoted = (word) => `'${word.replaceAll("'", "'\\''")}'`;

/** The environment of the run: isolated from the user's pi, and what the demo's extensions read. */
function runEnv(dirs, { model, pi, web, tour }) {
	const common = {
		...process.env,
		HOME: dirs.runDir,
		TMPDIR: dirs.tmpDir,
		PI_CODING_AGENT_DIR: dirs.agentDir,
		PI_SUBAGENTS_TEMP_ROOT: dirs.subagentsRoot,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		// The host serves the page from the start and announces its link in the TUI.
		...(web ? { CHECKPOINT_BRIDGE_WEB: process.env.CHECKPOINT_BRIDGE_WEB || "127.0.0.1:0" } : {}),
	};
	if (tour)
		return {
			...common,
			CHECKPOINT_BRIDGE_DEMO_INTRO: tourExplanation(pi, false),
			CHECKPOINT_BRIDGE_DEMO_PROMPT: TOUR_PROMPT,
			// Scene 3: a foreground child's own screen is drawn in this terminal (ADR-0016).
			CHECKPOINT_BRIDGE_RELAY_DIALOGS: "1",
			// Scene 4: demo/tour.ts writes this file, then stops pi; the launcher starts it again.
			CHECKPOINT_BRIDGE_DEMO_TOUR_RESTART: path.join(dirs.runDir, "tour-restart"),
			// Scene 5: the page gives each request one-tap links, and the notify command (the phone's stand-in) presses one.
			CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0",
			CHECKPOINT_BRIDGE_NOTIFY_COMMAND: `${shellQuoted(process.execPath)} ${shellQuoted(path.join(demoDir, "phone.ts"))}`,
		};
	return {
		...common,
		CHECKPOINT_BRIDGE_DEMO_INTRO: explanation(model, pi, web),
		CHECKPOINT_BRIDGE_DEMO_PROMPT: model === SCRIPTED_MODEL ? (pi.background ? SCRIPTED_PROMPT : SCRIPTED_PROMPT_FOREGROUND) : realModelPrompt(pi.background),
		// The scripted model starts this workflow after the foreground step; unset, it skips the background step.
		...(pi.background ? { CHECKPOINT_BRIDGE_DEMO_WORKFLOW: BACKGROUND_WORKFLOW } : {}),
	};
}

/** pi's command line: the tour keeps its session (in the run dir) so that a restart can continue it. */
function piArgs(pi, model, tour, sessionDir, passThrough) {
	const extensions = tour
		? [pi.subagents, bridgeExtension, introExtension, tourModelExtension, tourExtension]
		: [pi.subagents, bridgeExtension, introExtension, ...(model === SCRIPTED_MODEL ? [demoModelExtension] : [])];
	return [
		pi.cli,
		...(tour ? ["--session-dir", sessionDir] : ["--no-session"]),
		// Only the extensions named here: no discovery, no built-in ones that could answer in their own way.
		"--no-extensions",
		"--no-skills",
		"--no-prompt-templates",
		"--no-context-files",
		...extensions.flatMap((file) => ["--extension", file]),
		"--model",
		model,
		...passThrough,
	];
}

/** Runs pi once in the terminal; its exit code, and whether the tour asked to be started again. */
async function runPi(args, env, cwd, stderrLog) {
	// pi's own diagnostics would draw over the TUI; keep them in a log and show them if pi fails.
	const stderrFd = fs.openSync(stderrLog, "a");
	const child = spawn(process.execPath, args, { cwd, env, stdio: ["inherit", "inherit", stderrFd] });
	fs.closeSync(stderrFd);
	const forward = (signal) => child.kill(signal);
	for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, forward);
	const code = await new Promise((resolve) => {
		child.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
		child.on("error", (error) => {
			console.error(`could not start pi: ${error.message}`);
			resolve(1);
		});
	});
	for (const signal of ["SIGTERM", "SIGHUP"]) process.off(signal, forward);
	const marker = env.CHECKPOINT_BRIDGE_DEMO_TOUR_RESTART;
	const restart = marker !== undefined && fs.existsSync(marker);
	if (restart) fs.rmSync(marker);
	return { code, restart };
}

async function main() {
	const { model: chosenModel, pi: wantedPi, web, tour, passThrough } = parseArgs(process.argv.slice(2));
	const refusal = noTerminal();
	if (refusal) {
		console.error(refusal);
		process.exit(1);
	}
	checkNode();
	// The tour needs no background children: it runs on the dev pi unless told otherwise.
	const pi = await choosePi(wantedPi ?? (tour ? "1.6" : undefined));
	const model = chosenModel ?? (tour ? TOUR_MODEL : SCRIPTED_MODEL);

	const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "checkpoint-bridge-demo-"));
	const dirs = {
		runDir,
		agentDir: path.join(runDir, "agent"),
		workDir: path.join(runDir, "work"),
		tmpDir: path.join(runDir, "tmp"),
		subagentsRoot: path.join(runDir, "subagents"),
	};
	// The first start compiles pi-subagents and the extensions (nothing cached yet): say why the screen stays still.
	const firstStart = !fs.existsSync(compileCache) || fs.readdirSync(compileCache).length === 0;
	console.log(
		firstStart
			? `Starting pi ${pi.version}: the first start compiles pi-subagents and the extensions (20 s to 2 minutes on a busy machine; later starts reuse node_modules/.cache)...`
			: `Starting pi ${pi.version}...`,
	);
	for (const dir of [dirs.agentDir, dirs.workDir, dirs.tmpDir, compileCache, nodeCompileCache]) fs.mkdirSync(dir, { recursive: true });
	fs.symlinkSync(compileCache, path.join(dirs.tmpDir, "jiti"));
	fs.symlinkSync(nodeCompileCache, path.join(dirs.tmpDir, "node-compile-cache"));
	writeAgents(dirs.agentDir, model, tour ? pi : undefined);
	const env = runEnv(dirs, { model, pi, web, tour });
	const args = piArgs(pi, model, tour, path.join(runDir, "sessions"), passThrough);
	const stderrLog = path.join(runDir, "pi-stderr.log");

	// The TUI reads Ctrl+C itself; a signal aimed at the whole process group must not kill the launcher first.
	process.on("SIGINT", () => {});
	let run = await runPi(args, env, dirs.workDir, stderrLog);
	// The tour's scene 4: pi was stopped as a crash would stop it; started again, it continues its session.
	while (run.restart) {
		resetTerminal();
		console.log("The tour stopped pi as a crash would; starting it again with --continue...");
		const again = {
			...env,
			CHECKPOINT_BRIDGE_DEMO_INTRO: tourExplanation(pi, true),
			CHECKPOINT_BRIDGE_DEMO_PROMPT: "",
			CHECKPOINT_BRIDGE_DEMO_TOUR_RESTARTED: "1",
		};
		run = await runPi([...args, "--continue"], again, dirs.workDir, stderrLog);
	}
	const { code } = run;
	const diagnostics = fs.readFileSync(stderrLog, "utf8").trim();
	if (code !== 0 && diagnostics) console.error(`pi exited with code ${code}; its diagnostics:\n${diagnostics}`);
	await closeRunners(dirs.subagentsRoot, dirs.agentDir);
	// A stopped runner may still be closing its run files: retry briefly instead of leaving the dir behind.
	fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
	process.exit(code);
}

main().catch((error) => {
	console.error(error instanceof Error ? error.message : String(error));
	console.error(usage());
	process.exit(1);
});
