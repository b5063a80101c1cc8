/**
 * One client connection to the host's endpoint: the handshake (hello, welcome, auth), then any
 * number of requests, cancels and notices, each handed to the endpoint's bridge (core/bridge/bridge.ts),
 * which puts it on the process-global bus as a local asker puts its own; what comes back is written
 * to the socket. Before the handshake is done a frame may be a few KiB at most; after it, MAX_FRAME_BYTES.
 */
import { createHmac } from "node:crypto";
import type net from "node:net";
import { nanoid } from "nanoid";
import type { Bridge } from "../../core/bridge/bridge.ts";
import { ACK_WAIT_MS, type ErrorCode, errorFrame, FRAME_VERSION, type LateFrame, type RequestFrame, type ResultFrame } from "../../core/bridge/frames.ts";
import { type AskerIdentity, markedAsker } from "../../core/shared/identity.ts";
import { waitAtMost } from "../../core/shared/wait.ts";
import { decodeFrame, encodeFrame, type Frame, HANDSHAKE_MAX_FRAME_BYTES, LineReader } from "./frames.ts";
import { checkProof, freshNonce, proofOf } from "./proof.ts";

/** How long a refused connection is drained before it is destroyed, if the client does not close it first. @default 1000 */
const REFUSAL_LINGER_MS = 1_000;

/** How a remote asker is shown: its own label, marked with the process it asks from. */
export function remoteAsker(asker: AskerIdentity, pid: number): AskerIdentity {
	// A remote asker is never the host's own model (its session id is marked), so it always gets an arrival receipt.
	return markedAsker(asker, `pid ${pid}`);
}

/** What every connection of one endpoint shares; the defaults are the endpoint's (server.ts). */
export interface ConnectionOptions {
	/** The endpoint's bridge to the bus, for all its connections together (its caps and its one window of notices). */
	bridge: Bridge;
	/** The endpoint's secret, which both sides prove they hold. */
	token: Buffer;
	/** Longest frame once the handshake is done. */
	maxFrameBytes: number;
	/** The handshake must be done within this long of the accept. */
	helloTimeoutMs: number;
	/** Called once, when the client has proven itself. */
	onAuthenticated: () => void;
	/** How long a frame marked `ack` waits for the client's ack before the host's session takes its end. @default ACK_WAIT_MS */
	ackWaitMs?: number;
}

/** The host's id for a re-sent request: the same for every copy the asker sends, unguessable without the token. */
const resentHostId = (token: Buffer, pid: number, sessionId: string, clientId: string) =>
	createHmac("sha256", token).update(`resent\n${pid}\n${sessionId}\n${clientId}`).digest("base64url").slice(0, 21);

/** Where a connection is: awaiting the hello, awaiting the client's proof, serving, or closed. */
export type ConnectionStage = "hello" | "auth" | "ready" | "closed";

/** One client connection: the handshake first, then any number of requests and cancels. */
export class Connection {
	#stage: ConnectionStage = "hello";
	/** The client has left (its end of the connection closed): told to the bridge once. */
	#left = false;
	#pid = 0;
	/** This connection's origin on the bus: answers are shared only within one origin (ADR-0003). */
	readonly #origin = `local:${nanoid()}`;
	#clientNonce = "";
	#serverNonce = "";
	readonly #reader = new LineReader(HANDSHAKE_MAX_FRAME_BYTES);
	/** Ends the wait for the handshake: it was done, or the connection went first. */
	#handshakeOver!: () => void;
	/** Frames are being gathered for one write at the end of this turn of the event loop. */
	#corked = false;
	/** Frames marked `ack` sent and not yet acked, by the client's request id: each settles once, with whether the client recorded its end. */
	readonly #awaitingAck = new Map<string, (recorded: boolean) => void>();

	readonly socket: net.Socket;
	readonly options: ConnectionOptions;

	constructor(socket: net.Socket, options: ConnectionOptions) {
		this.socket = socket;
		this.options = options;
		// Judged after the event loop's next read of pending input: a host whose loop stalled past the
		// deadline would otherwise refuse a client whose proof was already waiting in the socket.
		const bound = { ms: options.helloTimeoutMs, elapsed: () => "late" as const, unref: true, afterInput: true };
		void waitAtMost<"late" | "over">(bound, (settle) => {
			this.#handshakeOver = () => settle("over");
			return (outcome) => {
				if (outcome === "late" && (this.#stage === "hello" || this.#stage === "auth"))
					this.refuse("hello-timeout", `The handshake was not done within ${options.helloTimeoutMs} ms.`);
			};
		});
		socket.on("data", (chunk: Buffer) => this.#onData(chunk));
		// An error is always followed by close, which is where the cleanup happens.
		socket.on("error", () => {});
		socket.on("close", () => this.#onClose());
		// The client's end of the connection closed: it reads nothing more, though the socket closes only once what is
		// being written has drained. Known gone now, an end that comes meanwhile goes to the host's session, not into the socket.
		socket.on("end", () => this.#onClose());
	}

	get stage(): ConnectionStage {
		return this.#stage;
	}

	/** Sends an error frame, drops this connection's requests, and closes it. Nothing else is touched. */
	refuse(code: ErrorCode, message: string): void {
		if (this.#stage === "closed") return;
		const proven = this.#stage === "ready";
		this.#stage = "closed";
		this.#handshakeOver();
		this.#cancelAll();
		// Half-close and keep draining what a proven client already sent: destroying at once would answer
		// its in-flight frames with a reset, and the client could lose the error frame that says why.
		// An unproven one is not read any further: what it sends (a flood, say) stays in the kernel's buffer.
		this.socket.end(encodeFrame(errorFrame("endpoint", code, message)));
		if (!proven) this.socket.pause();
		const linger = setTimeout(() => this.socket.destroy(), REFUSAL_LINGER_MS);
		linger.unref();
		this.socket.once("close", () => clearTimeout(linger));
	}

	/** Makes room for a newer connection: says why, and frees the descriptor now. */
	evict(message: string): void {
		this.refuse("busy", message);
		this.socket.destroy();
	}

	/** The endpoint is closing: every open request settles with no-host, then the connection ends. */
	shutdown(note: string): void {
		if (this.#stage === "closed") return;
		this.#stage = "closed";
		this.#handshakeOver();
		const { bridge } = this.options;
		for (const open of bridge.openRequests(this.#origin)) this.#send(bridge.result(open.id, "no-host", note, open.answers));
		this.#cancelAll();
		this.socket.end(() => this.socket.destroy());
	}

	#onData(chunk: Buffer): void {
		for (const line of this.#reader.push(chunk)) {
			// A refused frame closes the connection: nothing after it is read.
			if (this.#stage === "closed") return;
			if (line === "too-large")
				return this.refuse(
					"too-large",
					`A frame is longer than ${this.#reader.maxBytes} bytes${this.#stage === "ready" ? "" : " (the limit before the handshake is done)"}.`,
				);
			this.#onLine(line);
		}
	}

	#onLine(line: Buffer): void {
		const checked = decodeFrame(line);
		if (!checked.ok) return this.refuse(checked.code, checked.message);
		const frame: Frame = checked.frame;
		switch (this.#stage) {
			case "hello":
				if (frame.type !== "hello") return this.refuse("unexpected", `The first frame must be hello, not ${frame.type}.`);
				this.#pid = frame.pid;
				this.#clientNonce = frame.nonce;
				this.#serverNonce = freshNonce();
				this.#stage = "auth";
				this.#send({
					type: "welcome",
					v: FRAME_VERSION.endpoint,
					proof: proofOf(this.options.token, "server", this.#clientNonce, this.#serverNonce),
					nonce: this.#serverNonce,
				});
				return;
			case "auth":
				if (frame.type !== "auth") return this.refuse("unexpected", `After the welcome the client sends auth, not ${frame.type}.`);
				if (!checkProof(frame.proof, this.options.token, "client", this.#clientNonce, this.#serverNonce))
					return this.refuse("bad-token", "The proof does not match this endpoint's token; the token is the content of the token file beside the socket.");
				this.#handshakeOver();
				this.#stage = "ready";
				this.#reader.maxBytes = this.options.maxFrameBytes;
				this.options.onAuthenticated();
				return;
		}
		switch (frame.type) {
			case "request":
				return this.#forward(frame);
			case "notice":
				// Past the endpoint's window, dropped (a notice is a courtesy).
				return this.options.bridge.notice(remoteAsker(frame.asker, this.#pid), frame, this.#origin);
			case "ack":
				// An ack of nothing awaited (late, or never asked for) changes nothing.
				return this.#awaitingAck.get(frame.id)?.(frame.recorded);
			case "cancel": {
				const open = this.options.bridge.get(this.#origin, frame.id);
				// Not open: already settled, the cancel crossed the result. The asker gave up: whatever other connection still carries it, the request goes.
				if (open) this.options.bridge.cancel(open, frame.reason);
				return;
			}
			default:
				return this.refuse("unexpected", `A client does not send ${frame.type} frames${frame.type === "hello" || frame.type === "auth" ? " twice" : ""}.`);
		}
	}

	#forward(frame: RequestFrame): void {
		const { bridge, token } = this.options;
		if (bridge.get(this.#origin, frame.id)) return this.refuse("unexpected", `Request id ${frame.id} is already open on this connection.`);
		const resent = frame.resent === true;
		bridge.take(
			{
				client: this.#origin,
				id: frame.id,
				asker: remoteAsker(frame.asker, this.#pid),
				questions: frame.questions,
				deadline: frame.deadline,
				dialogTimeoutMs: frame.dialogTimeoutMs,
				createdAt: frame.createdAt,
				origin: this.#origin,
				// The same id in the host for every copy the asker sends, unguessable without the token.
				...(resent ? { resent, hostId: resentHostId(token, this.#pid, frame.asker.sessionId, frame.id), answers: () => frame.answers ?? [] } : {}),
				...(frame.later ? { later: frame.later } : {}),
				send: (reply) => this.#send(reply),
				// Late frames: recorded by the asker (it acks), or taken by the socket (an older asker); else the host's session gets it.
				...(frame.lateFrames ? { sendLate: (late: LateFrame) => (frame.acks ? this.#sendAcked(late) : this.#send(late)) } : {}),
				...(frame.acks ? { sendAcked: (result: ResultFrame) => this.#sendAcked(result) } : {}),
			},
			undefined,
		);
	}

	/**
	 * Sends a frame carrying an end for the client to record, marked `ack`; resolves with whether the
	 * client acked it recorded. A closed connection, or no ack within the bound, is false. The bound is
	 * judged after the event loop's next read of pending input, as the handshake's is: an ack already
	 * waiting in the socket of a host whose loop stalled still counts.
	 */
	#sendAcked(frame: ResultFrame | LateFrame): Promise<boolean> {
		const { id } = frame;
		// One awaited per id: a second end for it (none is sent today) settles the first as unrecorded.
		this.#awaitingAck.get(id)?.(false);
		if (!this.#send({ ...frame, ack: true })) return Promise.resolve(false);
		const bound = { ms: this.options.ackWaitMs ?? ACK_WAIT_MS, elapsed: () => false, unref: true, afterInput: true };
		return waitAtMost<boolean>(bound, (settle) => {
			this.#awaitingAck.set(id, settle);
			return () => {
				if (this.#awaitingAck.get(id) === settle) this.#awaitingAck.delete(id);
			};
		});
	}

	/** Stops forwarding and takes every open request off the host, closing its dialog (unless another connection still carries it). */
	#cancelAll(): void {
		const { bridge } = this.options;
		// A closing connection takes no late frame, and acks nothing more: the host's session gets those ends.
		bridge.discardLate(this.#origin);
		this.#unacked();
		for (const open of bridge.openRequests(this.#origin)) bridge.release(open);
	}

	/** Writes a frame; false when the socket no longer takes any. */
	#send(frame: Frame): boolean {
		if (this.socket.destroyed || !this.socket.writable) return false;
		// Frames written in one turn of the event loop (a request's queued, shown and result, when the human
		// or the host answers at once) leave in one write: a syscall costs more than the frames' bytes.
		if (!this.#corked) {
			this.#corked = true;
			this.socket.cork();
			setImmediate(this.#uncork);
		}
		this.socket.write(encodeFrame(frame));
		return true;
	}

	readonly #uncork = () => {
		this.#corked = false;
		this.socket.uncork();
	};

	#onClose(): void {
		if (this.#left) return;
		this.#left = true;
		this.#stage = "closed";
		this.#handshakeOver();
		// The asker's process ended or dropped the connection: its dialogs close and its queued questions go,
		// but for those asked with wait: false, whose end then reaches the host's session.
		this.options.bridge.closeClient(this.#origin);
		this.#unacked();
	}

	/** The connection is over: every end awaiting its ack goes the next way. */
	#unacked(): void {
		for (const settle of [...this.#awaitingAck.values()]) settle(false);
	}
}
