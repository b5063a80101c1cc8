/**
 * The host process's local endpoint: a Unix domain socket in a private directory (0700) with a
 * random token in a 0600 file beside it. A request from another process is put on the
 * process-global bus exactly as a local asker puts its own, so it joins the one queue of
 * whichever session holds the host role (a replacement host after /new or /reload included),
 * and its replies are read from its `reply:<id>` channel and written back to the socket.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { promises as fs, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { nanoid } from "nanoid";
import { MAX_TIMEOUT_MS } from "../../core/config.ts";
import type { Answer, Status } from "../../tool/envelope.ts";
import { askerIdentity } from "../../core/identity.ts";
import { PROTOCOL_VERSION, replyChannel, type AskerIdentity, type RelayReply } from "../../core/protocol.ts";
import type { SharedHandle } from "../../core/shared-handle.ts";
import { addressOf, advertise, SOCKET_NAME, type EndpointAddress } from "./address.ts";
import { decodeFrame, encodeFrame, errorFrame, LineReader, MAX_FRAME_BYTES, type ErrorCode, type Frame, type RequestFrame } from "../wire.ts";

export interface EndpointOptions {
	/** The process's shared handle: its bus reaches the host, its claim says whether there is one. */
	handle: SharedHandle;
	/**
	 * The private directory to serve in: created 0700 when missing; when it exists it must be a
	 * directory of this user that nobody else can enter. Reusing one keeps the socket path stable
	 * for processes spawned earlier. @default a fresh directory under os.tmpdir()
	 */
	dir?: string;
	/** Where to advertise the endpoint while it is open (pass process.env); restored on close. */
	env?: NodeJS.ProcessEnv;
	/** @default MAX_FRAME_BYTES */
	maxFrameBytes?: number;
	/** A connection that has not said hello by then is closed. @default 5000 */
	helloTimeoutMs?: number;
}

export interface LocalEndpoint {
	/** The socket's path: the value of CHECKPOINT_BRIDGE_ENDPOINT. */
	readonly endpoint: string;
	readonly address: EndpointAddress;
	/** Connections open now (for tests and diagnostics). */
	readonly connectionCount: number;
	/**
	 * Stops serving: every remote request still held settles with `no-host` and `note` and is
	 * dropped from the host's queue, connections close, the socket, the token and a directory
	 * this endpoint created are removed, and the environment variable is restored.
	 */
	close(note?: string): Promise<void>;
}

const DEFAULT_CLOSE_NOTE = "The host stopped serving other processes before the questions were answered.";


/** How long a refused connection is drained before it is destroyed, if the client does not close it first. @default 1000 */
export const REFUSAL_LINGER_MS = 1_000;
/** How a remote asker is shown: its own label, marked with the process it asks from. */
export function remoteAsker(asker: AskerIdentity, pid: number): AskerIdentity {
	const own = askerIdentity(asker.label, asker.sessionId);
	// A remote asker is never the host's own model, so it always gets an arrival receipt.
	return { label: `${own.label} (pid ${pid})`, sessionId: `pid ${pid}/${asker.sessionId}` };
}

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
	const stat = await fs.lstat(dir);
	if (!stat.isDirectory()) throw new Error(`${dir} exists and is not a directory.`);
	if (typeof process.getuid === "function" && stat.uid !== process.getuid()) throw new Error(`${dir} belongs to another user.`);
	if ((stat.mode & 0o077) !== 0) throw new Error(`${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); it must be 0700.`);
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

function sameToken(given: string, expected: Buffer): boolean {
	const bytes = Buffer.from(given, "utf8");
	return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

interface Forwarded {
	/** The id the request has in the host: never the client's, so no client can address another's replies. */
	hostId: string;
	listener: (reply: RelayReply) => void;
	answers: Answer[];
}

interface ConnectionOptions {
	handle: SharedHandle;
	token: Buffer;
	maxFrameBytes: number;
	helloTimeoutMs: number;
}

/** One client connection: hello first, then any number of requests and cancels. */
class Connection {
	#state: "hello" | "ready" | "closed" = "hello";
	#pid = 0;
	/** This connection's origin on the bus: answers are shared only within one origin (ADR-0003). */
	readonly #origin = `local:${nanoid()}`;
	readonly #requests = new Map<string, Forwarded>();
	readonly #reader: LineReader;
	readonly #helloTimer: ReturnType<typeof setTimeout>;

	readonly socket: net.Socket;
	readonly options: ConnectionOptions;

	constructor(socket: net.Socket, options: ConnectionOptions) {
		this.socket = socket;
		this.options = options;
		this.#reader = new LineReader(options.maxFrameBytes);
		this.#helloTimer = setTimeout(() => this.refuse("hello-timeout", "No hello frame arrived in time."), options.helloTimeoutMs);
		this.#helloTimer.unref();
		socket.on("data", (chunk: Buffer) => this.#onData(chunk));
		// An error is always followed by close, which is where the cleanup happens.
		socket.on("error", () => {});
		socket.on("close", () => this.#onClose());
	}

	/** Sends an error frame, drops this connection's requests, and closes it. Nothing else is touched. */
	refuse(code: ErrorCode, message: string): void {
		if (this.#state === "closed") return;
		this.#state = "closed";
		clearTimeout(this.#helloTimer);
		this.#cancelAll();
		// Half-close and keep draining what the client already sent: destroying at once would answer
		// its in-flight frames with a reset, and the client could lose the error frame that says why.
		this.socket.end(encodeFrame(errorFrame(code, message)));
		const linger = setTimeout(() => this.socket.destroy(), REFUSAL_LINGER_MS);
		linger.unref();
		this.socket.once("close", () => clearTimeout(linger));
	}

	/** The endpoint is closing: every open request settles with no-host, then the connection ends. */
	shutdown(note: string): void {
		if (this.#state === "closed") return;
		this.#state = "closed";
		clearTimeout(this.#helloTimer);
		for (const [clientId, forwarded] of this.#requests) this.#answer(clientId, "no-host", note, forwarded.answers);
		this.#cancelAll();
		this.socket.end(() => this.socket.destroy());
	}

	#closed(): boolean {
		return this.#state === "closed";
	}

	#onData(chunk: Buffer): void {
		if (this.#closed()) return;
		const lines = this.#reader.push(chunk);
		if (lines === "too-large") {
			this.refuse("too-large", `A frame is longer than ${this.options.maxFrameBytes} bytes.`);
			return;
		}
		for (const line of lines) {
			// A refused frame closes the connection: nothing after it is read.
			if (this.#closed()) return;
			this.#onLine(line);
		}
	}

	#onLine(line: string): void {
		const checked = decodeFrame(line);
		if (!checked.ok) return this.refuse(checked.code, checked.message);
		const frame: Frame = checked.frame;
		if (this.#state === "hello") {
			if (frame.type !== "hello") return this.refuse("unexpected", `The first frame must be hello, not ${frame.type}.`);
			if (!sameToken(frame.token, this.options.token))
				return this.refuse("bad-token", "The token does not match this endpoint's; it is the content of the token file beside the socket.");
			clearTimeout(this.#helloTimer);
			this.#pid = frame.pid;
			this.#state = "ready";
			return;
		}
		switch (frame.type) {
			case "request":
				return this.#forward(frame);
			case "cancel": {
				const forwarded = this.#requests.get(frame.id);
				if (!forwarded) return; // already settled: the cancel crossed the result
				this.#drop(frame.id, forwarded);
				this.options.handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: forwarded.hostId, reason: frame.reason });
				return;
			}
			default:
				return this.refuse("unexpected", `A client does not send ${frame.type} frames${frame.type === "hello" ? " twice" : ""}.`);
		}
	}

	#forward(frame: RequestFrame): void {
		if (this.#requests.has(frame.id)) return this.refuse("unexpected", `Request id ${frame.id} is already open on this connection.`);
		const { bus } = this.options.handle;
		const clientId = frame.id;
		const claim = this.options.handle.host();
		// The same answers a local asker gets when there is no host, or one of another version.
		if (!claim) return this.#answer(clientId, "no-host", "No session with a UI holds the host role in the host process (it is between sessions, or it has none).");
		if (claim.protocol !== PROTOCOL_VERSION)
			return this.#answer(clientId, "error", `The host speaks checkpoint-bridge protocol v${claim.protocol}; its endpoint speaks v${PROTOCOL_VERSION}.`);
		const forwarded: Forwarded = {
			hostId: nanoid(),
			answers: [],
			listener: (reply) => {
				// Only what the host role sent goes back to the remote asker.
				if (!this.options.handle.isFromHost(reply, forwarded.hostId)) return;
				forwarded.answers = reply.answers;
				if (reply.kind === "result") {
					this.#drop(clientId, forwarded);
					this.#send({ ...reply, type: "result", id: clientId });
				} else if (reply.kind === "progress") this.#send({ ...reply, type: "progress", id: clientId });
			},
		};
		this.#requests.set(clientId, forwarded);
		// Listen before asking: the host may answer at once (a malformed or expired request).
		bus.on(replyChannel(forwarded.hostId), forwarded.listener);
		const now = Date.now();
		const delivered = bus.emit("request", {
			v: frame.v,
			id: forwarded.hostId,
			asker: remoteAsker(frame.asker, this.#pid),
			questions: frame.questions,
			// Clamped as a local call's budgets are, so a remote request cannot hold the queue longer than a local one could.
			deadline: Math.min(frame.deadline, now + MAX_TIMEOUT_MS),
			dialogTimeoutMs: Math.min(frame.dialogTimeoutMs, MAX_TIMEOUT_MS),
			createdAt: frame.createdAt,
			// Set here, never taken from the frame: the asker cannot claim another connection's origin.
			origin: this.#origin,
		});
		if (!delivered && this.#requests.get(clientId) === forwarded) {
			this.#drop(clientId, forwarded);
			this.#answer(clientId, "no-host", "The host role is claimed in the host process but nothing is listening for questions.");
		}
	}

	/** A result the endpoint gives itself, without the host. */
	#answer(clientId: string, status: Status, note: string, answers: Answer[] = []): void {
		this.#send({ type: "result", v: PROTOCOL_VERSION, id: clientId, kind: "result", status, answers, note });
	}

	#drop(clientId: string, forwarded: Forwarded): void {
		this.options.handle.bus.off(replyChannel(forwarded.hostId), forwarded.listener);
		this.#requests.delete(clientId);
	}

	/** Stops forwarding and takes every open request off the host, closing its dialog. */
	#cancelAll(): void {
		for (const [clientId, forwarded] of [...this.#requests]) {
			this.#drop(clientId, forwarded);
			this.options.handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: forwarded.hostId, reason: "cancelled" });
		}
	}

	#send(frame: Frame): void {
		if (!this.socket.destroyed && this.socket.writable) this.socket.write(encodeFrame(frame));
	}

	#onClose(): void {
		this.#state = "closed";
		clearTimeout(this.#helloTimer);
		// The asker's process ended or dropped the connection: its dialogs close and its queued questions go.
		this.#cancelAll();
	}
}

/** Starts serving the host's queue to other processes of this user. */
export async function startEndpoint(options: EndpointOptions): Promise<LocalEndpoint> {
	const { handle, env } = options;
	let dir: string;
	let created: boolean;
	if (options.dir === undefined) {
		// mkdtemp makes the directory 0700; the chmod only guards against an odd umask.
		dir = await fs.mkdtemp(path.join(os.tmpdir(), "checkpoint-bridge-"));
		await fs.chmod(dir, 0o700);
		created = true;
	} else {
		dir = path.resolve(options.dir);
		created = await preparePrivateDir(dir);
	}
	const address = addressOf(path.join(dir, SOCKET_NAME));
	const token = randomBytes(32).toString("base64url");
	const connections = new Set<Connection>();
	const server = net.createServer();
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
		if (created) await fs.rm(dir, { recursive: true, force: true });
		throw error;
	}

	const connectionOptions = {
		handle,
		token: Buffer.from(token, "utf8"),
		maxFrameBytes: options.maxFrameBytes ?? MAX_FRAME_BYTES,
		helloTimeoutMs: options.helloTimeoutMs ?? 5_000,
	};
	server.on("connection", (socket) => {
		// Neither the endpoint nor a connected asker keeps the host process alive; when it exits, askers see the close.
		socket.unref();
		const connection = new Connection(socket, connectionOptions);
		connections.add(connection);
		socket.once("close", () => connections.delete(connection));
	});
	// A failing accept must not take the host session down.
	server.on("error", () => {});
	server.unref();
	const unadvertise = env ? advertise(env, address.socketPath) : () => {};
	// A process that exits without closing still takes its socket and token with it.
	const removeOnExit = () => {
		rmSync(address.socketPath, { force: true });
		rmSync(address.tokenPath, { force: true });
		if (created) rmSync(dir, { recursive: true, force: true });
	};
	process.once("exit", removeOnExit);

	let closing: Promise<void> | undefined;
	return {
		endpoint: address.socketPath,
		address,
		get connectionCount() {
			return connections.size;
		},
		close(note = DEFAULT_CLOSE_NOTE) {
			// Everything that stops new work happens now, synchronously; only the clean-up is awaited.
			closing ??= (async () => {
				unadvertise();
				process.off("exit", removeOnExit);
				const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
				for (const connection of connections) connection.shutdown(note);
				await stopped;
				await fs.rm(address.socketPath, { force: true });
				await fs.rm(address.tokenPath, { force: true });
				if (created) await fs.rm(dir, { recursive: true, force: true });
			})();
			return closing;
		},
	};
}
