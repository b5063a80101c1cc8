/**
 * Opening a connection to a host's endpoint, as far as the point where the host has proven itself:
 * check that the endpoint's files are this user's alone, read the token, connect, send a hello
 * with a fresh nonce, check the host's proof, send the client's own. Nothing but the hello (a
 * nonce and a pid) reaches a listener that has not proven it holds the token, and nothing it says
 * before then reaches the caller as more than a status and a note this side writes. One
 * connection may then carry any number of requests: pool.ts keeps it for later calls.
 */

import net from "node:net";
import { ERROR_CODES, type ErrorFrame, FRAME_VERSION, MAX_FRAME_BYTES } from "../../core/bridge/frames.ts";
import { waitAtMost } from "../../core/shared/wait.ts";
import type { Checked } from "../../model/check.ts";
import { ENDPOINT_ENV, type EndpointAddress } from "./address.ts";
import { type ClientFrame, decodeFrame, encodeFrame, type Frame, HANDSHAKE_MAX_FRAME_BYTES, LineReader } from "./frames.ts";
import { endpointFilesProblem, readPrivateToken } from "./private-files.ts";
import { checkProof, freshNonce, proofOf } from "./proof.ts";

/** Default of ConnectOptions.connectTimeoutMs. */
const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
/** The first pause (ms, jittered) before trying again after `busy`, EAGAIN, EPIPE or ECONNRESET, grown with each try up to MAX_RETRY_PAUSE_MS. */
const RETRY_PAUSE_MS = 10;
const MAX_RETRY_PAUSE_MS = 100;

/** How connectToHost connects, and where the proven host's frames go. */
export interface ConnectOptions {
	/** Give up after this long without the host's proof (connecting included): `no-host`. @default DEFAULT_CONNECT_TIMEOUT_MS (3000): room for a few tries at a flooded host */
	connectTimeoutMs?: number;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
	/** Abandons the attempt: the socket is destroyed and the result is `no-host`. */
	signal?: AbortSignal;
	/** Every frame from the proven host, in order (checked, but any type: a host sending client frames is the caller's to refuse). */
	onFrame: (frame: Frame) => void;
	/** The proven host broke the wire (a frame that does not check out): the connection is closed after this. */
	onFault: (note: string) => void;
	/** The connection closed after the host had proven itself (not after `close()`). */
	onClose: () => void;
}

/** A connection to a host that has proven itself. */
export interface HostConnection {
	/** Writes a frame, or a line already encoded with encodeFrame, if the connection is still open. */
	send(frame: ClientFrame | string): void;
	/** Whether the open connection keeps the process alive (it does once proven); an idle pooled one does not. */
	keepAlive(alive: boolean): void;
	/** Ends the connection, after `last` if given; onClose is not called for it. */
	close(last?: ClientFrame): void;
}

/** A connection to a proven host, or the status and note the caller settles with. */
export type Connected = Checked<{ connection: HostConnection }, { status: "no-host" | "error"; note: string }>;

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));

/** Connects to the endpoint at `address`; resolves once its host has proven itself, or with why not. Never rejects. */
export async function connectToHost(address: EndpointAddress, options: ConnectOptions): Promise<Connected> {
	const { socketPath, tokenPath } = address;
	const gone = (problem: string): Connected => ({
		ok: false,
		status: "no-host",
		note: `No host answers at ${socketPath} (${problem}): the host process advertised in ${ENDPOINT_ENV} is gone.`,
	});
	const distrusted = (problem: string): Connected => ({
		ok: false,
		status: "no-host",
		note: `The endpoint at ${socketPath} is not trusted: ${problem}. Nothing was asked there; the host process advertised in ${ENDPOINT_ENV} is gone or its endpoint was replaced.`,
	});

	const files = await endpointFilesProblem(socketPath);
	if (files) return files.missing ? gone(files.problem) : distrusted(files.problem);
	const read = await readPrivateToken(tokenPath);
	if (!read.ok) return read.missing ? gone(read.problem) : distrusted(read.problem);
	const { token } = read;
	if (options.signal?.aborted) return gone("the call ended before it connected");

	const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
	const deadline = Date.now() + timeoutMs;
	// A host under a flood of connections may drop this one to make room (busy, or EPIPE/ECONNRESET
	// when it did so before this side's hello was written) or have its backlog full (EAGAIN): all
	// mean "again shortly", which is done while the connect timeout allows. A host that is gone
	// answers ENOENT or ECONNREFUSED on the next try.
	for (let attempt = 1; ; attempt++) {
		const result = await attemptHandshake(address, token, Math.max(0, deadline - Date.now()), options, gone, distrusted);
		if (!("retry" in result)) return result;
		const pause = Math.min(RETRY_PAUSE_MS * attempt, MAX_RETRY_PAUSE_MS) * (0.5 + Math.random());
		if (Date.now() + pause >= deadline) return gone(`${result.retry} on every try within ${timeoutMs} ms: the host is flooded with connections`);
		await waitAtMost({ ms: pause, elapsed: () => undefined, signal: options.signal }, () => undefined);
		if (options.signal?.aborted) return gone("the call ended before the host proved itself");
	}
}

/** Socket errors before the proof that mean the host dropped or could not take this connection yet. */
const RETRY_ERRORS = new Set(["EAGAIN", "EPIPE", "ECONNRESET"]);

/** The host is there but could not take this connection now: try again. */
type Retry = { retry: string };

/** One connection and handshake, within `timeoutMs`. */
function attemptHandshake(
	address: EndpointAddress,
	token: string,
	timeoutMs: number,
	options: ConnectOptions,
	gone: (problem: string) => Connected,
	distrusted: (problem: string) => Connected,
): Promise<Connected | Retry> {
	const { socketPath, tokenPath } = address;
	let failure: string | undefined;
	const bound = {
		ms: timeoutMs,
		elapsed: () => gone(failure ?? `no proof from the host within ${timeoutMs} ms`),
		signal: options.signal,
		aborted: () => gone("the call ended before the host proved itself"),
	};
	return waitAtMost<Connected | Retry>(bound, (settle) => {
		const clientNonce = freshNonce();
		const reader = new LineReader(HANDSHAKE_MAX_FRAME_BYTES);
		const socket = net.createConnection(socketPath);
		let state: "handshake" | "proven" | "done" = "handshake";

		const connection: HostConnection = {
			send(frame) {
				if (state === "proven" && socket.writable) socket.write(typeof frame === "string" ? frame : encodeFrame(frame));
			},
			keepAlive(alive) {
				if (alive) socket.ref();
				else socket.unref();
			},
			close(last) {
				if (state === "done") return;
				state = "done";
				const destroy = () => socket.destroy();
				if (last && socket.writable) socket.end(encodeFrame(last), destroy);
				else socket.end(destroy);
			},
		};

		/** A frame before the host's proof: a welcome is checked, anything else ends the attempt. */
		const onHandshakeFrame = (frame: Frame) => {
			if (frame.type === "welcome") {
				if (!checkProof(frame.proof, token, "server", clientNonce, frame.nonce))
					return settle(distrusted(`it could not prove it holds the token in ${tokenPath}`));
				socket.write(encodeFrame({ type: "auth", v: FRAME_VERSION.endpoint, proof: proofOf(token, "client", clientNonce, frame.nonce) }));
				reader.maxBytes = MAX_FRAME_BYTES;
				return settle({ ok: true, connection });
			}
			if (frame.type === "error") return settle(refusedBeforeProof(frame));
			settle(distrusted(`it sent a ${frame.type} frame before proving itself`));
		};
		/** A version mismatch is the one thing an unproven endpoint may report as more than `no-host`; the note is this side's. */
		const otherVersion = (v: unknown): Connected => ({
			ok: false,
			status: "error",
			note: `The endpoint at ${socketPath} speaks ${Number.isSafeInteger(v) ? `checkpoint-bridge wire v${String(v)}` : "another checkpoint-bridge wire version"}; this process speaks v${FRAME_VERSION.endpoint}. Run the same version of checkpoint-bridge on both sides; nothing was asked.`,
		});
		/** What an unproven endpoint's error frame may tell the caller: its code and version, in this side's words. */
		const refusedBeforeProof = (frame: ErrorFrame): Connected | Retry => {
			if (frame.code === "bad-version") return otherVersion(frame.v);
			if (frame.code === "busy") return { retry: "busy" };
			const code = ERROR_CODES.includes(frame.code) ? frame.code : "an unknown code";
			return gone(`it refused the connection before proving itself (${code})`);
		};

		socket.on("error", (error) => (failure ??= errnoOf(error)));
		socket.on("close", () => {
			if (state === "handshake")
				settle(failure !== undefined && RETRY_ERRORS.has(failure) ? { retry: failure } : gone(failure ?? "it closed the connection before proving itself"));
			else if (state === "proven") {
				state = "done";
				options.onClose();
			}
		});
		socket.on("data", (chunk: Buffer) => {
			for (const line of reader.push(chunk)) {
				if (state === "done") return;
				const proven = state === "proven";
				if (line === "too-large") {
					if (!proven) return settle(distrusted("it sent an oversized frame before proving itself"));
					options.onFault("The host sent a frame larger than the limit.");
					return connection.close();
				}
				const checked = decodeFrame(line);
				// A version mismatch is reported through an error frame, which is read whatever its version.
				if (!checked.ok) {
					if (!proven) return settle(checked.code === "bad-version" ? otherVersion(undefined) : distrusted("it sent a bad frame before proving itself"));
					options.onFault(`The host sent a bad frame (${checked.code}): ${checked.message}`);
					return connection.close();
				}
				if (proven) options.onFrame(checked.frame);
				else onHandshakeFrame(checked.frame);
			}
		});
		socket.write(encodeFrame({ type: "hello", v: FRAME_VERSION.endpoint, nonce: clientNonce, pid: options.pid ?? process.pid }));
		return (result) => {
			state = "ok" in result && result.ok ? "proven" : "done";
			if (state === "done") socket.destroy();
		};
	});
}
