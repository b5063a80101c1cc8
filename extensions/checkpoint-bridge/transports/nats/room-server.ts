/**
 * The host side on NATS: a bridge from a room's subjects onto the host process's bus, like the
 * local endpoint (ADR-0002). A request is emitted on the bus under a fresh id, so it joins the one
 * queue of whichever session holds the host role; its replies go back to the asker's inbox under
 * the asker's id. Each held request must be pinged by its asker: one that falls silent is
 * cancelled (its dialog dismissed), as a closed socket's requests are. What a room holds is
 * bounded per asker session, per client (its inbox) and in all, and every frame for a request is
 * sealed for its asker (seal.ts): only that asker can cancel it, only this host can answer it.
 * Notices of other extensions (interop/dialog-relay.ts) are shown to the human, a bounded number per window.
 */
import { nanoid } from "nanoid";
import { MAX_TIMEOUT_MS, NO_LIMIT } from "../../core/config.ts";
import { MAX_OPEN_PER_ASKER } from "../../core/dialog-host.ts";
import { type AskerIdentity, markedAsker } from "../../core/identity.ts";
import { NoticeWindow } from "../../core/notice-window.ts";
import { PROTOCOL_VERSION, type RelayReply, replyChannel } from "../../core/protocol.ts";
import type { SharedHandle } from "../../core/shared-handle.ts";
import type { Answer } from "../../model/answer.ts";
import type { Status } from "../../model/result.ts";
import type { ErrorCode } from "../wire.ts";
import type { Broker, BrokerMessage } from "./broker.ts";
import { decodeNatsFrame, encodeNatsFrame, NATS_VERSION, type NatsFrame, type NatsRequestFrame, natsErrorFrame } from "./frames.ts";
import { SILENCE_MS, TICK_MS } from "./liveness.ts";
import { newKeyPair, seal, secretMatches, sharedKey } from "./seal.ts";
import { roomSubjects } from "./subjects.ts";

/** What a room server bridges: a connection, the host process's bus, a room. */
export interface RoomServerOptions {
	broker: Broker;
	/** The process's shared handle: its bus reaches the host. */
	handle: SharedHandle;
	/** The room's subject prefix (`cpb.<room>`). */
	prefix: string;
	/** An asker silent this long is gone: its request is cancelled. @default SILENCE_MS */
	silenceMs?: number;
	/** How often silence is checked. @default TICK_MS */
	tickMs?: number;
	/** How long the answers of a request dropped for silence are kept for its asker's re-send. @default KEEP_DROPPED_MS */
	keepDroppedMs?: number;
	/** Most requests one client (one inbox) may have open. @default MAX_OPEN_PER_CLIENT (128) */
	maxOpenPerClient?: number;
	/** Most requests the room holds at once, whoever asks. @default MAX_ROOM_REQUESTS (1024) */
	maxRoomRequests?: number;
	/** Most bytes of request frames and kept answers the room holds at once. @default MAX_ROOM_BYTES (16 MiB) */
	maxRoomBytes?: number;
}

/** Most requests one client (one inbox) may have open at once, as one local connection may. @default 128 */
export const MAX_OPEN_PER_CLIENT = 128;
/** Most requests a room holds at once: a bound that no choice of inboxes or session ids evades. @default 1024 */
export const MAX_ROOM_REQUESTS = 1_024;
/** Most bytes (request frames as received, kept answers as JSON) a room holds at once. @default 16 MiB */
export const MAX_ROOM_BYTES = 16 * 1024 * 1024;
/** Most notices the room brings the human per ROOM_NOTICE_WINDOW_MS, from all askers together; the rest are dropped. @default 20 */
export const MAX_ROOM_NOTICES_PER_WINDOW = 20;
/** The window MAX_ROOM_NOTICES_PER_WINDOW counts in, in ms. @default 10000 */
export const ROOM_NOTICE_WINDOW_MS = 10_000;
/** Longest reply subject (inbox) accepted; NATS inboxes are about 30 characters. @default 256 */
export const MAX_INBOX_LENGTH = 256;

/**
 * The answers of a request whose asker fell silent are kept this long: when the asker comes back
 * (a nats-server restart, a fail-over) and re-sends, they are put back even if the progress that
 * carried them never reached it. @default 600_000 (10 min)
 */
export const KEEP_DROPPED_MS = 600_000;
/** At most this many dropped requests' answers are kept; the oldest go first. @default 1000 */
const MAX_DROPPED = 1_000;

/** A room served from this process. */
export interface RoomServer {
	/** This serving instance's id, sent in pongs. */
	readonly hostId: string;
	/** Requests held for askers now (for tests and diagnostics). */
	readonly heldCount: number;
	/** Bytes the room holds now: request frames and kept answers (for tests and the bench). */
	readonly heldBytes: number;
	/** Stops serving: every held request is let go (its asker hears it at once) and dropped from the host's queue. */
	close(note?: string): void;
}

/** How a NATS asker is shown: its own label, marked with the machine and process it asks from. */
export function natsAsker(asker: AskerIdentity, machine: string, pid: number): AskerIdentity {
	return markedAsker(asker, `${machine.replace(/[^\w.-]+/g, "-")}:${pid}`);
}

const DEFAULT_CLOSE_NOTE = "The host stopped serving the room before the questions were answered.";

interface Held {
	clientId: string;
	inbox: string;
	hostId: string;
	/** The asker session it counts against (as shown, machine and pid included). */
	session: string;
	/** The request frame's size, counted against the room's bytes. */
	bytes: number;
	/** The asker's public key and the MAC key derived from it: every frame for this request is sealed. */
	askerKey: string;
	macKey: Buffer;
	/** Hash of the asker's cancel secret. */
	cancelHash: string;
	listener: (reply: RelayReply) => void;
	answers: Answer[];
	lastHeard: number;
}

/** Answers kept for a re-send, with what the re-send must repeat to get them back. */
interface Dropped {
	answers: Answer[];
	at: number;
	bytes: number;
	askerKey: string;
	/** So that a ping for it is answered sealed, and its asker re-sends at once. */
	macKey: Buffer;
	cancelHash: string;
}

const bump = (counts: Map<string, number>, key: string, by: number) => {
	const next = (counts.get(key) ?? 0) + by;
	if (next > 0) counts.set(key, next);
	else counts.delete(key);
};

/** Serves a room on `broker` into the host's bus. The caller checks first that nobody else serves it. */
export function serveRoom(options: RoomServerOptions): RoomServer {
	const { broker, handle } = options;
	const silenceMs = options.silenceMs ?? SILENCE_MS;
	const subjects = roomSubjects(options.prefix);
	const hostId = nanoid();
	const keys = newKeyPair();
	const maxOpenPerClient = options.maxOpenPerClient ?? MAX_OPEN_PER_CLIENT;
	const maxRoomRequests = options.maxRoomRequests ?? MAX_ROOM_REQUESTS;
	const maxRoomBytes = options.maxRoomBytes ?? MAX_ROOM_BYTES;
	// Keyed by inbox and the asker's id: two askers cannot collide.
	const held = new Map<string, Held>();
	const bySession = new Map<string, number>();
	const byClient = new Map<string, number>();
	let heldBytes = 0;
	/** Answers of requests dropped because their asker fell silent, by the same key, oldest first. */
	const dropped = new Map<string, Dropped>();
	let droppedBytes = 0;
	const keepDroppedMs = options.keepDroppedMs ?? KEEP_DROPPED_MS;
	const keyOf = (inbox: string, id: string) => `${inbox}\n${id}`;
	let closed = false;

	const send = (inbox: string, frame: NatsFrame) => broker.publish(inbox, encodeNatsFrame(frame));
	/** Sealed when the asker's key is known, so the asker can tell this host's frames from anyone's. */
	const sendFor = (inbox: string, frame: NatsFrame, macKey: Buffer | undefined) => send(inbox, macKey ? seal(frame, keys.publicKey, macKey) : frame);
	const answer = (inbox: string, id: string, status: Status, note: string, macKey: Buffer, answers: Answer[] = []) =>
		sendFor(inbox, { type: "result", v: NATS_VERSION, id, kind: "result", status, answers, note }, macKey);
	const pong = (inbox: string, id: string, isHeld: boolean, macKey: Buffer | undefined, note?: string) =>
		sendFor(inbox, { type: "pong", v: NATS_VERSION, id, held: isHeld, host: hostId, ...(note ? { note } : {}) }, macKey);
	const refuse = (message: BrokerMessage, code: ErrorCode, text: string) => {
		// Refused to its sender only, and only when it gave an address; never shown, never logged.
		if (message.reply) send(message.reply, natsErrorFrame(code, text));
	};

	const forget = (key: string) => {
		const entry = dropped.get(key);
		if (!entry) return undefined;
		dropped.delete(key);
		droppedBytes -= entry.bytes;
		return entry;
	};
	const hold = (key: string, entry: Held) => {
		held.set(key, entry);
		bump(bySession, entry.session, 1);
		bump(byClient, entry.inbox, 1);
		heldBytes += entry.bytes;
		handle.bus.on(replyChannel(entry.hostId), entry.listener);
	};
	const drop = (key: string, entry: Held) => {
		if (held.get(key) !== entry) return;
		handle.bus.off(replyChannel(entry.hostId), entry.listener);
		held.delete(key);
		bump(bySession, entry.session, -1);
		bump(byClient, entry.inbox, -1);
		heldBytes -= entry.bytes;
	};
	/** Why the room cannot take one more request of `bytes` from this client and session; undefined when it can. */
	const overLimit = (inbox: string, session: string, bytes: number): string | undefined => {
		const ofSession = bySession.get(session) ?? 0;
		if (ofSession >= MAX_OPEN_PER_ASKER)
			return `The asker already has ${ofSession} requests open in this room, the most one asker session may have (MAX_OPEN_PER_ASKER = ${MAX_OPEN_PER_ASKER}); ask again once one has settled.`;
		const ofClient = byClient.get(inbox) ?? 0;
		if (ofClient >= maxOpenPerClient)
			return `This client already has ${ofClient} requests open in this room, the most one client (inbox) may have (maxOpenPerClient = ${maxOpenPerClient}); ask again once one has settled.`;
		if (held.size >= maxRoomRequests)
			return `The room already holds ${held.size} open requests, the most it holds from all askers together (maxRoomRequests = ${maxRoomRequests}); ask again later.`;
		// Kept answers are a convenience: the oldest make way for a new request before it is refused.
		for (const key of dropped.keys()) {
			if (heldBytes + droppedBytes + bytes <= maxRoomBytes) break;
			forget(key);
		}
		if (heldBytes + droppedBytes + bytes > maxRoomBytes)
			return `The room holds ${heldBytes} bytes of open requests; this one of ${bytes} bytes would pass the most it holds (maxRoomBytes = ${maxRoomBytes}); ask again later.`;
		return undefined;
	};
	/** Takes the request off the host: queued, it is dropped; shown, its dialog closes. */
	const cancel = (key: string, entry: Held, reason: "timeout" | "cancelled") => {
		drop(key, entry);
		handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: entry.hostId, reason });
	};

	const forward = (frame: NatsRequestFrame, inbox: string, bytes: number, message: BrokerMessage) => {
		const key = keyOf(inbox, frame.id);
		const macKey = sharedKey(keys.privateKey, frame.key);
		if (!macKey) return refuse(message, "malformed", "Malformed frame: request.key is not an X25519 public key.");
		const existing = held.get(key);
		if (existing) {
			// Another client that read the request and re-sends it under its own key gets nothing.
			if (existing.askerKey !== frame.key) return;
			// A re-send that crossed our first reply: already queued, just say so.
			existing.lastHeard = Date.now();
			return pong(inbox, frame.id, true, existing.macKey);
		}
		const session = natsAsker(frame.asker, frame.machine, frame.pid).sessionId;
		const limit = overLimit(inbox, session, bytes);
		if (limit) return answer(inbox, frame.id, "error", limit, macKey);
		// What this host collected before the asker fell silent counts too: its progress may have been lost on the way.
		const kept = dropped.get(key)?.askerKey === frame.key && dropped.get(key)?.cancelHash === frame.cancelHash ? forget(key) : undefined;
		const given = [...(frame.answers ?? []), ...(kept?.answers ?? []).filter((a) => !frame.answers?.some((b) => b.question === a.question && b.id === a.id))];
		const claim = handle.host();
		if (!claim)
			return answer(
				inbox,
				frame.id,
				"no-host",
				"No session with a UI holds the host role in the host process (it is between sessions, or it has none).",
				macKey,
			);
		if (claim.protocol !== PROTOCOL_VERSION)
			return answer(
				inbox,
				frame.id,
				"error",
				`The host speaks checkpoint-bridge protocol v${claim.protocol}; its room server speaks v${PROTOCOL_VERSION}.`,
				macKey,
			);
		const entry: Held = {
			clientId: frame.id,
			inbox,
			hostId: nanoid(),
			session,
			bytes,
			askerKey: frame.key,
			macKey,
			cancelHash: frame.cancelHash,
			answers: given,
			lastHeard: Date.now(),
			listener: (reply) => {
				// Only what the host role sent goes back to the asker.
				if (!handle.isFromHost(reply, entry.hostId)) return;
				entry.answers = reply.answers;
				if (reply.kind === "result") {
					drop(key, entry);
					sendFor(inbox, { ...reply, type: "result", v: NATS_VERSION, id: frame.id }, macKey);
				} else if (reply.kind === "progress") sendFor(inbox, { ...reply, type: "progress", v: NATS_VERSION, id: frame.id }, macKey);
			},
		};
		hold(key, entry);
		const now = Date.now();
		const budgetMs = Math.max(0, Math.min(frame.budgetMs, MAX_TIMEOUT_MS));
		const delivered = handle.bus.emit("request", {
			// The frame spoke the wire's version; the bus speaks its own.
			v: PROTOCOL_VERSION,
			id: entry.hostId,
			asker: natsAsker(frame.asker, frame.machine, frame.pid),
			questions: frame.questions,
			// The asker's clock is not ours: the deadline is set here from the milliseconds it had left. A call without a
			// budget (its deadline 0) is held while its asker keeps pinging, as a local one is while its session lives.
			deadline: frame.deadline === NO_LIMIT ? NO_LIMIT : now + budgetMs,
			dialogTimeoutMs: Math.min(frame.dialogTimeoutMs, MAX_TIMEOUT_MS),
			createdAt: now,
			// Set here, never taken from the frame: each NATS client (its inbox) is an origin of its own (ADR-0003), as a socket connection is.
			origin: `nats:${inbox}`,
			...(given.length > 0 ? { answers: given } : {}),
			...(frame.resent === true ? { resent: true } : {}),
		});
		if (!delivered && held.get(key) === entry) {
			drop(key, entry);
			answer(inbox, frame.id, "no-host", "The host role is claimed in the host process but nothing is listening for questions.", macKey);
		}
	};

	const onMessage = (expected: "request" | "cancel" | "ping") => (message: BrokerMessage) => {
		if (closed || message.noResponders) return;
		const checked = decodeNatsFrame(message.data);
		if (!checked.ok) return refuse(message, checked.code, checked.message);
		const frame = checked.frame;
		if (frame.type !== expected) return refuse(message, "unexpected", `A ${frame.type} frame does not belong on the ${expected} subject.`);
		// Without an inbox nothing can be answered, and the request could not be told apart from another asker's.
		if (!message.reply) return;
		if (message.reply.length > MAX_INBOX_LENGTH)
			return refuse(message, "malformed", `The reply subject is ${message.reply.length} characters; the room takes at most ${MAX_INBOX_LENGTH}.`);
		if (frame.type === "request") return forward(frame, message.reply, message.data.byteLength, message);
		const key = keyOf(message.reply, frame.id);
		const entry = held.get(key);
		if (frame.type === "cancel") {
			// Only the asker knows the secret: anyone else who read its inbox off the room is ignored, unanswered.
			if (entry && secretMatches(frame.secret, entry.cancelHash)) cancel(key, entry, frame.reason);
			return;
		}
		if (frame.type === "ping") {
			if (entry) entry.lastHeard = Date.now();
			pong(message.reply, frame.id, entry !== undefined, (entry ?? dropped.get(key))?.macKey);
		}
	};

	// Notices are a courtesy, and anyone in the room can send one: a bounded number per window for the whole room.
	const notices = new NoticeWindow(MAX_ROOM_NOTICES_PER_WINDOW, ROOM_NOTICE_WINDOW_MS);
	const onNotice = (message: BrokerMessage) => {
		if (closed || message.noResponders) return;
		const checked = decodeNatsFrame(message.data);
		if (!checked.ok) return refuse(message, checked.code, checked.message);
		const frame = checked.frame;
		if (frame.type !== "notice") return refuse(message, "unexpected", `A ${frame.type} frame does not belong on the notice subject.`);
		if (!notices.take()) return;
		handle.bus.emit("relay:notice", {
			v: PROTOCOL_VERSION,
			asker: natsAsker(frame.asker, frame.machine, frame.pid),
			message: frame.message,
			type: frame.level,
			origin: "nats",
		});
	};

	const unsubscribe = [
		broker.subscribe(subjects.notice, onNotice),
		broker.subscribe(subjects.request, onMessage("request")),
		broker.subscribe(subjects.cancel, onMessage("cancel")),
		broker.subscribe(subjects.ping, onMessage("ping")),
		broker.subscribe(subjects.host, (message) => {
			if (!closed && message.reply) send(message.reply, { type: "host", v: NATS_VERSION, host: hostId });
		}),
	];

	// An asker that died, hung or was cut off stops pinging: its question leaves the queue.
	const sweeper = setInterval(() => {
		const now = Date.now();
		for (const [key, entry] of [...held])
			if (now - entry.lastHeard > silenceMs) {
				cancel(key, entry, "cancelled");
				if (entry.answers.length > 0) {
					forget(key);
					const bytes = Buffer.byteLength(JSON.stringify(entry.answers));
					dropped.set(key, { answers: entry.answers, at: now, bytes, askerKey: entry.askerKey, macKey: entry.macKey, cancelHash: entry.cancelHash });
					droppedBytes += bytes;
				}
			}
		for (const [key, { at }] of dropped) if (now - at > keepDroppedMs || dropped.size > MAX_DROPPED) forget(key);
	}, options.tickMs ?? TICK_MS);
	sweeper.unref?.();

	return {
		hostId,
		get heldCount() {
			return held.size;
		},
		get heldBytes() {
			return heldBytes + droppedBytes;
		},
		close(note = DEFAULT_CLOSE_NOTE) {
			if (closed) return;
			closed = true;
			clearInterval(sweeper);
			dropped.clear();
			droppedBytes = 0;
			for (const [key, entry] of [...held]) {
				// Let go rather than settle: an asker with a grace waits for the next host, keeping its answers.
				pong(entry.inbox, entry.clientId, false, entry.macKey, note);
				cancel(key, entry, "cancelled");
			}
			for (const off of unsubscribe) off();
		},
	};
}
