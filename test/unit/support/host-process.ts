/**
 * A host in a process of its own, for tests that kill or flood it: a `node -e` script that claims
 * the host role with the given UI, serves the local endpoint in the directory given as its second
 * argument (after the extension's path), prints `READY <socket path>`, and then runs `after`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PROJECT_NODE = fileURLToPath(new URL("../../../node_modules/.bin/node", import.meta.url));
/** Node 22 from the project's devDependencies; the running Node where a copy of the tree has no node_modules of its own (Stryker's sandbox of a linked node_modules). */
export const NODE = existsSync(PROJECT_NODE) ? PROJECT_NODE : process.execPath;
/** The extension's folder, with a trailing slash: the script's first argument. */
export const EXTENSION = fileURLToPath(new URL("../../../extensions/checkpoint-bridge/", import.meta.url));

/** The script; `ui` is the source of an expression for the host's dialog UI, `after` runs with `endpoint` in scope. */
export function hostProcessScript(ui: string, after: string): string {
	return `
const [extension, dir] = process.argv.slice(1);
const { pathToFileURL } = await import("node:url");
const load = (file) => import(pathToFileURL(extension + file).href);
const { createHandle } = await load("core/shared/shared-handle.ts");
const { claimHostRole } = await load("core/host/host-role.ts");
const { startEndpoint } = await load("transports/local/server.ts");
const { dialogSurface } = await load("surfaces/dialogs.ts");
const handle = createHandle();
const ui = ${ui};
claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "process-host" });
const endpoint = await startEndpoint({ handle, dir });
process.stdout.write("READY " + endpoint.endpoint + "\\n");
${after}
`;
}

/** A process started by `startProcess`: its stdout so far, and a wait for a line of it. */
export interface Started {
	child: ChildProcess;
	/** Resolves with the first match of `pattern` in stdout; rejects if the process exits first. */
	waitFor(pattern: RegExp): Promise<RegExpExecArray>;
	stdout(): string;
}

const started: ChildProcess[] = [];

/** Kills every process `startProcess` started; call it in `afterEach`. */
export function killStarted(): void {
	for (const child of started.splice(0)) child.kill("SIGKILL");
}

/** Starts a process with piped stdio, kept for `killStarted`. */
export function startProcess(command: string, args: string[]): Started {
	const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
	started.push(child);
	let stdout = "";
	let stderr = "";
	const listeners: (() => void)[] = [];
	child.stdout!.on("data", (chunk) => {
		stdout += String(chunk);
		for (const listener of listeners) listener();
	});
	child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
	const waitFor = (pattern: RegExp) =>
		new Promise<RegExpExecArray>((resolve, reject) => {
			const check = () => {
				const match = pattern.exec(stdout);
				if (match) resolve(match);
			};
			listeners.push(check);
			child.once("exit", (code) => reject(new Error(`${command} exited (${code}): ${stderr}`)));
			check();
		});
	return { child, waitFor, stdout: () => stdout };
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** Starts `hostProcessScript`'s output under `ulimit -n fdLimit`, serving the local endpoint in `dir`. */
export function startLimitedHost(script: string, dir: string, fdLimit: number): Started {
	return startProcess("sh", [
		"-c",
		`ulimit -n ${fdLimit} && exec ${quote(NODE)} --input-type=module --no-warnings -e ${quote(script)} ${quote(EXTENSION)} ${quote(dir)}`,
	]);
}

/** Starts a `node -e` module script with the given arguments. */
export function startScript(script: string, args: string[]): Started {
	return startProcess(NODE, ["--input-type=module", "--no-warnings", "-e", script, ...args]);
}
