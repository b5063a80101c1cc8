#!/usr/bin/env node
/**
 * `npm run demo`: the real pi TUI with pi-subagents and checkpoint-bridge, where two sub-agents
 * ask you questions through the main session's dialogs.
 *
 *   npm run demo                                  scripted model, no API key; press Enter to start
 *   npm run demo -- --model <provider/id> [...]   a real model (key from the usual environment
 *                                                 variable, e.g. ANTHROPIC_API_KEY); further
 *                                                 arguments are passed to pi unchanged
 *
 * Everything runs in a fresh temp dir (config, HOME, TMPDIR, sub-agent scratch space), which is
 * removed when pi exits, so your own pi settings, sessions and credentials are never touched.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const demoDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(demoDir, "..");
const piCli = path.join(root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
const subagentsExtension = path.join(root, "node_modules", "pi-subagents", "index.ts");
const bridgeExtension = path.join(root, "extensions", "checkpoint-bridge", "index.ts");
const demoModelExtension = path.join(demoDir, "demo-model.ts");
const introExtension = path.join(demoDir, "intro.ts");
const SCRIPTED_MODEL = "demo/scripted";

// The scripted model follows its own script; a real model needs the steps spelled out.
const SCRIPTED_PROMPT = "Run the checkpoint-bridge demo: the planner asks for a naming convention, then the writer asks for a project name.";
const REAL_MODEL_PROMPT = [
	"Demo of checkpoint-bridge. Use the subagent tool with async: false, one call per turn, never in parallel:",
	'1. run the agent "planner" with the task "Ask the user which naming convention the project should use, then report the answer.";',
	'2. after it has finished, run the agent "writer" with the task "Ask the user what the project should be called, then report the answer.";',
	"3. then reply with a short summary that starts with the line \"Demo summary (each line is what that sub-agent reported back):\"",
	'followed by one line per sub-agent in the form "- <agent> received: <answer>", using only what each sub-agent reported.',
].join("\n");

function usage() {
	return [
		"usage: npm run demo [-- --model <provider/id> [more pi arguments]]",
		"  without --model the demo uses a scripted model and needs no API key",
	].join("\n");
}

function parseArgs(argv) {
	let model;
	const passThrough = [];
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--help" || arg === "-h") {
			console.log(usage());
			process.exit(0);
		} else if (arg === "--model") {
			model = argv[++i];
			if (!model) throw new Error("--model needs a value such as anthropic/claude-sonnet-4-5");
		} else if (arg.startsWith("--model=")) {
			model = arg.slice("--model=".length);
		} else {
			passThrough.push(arg);
		}
	}
	return { model, passThrough };
}

function checkPrerequisites() {
	const [major, minor] = process.versions.node.split(".").map(Number);
	if (major < 22 || (major === 22 && minor < 19)) {
		throw new Error(`pi needs Node >= 22.19 but this is ${process.version}. Start the demo with "npm run demo", which uses the Node 22 from node_modules.`);
	}
	for (const file of [piCli, subagentsExtension, bridgeExtension]) {
		if (!fs.existsSync(file)) throw new Error(`missing ${path.relative(root, file)}; run "npm install" first`);
	}
}

/** Write the demo agents into the isolated config dir, loading the bridge (and the scripted model) into each. */
function writeAgents(agentDir, model) {
	const extensions = model === SCRIPTED_MODEL ? [bridgeExtension, demoModelExtension] : [bridgeExtension];
	const target = path.join(agentDir, "agents");
	fs.mkdirSync(target, { recursive: true });
	for (const name of ["planner.md", "writer.md"]) {
		const template = fs.readFileSync(path.join(demoDir, "agents", name), "utf8");
		const text = template.replaceAll("{{MODEL}}", model).replaceAll("{{EXTENSIONS}}", extensions.join(", "));
		fs.writeFileSync(path.join(target, name), text);
	}
}

/** The explanation, printed before pi starts and shown by demo/intro.ts as the TUI header. */
function explanation(model) {
	const scripted = model === SCRIPTED_MODEL;
	return [
		"checkpoint-bridge demo",
		"The main agent runs two sub-agents one after the other (pi-subagents): planner, then writer.",
		"Each asks you one question with the ask_user_via_host tool. The question opens here, in the",
		"main session, as a dialog titled with the asking session's name, e.g. [subagent-planner-...]:",
		"  planner: choose a naming convention (Up/Down, then Enter)",
		"  writer:  type a project name (then Enter)",
		"The final summary shows which answer reached which sub-agent.",
		scripted ? "Model: scripted, no API key needed." : `Model: ${model} (main session and sub-agents).`,
		"Press Enter to send the prepared message and start. Quit with Ctrl+D, or Ctrl+C twice quickly.",
	].join("\n");
}

async function main() {
	const { model = SCRIPTED_MODEL, passThrough } = parseArgs(process.argv.slice(2));
	checkPrerequisites();

	const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "checkpoint-bridge-demo-"));
	const agentDir = path.join(runDir, "agent");
	const workDir = path.join(runDir, "work");
	const tmpDir = path.join(runDir, "tmp");
	for (const dir of [agentDir, workDir, tmpDir]) fs.mkdirSync(dir, { recursive: true });
	writeAgents(agentDir, model);
	const intro = explanation(model);

	const env = {
		...process.env,
		HOME: runDir,
		TMPDIR: tmpDir,
		PI_CODING_AGENT_DIR: agentDir,
		PI_SUBAGENTS_TEMP_ROOT: path.join(runDir, "subagents"),
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		CHECKPOINT_BRIDGE_DEMO_INTRO: intro,
		CHECKPOINT_BRIDGE_DEMO_PROMPT: model === SCRIPTED_MODEL ? SCRIPTED_PROMPT : REAL_MODEL_PROMPT,
	};
	const extensions = [subagentsExtension, bridgeExtension, introExtension, ...(model === SCRIPTED_MODEL ? [demoModelExtension] : [])];
	const args = [
		piCli,
		"--no-session",
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

	console.log(`\n${intro}\n`);
	// pi's own diagnostics would draw over the TUI; keep them in a log and show them if pi fails.
	const stderrLog = path.join(runDir, "pi-stderr.log");
	const stderrFd = fs.openSync(stderrLog, "w");
	const pi = spawn(process.execPath, args, { cwd: workDir, env, stdio: ["inherit", "inherit", stderrFd] });
	fs.closeSync(stderrFd);

	// The TUI reads Ctrl+C itself; a signal aimed at the whole process group must not kill the launcher first.
	process.on("SIGINT", () => {});
	for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => pi.kill(signal));

	const code = await new Promise((resolve) => {
		pi.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
		pi.on("error", (error) => {
			console.error(`could not start pi: ${error.message}`);
			resolve(1);
		});
	});
	const diagnostics = fs.readFileSync(stderrLog, "utf8").trim();
	if (code !== 0 && diagnostics) console.error(`pi exited with code ${code}; its diagnostics:\n${diagnostics}`);
	fs.rmSync(runDir, { recursive: true, force: true });
	process.exit(code);
}

main().catch((error) => {
	console.error(error instanceof Error ? error.message : String(error));
	console.error(usage());
	process.exit(1);
});
