/**
 * The host side on NATS: a room's subjects handed to the host process's bridge (core/bridge/bridge.ts), like
 * the local endpoint (ADR-0002): a request joins the one queue of whichever session holds the host
 * role, and its replies go back to the asker's inbox under the asker's id. Each open request must be pinged by its asker: one that falls silent is
 * cancelled (its dialog dismissed), as a closed socket's requests are, but for one asked with `wait: false`,
 * which stays, its end going to the host's session (the bridge's `closeClient`). What a room holds is
 * bounded per asker session, per client (its inbox) and in all, and every frame for a request is
 * sealed for its asker (seal.ts): only that asker can cancel it, only this host can answer it.
 * Notices of other extensions (interop/dialog-relay.ts) are shown to the human, a bounded number per window.
 */
import { nanoid } from "nanoid";
import { Bridge, type BridgedRequest } from "../../core/bridge/bridge.ts";
import { ACK_WAIT_MS, FRAME_VERSION, type LateFrame, type ResultFrame } from "../../core/bridge/frames.ts";
import { type AskerIdentity, markedAsker } from "../../core/shared/identity.ts";
import { MAX_NOTICES_PER_WINDOW, NOTICE_WINDOW_MS } from "../../core/shared/notice-window.ts";
import type { SharedHandle } from "../../core/shared/shared-handle.ts";
import { MAX_OPEN_PER_ASKER } from "../../model/limits.ts";
import type { Broker, BrokerMessage } from "./broker.ts";
import { decodeNatsFrame, type NatsRequestFrame } from "./frames.ts";
import { SILENCE_MS, TICK_MS } from "./liveness.ts";
import { type RoomReplies, roomReplies } from "./room-server/replies.ts";
import { type ResendAnswers, resendAnswers } from "./room-server/resend-answers.ts";
import { type MacKeys, macKeys, newKeyPair, secretMatches } from "./seal.ts";
import { type RoomSubjects, roomSubjects } from "./subjects.ts";

/** What a room server bridges: a connection, the host process's bus, a room. */
export interface RoomServerOptions {
	broker: Broker;
	/** The process's shared handle: its bus reaches the host. */
	handle: SharedHandle;
	/** The room's subject prefix (`cpb.<room>`). */
	prefix: string;
	/** An asker silent this long is gone: its request is cancelled (one asked with `wait: false` stays, its end for the host's session). @default SILENCE_MS */
	silenceMs?: number;
	/** How often silence is checked. @default TICK_MS */
	tickMs?: number;
	/** How long the answers of a request dropped for silence are kept for its asker's re-send. @default KEEP_RESEND_ANSWERS_MS */
	keepResendAnswersMs?: number;
	/** Most requests one client (one inbox) may have open. @default MAX_OPEN_PER_CLIENT (128) */
	maxOpenPerClient?: number;
	/** Most requests the room holds at once, whoever asks. @default MAX_ROOM_REQUESTS (1024) */
	maxRoomRequests?: number;
	/** Most bytes of request frames and kept answers the room holds at once. @default MAX_ROOM_BYTES (16 MiB) */
	maxRoomBytes?: number;
	/** How long an end sent to an asker that acks waits for its ack before the host's session takes it. @default ACK_WAIT_MS */
	ackWaitMs?: number;
}

/** Most requests one client (one inbox) may have open at once, as one local connection may. @default 128 */
export const MAX_OPEN_PER_CLIENT = 128;
/** Most requests a room holds at once: a bound that no choice of inboxes or session ids evades. @default 1024 */
export const MAX_ROOM_REQUESTS = 1_024;
/** Most bytes (request frames as received, kept answers as JSON) a room holds at once. @default 16 MiB */
export const MAX_ROOM_BYTES = 16 * 1024 * 1024;
/** Most notices the room brings the human per ROOM_NOTICE_WINDOW_MS, from all askers together (the bridge's one window); the rest are dropped. @default 20 */
export const MAX_ROOM_NOTICES_PER_WINDOW = MAX_NOTICES_PER_WINDOW;
/** The window MAX_ROOM_NOTICES_PER_WINDOW counts in, in ms. @default 10000 */
export const ROOM_NOTICE_WINDOW_MS = NOTICE_WINDOW_MS;
/** Askers' keys whose MAC key the room keeps (one per asker process, which keeps its key pair). @default 256 */
const MAX_MAC_KEYS = 256;
/** Longest reply subject (inbox) accepted; NATS inboxes are about 30 characters. @default 256 */
export const MAX_INBOX_LENGTH = 256;

/**
 * The answers of a request whose asker fell silent are kept this long: when the asker comes back
 * (a nats-server restart, a fail-over) and re-sends, they are put back even if the progress that
 * carried them never reached it. @default 600_000 (10 min)
 */
export const KEEP_RESEND_ANSWERS_MS = 600_000;
/** At most this many requests' answers are kept for a re-send; the oldest go first. @default 1000 */
const MAX_RESEND_ANSWERS = 1_000;

/** Requests of the room that ended `timeout` and may still end late, kept for their late frame; the oldest go first. @default 256 */
const MAX_ROOM_LATE = 256;
/** A room served from this process. */
export interface RoomServer {
	/** This serving instance's id, sent in pongs. */
	readonly hostId: string;
	/** Stops serving: every open request is let go (its asker hears it at once) and dropped from the host's queue. */
	close(note?: string): void;
}

/** How a NATS asker is shown: its own label, marked with the machine and process it asks from. */
export function natsAsker(asker: AskerIdentity, machine: string, pid: number): AskerIdentity {
	return markedAsker(asker, `${machine.replace(/[^\w.-]+/g, "-")}:${pid}`);
}

const DEFAULT_CLOSE_NOTE = "The host stopped serving the room before the questions were answered.";

/** What the room keeps of a request the bridge holds for it (the bridge's client is its asker's inbox). */
interface Sealing {
	/** The asker's public key and the MAC key derived from it: every frame for this request is sealed. */
	askerKey: string;
	macKey: Buffer;
	/** Hash of the asker's cancel secret. */
	cancelHash: string;
	lastHeard: number;
}

/** What one served room works with. */
interface Room {
	hostId: string;
	bridge: Bridge<Sealing>;
	replies: RoomReplies;
	/** Answers of requests whose asker fell silent, for its re-send. */
	resend: ResendAnswers;
	/** The MAC key shared with each asker's public key. */
	askerMacKeys: MacKeys;
	closed(): boolean;
}

/** The room's bridge: what it holds is bounded per asker session, per client (inbox), in number and in bytes. */
function roomBridge(handle: SharedHandle, limits: { maxOpenPerClient: number; maxRoomRequests: number; maxRoomBytes: number }, resend: ResendAnswers) {
	const { maxOpenPerClient, maxRoomRequests, maxRoomBytes } = limits;
	return new Bridge<Sealing>({
		handle,
		transport: "nats",
		server: "room server",
		caps: {
			perAsker: {
				max: MAX_OPEN_PER_ASKER,
				refusal: (open) =>
					`The asker already has ${open} requests open in this room, the most one asker session may have (MAX_OPEN_PER_ASKER = ${MAX_OPEN_PER_ASKER}); ask again once one has settled.`,
			},
			perClient: {
				max: maxOpenPerClient,
				refusal: (open) =>
					`This client already has ${open} requests open in this room, the most one client (inbox) may have (maxOpenPerClient = ${maxOpenPerClient}); ask again once one has settled.`,
			},
			total: {
				max: maxRoomRequests,
				refusal: (open) =>
					`The room already holds ${open} open requests, the most it holds from all askers together (maxRoomRequests = ${maxRoomRequests}); ask again later.`,
			},
			bytes: {
				max: maxRoomBytes,
				refusal: (open, asked) =>
					`The room holds ${open} bytes of open requests; this one of ${asked} bytes would pass the most it holds (maxRoomBytes = ${maxRoomBytes}); ask again later.`,
			},
		},
		// Late frames: what the room keeps for them is bounded for all askers together.
		lateCaps: { total: MAX_ROOM_LATE },
		// Kept answers are a convenience: the oldest make way for a new request before it is refused.
		alongside: { bytes: () => resend.bytes, freeOldest: () => resend.discardOldest() },
	});
}

/** Whether the room holds request `id` of `inbox`, sealed when its asker's key is known; `note` says why not. */
const pong = (room: Room, inbox: string, id: string, isOpen: boolean, macKey: Buffer | undefined, note?: string) =>
	room.replies.sendFor(inbox, { type: "pong", v: FRAME_VERSION.nats, id, held: isOpen, host: room.hostId, ...(note ? { note } : {}) }, macKey);

/** The asker is there: a `wait: false` request swept as gone (a nats-server restart, not an exit) goes back to it. */
const heardFrom = (entry: BridgedRequest<Sealing>) => {
	entry.own.lastHeard = Date.now();
	entry.gone = false;
};

/** Takes a request frame from `inbox` into the host's queue, or says it is there already. */
function takeRequest(room: Room, frame: NatsRequestFrame, inbox: string, bytes: number, message: BrokerMessage) {
	const { bridge, replies } = room;
	const macKey = room.askerMacKeys.get(frame.key);
	if (!macKey) return replies.refuse(message, "malformed", "Malformed frame: request.key is not an X25519 public key.");
	const existing = bridge.get(inbox, frame.id);
	if (existing) {
		// Another client that read the request and re-sends it under its own key gets nothing.
		if (existing.own.askerKey !== frame.key) return;
		// A re-send that crossed our first reply: already queued, just say so.
		heardFrom(existing);
		return pong(room, inbox, frame.id, true, existing.own.macKey);
	}
	const to = { inbox, macKey };
	bridge.take(
		{
			client: inbox,
			id: frame.id,
			asker: natsAsker(frame.asker, frame.machine, frame.pid),
			questions: frame.questions,
			// The asker's clock is not ours: the deadline is set from the milliseconds it had left, and it started now.
			deadline: frame.deadline,
			budgetMs: frame.budgetMs,
			dialogTimeoutMs: frame.dialogTimeoutMs,
			// Each NATS client (its inbox) is an origin of its own (ADR-0003), as a socket connection is.
			origin: `nats:${inbox}`,
			bytes,
			// What this host collected before the asker fell silent counts too: its progress may have been lost on the way.
			answers: () => {
				const earlier = room.resend.takeFor(inbox, frame.id, frame.key, frame.cancelHash);
				return [...(frame.answers ?? []), ...earlier.filter((a) => !frame.answers?.some((b) => b.question === a.question && b.id === a.id))];
			},
			...(frame.resent === true ? { resent: true } : {}),
			// Asked with wait: false: the asker's process may exit once it has its receipt, and the question stays.
			...(frame.later ? { later: frame.later } : {}),
			send: (reply) => replies.reply(to, reply, frame.questions.length),
			// Late frames: sent sealed to the asker's inbox as a request; its ack says the asker recorded it (an older
			// asker's empty reply: its process has it); silence or nobody listening leaves it to the host's session.
			...(frame.lateFrames ? { sendLate: (late: LateFrame) => (frame.acks ? replies.acked(to, { ...late, ack: true }) : replies.late(to, late)) } : {}),
			// The end of a request asked with wait: false, to an asker that acks: its sealed ack says recorded, or the host's session takes it.
			...(frame.acks ? { sendAcked: (result: ResultFrame) => replies.acked(to, result) } : {}),
		},
		{ askerKey: frame.key, macKey, cancelHash: frame.cancelHash, lastHeard: Date.now() },
	);
}

/** Reads the frames of one of the room's subjects: requests, cancels or pings. */
const onFrame = (room: Room, expected: "request" | "cancel" | "ping") => (message: BrokerMessage) => {
	if (room.closed() || message.noResponders) return;
	const { bridge, replies } = room;
	const checked = decodeNatsFrame(message.data);
	if (!checked.ok) return replies.refuse(message, checked.code, checked.message);
	const frame = checked.frame;
	if (frame.type !== expected) return replies.refuse(message, "unexpected", `A ${frame.type} frame does not belong on the ${expected} subject.`);
	// Without an inbox nothing can be answered, and the request could not be told apart from another asker's.
	if (!message.reply) return;
	if (message.reply.length > MAX_INBOX_LENGTH)
		return replies.refuse(message, "malformed", `The reply subject is ${message.reply.length} characters; the room takes at most ${MAX_INBOX_LENGTH}.`);
	if (frame.type === "request") return takeRequest(room, frame, message.reply, message.data.byteLength, message);
	const entry = bridge.get(message.reply, frame.id);
	if (frame.type === "cancel") {
		// Only the asker knows the secret: anyone else who read its inbox off the room is ignored, unanswered.
		if (entry && secretMatches(frame.secret, entry.own.cancelHash)) bridge.cancel(entry, frame.reason);
		return;
	}
	if (frame.type === "ping") {
		if (entry) heardFrom(entry);
		pong(room, message.reply, frame.id, entry !== undefined, (entry?.own ?? room.resend.get(message.reply, frame.id))?.macKey);
	}
};

/** Subscribes the room's subjects; returns their unsubscribes. */
function subscribeRoom(room: Room, broker: Broker, subjects: RoomSubjects): (() => void)[] {
	// Notices are a courtesy, and anyone in the room can send one: a bounded number per window for the whole room (the bridge's window).
	const onNotice = (message: BrokerMessage) => {
		if (room.closed() || message.noResponders) return;
		const checked = decodeNatsFrame(message.data);
		if (!checked.ok) return room.replies.refuse(message, checked.code, checked.message);
		const frame = checked.frame;
		if (frame.type !== "notice") return room.replies.refuse(message, "unexpected", `A ${frame.type} frame does not belong on the notice subject.`);
		room.bridge.notice(natsAsker(frame.asker, frame.machine, frame.pid), frame, "nats");
	};
	return [
		broker.subscribe(subjects.notice, onNotice),
		broker.subscribe(subjects.request, onFrame(room, "request")),
		broker.subscribe(subjects.cancel, onFrame(room, "cancel")),
		broker.subscribe(subjects.ping, onFrame(room, "ping")),
		broker.subscribe(subjects.host, (message) => {
			if (!room.closed() && message.reply) room.replies.send(message.reply, { type: "host", v: FRAME_VERSION.nats, host: room.hostId });
		}),
	];
}

/**
 * An asker that died, hung or was cut off stops pinging: its question leaves the queue, but for one asked
 * with wait: false, which stays, its end going to the host's session (as the local endpoint's on a closed connection).
 */
function sweepSilent({ bridge, resend }: Room, silenceMs: number) {
	const now = Date.now();
	for (const entry of bridge.openRequests())
		if (now - entry.own.lastHeard > silenceMs) {
			if (entry.later) {
				entry.gone = true;
				continue;
			}
			bridge.cancel(entry, "cancelled");
			if (entry.answers.length > 0) {
				const { askerKey, macKey, cancelHash } = entry.own;
				resend.keep(entry.client, entry.id, { answers: entry.answers, askerKey, macKey, cancelHash }, now);
			}
		}
	resend.expire(now);
}

/** Serves a room on `broker` into the host's bus. The caller checks first that nobody else serves it. */
export function serveRoom(options: RoomServerOptions): RoomServer {
	const { broker, handle } = options;
	const hostId = nanoid();
	const keys = newKeyPair();
	const resend = resendAnswers(options.keepResendAnswersMs ?? KEEP_RESEND_ANSWERS_MS, MAX_RESEND_ANSWERS);
	const limits = {
		maxOpenPerClient: options.maxOpenPerClient ?? MAX_OPEN_PER_CLIENT,
		maxRoomRequests: options.maxRoomRequests ?? MAX_ROOM_REQUESTS,
		maxRoomBytes: options.maxRoomBytes ?? MAX_ROOM_BYTES,
	};
	let closed = false;
	const room: Room = {
		hostId,
		bridge: roomBridge(handle, limits, resend),
		replies: roomReplies(broker, keys.publicKey, options.ackWaitMs ?? ACK_WAIT_MS),
		resend,
		askerMacKeys: macKeys(keys.privateKey, MAX_MAC_KEYS),
		closed: () => closed,
	};
	const unsubscribe = subscribeRoom(room, broker, roomSubjects(options.prefix));
	const silenceMs = options.silenceMs ?? SILENCE_MS;
	const sweeper = setInterval(() => sweepSilent(room, silenceMs), options.tickMs ?? TICK_MS);
	sweeper.unref?.();

	return {
		hostId,
		close(note = DEFAULT_CLOSE_NOTE) {
			if (closed) return;
			closed = true;
			clearInterval(sweeper);
			// Stale once the request is let go: it would tell the asker this host still holds it.
			room.replies.clear();
			room.bridge.discardLate();
			resend.clear();
			for (const entry of room.bridge.openRequests()) {
				// Let go rather than settle: an asker with a grace waits for the next host, keeping its answers.
				pong(room, entry.client, entry.id, false, entry.own.macKey, note);
				room.bridge.cancel(entry, "cancelled");
			}
			for (const off of unsubscribe) off();
		},
	};
}
