/**
 * The host with no screen as a service, from the recipes in examples/: the systemd user unit's
 * Environment=, EnvironmentFile= and ExecStart= lines, and the Containerfile's ENV, WORKDIR, VOLUME
 * and CMD, each parsed and run as written (no systemd, no container engine: %h is a temp home, a
 * volume a temp directory, the published port a free one). Each serves its directory: a `pi -p`
 * there is answered through the notification's one-tap link, the audit trail lands in the state
 * directory (the volume), and the stop signal the recipe names ends it with exit 0.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { actionsRecorder, HOST_BIN } from "./harness/headless-host.ts";
import { baseArgs, createPiEnv, envelopesIn, NODE_BIN, type PiEnv, REPO_ROOT, runPi } from "./harness/pi-cli.ts";

const UNIT = join(REPO_ROOT, "examples/systemd/checkpoint-bridge-host.service");
const CONTAINERFILE = join(REPO_ROOT, "examples/container/Containerfile");

/** A port nobody listens on now. */
const freePort = () =>
	new Promise<number>((resolve, reject) => {
		const server = net.createServer().once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
	});

/** The unit's [Service] settings: each key's values in order (Environment= may repeat). */
function unitSettings(text: string): Map<string, string[]> {
	const settings = new Map<string, string[]>();
	let section = "";
	for (const raw of text.split("\n")) {
		const line = raw.trim();
		if (!line || line.startsWith("#")) continue;
		const header = /^\[(\w+)\]$/.exec(line);
		if (header) section = header[1]!;
		else if (section === "Service") {
			const at = line.indexOf("=");
			const key = line.slice(0, at);
			settings.set(key, [...(settings.get(key) ?? []), line.slice(at + 1)]);
		}
	}
	return settings;
}

/** The Containerfile's instructions, continuation lines joined. */
function containerInstructions(text: string): { op: string; args: string }[] {
	const joined = text
		.split("\n")
		.filter((l) => !l.trim().startsWith("#"))
		.join("\n")
		.replace(/\\\n\s*/g, " ");
	return joined
		.split("\n")
		.map((l) => l.trim())
		.filter(Boolean)
		.map((l) => ({ op: l.split(/\s+/, 1)[0]!, args: l.slice(l.split(/\s+/, 1)[0]!.length).trim() }));
}

/** `KEY=value KEY2=value` of an ENV line (values without spaces, as the recipe writes them). */
const envPairs = (args: string) => Object.fromEntries(args.split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));

/** A PATH directory where `checkpoint-bridge-host` is the package's bin, as an install puts it, and the project's Node. */
function installedBin(root: string): string {
	const dir = join(root, "bin");
	mkdirSync(dir, { recursive: true });
	symlinkSync(HOST_BIN, join(dir, "checkpoint-bridge-host"));
	return `${dir}:${dirname(NODE_BIN)}`;
}

/** Runs `argv` with `env` in `cwd`; a `pi -p` in `project` asks, the one-tap link answers; then `signal`. */
async function serveOneQuestion(piEnv: PiEnv, argv: string[], env: NodeJS.ProcessEnv, project: string, signal: NodeJS.Signals, notified: string) {
	const child = spawn(argv[0]!, argv.slice(1), { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
	let stdout = "";
	let stderr = "";
	child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
	child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
	child.on("error", (error) => (stderr += String(error)));
	const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
	try {
		await until(() => /with no screen/.test(stdout) || child.exitCode !== null, `the service's start (${argv.join(" ")})`, 30_000, 20).catch((error: Error) => {
			throw new Error(`${error.message}; stdout: ${stdout}; stderr: ${stderr}`);
		});
		expect(child.exitCode, `stdout: ${stdout}; stderr: ${stderr}`).toBeNull();
		const url = /answer in a browser at (\S+)/.exec(stdout)![1]!;
		expect((await fetch(url)).status).toBe(200);
		// The asker: a pi -p in the project's directory, with the same temp dir (where advertisements are).
		piEnv.writeScript({ main: { ask: { questions: [{ question: "Run the migration?", options: ["now", "later"] }] } } });
		const asking = runPi({ ...piEnv, cwd: project }, [...baseArgs(), "-p", "Migrate."], 90_000);
		const actions = await actionsRecorder(notified).forQuestion("Run the migration?", 90_000);
		const tap = actions.buttons.find((b) => b.label === "later")!.answer;
		expect((await fetch(tap, { method: "POST" })).status).toBe(200);
		expect(envelopesIn((await asking).stdout).map((e) => [e.status, e.answers[0]?.answer])).toEqual([["ok", "later"]]);
		await until(() => /\] ok, answered through the link the notify command sent/.test(stdout), "the settled line", 10_000, 20);
		child.kill(signal);
		expect(await exited).toBe(0);
		return { stdout, stderr };
	} finally {
		child.kill("SIGKILL");
	}
}

describe("the host with no screen as a service, from examples/", () => {
	const envs: PiEnv[] = [];
	afterEach(() => {
		for (const env of envs.splice(0)) env.cleanup();
	});

	it("the systemd user unit: its Environment=, EnvironmentFile= and ExecStart= run as written serve ~/project until KillSignal", async () => {
		const piEnv = createPiEnv();
		envs.push(piEnv);
		const settings = unitSettings(readFileSync(UNIT, "utf8"));
		const home = join(piEnv.root, "home");
		const pct = (value: string) => value.replaceAll("%h", home);
		const port = await freePort();
		const notified = join(piEnv.root, "notified");
		// The EnvironmentFile the unit names, written as a user would.
		const envFile = pct(settings.get("EnvironmentFile")![0]!.replace(/^-/, ""));
		mkdirSync(dirname(envFile), { recursive: true });
		writeFileSync(envFile, `CHECKPOINT_BRIDGE_NOTIFY_COMMAND=${actionsRecorder(notified).command}\n`);
		const env: NodeJS.ProcessEnv = { HOME: home, TMPDIR: piEnv.env.TMPDIR };
		for (const line of settings.get("Environment")!) {
			const [key, ...value] = pct(line).split("=");
			env[key!] = value.join("=");
		}
		for (const line of readFileSync(envFile, "utf8").split("\n").filter(Boolean)) env[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
		env.PATH = `${installedBin(piEnv.root)}:${env.PATH}`;
		// The unit names the machine's one address the phone reaches; here, loopback on a free port.
		expect(env.CHECKPOINT_BRIDGE_WEB).toMatch(/^\d+\.\d+\.\d+\.\d+:8080$/);
		env.CHECKPOINT_BRIDGE_WEB = `127.0.0.1:${port}`;
		const argv = pct(settings.get("ExecStart")![0]!).split(/\s+/);
		expect(argv.slice(0, 2)).toEqual(["/usr/bin/env", "checkpoint-bridge-host"]);
		const project = argv[argv.indexOf("--cwd") + 1]!;
		mkdirSync(project, { recursive: true });
		const signal = settings.get("KillSignal")![0] as NodeJS.Signals;
		await serveOneQuestion(piEnv, argv, env, project, signal, notified);
		expect(readdirSync(join(home, ".local/state/checkpoint-bridge/audit"))).toHaveLength(1);
	});

	it("the Containerfile: its ENV, WORKDIR and CMD run as written, the state volume keeps the audit trail, STOPSIGNAL ends it", async () => {
		const piEnv = createPiEnv();
		envs.push(piEnv);
		const steps = containerInstructions(readFileSync(CONTAINERFILE, "utf8"));
		const last = (op: string) => steps.filter((s) => s.op === op).at(-1)!.args;
		// Volumes and the mounted project as directories of the test's own.
		const mounts: Record<string, string> = { "/work": join(piEnv.root, "work-mount") };
		for (const volume of JSON.parse(last("VOLUME")) as string[]) mounts[volume] = join(piEnv.root, `volume${volume.replaceAll("/", "-")}`);
		for (const dir of Object.values(mounts)) mkdirSync(dir, { recursive: true });
		const mapped = (value: string) => Object.entries(mounts).reduce((text, [from, to]) => text.replace(new RegExp(`^${from}(?=/|$)`), to), value);
		const image = Object.fromEntries(steps.filter((s) => s.op === "ENV").flatMap((s) => Object.entries(envPairs(s.args))));
		expect(image).toMatchObject({ XDG_STATE_HOME: "/state" });
		expect(last("EXPOSE")).toBe("8080");
		const port = await freePort();
		const notified = join(piEnv.root, "notified");
		const env: NodeJS.ProcessEnv = {
			HOME: join(piEnv.root, "home"),
			TMPDIR: piEnv.env.TMPDIR,
			PATH: `${installedBin(piEnv.root)}:/usr/local/bin:/usr/bin:/bin`,
			...Object.fromEntries(Object.entries(image).map(([k, v]) => [k, mapped(v)])),
			// As `--env-file host.env` adds it.
			CHECKPOINT_BRIDGE_NOTIFY_COMMAND: actionsRecorder(notified).command,
		};
		// The CMD's shell line, the mounted project and the published port (a free one here) put where the container has them.
		const [shell, flag, line] = JSON.parse(last("CMD")) as string[];
		expect([shell, flag]).toEqual(["sh", "-c"]);
		expect(line).toContain("exec checkpoint-bridge-host --cwd /work");
		const argv = [shell!, flag!, line!.replaceAll(":8080", `:${port}`).replaceAll(" /work", ` ${mounts["/work"]}`)];
		expect(steps.some((s) => s.op === "RUN" && s.args.includes("bin/checkpoint-bridge-host.mjs /usr/local/bin/checkpoint-bridge-host"))).toBe(true);
		const project = mapped(last("WORKDIR"));
		await serveOneQuestion(piEnv, argv, env, project, last("STOPSIGNAL") as NodeJS.Signals, notified);
		const audit = join(mounts["/state"]!, "checkpoint-bridge/audit");
		expect(existsSync(audit) && readdirSync(audit)).toHaveLength(1);
		const [file] = readdirSync(audit);
		expect(JSON.parse(readFileSync(join(audit, file!), "utf8").trim())).toMatchObject({ status: "ok", answers: [{ answer: "later", place: "notify-link" }] });
	});
});
