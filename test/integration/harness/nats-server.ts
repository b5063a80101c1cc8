/**
 * A real nats-server per test (Debian's package, installed by .ci/run): on a free loopback port read
 * from its ports file, optionally with a token or a user, restartable on the same port, or three of
 * them routed into a cluster.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FRAME_VERSION } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { type NatsConfig, readNatsConfig } from "../../../extensions/checkpoint-bridge/transports/nats/config.ts";
import { openssl, selfSigned } from "./certificates.ts";

/** Whether nats-server is installed; tests that need it are skipped with this reason otherwise. */
export const NATS_SERVER_MISSING =
	spawnSync("nats-server", ["--version"]).status === 0 ? undefined : "nats-server is not installed (apt-get install -y nats-server)";

export interface NatsServerOptions {
	/** `--auth <token>`. */
	token?: string;
	/** `--user`/`--pass`. */
	user?: { name: string; pass: string };
	/** A fixed client port (a restart reuses the first one). @default a free one */
	port?: number;
	/** Extra arguments (cluster options). */
	args?: string[];
	/** The monitoring port (a restart reuses the first one). @default a free one */
	monitorPort?: number;
	/** Serve TLS with this certificate and key (PEM files). */
	tls?: { cert: string; key: string };
}

export interface NatsServer {
	/** `nats://127.0.0.1:<port>` */
	url: string;
	port: number;
	process: ChildProcess;
	/** SIGKILL, and waits for the exit. */
	kill(): Promise<void>;
	/** How many client connections whose name starts with `prefix` the server has now (its monitoring endpoint's /connz). */
	clientsNamed(prefix: string): Promise<number>;
	/** Kills it and starts it again on the same port (and options), after `downMs`. */
	restart(downMs?: number): Promise<NatsServer>;
	cleanup(): Promise<void>;
}

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
	});
}

const exited = (child: ChildProcess) =>
	new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

/** A port picked free can be taken by another test's process before nats-server binds it. */
const PORT_TAKEN = /address already in use/;
/** Tries with fresh ports when the ones picked were taken meanwhile. */
const PORT_ATTEMPTS = 3;

/**
 * Starts nats-server and resolves once its ports file names the client port. Ports it picked itself
 * that another process took before the server bound them are picked again.
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
	const own = options.port === undefined && options.monitorPort === undefined;
	for (let attempt = 1; ; attempt++) {
		try {
			return await startOnce(options);
		} catch (error) {
			if (!own || attempt >= PORT_ATTEMPTS || !PORT_TAKEN.test(String(error))) throw error;
		}
	}
}

async function startOnce(options: NatsServerOptions): Promise<NatsServer> {
	const dir = mkdtempSync(join(tmpdir(), "cb-nats-"));
	const monitorPort = options.monitorPort ?? (await freePort());
	const args = ["-a", "127.0.0.1", "-p", String(options.port ?? -1), "-m", String(monitorPort), "--ports_file_dir", dir, ...(options.args ?? [])];
	if (options.token) args.push("--auth", options.token);
	if (options.user) args.push("--user", options.user.name, "--pass", options.user.pass);
	if (options.tls) args.push("--tls", "--tlscert", options.tls.cert, "--tlskey", options.tls.key);
	const child = spawn("nats-server", args, { stdio: ["ignore", "ignore", "pipe"] });
	let log = "";
	child.stderr!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
	const deadline = Date.now() + 10_000;
	let port = 0;
	while (port === 0) {
		if (child.exitCode !== null) {
			rmSync(dir, { recursive: true, force: true });
			throw new Error(`nats-server exited: ${log}`);
		}
		if (Date.now() > deadline) throw new Error(`nats-server did not report its port within 10 s: ${log}`);
		const file = readdirSync(dir).find((name) => name.endsWith(".ports"));
		if (file) {
			try {
				const ports = JSON.parse(readFileSync(join(dir, file), "utf8")) as { nats: string[] };
				port = Number(new URL(ports.nats[0]!).port);
			} catch {
				// half written
			}
		}
		if (port === 0) await new Promise((r) => setTimeout(r, 20));
	}
	const server: NatsServer = {
		url: `nats://127.0.0.1:${port}`,
		port,
		process: child,
		async kill() {
			child.kill("SIGKILL");
			await exited(child);
		},
		async clientsNamed(prefix) {
			const response = await fetch(`http://127.0.0.1:${monitorPort}/connz?limit=1000`);
			const connz = (await response.json()) as { connections?: { name?: string }[] };
			return (connz.connections ?? []).filter((c) => c.name?.startsWith(prefix)).length;
		},
		async restart(downMs = 0) {
			await server.kill();
			await new Promise((r) => setTimeout(r, downMs));
			rmSync(dir, { recursive: true, force: true });
			return startNatsServer({ ...options, port, monitorPort });
		},
		async cleanup() {
			await server.kill();
			rmSync(dir, { recursive: true, force: true });
		},
	};
	return server;
}

/** Three servers routed into one cluster (each knows the other two); route ports taken meanwhile are picked again. */
export async function startNatsCluster(): Promise<NatsServer[]> {
	for (let attempt = 1; ; attempt++) {
		const routePorts = [await freePort(), await freePort(), await freePort()];
		const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(",");
		const started = await Promise.allSettled(
			routePorts.map((p) => startNatsServer({ args: ["--cluster_name", "cpb", "--cluster", `nats://127.0.0.1:${p}`, "--routes", routes] })),
		);
		const members = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
		const failed = started.find((s) => s.status === "rejected");
		if (!failed) return members;
		for (const member of members) await member.cleanup();
		if (attempt >= PORT_ATTEMPTS || !PORT_TAKEN.test(String(failed.reason))) throw failed.reason;
	}
}

/** Resolves once a host answers for `room` as seen from `url` (a cluster's routes carry interest with a delay). */
export async function roomServedAt(url: string, room = "default", timeoutMs = 15_000): Promise<void> {
	const { connect } = await import("@nats-io/transport-node");
	const nc = await connect({ servers: url });
	const deadline = Date.now() + timeoutMs;
	try {
		for (;;) {
			try {
				await nc.request(`cpb.${room}.host`, new TextEncoder().encode(JSON.stringify({ type: "host", v: FRAME_VERSION.nats, host: "probe" })), {
					timeout: 500,
				});
				return;
			} catch (error) {
				if (Date.now() > deadline) throw new Error(`room ${room} not served as seen from ${url} within ${timeoutMs} ms: ${String(error)}`);
				await new Promise((r) => setTimeout(r, 100));
			}
		}
	} finally {
		await nc.close();
	}
}

/** A throwaway CA and a server certificate it signed for 127.0.0.1, in `dir` (openssl). */
export function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
	const file = (name: string) => join(dir, name);
	selfSigned(dir, "ca", "/CN=checkpoint-bridge test CA");
	openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", file("server.key"), "-out", file("server.csr"));
	writeFileSync(file("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
	openssl(
		"x509",
		"-req",
		"-in",
		file("server.csr"),
		"-CA",
		file("ca.pem"),
		"-CAkey",
		file("ca.key"),
		"-CAcreateserial",
		"-days",
		"1",
		"-extfile",
		file("san.ext"),
		"-out",
		file("server.pem"),
	);
	return { ca: file("ca.pem"), cert: file("server.pem"), key: file("server.key") };
}

/** What `operatorSetup` wrote: the server's configuration file and users' creds files. */
export interface OperatorSetup {
	/** Pass as `args: ["-c", config]`. */
	config: string;
	/** A creds file for a new user of `account` (one of those set up). */
	creds(account: string): Promise<string>;
	/** A creds file for a user of an account the server does not know (signed by a stranger's key). */
	strangerCreds(): Promise<string>;
}

/** An account's limits left open (an account JWT without them allows no connection at all). */
const UNLIMITED = { conn: -1, subs: -1, data: -1, payload: -1, leaf: -1, imports: -1, exports: -1, wildcards: true };

/**
 * Operator (decentralised JWT) auth, as `nsc` would set it up: an operator, the named accounts
 * preloaded into the server's memory resolver (each its own subject space), users with their own keys.
 */
export async function operatorSetup(dir: string, accountNames: string[] = ["team"]): Promise<OperatorSetup> {
	const jwt = await import("@nats-io/jwt");
	const operator = jwt.createOperator();
	const accounts = new Map(accountNames.map((name) => [name, jwt.createAccount()]));
	const operatorJwt = await jwt.encodeOperator("checkpoint-bridge-test", operator);
	const preload: string[] = [];
	for (const [name, key] of accounts)
		preload.push(`  ${key.getPublicKey()}: ${await jwt.encodeAccount(name, key, { limits: UNLIMITED }, { signer: operator })}`);
	const config = join(dir, "operator.conf");
	writeFileSync(config, `operator: ${operatorJwt}\nresolver: MEMORY\nresolver_preload: {\n${preload.join("\n")}\n}\n`);
	let users = 0;
	const userCreds = async (issuer: ReturnType<typeof jwt.createAccount>) => {
		const user = jwt.createUser();
		const name = `user-${++users}`;
		const file = join(dir, `${name}.creds`);
		writeFileSync(file, jwt.fmtCreds(await jwt.encodeUser(name, user, issuer), user), { mode: 0o600 });
		return file;
	};
	return {
		config,
		creds: (account) => {
			const key = accounts.get(account);
			if (!key) throw new Error(`no account ${account} in this setup`);
			return userCreds(key);
		},
		strangerCreds: () => userCreds(jwt.createAccount()),
	};
}

/** The NATS configuration `env` names; throws when the test set it up wrong. */
export function natsConfigOf(env: NodeJS.ProcessEnv): NatsConfig {
	const result = readNatsConfig(env);
	if (result.kind !== "ok") throw new Error(`bad test configuration: ${JSON.stringify(result)}`);
	return result.config;
}
