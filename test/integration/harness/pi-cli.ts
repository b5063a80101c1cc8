/**
 * Runs the real pi CLI for integration tests: an isolated environment per run, `--mode rpc` driven as a
 * client (prompts, frames, extension UI answers), and one-shot runs (`-p`, `--mode json`).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { ANSWER_MESSAGE_TYPE } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { advertDir, advertPath } from "../../../extensions/checkpoint-bridge/transports/local/advertisement.ts";
import { until } from "../../support/until.ts";
import type { ScriptConfig } from "../fixtures/scripted-model.ts";
import type { Envelope } from "./envelope.ts";

export { answerPairs, type Envelope } from "./envelope.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** pi refuses Node < 22; the repository pins Node 22 as a dev dependency. */
export const NODE_BIN = join(REPO_ROOT, "node_modules/.bin/node");

/**
 * The supported pi versions the suite can run against, each an install holding pi and pi-subagents:
 * the dev dependency (newest) and the oldest supported one, installed apart by `npm run setup:compat`.
 */
const PI_INSTALLS = {
	"1.6": REPO_ROOT,
	"0.85": join(REPO_ROOT, "test/compat/pi-0.85"),
} as const;
export type PiVersion = keyof typeof PI_INSTALLS;
/** Env var naming the pi version under test (a key of PI_INSTALLS); unset means the dev dependency. */
const PI_VERSION_ENV = "PI_VERSION_UNDER_TEST";

/**
 * The script the `pi` command runs (the package's `bin`): the bundled entry, with Node's compile
 * cache on, as a user's pi starts; `dist/cli.js` loads the unbundled modules and starts a second later.
 */
function piBin(root: string): string {
	const dir = join(root, "node_modules/@earendil-works/pi-coding-agent");
	try {
		const { bin } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin?: string | Record<string, string> };
		return join(dir, typeof bin === "string" ? bin : (bin?.pi ?? "dist/cli.js"));
	} catch {
		return join(dir, "dist/cli.js");
	}
}

function piVersionUnderTest(): PiVersion {
	const wanted = process.env[PI_VERSION_ENV] || "1.6";
	if (!(wanted in PI_INSTALLS)) throw new Error(`${PI_VERSION_ENV}=${wanted}: known versions are ${Object.keys(PI_INSTALLS).join(", ")}`);
	const version = wanted as PiVersion;
	const cli = piBin(PI_INSTALLS[version]);
	if (!existsSync(cli)) throw new Error(`pi ${version} is not installed (${cli} is missing): run npm run setup:compat`);
	return version;
}

export const PI_VERSION: PiVersion = piVersionUnderTest();
/**
 * In a file of ON_EVERY_PI (vitest.config.ts), a test of what lies under pi (the MCP conformance
 * suite, a mail server refusing the login), or of a part of pi another test of its file already
 * drives, proves nothing new on a second pi version (ADR-0044): it runs on the dev pi only, and its
 * title says so on pi 0.85.
 * `it.skipIf(NOT_ON_OLDEST_PI)(onDevPiOnly("…"), …)`.
 */
export const NOT_ON_OLDEST_PI = PI_VERSION !== "1.6";
export const onDevPiOnly = (title: string): string =>
	NOT_ON_OLDEST_PI ? `${title}: skipped on pi ${PI_VERSION}, it drives no part of pi the file's other tests leave out` : title;
const PI_ROOT = PI_INSTALLS[PI_VERSION];
/** The installed version string of the pi under test (e.g. "0.85.1"). */
export const PI_PACKAGE_VERSION = (
	JSON.parse(readFileSync(join(PI_ROOT, "node_modules/@earendil-works/pi-coding-agent/package.json"), "utf8")) as { version: string }
).version;
/** The pi package under test: its examples, its docs. */
export const PI_PACKAGE = join(PI_ROOT, "node_modules/@earendil-works/pi-coding-agent");
export const PI_CLI = piBin(PI_ROOT);
export const SUBAGENTS_EXT = join(PI_ROOT, "node_modules/pi-subagents/index.ts");
/**
 * pi-subagents runs background children (`async: true`, workflow `runs.all`) in a detached runner that
 * needs `@earendil-works/pi-agent-core/node`: pi 0.85 has it, pi 1.6 does not (the runner refuses to start).
 */
export const BACKGROUND_CHILDREN = hasNodeExport(PI_ROOT);

function hasNodeExport(root: string): boolean {
	try {
		const manifest = JSON.parse(readFileSync(join(root, "node_modules/@earendil-works/pi-agent-core/package.json"), "utf8")) as {
			exports?: Record<string, unknown>;
		};
		return manifest.exports?.["./node"] !== undefined;
	} catch {
		return false;
	}
}
/** The extension under test; CHECKPOINT_BRIDGE_EXTENSION points the suite at another build of it. */
export const BRIDGE_EXT = process.env.CHECKPOINT_BRIDGE_EXTENSION ?? join(REPO_ROOT, "extensions/checkpoint-bridge/index.ts");
export const SCRIPTED_MODEL_EXT = join(REPO_ROOT, "test/integration/fixtures/scripted-model.ts");
const EXAMPLE_AGENTS_DIR = join(REPO_ROOT, "examples/agents");
/**
 * pi compiles extensions with jiti into `$TMPDIR/jiti`. pi-subagents is large: compiling it costs
 * 10-20 s per process, reusing the compiled files about 1 s. Every run keeps its own TMPDIR but links
 * its `jiti` folder here. Entries are keyed by source hash, and jiti treats a half-written entry as a
 * miss, so concurrent runs are safe.
 */
const COMPILE_CACHE_DIR = join(REPO_ROOT, "node_modules/.cache/checkpoint-bridge-integration/jiti");
/**
 * pi's bin turns on Node's compile cache, in `$TMPDIR/node-compile-cache`: linked here too, so that a
 * test's pi starts from V8's cached code as a user's second pi does, not from a cold cache every time.
 */
const NODE_COMPILE_CACHE_DIR = join(REPO_ROOT, "node_modules/.cache/checkpoint-bridge-integration/node-compile-cache");
/** Token in the example agent files that stands for the path of checkpoint-bridge. */
const EXTENSION_PLACEHOLDER = "CHECKPOINT_BRIDGE_PATH";
export const ASK_TOOL = "ask_user_via_host";
const DIALOG_METHODS = new Set(["select", "input", "confirm", "editor"]);

/** One JSON record of pi's stdout (RPC or `--mode json`). Loosely typed: tests read what they assert on. */
export type Frame = { type: string; [key: string]: any };

/** The message a request's end is delivered as, later (core/delivery/delivery.ts), as pi's stdout shows it. */
export const isAnswerMessage = (frame: Frame) =>
	frame.type === "message_end" && frame.message?.role === "custom" && frame.message?.customType === ANSWER_MESSAGE_TYPE;

export interface PiEnv {
	root: string;
	agentDir: string;
	cwd: string;
	/** Where pi-subagents keeps child artifacts (transcripts). */
	subagentsTmp: string;
	env: NodeJS.ProcessEnv;
	/** Replaces the scripted model's script (read by the model on every reply). */
	writeScript(script: ScriptConfig): void;
	cleanup(): void;
}

export interface PiEnvOptions {
	/** The scripted model's script (see PiEnv.writeScript). */
	script?: ScriptConfig;
	/** Example agents to install (see installExampleAgent). */
	agents?: string[];
	/** Set on top of the isolated environment. */
	env?: Record<string, string>;
}

/**
 * A fresh temp tree for one pi process: agent dir, cwd, HOME, TMPDIR and pi-subagents' temp root all
 * inside it, so nothing reaches ~/.pi. The environment is built from scratch (PATH only is inherited)
 * so the caller's PI_* or CHECKPOINT_BRIDGE_* settings cannot leak in.
 */
export function createPiEnv(options: PiEnvOptions = {}): PiEnv {
	const root = mkdtempSync(join(tmpdir(), "cb-it-"));
	const agentDir = join(root, "agent");
	const cwd = join(root, "work");
	const subagentsTmp = join(root, "subagents-tmp");
	const tmp = join(root, "tmp");
	for (const dir of [join(agentDir, "agents"), cwd, subagentsTmp, tmp, COMPILE_CACHE_DIR, NODE_COMPILE_CACHE_DIR]) mkdirSync(dir, { recursive: true });
	symlinkSync(COMPILE_CACHE_DIR, join(tmp, "jiti"));
	symlinkSync(NODE_COMPILE_CACHE_DIR, join(tmp, "node-compile-cache"));
	const scriptFile = join(root, "script.json");
	const writeScript = (script: ScriptConfig) => writeFileSync(scriptFile, JSON.stringify(script, null, 2));
	writeScript(options.script ?? {});
	for (const name of options.agents ?? []) installExampleAgent(agentDir, name);
	const env: NodeJS.ProcessEnv = {
		PATH: `${dirname(NODE_BIN)}:${process.env.PATH ?? ""}`,
		HOME: root,
		TMPDIR: tmp,
		PI_CODING_AGENT_DIR: agentDir,
		PI_SUBAGENTS_TEMP_ROOT: subagentsTmp,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		SCRIPTED_MODEL_CONFIG: scriptFile,
		...options.env,
	};
	return {
		root,
		agentDir,
		cwd,
		subagentsTmp,
		env,
		writeScript,
		cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
	};
}

/**
 * Copies examples/agents/<name>.md into the agent dir, the placeholder replaced by the extension under
 * test plus the scripted model (a child only sees model providers loaded into the child).
 */
export function installExampleAgent(agentDir: string, name: string, options: { as?: string } = {}): string {
	const source = readFileSync(join(EXAMPLE_AGENTS_DIR, `${name}.md`), "utf8");
	if (!source.includes(EXTENSION_PLACEHOLDER)) throw new Error(`examples/agents/${name}.md has no ${EXTENSION_PLACEHOLDER}`);
	// `as` installs the same agent under another name (a third distinct child, say).
	const installed = options.as ?? name;
	const renamed = options.as ? source.replace(new RegExp(`^name: ${name}$`, "m"), `name: ${options.as}`) : source;
	if (!renamed.includes(`name: ${installed}\n`)) throw new Error(`examples/agents/${name}.md has no "name: ${name}" line`);
	const target = join(agentDir, "agents", `${installed}.md`);
	writeFileSync(target, renamed.replaceAll(EXTENSION_PLACEHOLDER, `${BRIDGE_EXT}, ${SCRIPTED_MODEL_EXT}`));
	return target;
}

/** CLI arguments shared by every run: scripted model, no skills/templates from the machine. */
export function baseArgs(options: { subagents?: boolean; bridge?: boolean } = {}): string[] {
	const extensions = [...(options.subagents ? [SUBAGENTS_EXT] : []), ...(options.bridge === false ? [] : [BRIDGE_EXT]), SCRIPTED_MODEL_EXT];
	return [
		"--no-session",
		"--no-skills",
		"--no-prompt-templates",
		"--no-context-files",
		...extensions.flatMap((file) => ["--extension", file]),
		"--model",
		"faux/faux-1",
	];
}

/**
 * Prefix of the private directory a host's local endpoint lives in: under the host's TMPDIR, since
 * createPiEnv sets no XDG_RUNTIME_DIR (which the host would prefer; ADR-0002).
 */
const ENDPOINT_DIR_PREFIX = "checkpoint-bridge-";

/**
 * The socket path a host pi process running in `piEnv` serves to other processes, once it is ready:
 * the host makes its socket 0600 as the last step before it sets CHECKPOINT_BRIDGE_ENDPOINT in its
 * environment. A process the host spawns before then does not inherit the variable, so wait for this
 * before prompting a host whose model spawns askers. After a SIGKILL it may name the killed host's
 * socket: wait for the new host with hostAdvertised.
 */
export async function hostEndpoint(piEnv: PiEnv, timeoutMs = 90_000): Promise<string> {
	const tmp = piEnv.env.TMPDIR!;
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		for (const name of readdirSync(tmp).filter((entry) => entry.startsWith(ENDPOINT_DIR_PREFIX))) {
			const socket = join(tmp, name, "socket");
			try {
				if (statSync(socket).isSocket() && (statSync(socket).mode & 0o777) === 0o600) return socket;
			} catch {
				// not there yet
			}
		}
		if (Date.now() > deadline) throw new Error(`no checkpoint-bridge endpoint under ${tmp} within ${timeoutMs} ms`);
		await new Promise((resolveLater) => setTimeout(resolveLater, 25));
	}
}

/**
 * Resolves once the working directory's advertisement names `host`'s pid: the host is up. After a
 * SIGKILL use this, not hostEndpoint: the killed host's socket stays until the next host advertises.
 */
export async function hostAdvertised(piEnv: PiEnv, host: { readonly pid?: number }, timeoutMs = 90_000): Promise<void> {
	const file = advertPath(advertDir(piEnv.env.TMPDIR!), piEnv.cwd);
	const advertisedPid = () => {
		try {
			return (JSON.parse(readFileSync(file, "utf8")) as { pid: number }).pid;
		} catch {
			return undefined; // none yet, or a dead host's just removed
		}
	};
	await until(() => host.pid !== undefined && advertisedPid() === host.pid, `the advertisement of host pid ${host.pid}`, timeoutMs, 25);
}

function spawnPi(piEnv: PiEnv, args: string[]): ChildProcessWithoutNullStreams {
	return spawn(NODE_BIN, [PI_CLI, ...args], { cwd: piEnv.cwd, env: piEnv.env, stdio: ["pipe", "pipe", "pipe"] });
}

/** Splits a byte stream into JSON records on "\n" only (Node's readline would also split on U+2028). */
function lineSplitter(onLine: (line: string) => void): (chunk: Buffer) => void {
	let buffer = "";
	return (chunk) => {
		buffer += chunk.toString("utf8");
		let index: number;
		while ((index = buffer.indexOf("\n")) >= 0) {
			const line = buffer.slice(0, index).replace(/\r$/, "");
			buffer = buffer.slice(index + 1);
			if (line.trim()) onLine(line);
		}
	};
}

interface Waiter {
	predicate: (frame: Frame) => boolean;
	failOn?: (frame: Frame) => string | undefined;
	resolve: (frame: Frame) => void;
	reject: (error: Error) => void;
}

export interface WaitOptions {
	/** Deadline in ms. */
	timeoutMs?: number;
	/** Index in `frames` to start looking at (see `mark()`); earlier frames are ignored. */
	from?: number;
	/** Named in the error when the deadline passes. */
	what?: string;
	/** Give up early when a frame matching this arrives first (e.g. the run settled). */
	failOn?: (frame: Frame) => boolean;
}

/** What PiRpc.start runs: baseArgs' options, then further CLI arguments. */
export interface PiRpcOptions {
	subagents?: boolean;
	bridge?: boolean;
	args?: string[];
}

/** A `pi --mode rpc` process seen from its client. */
export class PiRpc {
	readonly frames: Frame[] = [];
	/** Each frame's arrival time (ms since epoch), same index as `frames`. */
	readonly arrivals: number[] = [];
	stderr = "";
	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	private readonly process: ChildProcessWithoutNullStreams;
	private readonly waiters = new Set<Waiter>();
	private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
	private nextId = 0;

	constructor(piEnv: PiEnv, args: string[]) {
		this.process = spawnPi(piEnv, ["--mode", "rpc", ...args]);
		this.process.stdout.on(
			"data",
			lineSplitter((line) => this.onLine(line)),
		);
		this.process.stderr.on("data", (chunk: Buffer) => {
			this.stderr += chunk.toString("utf8");
		});
		this.exited = new Promise((resolveExit) => {
			this.process.on("exit", (code, signal) => {
				this.exitInfo = { code, signal };
				for (const waiter of this.waiters)
					waiter.reject(new Error(`pi exited (code ${code}, signal ${signal}) while a frame was awaited\n${this.diagnostics()}`));
				this.waiters.clear();
				resolveExit({ code, signal });
			});
		});
	}

	/** The pi process's id. */
	get pid(): number | undefined {
		return this.process.pid;
	}

	/** Signals the pi process (SIGKILL: the host vanishes without any clean-up of its own). */
	kill(signal: NodeJS.Signals): void {
		this.process.kill(signal);
	}

	static start(piEnv: PiEnv, options: PiRpcOptions = {}): PiRpc {
		return new PiRpc(piEnv, [...baseArgs(options), ...(options.args ?? [])]);
	}

	private onLine(line: string): void {
		let frame: Frame;
		try {
			frame = JSON.parse(line) as Frame;
		} catch {
			frame = { type: "non-json", line };
		}
		this.frames.push(frame);
		this.arrivals.push(Date.now());
		for (const waiter of [...this.waiters]) {
			if (waiter.predicate(frame)) {
				this.waiters.delete(waiter);
				waiter.resolve(frame);
				continue;
			}
			const failure = waiter.failOn?.(frame);
			if (failure) {
				this.waiters.delete(waiter);
				waiter.reject(new Error(`${failure}\n${this.diagnostics()}`));
			}
		}
	}

	/** The current end of `frames`: pass it as `from` to wait only for frames that arrive later. */
	mark(): number {
		return this.frames.length;
	}

	/** Resolves with the first frame (at or after `from`) that matches, or rejects at the deadline. */
	waitFor(predicate: (frame: Frame) => boolean, options: WaitOptions = {}): Promise<Frame> {
		const { timeoutMs = 30_000, from = 0, what = "a matching frame", failOn } = options;
		for (const frame of this.frames.slice(from)) {
			if (predicate(frame)) return Promise.resolve(frame);
			if (failOn?.(frame)) return Promise.reject(new Error(`${frame.type} came before ${what}\n${this.diagnostics()}`));
		}
		if (this.exitInfo) return Promise.reject(new Error(`pi already exited; never saw ${what}\n${this.diagnostics()}`));
		return new Promise<Frame>((resolveFrame, rejectFrame) => {
			const timer = setTimeout(() => {
				this.waiters.delete(waiter);
				rejectFrame(new Error(`no ${what} within ${timeoutMs} ms\n${this.diagnostics()}`));
			}, timeoutMs);
			const waiter: Waiter = {
				predicate,
				failOn: failOn && ((frame) => (failOn(frame) ? `${frame.type} came before ${what}` : undefined)),
				resolve: (frame) => {
					clearTimeout(timer);
					resolveFrame(frame);
				},
				reject: (error) => {
					clearTimeout(timer);
					rejectFrame(error);
				},
			};
			this.waiters.add(waiter);
		});
	}

	/** Next dialog request (select/input/confirm/editor) at or after `from`; fails early if the run settles first. */
	waitForDialog(options: WaitOptions = {}): Promise<Frame> {
		return this.waitFor(isDialog, { what: "dialog request", failOn: isSettled, ...options });
	}

	/** `tool_execution_end` of the given tool at or after `from`. */
	waitForToolEnd(toolName: string, options: WaitOptions = {}): Promise<Frame> {
		return this.waitFor((f) => f.type === "tool_execution_end" && f.toolName === toolName, { what: `tool_execution_end of ${toolName}`, ...options });
	}

	/** Waits for pi to settle after a run (no more automatic work). */
	waitForSettled(options: WaitOptions = {}): Promise<Frame> {
		return this.waitFor(isSettled, { what: "agent_settled", ...options });
	}

	send(record: Record<string, unknown>): void {
		this.process.stdin.write(`${JSON.stringify(record)}\n`);
	}

	/** Sends a command and resolves with its `response` frame. */
	async command(type: string, fields: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<Frame> {
		const id = `c${++this.nextId}`;
		const from = this.mark();
		this.send({ id, type, ...fields });
		const response = await this.waitFor((f) => f.type === "response" && f.id === id, { from, timeoutMs, what: `response to ${type}` });
		if (!response.success) throw new Error(`${type} failed: ${JSON.stringify(response.error ?? response)}`);
		return response;
	}

	/** Sends a prompt; resolves once pi accepted it (the run goes on in the background). */
	prompt(message: string): Promise<Frame> {
		return this.command("prompt", { message });
	}

	answer(request: Frame, value: string): void {
		this.send({ type: "extension_ui_response", id: request.id, value });
	}

	/** Answers a dialog and resolves with the next dialog request that comes after the answer. */
	answerThenNextDialog(request: Frame, value: string): Promise<Frame> {
		const from = this.mark();
		this.answer(request, value);
		return this.waitForDialog({ from });
	}

	cancel(request: Frame): void {
		this.send({ type: "extension_ui_response", id: request.id, cancelled: true });
	}

	/** Closes stdin (pi shuts down on EOF); kills the process if it has not exited by the deadline. */
	async close(timeoutMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
		if (!this.exitInfo) {
			this.process.stdin.end();
			const timer = setTimeout(() => this.process.kill("SIGKILL"), timeoutMs);
			await this.exited;
			clearTimeout(timer);
		}
		return this.exitInfo!;
	}

	/** What happened so far (frame types, tool results, assistant texts, stderr), for failure messages. */
	diagnostics(): string {
		const lines = this.frames
			.filter((f) => f.type !== "message_update" && f.type !== "tool_execution_update" && f.type !== "message_start")
			.slice(-40)
			.map((f) => {
				if (f.type === "extension_ui_request") return `ui:${f.method} ${f.title ?? f.message ?? ""}`;
				if (f.type === "tool_execution_end") return `end:${f.toolName} ${resultText(f.result).slice(0, 600)}`;
				if (f.type === "message_end" && f.message?.role === "assistant") {
					return `assistant: ${resultText(f.message).slice(0, 600)}${f.message.errorMessage ? ` error: ${f.message.errorMessage}` : ""}`;
				}
				return f.type;
			});
		return `frames:\n  ${lines.join("\n  ")}\nstderr: ${this.stderr.slice(-2_000)}`;
	}
}

/**
 * The pi RPC process and temp tree of the test that is running. Call `stop` after each test: it closes
 * pi before it removes the tree pi writes in, and leaves the fixture ready for the next test.
 */
export class PiRpcFixture {
	piEnv: PiEnv | undefined;
	pi: PiRpc | undefined;

	/** A fresh environment for this test; start pi in it with `startPi`. */
	createEnv(options: PiEnvOptions = {}): PiEnv {
		this.piEnv = createPiEnv(options);
		return this.piEnv;
	}

	/** Starts `pi --mode rpc` in the environment `createEnv` made. */
	startPi(options: PiRpcOptions = {}): PiRpc {
		if (!this.piEnv) throw new Error("startPi before createEnv");
		this.pi = PiRpc.start(this.piEnv, options);
		return this.pi;
	}

	async stop(): Promise<void> {
		await this.pi?.close();
		this.piEnv?.cleanup();
		this.pi = undefined;
		this.piEnv = undefined;
	}
}

export function isDialog(frame: Frame): boolean {
	return frame.type === "extension_ui_request" && DIALOG_METHODS.has(frame.method);
}

function isSettled(frame: Frame): boolean {
	return frame.type === "agent_settled";
}

export function isNotify(frame: Frame): boolean {
	return frame.type === "extension_ui_request" && frame.method === "notify";
}

export interface RunResult {
	/** The pi process's id. */
	pid: number | undefined;
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	durationMs: number;
}

/** One-shot run (`-p`, `--mode json`): stdin closed, killed at the deadline. */
export function runPi(piEnv: PiEnv, args: string[], timeoutMs = 90_000): Promise<RunResult> {
	const started = Date.now();
	const child = spawnPi(piEnv, args);
	child.stdin.end();
	let stdout = "";
	let stderr = "";
	child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
	child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
	const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
	return new Promise((resolveRun) => {
		child.on("exit", (code, signal) => {
			clearTimeout(timer);
			// Let the pipes drain: 'exit' can fire before the last stdout chunk.
			child.stdout.once("close", () => resolveRun({ pid: child.pid, code, signal, stdout, stderr, durationMs: Date.now() - started }));
			if (child.stdout.closed) resolveRun({ pid: child.pid, code, signal, stdout, stderr, durationMs: Date.now() - started });
		});
	});
}

/** The events a `pi --mode json` run has written to `file` so far; none before the file exists. */
export function eventsIn(file: string): Frame[] {
	return existsSync(file) ? parseJsonLines(readFileSync(file, "utf8")) : [];
}

/** The end of the ask tool's call in the events of `file`, once it is there (within 30 s). */
export function askToolEnd(file: string, what: string): Promise<Frame> {
	return until(() => eventsIn(file).find((e) => e.type === "tool_execution_end" && e.toolName === ASK_TOOL), what, 30_000);
}

/** Parses `--mode json` output (JSON lines, split on "\n" only). */
export function parseJsonLines(text: string): Frame[] {
	const frames: Frame[] = [];
	lineSplitter((line) => {
		try {
			frames.push(JSON.parse(line) as Frame);
		} catch {
			frames.push({ type: "non-json", line });
		}
	})(Buffer.from(`${text}\n`));
	return frames;
}

/** The text of a tool result (`tool_execution_end.result`, a toolResult message, …). */
export function resultText(result: { content?: unknown } | undefined): string {
	const content = result?.content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((part: { type?: string; text?: string }) => (part?.type === "text" ? (part.text ?? "") : "")).join("");
}

/**
 * Every checkpoint-bridge envelope embedded in a text. Tool results travel as raw JSON inside the texts
 * that carry them up (child result -> child's final text -> `subagent` result -> main's text).
 */
export function envelopesIn(text: string): Envelope[] {
	const found: Envelope[] = [];
	let i = text.indexOf("{");
	while (i >= 0) {
		const end = matchingBrace(text, i);
		let next = i + 1;
		if (end > 0) {
			try {
				const value = JSON.parse(text.slice(i, end + 1)) as unknown;
				if (isEnvelope(value)) {
					found.push(value);
					next = end + 1;
				}
			} catch {
				// not JSON here: keep scanning
			}
		}
		i = text.indexOf("{", next);
	}
	return found;
}

/** The one envelope in a text (a tool result, or a text that carries one up); fails on none or several. */
export function onlyEnvelope(text: string): Envelope {
	const found = envelopesIn(text);
	expect(found, `one envelope in: ${text.slice(0, 500)}`).toHaveLength(1);
	return found[0]!;
}

/** The first `count` entries of a select: the offered options (the bridge may add entries of its own after them). */
export function offeredOptions(dialog: Frame, count: number): string[] {
	return (dialog.options as string[] | undefined)?.slice(0, count) ?? [];
}

function isEnvelope(value: unknown): value is Envelope {
	const v = value as Partial<Envelope> | null;
	return typeof v === "object" && v !== null && typeof v.status === "string" && Array.isArray(v.answers);
}

/** Index of the brace closing the object that opens at `start`, skipping braces inside strings; -1 if none. */
function matchingBrace(text: string, start: number): number {
	let depth = 0;
	let inString = false;
	for (let i = start; i < text.length; i++) {
		const c = text[i];
		if (inString) {
			if (c === "\\") i++;
			else if (c === '"') inString = false;
		} else if (c === '"') inString = true;
		else if (c === "{") depth++;
		else if (c === "}" && --depth === 0) return i;
	}
	return -1;
}

export interface TranscriptRecord {
	recordType: string;
	agent?: string;
	role?: string;
	toolName?: string;
	text?: string;
	message?: any;
}

/** A pi-subagents child transcript (JSON lines). */
export function readTranscript(path: string): TranscriptRecord[] {
	return parseJsonLines(readFileSync(path, "utf8")) as unknown as TranscriptRecord[];
}

/** Every child transcript pi-subagents wrote under this environment. */
export function childTranscripts(piEnv: PiEnv): { path: string; records: TranscriptRecord[] }[] {
	const dir = join(piEnv.subagentsTmp, "artifacts");
	if (!existsSync(dir)) return [];
	return readdirSync(dir)
		.filter((name) => name.endsWith("_transcript.jsonl"))
		.map((name) => ({ path: join(dir, name), records: readTranscript(join(dir, name)) }));
}

/** A foreground child's own `ask_user_via_host` results, from the transcript its `subagent` result names. */
export function childAskResults(subagentEnd: Frame): string[] {
	const transcriptPath = subagentEnd.result?.details?.results?.[0]?.transcriptPath as string | undefined;
	expect(transcriptPath, "subagent result names the child transcript").toBeTypeOf("string");
	return toolResultsIn(readTranscript(transcriptPath!), ASK_TOOL);
}

/** The tool-result messages of `toolName` in a child transcript, as full texts. */
export function toolResultsIn(records: TranscriptRecord[], toolName: string): string[] {
	return records
		.filter((r) => r.recordType === "message" && r.role === "toolResult" && r.toolName === toolName)
		.map((r) => (r.message ? resultText(r.message) : (r.text ?? "")));
}
