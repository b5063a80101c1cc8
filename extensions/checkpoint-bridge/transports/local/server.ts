/**
 * The host process's local endpoint: a Unix domain socket in a private directory (0700) with a
 * random token in a 0600 file beside it. A request from another process is put on the
 * process-global bus exactly as a local asker puts its own (connection.ts), so it joins the one
 * queue of whichever session holds the host role (a replacement host after /new or /reload
 * included). Connections that have not done the handshake are few and short-lived: a flood of
 * them holds a bounded number of descriptors and a few KiB each.
 */
import { randomBytes } from "node:crypto";
import { promises as fs, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { nanoid } from "nanoid";
import { Bridge } from "../../core/bridge/bridge.ts";
import { MAX_FRAME_BYTES } from "../../core/bridge/frames.ts";
import type { SharedHandle } from "../../core/shared/shared-handle.ts";
import { addressOf, advertise, type EndpointAddress, SOCKET_NAME } from "./address.ts";
import { type Advertisement, advertiseEndpoint, ENDPOINT_DIR_PREFIX } from "./advertisement.ts";
import { Connection } from "./connection.ts";
import { endpointParent, privateDirProblem } from "./private-files.ts";

/** Default of EndpointOptions.helloTimeoutMs. */
const DEFAULT_HELLO_TIMEOUT_MS = 2_000;
/** Default of EndpointOptions.maxUnprovenConnections. */
const DEFAULT_MAX_UNPROVEN_CONNECTIONS = 128;
/** Default of EndpointOptions.maxOpenRequests. */
export const DEFAULT_MAX_OPEN_REQUESTS = 128;
/** Requests of one connection that ended `timeout` and may still end late, kept for their late frame; the oldest go first. @default 64 */
const MAX_LATE_PER_CONNECTION = 64;

export interface EndpointOptions {
	/** The process's shared handle: its bus reaches the host, its claim says whether there is one. */
	handle: SharedHandle;
	/**
	 * The private directory to serve in: created 0700 when missing; when it exists it must be a
	 * directory of this user that nobody else can enter. Reusing one keeps the socket path stable
	 * for processes spawned earlier. @default a fresh directory under $XDG_RUNTIME_DIR when that is
	 * a directory private to this user, else under os.tmpdir()
	 */
	dir?: string;
	/** Where to advertise the endpoint while it is open (pass process.env); restored on close. */
	env?: NodeJS.ProcessEnv;
	/**
	 * Also advertise the endpoint for this working directory in the user's private place
	 * (advertisement.ts), so a process of this user there finds it without the variable; withdrawn on
	 * close. @default none
	 */
	advertiseFor?: string;
	/** The host has no screen (ADR-0035): its advertisement for the directory stands by while a host with one holds it. @default false */
	screenless?: boolean;
	/** Longest frame once a connection's handshake is done (before it: HANDSHAKE_MAX_FRAME_BYTES). @default MAX_FRAME_BYTES */
	maxFrameBytes?: number;
	/** A connection that has not done the handshake (hello and auth) by then gets `hello-timeout` and is closed. @default DEFAULT_HELLO_TIMEOUT_MS (2000) */
	helloTimeoutMs?: number;
	/**
	 * Most connections awaiting the handshake at once (refused ones not yet closed included). A
	 * further one makes room by closing the oldest (`busy`): refused ones first, then those that sent
	 * no hello, then those awaiting the client's proof. Node gives no peer credentials on a Unix
	 * socket, so the limit is for all peers together. @default DEFAULT_MAX_UNPROVEN_CONNECTIONS (128)
	 */
	maxUnprovenConnections?: number;
	/** Most requests one connection may have open at once; each further one gets an `error` result naming the limit. @default DEFAULT_MAX_OPEN_REQUESTS (128) */
	maxOpenRequests?: number;
	/** How long an end sent to an asker that acks waits for its ack before the host's session takes it (core/bridge/frames.ts). @default ACK_WAIT_MS */
	ackWaitMs?: number;
}

export interface LocalEndpoint {
	/** The socket's path: the value of CHECKPOINT_BRIDGE_ENDPOINT. */
	readonly endpoint: string;
	readonly address: EndpointAddress;
	/** Why the endpoint could not be advertised for its working directory, when it could not (the variable still works). */
	readonly advertProblem: string | undefined;
	/**
	 * Closes: every remote request still open settles with `no-host` and `note` and is
	 * dropped from the host's queue, connections close, the socket, the token and a directory
	 * this endpoint created are removed, and the environment variable is restored.
	 */
	close(note?: string): Promise<void>;
}

const DEFAULT_CLOSE_NOTE = "The host stopped serving other processes before the questions were answered.";

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** Creates `dir` 0700, or checks that an existing one is private to this user. True when created. */
async function preparePrivateDir(dir: string): Promise<boolean> {
	try {
		await fs.mkdir(dir, { mode: 0o700 });
		await fs.chmod(dir, 0o700);
		return true;
	} catch (error) {
		if (errnoOf(error) !== "EEXIST") throw error;
	}
	const problem = privateDirProblem(dir, await fs.lstat(dir));
	if (problem) throw new Error(`${problem}.`);
	return false;
}

/** Removes a socket file left by a host that died; refuses when a live endpoint answers there. */
async function clearStaleSocket(socketPath: string): Promise<void> {
	try {
		await fs.lstat(socketPath);
	} catch {
		return;
	}
	const alive = await new Promise<boolean>((resolve) => {
		const probe = net.createConnection(socketPath);
		probe.once("connect", () => {
			probe.destroy();
			resolve(true);
		});
		probe.once("error", () => resolve(false));
	});
	if (alive) throw new Error(`Another checkpoint-bridge endpoint is serving at ${socketPath}.`);
	await fs.rm(socketPath, { force: true });
}

/** Writes the token as a fresh 0600 file, atomically, so a reader never sees half of it. */
async function writeToken(tokenPath: string, token: string): Promise<void> {
	const staging = `${tokenPath}.${nanoid(8)}`;
	await fs.writeFile(staging, token, { mode: 0o600, flag: "wx" });
	await fs.chmod(staging, 0o600);
	await fs.rename(staging, tokenPath);
}

/** Which unproven connection makes room for a new one: one already refused, else the oldest without a hello, else the oldest. */
function evictionCandidate(unproven: Set<Connection>): Connection | undefined {
	let silent: Connection | undefined;
	let oldest: Connection | undefined;
	for (const connection of unproven) {
		if (connection.stage === "closed") return connection;
		silent ??= connection.stage === "hello" ? connection : undefined;
		oldest ??= connection;
	}
	return silent ?? oldest;
}

/** The endpoint's private directory: a fresh one, or the given one checked; `created` when this endpoint made it (and removes it). */
async function privatePlace(given: string | undefined): Promise<{ dir: string; created: boolean }> {
	if (given !== undefined) {
		const dir = path.resolve(given);
		return { dir, created: await preparePrivateDir(dir) };
	}
	// mkdtemp makes the directory 0700; the chmod only guards against an odd umask.
	const dir = await fs.mkdtemp(path.join(await endpointParent(), ENDPOINT_DIR_PREFIX));
	await fs.chmod(dir, 0o700);
	return { dir, created: true };
}

/** Listens on the socket (0600) with its token beside it; on a failure nothing it made is left behind. */
async function listenPrivately(server: net.Server, address: EndpointAddress, token: string, place: { dir: string; created: boolean }): Promise<void> {
	try {
		await clearStaleSocket(address.socketPath);
		await writeToken(address.tokenPath, token);
		await new Promise<void>((resolve, reject) => {
			server.once("error", reject);
			server.listen(address.socketPath, () => {
				server.off("error", reject);
				resolve();
			});
		});
		await fs.chmod(address.socketPath, 0o600);
	} catch (error) {
		server.close();
		await fs.rm(address.tokenPath, { force: true });
		if (place.created) await fs.rm(place.dir, { recursive: true, force: true });
		throw error;
	}
}

/** What every connection of the endpoint shares: the bridge into the host's queue, the token, the frame and handshake bounds. */
function connectionsShare(handle: SharedHandle, token: string, options: EndpointOptions) {
	const maxOpenRequests = options.maxOpenRequests ?? DEFAULT_MAX_OPEN_REQUESTS;
	return {
		bridge: new Bridge({
			handle,
			transport: "endpoint",
			server: "endpoint",
			caps: {
				perClient: {
					max: maxOpenRequests,
					refusal: (open) =>
						`This connection already has ${open} open requests, the most one connection may have (maxOpenRequests); ask again once one of them has settled.`,
				},
			},
			lateCaps: { perClient: MAX_LATE_PER_CONNECTION },
		}),
		token: Buffer.from(token, "utf8"),
		maxFrameBytes: options.maxFrameBytes ?? MAX_FRAME_BYTES,
		helloTimeoutMs: options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS,
		...(options.ackWaitMs === undefined ? {} : { ackWaitMs: options.ackWaitMs }),
	};
}

/**
 * Takes every connection the server accepts; those that have not proven themselves are `unproven`,
 * oldest first: what a flood of idle or junk connections can hold is bounded by `maxUnproven`.
 */
function acceptConnections(server: net.Server, shared: ReturnType<typeof connectionsShare>, maxUnproven: number) {
	const connections = new Set<Connection>();
	const unproven = new Set<Connection>();
	server.on("connection", (socket) => {
		// Neither the endpoint nor a connected asker keeps the host process alive; when it exits, askers see the close.
		socket.unref();
		if (unproven.size >= maxUnproven) {
			const victim = evictionCandidate(unproven)!;
			unproven.delete(victim);
			victim.evict(`More than ${maxUnproven} connections were awaiting the handshake; this one was the oldest.`);
		}
		const connection: Connection = new Connection(socket, { ...shared, onAuthenticated: () => unproven.delete(connection) });
		connections.add(connection);
		unproven.add(connection);
		socket.once("close", () => {
			connections.delete(connection);
			unproven.delete(connection);
		});
	});
	return connections;
}

/** Advertises the endpoint for `cwd` in the user's private place; what went wrong, when it could not. */
async function advertiseForDir(
	socketPath: string,
	cwd: string | undefined,
	env: NodeJS.ProcessEnv | undefined,
	screenless: boolean,
): Promise<{ advertisement?: Advertisement; problem?: string }> {
	if (cwd === undefined) return {};
	try {
		return { advertisement: await advertiseEndpoint(socketPath, { cwd, screenless, ...(env ? { env } : {}) }) };
	} catch (error) {
		return { problem: error instanceof Error ? error.message : String(error) };
	}
}

/** Starts serving the host's queue to other processes of this user. */
export async function startEndpoint(options: EndpointOptions): Promise<LocalEndpoint> {
	const { handle, env } = options;
	const place = await privatePlace(options.dir);
	const { dir, created } = place;
	const address = addressOf(path.join(dir, SOCKET_NAME));
	const token = randomBytes(32).toString("base64url");
	const server = net.createServer();
	await listenPrivately(server, address, token, place);

	const maxUnproven = Math.max(1, options.maxUnprovenConnections ?? DEFAULT_MAX_UNPROVEN_CONNECTIONS);
	const connections = acceptConnections(server, connectionsShare(handle, token, options), maxUnproven);
	// A failing accept must not take the host session down.
	server.on("error", () => {});
	server.unref();
	const unadvertise = env ? advertise(env, address.socketPath) : () => {};
	const { advertisement, problem: advertProblem } = await advertiseForDir(address.socketPath, options.advertiseFor, env, options.screenless === true);
	// A process that exits without closing still takes its socket, token and advertisement with it.
	const removeOnExit = () => {
		advertisement?.withdraw();
		rmSync(address.socketPath, { force: true });
		rmSync(address.tokenPath, { force: true });
		if (created) rmSync(dir, { recursive: true, force: true });
	};
	process.once("exit", removeOnExit);

	let closing: Promise<void> | undefined;
	return {
		endpoint: address.socketPath,
		address,
		advertProblem,
		close(note = DEFAULT_CLOSE_NOTE) {
			// Everything that ends new work happens now, synchronously; only the clean-up is awaited.
			closing ??= (async () => {
				unadvertise();
				advertisement?.withdraw();
				process.off("exit", removeOnExit);
				const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
				for (const connection of connections) connection.shutdown(note);
				await serverClosed;
				await fs.rm(address.socketPath, { force: true });
				await fs.rm(address.tokenPath, { force: true });
				if (created) await fs.rm(dir, { recursive: true, force: true });
			})();
			return closing;
		},
	};
}
