/**
 * The host side on NATS: a bridge from a room's subjects onto the host process's bus, like the
 * local endpoint (ADR-0002). A request is emitted on the bus under a fresh id, so it joins the one
 * queue of whichever session holds the host role; its replies go back to the asker's inbox under
 * the asker's id. Each held request must be pinged by its asker: one that falls silent is
 * cancelled (its dialog dismissed), as a closed socket's requests are.
 */
import { nanoid } from "nanoid";
import { MAX_TIMEOUT_MS } from "../../core/config.ts";
import { askerIdentity } from "../../core/identity.ts";
import { type AskerIdentity, PROTOCOL_VERSION, type RelayReply, replyChannel } from "../../core/protocol.ts";
import type { SharedHandle } from "../../core/shared-handle.ts";
import type { Answer } from "../../model/answer.ts";
import type { Status } from "../../model/result.ts";
import { type ErrorCode, errorFrame, WIRE_VERSION } from "../wire.ts";
import type { Broker, BrokerMessage } from "./broker.ts";
import { decodeNatsFrame, encodeNatsFrame, type NatsFrame, type NatsRequestFrame } from "./frames.ts";
import { SILENCE_MS, TICK_MS } from "./liveness.ts";
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
}

/**
 * The answers of a request whose asker fell silent are kept this long: when the asker comes back
 * (a nats-server restart, a fail-over) and re-sends, they are put back even if the progress that
 * carried them never reached it. @default 600_000 (10 min)
 */
export const KEEP_DROPPED_MS = 600_000;
/** At most this many dropped requests' answers are kept; the oldest go first. @default 1000 */
export const MAX_DROPPED = 1_000;

/** A room served from this process. */
export interface RoomServer {
	/** This serving instance's id, sent in pongs. */
	readonly hostId: string;
	/** Requests held for askers now (for tests and diagnostics). */
	readonly heldCount: number;
	/** Stops serving: every held request is let go (its asker hears it at once) and dropped from the host's queue. */
	close(note?: string): void;
}

/** How a NATS asker is shown: its own label, marked with the machine and process it asks from. */
export function natsAsker(asker: AskerIdentity, machine: string, pid: number): AskerIdentity {
	const own = askerIdentity(asker.label, asker.sessionId);
	const where = `${machine.replace(/[^\w.-]+/g, "-")}:${pid}`;
	return { label: `${own.label} (${where})`, sessionId: `${where}/${asker.sessionId}` };
}

const DEFAULT_CLOSE_NOTE = "The host stopped serving the room before the questions were answered.";

interface Held {
	clientId: string;
	inbox: string;
	hostId: string;
	/** Its origin on the bus: answers are shared only within one origin. */
	origin: string;
	listener: (reply: RelayReply) => void;
	answers: Answer[];
	lastHeard: number;
}

/** Serves a room on `broker` into the host's bus. The caller checks first that nobody else serves it. */
export function serveRoom(options: RoomServerOptions): RoomServer {
	const { broker, handle } = options;
	const silenceMs = options.silenceMs ?? SILENCE_MS;
	const subjects = roomSubjects(options.prefix);
	const hostId = nanoid();
	// Keyed by inbox and the asker's id: two askers cannot collide, and nobody without the inbox can touch a request.
	const held = new Map<string, Held>();
	/** Answers of requests dropped because their asker fell silent, by the same key, oldest first. */
	const dropped = new Map<string, { answers: Answer[]; at: number }>();
	const keepDroppedMs = options.keepDroppedMs ?? KEEP_DROPPED_MS;
	const keyOf = (inbox: string, id: string) => `${inbox}\n${id}`;
	let closed = false;

	const send = (inbox: string, frame: NatsFrame) => broker.publish(inbox, encodeNatsFrame(frame));
	const answer = (inbox: string, id: string, status: Status, note: string, answers: Answer[] = []) =>
		send(inbox, { type: "result", v: WIRE_VERSION, id, kind: "result", status, answers, note });
	const pong = (inbox: string, id: string, isHeld: boolean, note?: string) =>
		send(inbox, { type: "pong", v: WIRE_VERSION, id, held: isHeld, host: hostId, ...(note ? { note } : {}) });
	const refuse = (message: BrokerMessage, code: ErrorCode, text: string) => {
		// Refused to its sender only, and only when it gave an address; never shown, never logged.
		if (message.reply) send(message.reply, errorFrame(code, text));
	};

	const drop = (key: string, entry: Held) => {
		handle.bus.off(replyChannel(entry.hostId), entry.listener);
		held.delete(key);
	};
	/** Takes the request off the host: queued, it is dropped; shown, its dialog closes. */
	const cancel = (key: string, entry: Held, reason: "timeout" | "cancelled") => {
		drop(key, entry);
		handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: entry.hostId, reason });
	};

	const forward = (frame: NatsRequestFrame, inbox: string) => {
		const key = keyOf(inbox, frame.id);
		// What this host collected before the asker fell silent counts too: its progress may have been lost on the way.
		const kept = dropped.get(key);
		dropped.delete(key);
		const given = [...(frame.answers ?? []), ...(kept?.answers ?? []).filter((a) => !frame.answers?.some((b) => b.question === a.question && b.id === a.id))];
		const existing = held.get(key);
		if (existing) {
			// A re-send that crossed our first reply: already queued, just say so.
			existing.lastHeard = Date.now();
			return pong(inbox, frame.id, true);
		}
		const claim = handle.host();
		if (!claim)
			return answer(inbox, frame.id, "no-host", "No session with a UI holds the host role in the host process (it is between sessions, or it has none).");
		if (claim.protocol !== PROTOCOL_VERSION)
			return answer(inbox, frame.id, "error", `The host speaks checkpoint-bridge protocol v${claim.protocol}; its room server speaks v${PROTOCOL_VERSION}.`);
		const entry: Held = {
			clientId: frame.id,
			inbox,
			hostId: nanoid(),
			origin: `nats:${nanoid()}`,
			answers: given,
			lastHeard: Date.now(),
			listener: (reply) => {
				// Only what the host role sent goes back to the asker.
				if (!handle.isFromHost(reply, entry.hostId)) return;
				entry.answers = reply.answers;
				if (reply.kind === "result") {
					drop(key, entry);
					send(inbox, { ...reply, type: "result", v: WIRE_VERSION, id: frame.id });
				} else if (reply.kind === "progress") send(inbox, { ...reply, type: "progress", v: WIRE_VERSION, id: frame.id });
			},
		};
		held.set(key, entry);
		handle.bus.on(replyChannel(entry.hostId), entry.listener);
		const now = Date.now();
		const budgetMs = Math.max(0, Math.min(frame.budgetMs, MAX_TIMEOUT_MS));
		const delivered = handle.bus.emit("request", {
			// The frame spoke the wire's version; the bus speaks its own.
			v: PROTOCOL_VERSION,
			id: entry.hostId,
			asker: natsAsker(frame.asker, frame.machine, frame.pid),
			questions: frame.questions,
			// The asker's clock is not ours: the deadline is set here from the milliseconds it had left.
			deadline: now + budgetMs,
			dialogTimeoutMs: Math.min(frame.dialogTimeoutMs, MAX_TIMEOUT_MS),
			createdAt: now,
			// Set here, never taken from the frame: each NATS request is an origin of its own (ADR-0003), as a socket connection is.
			origin: entry.origin,
			...(given.length > 0 ? { answers: given } : {}),
		});
		if (!delivered && held.get(key) === entry) {
			drop(key, entry);
			answer(inbox, frame.id, "no-host", "The host role is claimed in the host process but nothing is listening for questions.");
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
		if (frame.type === "request") return forward(frame, message.reply);
		const key = keyOf(message.reply, frame.id);
		const entry = held.get(key);
		if (frame.type === "cancel") {
			if (entry) cancel(key, entry, frame.reason);
			return;
		}
		if (frame.type === "ping") {
			if (entry) entry.lastHeard = Date.now();
			pong(message.reply, frame.id, entry !== undefined);
		}
	};

	const unsubscribe = [
		broker.subscribe(subjects.request, onMessage("request")),
		broker.subscribe(subjects.cancel, onMessage("cancel")),
		broker.subscribe(subjects.ping, onMessage("ping")),
		broker.subscribe(subjects.host, (message) => {
			if (!closed && message.reply) send(message.reply, { type: "host", v: WIRE_VERSION, host: hostId });
		}),
	];

	// An asker that died, hung or was cut off stops pinging: its question leaves the queue.
	const sweeper = setInterval(() => {
		const now = Date.now();
		for (const [key, entry] of [...held])
			if (now - entry.lastHeard > silenceMs) {
				cancel(key, entry, "cancelled");
				if (entry.answers.length > 0) dropped.set(key, { answers: entry.answers, at: now });
			}
		for (const [key, { at }] of dropped) if (now - at > keepDroppedMs || dropped.size > MAX_DROPPED) dropped.delete(key);
	}, options.tickMs ?? TICK_MS);
	sweeper.unref?.();

	return {
		hostId,
		get heldCount() {
			return held.size;
		},
		close(note = DEFAULT_CLOSE_NOTE) {
			if (closed) return;
			closed = true;
			clearInterval(sweeper);
			dropped.clear();
			for (const [key, entry] of [...held]) {
				// Let go rather than settle: an asker with a grace waits for the next host, keeping its answers.
				pong(entry.inbox, entry.clientId, false, note);
				cancel(key, entry, "cancelled");
			}
			for (const off of unsubscribe) off();
		},
	};
}
