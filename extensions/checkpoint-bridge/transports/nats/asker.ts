/**
 * The asking side on NATS, with the contract of askViaHost and askRemote: a lease on the process's
 * kept connection per call (pool.ts), one inbox of its own for the host's replies, settled exactly
 * once by call.ts (result, budget, abort, or the host gone). A broker does not say when the host dies or hangs, so the asker pings its request and
 * counts the host gone when pongs stop (or the server says nobody serves the room). With a grace
 * (CHECKPOINT_BRIDGE_HOST_GRACE_MS), a lost host is waited for: the request, with the answers given
 * so far, is re-sent until a host takes it or the grace ends. The first host frame sealed for this
 * process's key and this call's id names the host; from then on only that host's frames count (seal.ts), until it is lost.
 */
import os from "node:os";
import { type CallControl, type CallOptions, lateEnd, recordedEnd, runCall } from "../../core/asking/call.ts";
import { FRAME_VERSION, MAX_NOTICE_LENGTH } from "../../core/bridge/frames.ts";
import { graceEnd, MAX_TIMEOUT_MS, NO_LIMIT } from "../../core/shared/config.ts";
import type { AskerIdentity } from "../../core/shared/identity.ts";
import { readLateConfig } from "../../core/shared/late-config.ts";
import { processSlot } from "../../core/shared/process-slot.ts";
import { waitAtMost } from "../../core/shared/wait.ts";
import type { Answer } from "../../model/answer.ts";
import type { Envelope, Status } from "../../model/result.ts";
import { capLength } from "../../model/sanitise.ts";
import type { Broker, BrokerMessage } from "./broker.ts";
import type { NatsConfig } from "./config.ts";
import { decodeNatsFrame, encodeNatsFrame, MAX_MACHINE_LENGTH, type NatsFrame, type Sealed } from "./frames.ts";
import { PING_INTERVAL_MS, RESEND_INTERVAL_MS, SILENCE_MS, TICK_MS } from "./liveness.ts";
import { type KeyPair, newCancelSecret, newKeyPair, seal, sealValid, sharedKey } from "./seal.ts";
import { type RoomSubjects, roomSubjects } from "./subjects.ts";

/** One NATS call: the call's options plus how to connect and which room to ask. */
export interface NatsAskOptions extends CallOptions {
	/** Opens the call's connection; its rejection's message becomes the `no-host` note. */
	connect: () => Promise<Broker>;
	config: Pick<NatsConfig, "room" | "prefix" | "graceMs">;
	/** Shown to the human. @default os.hostname() */
	machine?: string;
	/** Shown to the human. @default process.pid */
	pid?: number;
	/** A host silent this long is gone. @default SILENCE_MS */
	silenceMs?: number;
}

let hostName: string | undefined;
/** The machine name sent with a request: the host name (read once per process: it is a system call), shortened to the frame's limit. */
export function machineName(): string {
	hostName ??= (os.hostname() || "unknown").slice(0, MAX_MACHINE_LENGTH);
	return hostName;
}

/** One notice over NATS: how to connect, the room, and what it says. */
export interface NatsNoticeOptions {
	/** Opens the notice's connection, closed once the notice is sent. */
	connect: () => Promise<Broker>;
	config: Pick<NatsConfig, "prefix">;
	notice: { asker: AskerIdentity; message: string; type: "info" | "warning" | "error" };
	/** Shown to the human. @default os.hostname() */
	machine?: string;
	/** Shown to the human. @default process.pid */
	pid?: number;
}

/** Publishes a notice on the room's notice subject, cut to MAX_NOTICE_LENGTH. Fire and forget: never rejects; dropped when the server cannot be reached. */
export async function noticeOverNats(options: NatsNoticeOptions): Promise<void> {
	const { notice } = options;
	try {
		const broker = await options.connect();
		broker.publish(
			roomSubjects(options.config.prefix).notice,
			encodeNatsFrame({
				type: "notice",
				v: FRAME_VERSION.nats,
				asker: notice.asker,
				message: capLength(notice.message, MAX_NOTICE_LENGTH),
				level: notice.type,
				pid: options.pid ?? process.pid,
				machine: options.machine ?? machineName(),
			}),
		);
		await broker.close();
	} catch {
		// A notice is a courtesy.
	}
}

/**
 * The process's X25519 key pair, made at its first call, and the MAC keys derived with it by host
 * key: a key pair and an ECDH per call cost about 80 µs, and the key's secrecy, not its age, is what
 * keeps another client from sealing in a host's name (each frame's MAC also covers its call's id).
 * Only keys whose frame's seal checked are kept, the newest few.
 */
let processKeys: KeyPair | undefined;
const macKeys = new Map<string, Buffer>();
/** Host keys whose MAC key is kept. @default 8 */
const MAX_MAC_KEYS = 8;
const macKeyFor = (hostKey: string) => macKeys.get(hostKey) ?? sharedKey((processKeys ??= newKeyPair()).privateKey, hostKey);
const keepMacKey = (hostKey: string, macKey: Buffer) => {
	macKeys.delete(hostKey);
	macKeys.set(hostKey, macKey);
	if (macKeys.size > MAX_MAC_KEYS) macKeys.delete(macKeys.keys().next().value!);
};

/** Registry key of whether a host ever had a request of this process; `Symbol.for` makes it the same in every module copy. */
const HOST_HEARD_KEY = Symbol.for("checkpoint-bridge.nats-host-heard");
/** Whether a host has ever had a request of this process: an asker that never had a host does not wait for one. */
const hostHeard = () => processSlot(globalThis, HOST_HEARD_KEY, () => ({ heard: false }));

/**
 * Late frames awaited (ask now, answer later), by asker session, oldest first: each keeps its call's
 * inbox and its lease on the process's connection, which holds the process (the NATS client cannot
 * let go of it), so they go when their session ends (releaseLateWaits), at the late expiry, or past
 * MAX_LATE_WAITS_PER_SESSION.
 */
const lateWaits = new Map<string, Set<() => void>>();
/** @default 64 */
const MAX_LATE_WAITS_PER_SESSION = 64;

/** The session is gone: the late frames awaited for it are not (their host's session takes them), and the process may exit. */
export function releaseLateWaits(sessionId: string): void {
	for (const release of [...(lateWaits.get(sessionId) ?? [])]) release();
}

type Phase =
	/** Connecting, or the request sent and no word from a host yet. */
	| "sending"
	/** A host holds the request open: ping it, listen for its replies. */
	| "open"
	/** The host was lost within the grace: re-send until a host takes it. */
	| "resending";

/** What every call of one `askOverNats` shares: the room's subjects, how long a host may be silent, who asks from where. */
interface CallPlace {
	subjects: RoomSubjects;
	silenceMs: number;
	machine: string;
	pid: number;
}

/** One call over NATS, in its steps: connect, send, hear the host (pongs, progress, the result and its ack), lose it (grace, re-send), end, and wait for a late end. */
class NatsCall {
	#ended = false;
	#broker: Broker | undefined;
	#inbox = "";
	#phase: Phase = "sending";
	/** Whether a host said it took this request: without one, "nobody serves the room" is final at once. */
	#reached = false;
	#answers: Answer[] = [];
	#lastHeard = 0;
	#lastSent = 0;
	#graceEnds = 0;
	#lostNote = "";
	#resent = false;
	#ticker: ReturnType<typeof setInterval> | undefined;
	readonly #keys = (processKeys ??= newKeyPair());
	readonly #cancelSecret = newCancelSecret();
	/** The host that took the request: its key, and the MAC key its frames must carry. */
	#pinned: { hostKey: string; macKey: Buffer } | undefined;
	/** Set once the call ended `timeout` and waits for its late frame: the only message it still takes. */
	#lateWait: ((message: BrokerMessage) => void) | undefined;

	readonly options: NatsAskOptions;
	readonly call: CallControl;
	readonly place: CallPlace;

	// Fields assigned by hand, not as parameter properties: the MCP server's loader only strips types.
	constructor(options: NatsAskOptions, call: CallControl, place: CallPlace) {
		this.options = options;
		this.call = call;
		this.place = place;
	}

	/** Connects and sends the request; returns what runs when the call ends. */
	start(): (cancelHost: boolean, status: Status) => void {
		this.options.connect().then(
			(opened) => {
				if (this.#ended) return void opened.close();
				this.#broker = opened;
				this.#inbox = opened.inbox();
				opened.subscribe(this.#inbox, (message) => this.#onMessage(message));
				this.#sendRequest();
				this.#ticker = setInterval(() => this.#tick(), TICK_MS);
			},
			(error: unknown) => this.call.end("no-host", `No host reachable over NATS: ${error instanceof Error ? error.message : String(error)}.`),
		);
		return (cancelHost, status) => this.#end(cancelHost, status);
	}

	/** Whether a frame for this call is sealed by the pinned host, or (none pinned yet) by any host for this call's key. */
	#sealedForUs(frame: Sealed): boolean {
		if (frame.hostKey === undefined) return false;
		if (this.#pinned) return frame.hostKey === this.#pinned.hostKey && sealValid(frame as Record<string, unknown>, this.#pinned.macKey);
		const macKey = macKeyFor(frame.hostKey);
		if (!macKey || !sealValid(frame as Record<string, unknown>, macKey)) return false;
		keepMacKey(frame.hostKey, macKey);
		this.#pinned = { hostKey: frame.hostKey, macKey };
		return true;
	}

	#publish(subject: string, frame: NatsFrame): void {
		this.#broker?.publish(subject, encodeNatsFrame(frame), this.#inbox);
	}

	/**
	 * Replies to a frame marked `ack` with the ack, sealed under the pinned host's key, once the end is
	 * recorded (or known not to be): sent on `via`, the connection the frame came on, which a call
	 * that ended may already have let go of.
	 */
	#acker(via: Broker, message: BrokerMessage, id: string) {
		return (recorded: boolean) => {
			if (!message.reply || !this.#pinned) return;
			try {
				via.publish(message.reply, encodeNatsFrame(seal({ type: "ack", v: FRAME_VERSION.nats, id, recorded }, this.#keys.publicKey, this.#pinned.macKey)));
			} catch {
				// A connection gone takes the ack with it: the host's session gets the end.
			}
		};
	}

	#sendRequest(): void {
		const { call, options } = this;
		this.#lastSent = Date.now();
		this.#publish(this.place.subjects.request, {
			...call.request,
			type: "request",
			// Frames carry the wire's version; the room server puts the bus's back on (as the local endpoint does).
			v: FRAME_VERSION.nats,
			// A call without a budget says so by its deadline of 0 (NO_LIMIT); a room server that does not know that holds it for the longest budget.
			budgetMs: call.request.deadline === NO_LIMIT ? MAX_TIMEOUT_MS : Math.max(0, call.request.deadline - Date.now()),
			pid: this.place.pid,
			machine: this.place.machine,
			key: this.#keys.publicKey,
			cancelHash: this.#cancelSecret.hash,
			...(options.onLate ? { lateFrames: true as const } : {}),
			// Its ends are recorded in the asking session: the host awaits an ack of each (core/bridge/frames.ts AckFrame).
			...(options.onLate || options.recordEnd ? { acks: true as const } : {}),
			...(this.#answers.length > 0 ? { answers: this.#answers } : {}),
			// Sent again for a host that replaced a vanished one: shown marked as asked before the restart.
			...(this.#resent ? { resent: true } : {}),
		});
	}

	/** `mayHaveReached`: the request may be open at a host that then fell silent, so a grace waits for it too. */
	#hostLost(note: string, mayHaveReached = this.#reached || hostHeard().heard): void {
		if (this.#ended || this.#phase === "resending") return;
		const { graceMs } = this.options.config;
		if (!mayHaveReached || graceMs <= 0) return this.call.end("no-host", note);
		this.#phase = "resending";
		// The lost host's hold is over: whichever host takes the re-sent request is the one to trust.
		this.#pinned = undefined;
		this.#lostNote = note;
		// Never past the call's own budget.
		this.#graceEnds = graceEnd(graceMs, this.call.request.deadline);
		this.#resent = true;
		this.#sendRequest();
	}

	#heard(): void {
		this.#lastHeard = Date.now();
		this.#reached = true;
		hostHeard().heard = true;
		this.#phase = "open";
	}

	#onMessage(message: BrokerMessage): void {
		if (this.#lateWait) return this.#lateWait(message);
		// An end marked `ack` for a call already over is not recorded here: the host is told at once, not by its timeout.
		if (this.#ended) return void (this.#broker && this.#endOfOver(this.#broker, message));
		const { room } = this.options.config;
		if (message.noResponders)
			return this.#hostLost(
				this.#reached
					? `The host serving room "${room}" is gone (nobody is subscribed to the room any more) before the questions were answered.`
					: `No host serves the room "${room}" on NATS (nobody is subscribed to its requests).`,
			);
		const checked = decodeNatsFrame(message.data);
		// Junk, another version, or a reply for a request this call does not hold: refused, silently.
		if (!checked.ok) return;
		const frame = checked.frame;
		// A host refuses a request before it takes it; once it holds the request, an error frame is nobody's to send.
		if (frame.type === "error")
			return this.#phase === "open" || this.#pinned ? undefined : this.call.end("error", `The host refused the request (${frame.code}): ${frame.message}`);
		if (!("id" in frame) || frame.id !== this.call.id) return;
		if (frame.type !== "pong" && frame.type !== "progress" && frame.type !== "result") return;
		// Anyone who reads the room can write to this inbox: only the host that took the request is heard.
		if (!this.#sealedForUs(frame)) return;
		if (frame.type === "pong") {
			if (frame.held) return this.#heard();
			return this.#hostLost(frame.note ?? "The host no longer holds the request (it restarted, or lost the asker's heartbeats).");
		}
		this.#onReply(frame, message);
	}

	/** Progress or the result, sealed by the host: passed on; a result marked `ack` is acked once recorded in the asking session. */
	#onReply(frame: Extract<NatsFrame, { type: "progress" | "result" }>, message: BrokerMessage): void {
		this.#heard();
		this.#answers = frame.answers;
		const { type: _type, hostKey: _key, mac: _mac, ...reply } = frame;
		if (frame.type !== "result" || !frame.ack || !this.#broker) return this.call.reply(reply);
		// An end to ack: recorded in the asking session before the call lets its lease go.
		const ack = this.#acker(this.#broker, message, frame.id);
		this.call.reply(reply, (envelope) => ack(recordedEnd(envelope, this.options)));
		ack(false);
	}

	/** A sealed end marked `ack` for this call, come after it ended: acked as not recorded. */
	#endOfOver(via: Broker, message: BrokerMessage): void {
		if (message.noResponders || !message.reply) return;
		const checked = decodeNatsFrame(message.data);
		if (!checked.ok || checked.frame.type !== "result" || !checked.frame.ack || checked.frame.id !== this.call.id || !this.#sealedForUs(checked.frame)) return;
		this.#acker(via, message, this.call.id)(false);
	}

	#tick(): void {
		if (this.#ended) return;
		const now = Date.now();
		const { silenceMs } = this.place;
		const { room, graceMs } = this.options.config;
		if (this.#phase === "resending") {
			if (now >= this.#graceEnds) return this.call.end("no-host", `${this.#lostNote} No host served the room again within ${graceMs} ms.`);
			if (now - this.#lastSent >= RESEND_INTERVAL_MS) this.#sendRequest();
			return;
		}
		if (this.#phase === "open") {
			if (now - this.#lastHeard > silenceMs)
				return this.#hostLost("The host stopped answering (it ended, hung, or was cut off) before the questions were answered.");
			if (now - this.#lastSent >= PING_INTERVAL_MS) {
				this.#lastSent = now;
				this.#publish(this.place.subjects.ping, { type: "ping", v: FRAME_VERSION.nats, id: this.call.id });
			}
			return;
		}
		// Somebody is subscribed (no no-responders came back) but said nothing, not even that it took the request:
		// hung, or the connection broke before its word arrived (a server restart). Worth the grace either way.
		if (now - this.#lastSent > silenceMs)
			this.#hostLost(`No host answered in room "${room}" within ${silenceMs} ms (a host is subscribed but silent: hung or cut off).`, true);
	}

	#end(cancelHost: boolean, status: Status): void {
		this.#ended = true;
		clearInterval(this.#ticker);
		const broker = this.#broker;
		if (!broker) return;
		// Ended `timeout` at a host that took it: the question may stay late there, and its end still come to this inbox.
		const late = status === "timeout" && this.options.onLate && this.#pinned ? this.options.onLate : undefined;
		// The host ends the request in its queue or dismisses its open dialog; its sweep would too, later.
		if (cancelHost && this.#reached)
			this.#publish(this.place.subjects.cancel, {
				type: "cancel",
				v: FRAME_VERSION.nats,
				id: this.call.id,
				reason: status === "timeout" ? "timeout" : "cancelled",
				secret: this.#cancelSecret.secret,
			});
		if (late) return this.#awaitLate(broker, late);
		void broker.close();
	}

	/** Late frames: keeps the inbox and the lease for the call's late end, delivered once to `onLate`, the host told by an ack. */
	#awaitLate(lease: Broker, onLate: NonNullable<CallOptions["onLate"]>): void {
		const session = this.options.asker.sessionId;
		const waits = lateWaits.get(session) ?? new Set<() => void>();
		lateWaits.set(session, waits);
		let release!: () => void;
		void waitAtMost<void>({ ms: readLateConfig().expiryMs, elapsed: () => undefined, unref: true }, (settle) => {
			release = () => settle(undefined);
			return () => {
				this.#lateWait = undefined;
				waits.delete(release);
				if (waits.size === 0) lateWaits.delete(session);
				void lease.close();
			};
		});
		this.#lateWait = (message) => {
			const checked = message.noResponders ? undefined : decodeNatsFrame(message.data);
			if (!checked?.ok || checked.frame.type !== "late" || checked.frame.id !== this.call.id || !this.#sealedForUs(checked.frame)) return;
			const { type: _type, hostKey: _key, mac: _mac, ack: marked, ...late } = checked.frame;
			// An older host wants only to hear that this process has it: said on receipt.
			if (!marked && message.reply) lease.publish(message.reply, new Uint8Array(0));
			const recorded = lateEnd(this.call, { asker: this.options.asker, onLate })(late);
			if (marked) this.#acker(lease, message, this.call.id)(recorded);
			release();
		};
		waits.add(release);
		if (waits.size > MAX_LATE_WAITS_PER_SESSION) waits.values().next().value!();
	}
}

/** Asks the host serving the configured room and resolves with the call's envelope. Never rejects. */
export function askOverNats(options: NatsAskOptions): Promise<Envelope> {
	const place: CallPlace = {
		subjects: roomSubjects(options.config.prefix),
		silenceMs: options.silenceMs ?? SILENCE_MS,
		machine: options.machine ?? machineName(),
		pid: options.pid ?? process.pid,
	};
	return runCall(options, (call) => new NatsCall(options, call, place).start());
}
