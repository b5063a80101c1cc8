/**
 * The bin `checkpoint-bridge-host` (a host with no screen) as a test runs it: a process in a pi
 * environment's directory, its stdout and stderr kept line by line, and a notify command that
 * writes each asked request's one-tap actions to a file of its own, as a phone's bridge would read them.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { until } from "../../support/until.ts";
import { NODE_BIN, REPO_ROOT } from "./pi-cli.ts";

export const HOST_BIN = join(REPO_ROOT, "bin/checkpoint-bridge-host.mjs");

/** A running bin. */
export interface HeadlessBin {
	readonly pid: number;
	readonly child: ChildProcessWithoutNullStreams;
	/** Every line it printed so far, stdout and stderr apart. */
	readonly stdout: string[];
	readonly stderr: string[];
	/** The page's URL, from the one line that names it. */
	pageUrl(): string | undefined;
	/** Resolves with the first stdout line matching `pattern`, waiting up to `timeoutMs`. */
	line(pattern: RegExp, timeoutMs?: number): Promise<string>;
	/** Resolves with its exit code and signal once it exited. */
	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
	/** Sends `signal` (SIGTERM by default) and waits for the exit. */
	stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** Starts the bin with `env` in `cwd` (its `--cwd`), with `args` after it. */
export function startHeadlessBin(cwd: string, env: NodeJS.ProcessEnv, args: string[] = ["--cwd", cwd], bin = HOST_BIN): HeadlessBin {
	const child = spawn(NODE_BIN, [bin, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
	child.stdin.end();
	const stdout: string[] = [];
	const stderr: string[] = [];
	const split = (into: string[]) => {
		let buffer = "";
		return (chunk: Buffer) => {
			buffer += chunk.toString("utf8");
			const lines = buffer.split("\n");
			buffer = lines.pop() ?? "";
			into.push(...lines);
		};
	};
	child.stdout.on("data", split(stdout));
	child.stderr.on("data", split(stderr));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
		child.on("close", (code, signal) => resolve({ code, signal, at: Date.now() })),
	);
	return {
		pid: child.pid!,
		child,
		stdout,
		stderr,
		pageUrl: () => stdout.map((l) => /answer in a browser at (\S+)/.exec(l)?.[1]).find(Boolean),
		line: (pattern, timeoutMs = 30_000) =>
			until(
				() => stdout.find((l) => pattern.test(l)),
				`a line of the host matching ${pattern}; stdout: ${stdout.join("\n")}; stderr: ${stderr.join("\n")}`,
				timeoutMs,
				20,
			),
		exited,
		async stop(signal = "SIGTERM") {
			if (child.exitCode === null && child.signalCode === null) child.kill(signal);
			return exited;
		},
	};
}

/** One-tap actions as the notify command gets them (docs/away-from-the-keyboard.md). */
export interface Actions {
	requestId: string;
	asker: string;
	link: string;
	questions: { question: string }[];
	buttons: { label: string; answer: string }[];
}

/** A notify command that writes each asked request's actions JSON to `<dir>/<request id>.json`. */
export function actionsRecorder(dir: string): { command: string; forQuestion(question: string, timeoutMs?: number): Promise<Actions> } {
	mkdirSync(dir, { recursive: true });
	const command = `[ "$CHECKPOINT_BRIDGE_EVENT" = asked ] && printf %s "$CHECKPOINT_BRIDGE_ACTIONS" > ${JSON.stringify(dir)}/"$CHECKPOINT_BRIDGE_REQUEST_ID".json; exit 0`;
	const all = (): Actions[] =>
		(existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : []).flatMap((f) => {
			try {
				return [JSON.parse(readFileSync(join(dir, f), "utf8")) as Actions];
			} catch {
				return [];
			}
		});
	return {
		command,
		forQuestion: (question, timeoutMs = 60_000) =>
			until(() => all().find((a) => a.questions[0]?.question === question), `the notification of "${question}"`, timeoutMs, 20),
	};
}
