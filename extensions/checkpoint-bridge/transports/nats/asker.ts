/**
 * The asking side on NATS, with the contract of askViaHost and askRemote: a lease on the process's
 * kept connection per call (kept.ts), one inbox of its own for the host's replies, settled exactly
 * once by call.ts (result, budget, abort, or the host gone). A broker does not say when the host dies or hangs, so the asker pings its request and
 * counts the host gone when pongs stop (or the server says nobody serves the room). With a grace
 * (CHECKPOINT_BRIDGE_HOST_GRACE_MS), a lost host is waited for: the request, with the answers given
 * so far, is re-sent until a host takes it or the grace ends. The first host frame sealed for this
 * process's key and this call's id names the host; from then on only that host's frames count (seal.ts), until it is lost.
 */
import os from "node:os";
import { type CallOptions, lateEnd, recordedEnd, runCall } from "../../core/asking/call.ts";
import { FRAME_VERSION, MAX_NOTICE_LENGTH } from "../../core/bridge/frames.ts";
import { graceEnd, MAX_TIMEOUT_MS, NO_LIMIT } from "../../core/shared/config.ts";
import type { AskerIdentity } from "../../core/shared/identity.ts";
import { readLateConfig } from "../../core/shared/late-config.ts";
import type { Answer } from "../../model/answer.ts";
import type { Envelope } from "../../model/result.ts";
import { capLength } from "../../model/sanitise.ts";
import type { Broker, BrokerMessage } from "./broker.ts";
import type { NatsConfig } from "./config.ts";
import { decodeNatsFrame, encodeNatsFrame, MAX_MACHINE_LENGTH, type NatsFrame, type Sealed } from "./frames.ts";
import { PING_INTERVAL_MS, RESEND_INTERVAL_MS, SILENCE_MS, TICK_MS } from "./liveness.ts";
import { type KeyPair, newCancelSecret, newKeyPair, seal, sealValid, sharedKey } from "./seal.ts";
import { roomSubjects } from "./subjects.ts";

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
const MAC_KEYS_KEPT = 8;
const macKeyFor = (hostKey: string) => macKeys.get(hostKey) ?? sharedKey((processKeys ??= newKeyPair()).privateKey, hostKey);
const keepMacKey = (hostKey: string, macKey: Buffer) => {
	macKeys.delete(hostKey);
	macKeys.set(hostKey, macKey);
	if (macKeys.size > MAC_KEYS_KEPT) macKeys.delete(macKeys.keys().next().value!);
};

/** Whether a host has ever held a request of this process: an asker that never had a host does not wait for one. */
let hadNatsHost = false;

/** Forgets that a host was ever heard (for tests). */
export function forgetNatsHost(): void {
	hadNatsHost = false;
}

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
	/** A host holds the request: ping it, listen for its replies. */
	| "held"
	/** The host was lost within the grace: re-send until a host takes it. */
	| "waiting";

/** Asks the host serving the configured room and resolves with the call's envelope. Never rejects. */
export function askOverNats(options: NatsAskOptions): Promise<Envelope> {
	const { config } = options;
	const subjects = roomSubjects(config.prefix);
	const silenceMs = options.silenceMs ?? SILENCE_MS;
	const machine = options.machine ?? machineName();
	const pid = options.pid ?? process.pid;
	return runCall(options, (call) => {
		let ended = false;
		let broker: Broker | undefined;
		let inbox = "";
		let phase: Phase = "sending";
		/** Whether a host said it took this request: without one, "nobody serves the room" is final at once. */
		let reached = false;
		let answers: Answer[] = [];
		let lastHeard = 0;
		let lastSent = 0;
		let graceEnds = 0;
		let lostNote = "";
		let resent = false;
		let ticker: ReturnType<typeof setInterval> | undefined;
		const keys = (processKeys ??= newKeyPair());
		const cancelSecret = newCancelSecret();
		/** The host that took the request: its key, and the MAC key its frames must carry. */
		let pinned: { hostKey: string; macKey: Buffer } | undefined;

		/** Whether a frame for this call is sealed by the pinned host, or (none pinned yet) by any host for this call's key. */
		const sealedForUs = (frame: Sealed) => {
			if (frame.hostKey === undefined) return false;
			if (pinned) return frame.hostKey === pinned.hostKey && sealValid(frame as Record<string, unknown>, pinned.macKey);
			const macKey = macKeyFor(frame.hostKey);
			if (!macKey || !sealValid(frame as Record<string, unknown>, macKey)) return false;
			keepMacKey(frame.hostKey, macKey);
			pinned = { hostKey: frame.hostKey, macKey };
			return true;
		};

		const publish = (subject: string, frame: NatsFrame) => broker?.publish(subject, encodeNatsFrame(frame), inbox);
		/**
		 * Replies to a frame marked `ack` with the ack, sealed under the pinned host's key, once the end is
		 * recorded (or known not to be): sent on `via`, the connection the frame came on, which a call
		 * that ended may already have let go of.
		 */
		const acker = (via: Broker, message: BrokerMessage, id: string) => (recorded: boolean) => {
			if (!message.reply || !pinned) return;
			try {
				via.publish(message.reply, encodeNatsFrame(seal({ type: "ack", v: FRAME_VERSION.nats, id, recorded }, keys.publicKey, pinned.macKey)));
			} catch {
				// A connection gone takes the ack with it: the host's session gets the end.
			}
		};
		const sendRequest = () => {
			lastSent = Date.now();
			publish(subjects.request, {
				...call.request,
				type: "request",
				// Frames carry the wire's version; the room server puts the bus's back on (as the local endpoint does).
				v: FRAME_VERSION.nats,
				// A call without a budget says so by its deadline of 0 (NO_LIMIT); a room server that does not know that holds it for the longest budget.
				budgetMs: call.request.deadline === NO_LIMIT ? MAX_TIMEOUT_MS : Math.max(0, call.request.deadline - Date.now()),
				pid,
				machine,
				key: keys.publicKey,
				cancelHash: cancelSecret.hash,
				...(options.onLate ? { lateFrames: true as const } : {}),
				// Its ends are recorded in the asking session: the host awaits an ack of each (core/bridge/frames.ts AckFrame).
				...(options.onLate || options.recordEnd ? { acks: true as const } : {}),
				...(answers.length > 0 ? { answers } : {}),
				// Sent again for a host that replaced a vanished one: shown marked as asked before the restart.
				...(resent ? { resent: true } : {}),
			});
		};

		/** `mayHaveReached`: the request may be held by a host that then fell silent, so a grace waits for it too. */
		const hostLost = (note: string, mayHaveReached = reached || hadNatsHost) => {
			if (ended || phase === "waiting") return;
			if (!mayHaveReached || config.graceMs <= 0) return call.finish("no-host", note);
			phase = "waiting";
			// The lost host's hold is over: whichever host takes the re-sent request is the one to trust.
			pinned = undefined;
			lostNote = note;
			// Never past the call's own budget.
			graceEnds = graceEnd(config.graceMs, call.request.deadline);
			resent = true;
			sendRequest();
		};

		const heard = () => {
			lastHeard = Date.now();
			reached = true;
			hadNatsHost = true;
			phase = "held";
		};

		/** Set once the call ended `timeout` and waits for its late frame: the only message it still takes. */
		let lateWait: ((message: BrokerMessage) => void) | undefined;
		const onMessage = (message: BrokerMessage) => {
			if (lateWait) return lateWait(message);
			// An end marked `ack` for a call already over is not recorded here: the host is told at once, not by its timeout.
			if (ended) return void (broker && endOfOver(broker, message));
			if (message.noResponders)
				return hostLost(
					reached
						? `The host serving room "${config.room}" is gone (nobody is subscribed to the room any more) before the questions were answered.`
						: `No host serves the room "${config.room}" on NATS (nobody is subscribed to its requests).`,
				);
			const checked = decodeNatsFrame(message.data);
			// Junk, another version, or a reply for a request this call does not hold: refused, silently.
			if (!checked.ok) return;
			const frame = checked.frame;
			// A host refuses a request before it takes it; once it holds the request, an error frame is nobody's to send.
			if (frame.type === "error")
				return phase === "held" || pinned ? undefined : call.finish("error", `The host refused the request (${frame.code}): ${frame.message}`);
			if (!("id" in frame) || frame.id !== call.id) return;
			if (frame.type !== "pong" && frame.type !== "progress" && frame.type !== "result") return;
			// Anyone who reads the room can write to this inbox: only the host that took the request is heard.
			if (!sealedForUs(frame)) return;
			if (frame.type === "pong") {
				if (frame.held) return heard();
				return hostLost(frame.note ?? "The host no longer holds the request (it restarted, or lost the asker's heartbeats).");
			}
			heard();
			answers = frame.answers;
			const { type: _type, hostKey: _key, mac: _mac, ...reply } = frame;
			if (frame.type !== "result" || !frame.ack || !broker) return call.reply(reply);
			// An end to ack: recorded in the asking session before the call lets its lease go.
			const ack = acker(broker, message, frame.id);
			call.reply(reply, (envelope) => ack(recordedEnd(envelope, options)));
			ack(false);
		};
		/** A sealed end marked `ack` for this call, come after it ended: acked as not recorded. */
		const endOfOver = (via: Broker, message: BrokerMessage) => {
			if (message.noResponders || !message.reply) return;
			const checked = decodeNatsFrame(message.data);
			if (!checked.ok || checked.frame.type !== "result" || !checked.frame.ack || checked.frame.id !== call.id || !sealedForUs(checked.frame)) return;
			acker(via, message, call.id)(false);
		};

		const tick = () => {
			if (ended) return;
			const now = Date.now();
			if (phase === "waiting") {
				if (now >= graceEnds) return call.finish("no-host", `${lostNote} No host served the room again within ${config.graceMs} ms.`);
				if (now - lastSent >= RESEND_INTERVAL_MS) sendRequest();
				return;
			}
			if (phase === "held") {
				if (now - lastHeard > silenceMs) return hostLost("The host stopped answering (it ended, hung, or was cut off) before the questions were answered.");
				if (now - lastSent >= PING_INTERVAL_MS) {
					lastSent = now;
					publish(subjects.ping, { type: "ping", v: FRAME_VERSION.nats, id: call.id });
				}
				return;
			}
			// Somebody is subscribed (no no-responders came back) but said nothing, not even that it took the request:
			// hung, or the connection broke before its word arrived (a server restart). Worth the grace either way.
			if (now - lastSent > silenceMs)
				hostLost(`No host answered in room "${config.room}" within ${silenceMs} ms (a host is subscribed but silent: hung or cut off).`, true);
		};

		options.connect().then(
			(opened) => {
				if (ended) return void opened.close();
				broker = opened;
				inbox = opened.inbox();
				opened.subscribe(inbox, onMessage);
				sendRequest();
				ticker = setInterval(tick, TICK_MS);
			},
			(error: unknown) => call.finish("no-host", `No host reachable over NATS: ${error instanceof Error ? error.message : String(error)}.`),
		);

		/** Late frames: keeps the inbox and the lease for the call's late end, delivered once to `onLate`, the host told by an ack. */
		const awaitLate = (kept: Broker, onLate: NonNullable<CallOptions["onLate"]>) => {
			const session = options.asker.sessionId;
			const waits = lateWaits.get(session) ?? new Set<() => void>();
			lateWaits.set(session, waits);
			const release = () => {
				clearTimeout(expiry);
				lateWait = undefined;
				waits.delete(release);
				if (waits.size === 0) lateWaits.delete(session);
				void kept.close();
			};
			const expiry = setTimeout(release, readLateConfig().expiryMs);
			expiry.unref?.();
			lateWait = (message) => {
				const checked = message.noResponders ? undefined : decodeNatsFrame(message.data);
				if (!checked?.ok || checked.frame.type !== "late" || checked.frame.id !== call.id || !sealedForUs(checked.frame)) return;
				const { type: _type, hostKey: _key, mac: _mac, ack: marked, ...late } = checked.frame;
				// An older host wants only to hear that this process has it: said on receipt.
				if (!marked && message.reply) kept.publish(message.reply, new Uint8Array(0));
				const recorded = lateEnd(call, { asker: options.asker, onLate })(late);
				if (marked) acker(kept, message, call.id)(recorded);
				release();
			};
			waits.add(release);
			if (waits.size > MAX_LATE_WAITS_PER_SESSION) waits.values().next().value!();
		};

		return (cancelHost, status) => {
			ended = true;
			clearInterval(ticker);
			if (!broker) return;
			// Ended `timeout` at a host that took it: the question may stay late there, and its end still come to this inbox.
			const late = status === "timeout" && options.onLate && pinned ? options.onLate : undefined;
			// The host drops the request from its queue or dismisses its open dialog; its sweep would too, later.
			if (cancelHost && reached)
				publish(subjects.cancel, {
					type: "cancel",
					v: FRAME_VERSION.nats,
					id: call.id,
					reason: status === "timeout" ? "timeout" : "cancelled",
					secret: cancelSecret.secret,
				});
			if (late) return awaitLate(broker, late);
			void broker.close();
		};
	});
}
