/**
 * One client connection to the host's endpoint: the handshake (hello, welcome, auth), then any
 * number of requests, cancels and notices, each request put on the process-global bus as a local asker
 * puts its own, under an id of the host's, and its replies written back under the client's id.
 * Before the handshake is done a frame may be a few KiB at most; after it, MAX_FRAME_BYTES.
 */
import { createHmac } from "node:crypto";
import type net from "node:net";
import { nanoid } from "nanoid";
import { MAX_TIMEOUT_MS, NO_LIMIT } from "../../core/config.ts";
import { deliveryBox } from "../../core/delivery.ts";
import { type AskerIdentity, markedAsker } from "../../core/identity.ts";
import type { NoticeWindow } from "../../core/notice-window.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayResult, replyChannel } from "../../core/protocol.ts";
import type { SharedHandle } from "../../core/shared-handle.ts";
import type { Answer } from "../../model/answer.ts";
import { makeEnvelope, type Status } from "../../model/result.ts";
import {
	decodeFrame,
	type ErrorCode,
	encodeFrame,
	errorFrame,
	type Frame,
	HANDSHAKE_MAX_FRAME_BYTES,
	LineReader,
	type NoticeFrame,
	type RequestFrame,
	WIRE_VERSION,
} from "../wire.ts";
import { checkProof, freshNonce, proofOf } from "./proof.ts";

/** How long a refused connection is drained before it is destroyed, if the client does not close it first. @default 1000 */
const REFUSAL_LINGER_MS = 1_000;

/** How a remote asker is shown: its own label, marked with the process it asks from. */
export function remoteAsker(asker: AskerIdentity, pid: number): AskerIdentity {
	// A remote asker is never the host's own model (its session id is marked), so it always gets an arrival receipt.
	return markedAsker(asker, `pid ${pid}`);
}

interface Forwarded {
	/** The id the request has in the host: never the client's, so no client can address another's replies. */
	hostId: string;
	listener: (reply: RelayReply) => void;
	answers: Answer[];
	/** Asked with `wait: false`: outlives its connection, its end then going to the host's session. */
	later?: { asker: AskerIdentity; questions: string[]; createdAt: number };
}

/** What every connection of one endpoint shares; the defaults are the endpoint's (server.ts). */
export interface ConnectionOptions {
	handle: SharedHandle;
	/** The endpoint's secret, which both sides prove they hold. */
	token: Buffer;
	/** Longest frame once the handshake is done. */
	maxFrameBytes: number;
	/** The handshake must be done within this long of the accept. */
	helloTimeoutMs: number;
	/** Most requests one connection may have open at once. */
	maxOpenRequests: number;
	/** The endpoint's one window of notices, for all its connections together: a hundred connections bring no more than one. */
	notices: NoticeWindow;
	/** Called once, when the client has proven itself. */
	onAuthenticated: () => void;
	/** How many connections of the endpoint forward each re-sent request (by its id in the host): one sent again twice is shown once. */
	resentHolders: Map<string, number>;
}

/** The host's id for a re-sent request: the same for every copy the asker sends, unguessable without the token. */
const resentHostId = (token: Buffer, pid: number, sessionId: string, clientId: string) =>
	createHmac("sha256", token).update(`resent\n${pid}\n${sessionId}\n${clientId}`).digest("base64url").slice(0, 21);

/** Where a connection is: awaiting the hello, awaiting the client's proof, serving, or closed. */
export type ConnectionStage = "hello" | "auth" | "ready" | "closed";

/** One client connection: the handshake first, then any number of requests and cancels. */
export class Connection {
	#stage: ConnectionStage = "hello";
	#pid = 0;
	/** This connection's origin on the bus: answers are shared only within one origin (ADR-0003). */
	readonly #origin = `local:${nanoid()}`;
	#clientNonce = "";
	#serverNonce = "";
	readonly #requests = new Map<string, Forwarded>();
	readonly #reader = new LineReader(HANDSHAKE_MAX_FRAME_BYTES);
	readonly #helloTimer: ReturnType<typeof setTimeout>;
	/** Frames are being gathered for one write at the end of this turn of the event loop. */
	#corked = false;

	readonly socket: net.Socket;
	readonly options: ConnectionOptions;

	constructor(socket: net.Socket, options: ConnectionOptions) {
		this.socket = socket;
		this.options = options;
		// Judged after the event loop's next read of pending input: a host whose loop stalled past the
		// deadline would otherwise refuse a client whose proof was already waiting in the socket.
		this.#helloTimer = setTimeout(
			() =>
				setImmediate(() => {
					if (this.#stage === "hello" || this.#stage === "auth")
						this.refuse("hello-timeout", `The handshake was not done within ${options.helloTimeoutMs} ms.`);
				}),
			options.helloTimeoutMs,
		);
		this.#helloTimer.unref();
		socket.on("data", (chunk: Buffer) => this.#onData(chunk));
		// An error is always followed by close, which is where the cleanup happens.
		socket.on("error", () => {});
		socket.on("close", () => this.#onClose());
	}

	get stage(): ConnectionStage {
		return this.#stage;
	}

	/** Sends an error frame, drops this connection's requests, and closes it. Nothing else is touched. */
	refuse(code: ErrorCode, message: string): void {
		if (this.#stage === "closed") return;
		const proven = this.#stage === "ready";
		this.#stage = "closed";
		clearTimeout(this.#helloTimer);
		this.#cancelAll();
		// Half-close and keep draining what a proven client already sent: destroying at once would answer
		// its in-flight frames with a reset, and the client could lose the error frame that says why.
		// An unproven one is not read any further: what it sends (a flood, say) stays in the kernel's buffer.
		this.socket.end(encodeFrame(errorFrame(code, message)));
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
		clearTimeout(this.#helloTimer);
		for (const [clientId, forwarded] of this.#requests) this.#answer(clientId, "no-host", note, forwarded.answers);
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
					v: WIRE_VERSION,
					proof: proofOf(this.options.token, "server", this.#clientNonce, this.#serverNonce),
					nonce: this.#serverNonce,
				});
				return;
			case "auth":
				if (frame.type !== "auth") return this.refuse("unexpected", `After the welcome the client sends auth, not ${frame.type}.`);
				if (!checkProof(frame.proof, this.options.token, "client", this.#clientNonce, this.#serverNonce))
					return this.refuse("bad-token", "The proof does not match this endpoint's token; the token is the content of the token file beside the socket.");
				clearTimeout(this.#helloTimer);
				this.#stage = "ready";
				this.#reader.maxBytes = this.options.maxFrameBytes;
				this.options.onAuthenticated();
				return;
		}
		switch (frame.type) {
			case "request":
				return this.#forward(frame);
			case "notice":
				return this.#notice(frame);
			case "cancel": {
				const forwarded = this.#requests.get(frame.id);
				if (!forwarded) return; // already settled: the cancel crossed the result
				this.#drop(frame.id, forwarded);
				// The asker gave up: whatever other connection still carries it, the request goes.
				this.options.handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: forwarded.hostId, reason: frame.reason });
				return;
			}
			default:
				return this.refuse("unexpected", `A client does not send ${frame.type} frames${frame.type === "hello" || frame.type === "auth" ? " twice" : ""}.`);
		}
	}

	#forward(frame: RequestFrame): void {
		if (this.#requests.has(frame.id)) return this.refuse("unexpected", `Request id ${frame.id} is already open on this connection.`);
		const { maxOpenRequests } = this.options;
		// The request is refused, not the connection: its other requests carry on.
		if (this.#requests.size >= maxOpenRequests)
			return this.#answer(
				frame.id,
				"error",
				`This connection already has ${maxOpenRequests} open requests, the most one connection may have (maxOpenRequests); ask again once one of them has settled.`,
			);
		const { bus } = this.options.handle;
		const clientId = frame.id;
		const claim = this.options.handle.host();
		// The same answers a local asker gets when there is no host, or one of another version.
		if (!claim)
			return this.#answer(clientId, "no-host", "No session with a UI holds the host role in the host process (it is between sessions, or it has none).");
		if (claim.protocol !== PROTOCOL_VERSION)
			return this.#answer(clientId, "error", `The host speaks checkpoint-bridge protocol v${claim.protocol}; its endpoint speaks v${PROTOCOL_VERSION}.`);
		const holders = this.options.resentHolders;
		const hostId = frame.resent === true ? resentHostId(this.options.token, this.#pid, frame.asker.sessionId, clientId) : nanoid();
		// Sent again while the host still holds it (through another connection): this one hears its replies too, nothing is shown twice.
		const alreadyHeld = (holders.get(hostId) ?? 0) > 0;
		const forwarded: Forwarded = {
			hostId,
			answers: [],
			listener: (reply) => {
				// Only what the host role sent goes back to the remote asker.
				if (!this.options.handle.isFromHost(reply, forwarded.hostId)) return;
				forwarded.answers = reply.answers;
				if (reply.kind === "result") {
					this.#drop(clientId, forwarded);
					if (this.#stage === "closed" && forwarded.later) return this.#deliverHere(clientId, forwarded.later, reply);
					this.#send({ ...reply, type: "result", v: WIRE_VERSION, id: clientId });
				} else if (reply.kind === "progress") this.#send({ ...reply, type: "progress", v: WIRE_VERSION, id: clientId });
			},
		};
		const asker = remoteAsker(frame.asker, this.#pid);
		if (frame.later) forwarded.later = { asker, questions: frame.questions.map((q) => String(q?.question)), createdAt: frame.createdAt };
		this.#requests.set(clientId, forwarded);
		holders.set(hostId, (holders.get(hostId) ?? 0) + 1);
		// Listen before asking: the host may answer at once (a malformed or expired request).
		bus.on(replyChannel(forwarded.hostId), forwarded.listener);
		if (alreadyHeld) return;
		const now = Date.now();
		// The wire's request becomes a bus message in this copy's protocol version.
		const delivered = bus.emit("request", {
			v: PROTOCOL_VERSION,
			id: forwarded.hostId,
			asker,
			questions: frame.questions,
			// Clamped as a local call's budgets are, so a remote request cannot hold the queue longer than a local one could;
			// one without a budget (0) is held while its connection lives, as a local one is while its session does.
			deadline: frame.deadline === NO_LIMIT ? NO_LIMIT : Math.min(frame.deadline, now + MAX_TIMEOUT_MS),
			dialogTimeoutMs: Math.min(frame.dialogTimeoutMs, MAX_TIMEOUT_MS),
			createdAt: frame.createdAt,
			// Set here, never taken from the frame: the asker cannot claim another connection's origin.
			origin: this.#origin,
			...(frame.later ? { later: true as const } : {}),
			// Sent again after its host went away: what it was told is not asked again (the host checks each answer).
			...(frame.resent === true ? { resent: true, ...(frame.answers && frame.answers.length > 0 ? { answers: frame.answers } : {}) } : {}),
		});
		if (!delivered && this.#requests.get(clientId) === forwarded) {
			this.#drop(clientId, forwarded);
			this.#answer(clientId, "no-host", "The host role is claimed in the host process but nothing is listening for questions.");
		}
	}

	/** A notice onto the bus as a local one is put, marked with the asking process; past the endpoint's window, dropped (a notice is a courtesy). */
	#notice(frame: NoticeFrame): void {
		if (!this.options.notices.take()) return;
		this.options.handle.bus.emit("relay:notice", {
			v: PROTOCOL_VERSION,
			asker: remoteAsker(frame.asker, this.#pid),
			message: frame.message,
			type: frame.level,
			origin: this.#origin,
		});
	}

	/** A result the endpoint gives itself, without the host. */
	#answer(clientId: string, status: Status, note: string, answers: Answer[] = []): void {
		this.#send({ type: "result", v: WIRE_VERSION, id: clientId, kind: "result", status, answers, note });
	}

	/** Stops forwarding the request; true when no other connection forwards it. */
	#drop(clientId: string, forwarded: Forwarded): boolean {
		this.options.handle.bus.off(replyChannel(forwarded.hostId), forwarded.listener);
		this.#requests.delete(clientId);
		const holders = this.options.resentHolders;
		const left = (holders.get(forwarded.hostId) ?? 1) - 1;
		if (left > 0) holders.set(forwarded.hostId, left);
		else holders.delete(forwarded.hostId);
		return left <= 0;
	}

	/** The end of a `wait: false` request whose asking process is gone: a message to the host's session, naming the asker. */
	#deliverHere(clientId: string, later: NonNullable<Forwarded["later"]>, result: RelayResult): void {
		const envelope = makeEnvelope(result.status, [...result.answers], result.note, {
			requestId: clientId,
			asker: later.asker.label,
			waitedMs: Date.now() - later.createdAt,
			...(result.reason ? { reason: result.reason } : {}),
		});
		const delivery = {
			requestId: clientId,
			askerSessionId: later.asker.sessionId,
			asker: later.asker.label,
			questions: later.questions,
			queuedAt: later.createdAt,
		};
		deliveryBox(() => this.options.handle.host()?.sessionId).deliver({ ...delivery, envelope }, { gone: true });
	}

	/** Stops forwarding and takes every open request off the host, closing its dialog (unless another connection still carries it); on a close, a `wait: false` one stays. */
	#cancelAll(keepLater = false): void {
		for (const [clientId, forwarded] of [...this.#requests]) {
			if (keepLater && forwarded.later) continue;
			if (this.#drop(clientId, forwarded)) this.options.handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: forwarded.hostId, reason: "cancelled" });
		}
	}

	#send(frame: Frame): void {
		if (this.socket.destroyed || !this.socket.writable) return;
		// Frames written in one turn of the event loop (a request's queued, shown and result, when the human
		// or the host answers at once) leave in one write: a syscall costs more than the frames' bytes.
		if (!this.#corked) {
			this.#corked = true;
			this.socket.cork();
			setImmediate(this.#uncork);
		}
		this.socket.write(encodeFrame(frame));
	}

	readonly #uncork = () => {
		this.#corked = false;
		this.socket.uncork();
	};

	#onClose(): void {
		this.#stage = "closed";
		clearTimeout(this.#helloTimer);
		// The asker's process ended or dropped the connection: its dialogs close and its queued questions go,
		// but for those asked with wait: false, whose end then reaches the host's session.
		this.#cancelAll(true);
	}
}
