/**
 * The bridge: the host side of a transport (the local endpoint, a NATS room), written once for both.
 * A request an asker sends through the transport is put on the process-global bus as a local asker
 * puts its own, under the asker's own id when that names nothing else in the host (else a fresh one),
 * so it joins the one queue of whichever session holds the host role and the asker, the host, the
 * page and every notice name it alike; only what the host sends for it goes back, under the asker's id, as frames in the
 * transport's version (frames.ts). The bridge holds what the transport's askers have open, with the
 * caps on it, the host checks and what they tell an asker, and the transport's one window of
 * notices. A transport keeps its framing and its connections: it reads and checks frames, says who
 * asks from where, and sends what the bridge gives it.
 */
import { nanoid } from "nanoid";
import type { Answer } from "../../model/answer.ts";
import type { QuestionInput } from "../../model/question.ts";
import { makeEnvelope, type Status } from "../../model/result.ts";
import { endTakers, homeRoute, type LateTaker } from "../delivery/route-home.ts";
import { MAX_TIMEOUT_MS, NO_LIMIT } from "../shared/config.ts";
import type { AskerIdentity } from "../shared/identity.ts";
import { NoticeWindow } from "../shared/notice-window.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayResult, replyChannel } from "../shared/protocol.ts";
import type { SharedHandle } from "../shared/shared-handle.ts";
import { currentStore } from "../store/open.ts";
import type { StoredEnd } from "../store/store.ts";
import { FRAME_VERSION, type LateFrame, type NoticeFrame, type ReplyFrame, type ResultFrame, type Transport } from "./frames.ts";

/** One cap on what the bridge holds: the most, and what an asker past it is told, given how many are open. */
interface Cap {
	max: number;
	refusal: (open: number) => string;
}

/** What the bridge holds at most; a request past a cap gets an `error` result naming it, and nothing else changes. */
interface BridgeCaps {
	/** Per asker session (as shown, so per process or machine too). @default none of the bridge's own: the dialog host's holds */
	perAsker?: Cap;
	/** Per client: a connection, an inbox. */
	perClient?: Cap;
	/** For all clients together. */
	total?: Cap;
	/** Bytes of requests as received, and of what the transport keeps beside them (`alongside`), for all together; told the bytes of the open requests and those asked. */
	bytes?: { max: number; refusal: (open: number, asked: number) => string };
}

export interface BridgeOptions {
	/** The process's shared handle: its bus reaches the host, its claim says whether there is one. */
	handle: SharedHandle;
	/** Whose frames the bridge sends: their version. */
	transport: Transport;
	/** How the transport's host side names itself when the host speaks another bus protocol ("its endpoint speaks v1"). */
	server: string;
	caps?: BridgeCaps;
	/** Bytes the transport keeps beside its open requests, and a way to free its oldest first when a request needs the room. @default none */
	alongside?: { bytes(): number; freeOldest(): boolean };
	/** The transport's one window of notices, for all its askers together: a hundred connections bring no more than one. @default a NoticeWindow of the defaults */
	notices?: NoticeWindow;
	/** Late frames: how many requests that ended `timeout` are kept for their late end, per client and for all together; the oldest go first. @default no bound */
	lateCaps?: LateCaps;
}

/** How many requests that ended `timeout` are kept for their late end, per client and for all together. */
interface LateCaps {
	perClient?: number;
	total?: number;
}

/** One request as its transport read it, in the host's terms. */
export interface Asked {
	/** Who carries it: a connection, an inbox. Replies go back through it; caps count per client. */
	client: string;
	/** The asker's id for it, carried by its replies; unique per client. */
	id: string;
	/** Who asks, as shown (markedAsker, identity.ts). */
	asker: AskerIdentity;
	questions: QuestionInput[];
	/** When the call's budget runs out, in the asker's clock; NO_LIMIT for none. */
	deadline: number;
	/** What was left of the budget when sent, for an asker whose clock is not the host's: the deadline is set here from it. @default the deadline is taken as it is */
	budgetMs?: number;
	dialogTimeoutMs: number;
	/** When the call started, in the host's clock. @default now, for an asker whose clock is not the host's */
	createdAt?: number;
	/** Where it came from (protocol.ts): set by the transport, never taken from the asker's text. */
	origin: string;
	/** The request frame's size, counted against `caps.bytes`. @default 0 */
	bytes?: number;
	/** The same for every copy of a re-sent request, so one sent twice is shown once. @default a fresh id */
	hostId?: string;
	/** Answers the asker already has (a re-send); read only once the caps let the request in. @default none */
	answers?: () => Answer[];
	resent?: boolean;
	/** Asked with `wait: false`: outlives its client, its end then going to the host's session. */
	later?: true;
	/** Sends a frame to the asker, through its client. */
	send: (frame: ReplyFrame) => void;
	/**
	 * Late frames (ask now, answer later): set when the asker takes them (RequestFrame.lateFrames).
	 * Sends the late end of a request that ended `timeout` to the asker; whether its process took it
	 * (when not, the host's session gets it). @default none: a late end goes to the host's session
	 */
	sendLate?: (frame: LateFrame) => boolean | Promise<boolean>;
	/**
	 * For an asker that acks (RequestFrame.acks): sends the result of a request asked with `wait: false`
	 * marked `ack`, resolving true once the asker acked it recorded in its session; false on a refusal,
	 * a closed connection or no ack within the bound, and the host's session gets the end instead.
	 * @default none: the result is sent as any other, and its end is the asker's once sent
	 */
	sendAcked?: (frame: ResultFrame) => Promise<boolean>;
}

/** An open request of an asker of another process, as its transport's bridge keeps it, with what its transport keeps of it (`own`). */
export interface BridgedRequest<Own> {
	readonly client: string;
	readonly id: string;
	/** Its id in the host: the asker's own when it named nothing else there (idInHost), so no asker can address another's replies. */
	readonly hostId: string;
	/** The asker session it counts against. */
	readonly session: string;
	readonly bytes: number;
	/** The answers the host last reported. */
	answers: Answer[];
	/** Asked with `wait: false`: who asked what, for the message its end becomes once its client is gone. */
	readonly later?: { asker: AskerIdentity; questions: string[]; createdAt: number };
	/** Its client went while it was asked with `wait: false`: its end goes to the host's session. */
	gone: boolean;
	readonly own: Own;
	readonly listener: (reply: RelayReply) => void;
	/** How its late end reaches the asker (Asked.sendLate). */
	readonly sendLate?: (frame: LateFrame) => boolean | Promise<boolean>;
}

/** A request that ended `timeout` for an asker that takes late frames: registered with the route home's takers. */
interface LateWait {
	client: string;
	listener: LateTaker;
	/** Closes its registration: its late end is no longer taken back. */
	close?: () => void;
}

const bump = (counts: Map<string, number>, key: string, by: number) => {
	const next = (counts.get(key) ?? 0) + by;
	if (next > 0) counts.set(key, next);
	else counts.delete(key);
};

/**
 * Late frames (ask now, answer later) of one transport: the requests that ended `timeout` whose late
 * end the asker takes, by client and id, oldest first. Bounded per client and in all, the oldest dropped.
 */
class LateWaits {
	readonly #waits = new Map<string, LateWait>();
	readonly #handle: SharedHandle;
	readonly #version: number;
	readonly #caps: LateCaps;

	constructor(handle: SharedHandle, version: number, caps: LateCaps = {}) {
		this.#handle = handle;
		this.#version = version;
		this.#caps = caps;
	}

	/**
	 * Listens for the late end of a request that ended `timeout` and sends it on through its
	 * transport; the host is told whether the asker's process took it.
	 */
	await(open: BridgedRequest<unknown>): void {
		const { sendLate } = open;
		if (!sendLate) return;
		const handle = this.#handle;
		const key = keyOf(open.client, open.id);
		const old = this.#waits.get(key);
		if (old) this.#delete(key, old);
		const wait: LateWait = {
			client: open.client,
			listener: (late, taken) => {
				// Only what the host role sealed for this request goes on.
				if (!handle.isFromHost(late, open.hostId)) return;
				this.#delete(key, wait);
				const { v: _v, ...rest } = late;
				let sent: boolean | Promise<boolean>;
				// A transport that throws while sending (a frame it cannot write) must not take the answer with it: the host's session gets it.
				try {
					sent = sendLate({ ...rest, type: "late", v: this.#version, id: open.id });
				} catch {
					sent = false;
				}
				if (typeof sent === "boolean") taken(sent);
				else void sent.then(taken, () => taken(false));
			},
		};
		this.#waits.set(key, wait);
		wait.close = endTakers(handle.bus).register(open.hostId, wait.listener);
		const ofClient = [...this.#waits.entries()].filter(([, w]) => w.client === open.client);
		// A Map iterates in insertion order: the first is the oldest.
		if (ofClient.length > (this.#caps.perClient ?? Number.POSITIVE_INFINITY)) this.#delete(...ofClient[0]!);
		if (this.#waits.size > (this.#caps.total ?? Number.POSITIVE_INFINITY)) this.#delete(...this.#waits.entries().next().value!);
	}

	/** Stops listening for late ends, of one client's requests or of all. */
	discard(client?: string): void {
		for (const [key, wait] of [...this.#waits]) if (client === undefined || wait.client === client) this.#delete(key, wait);
	}

	#delete(key: string, wait: LateWait): void {
		if (this.#waits.get(key) !== wait) return;
		this.#waits.delete(key);
		wait.close?.();
	}
}

/**
 * The end of a `wait: false` request whose client is gone (or did not record it), by the one route home: the host's
 * session, naming the asker; or, lost with its host while the store keeps it open, nowhere yet.
 */
function deliverHere(handle: SharedHandle, open: BridgedRequest<unknown>, result: RelayResult): void {
	const later = open.later!;
	const envelope = makeEnvelope(result.status, [...result.answers], result.note, {
		requestId: open.id,
		asker: later.asker.label,
		waitedMs: Date.now() - later.createdAt,
		...(result.reason ? { reason: result.reason } : {}),
	});
	const delivery = {
		requestId: open.id,
		askerSessionId: later.asker.sessionId,
		asker: later.asker.label,
		questions: later.questions,
		queuedAt: later.createdAt,
	};
	const openInStore = result.status === "no-host" && currentStore()?.isOpen(open.id) === true;
	homeRoute(() => handle.host()?.sessionId, undefined, endTakers(handle.bus)).send(
		{ ...delivery, envelope },
		{ asker: later.asker, origin: open.client, id: open.hostId },
		{ gone: true, openInStore },
	);
}

/** The host side of one transport: every request its askers have open, by client and id. */
export class Bridge<Own = undefined> {
	readonly #options: BridgeOptions;
	readonly #version: number;
	readonly #notices: NoticeWindow;
	readonly #open = new Map<string, BridgedRequest<Own>>();
	readonly #byClient = new Map<string, number>();
	readonly #bySession = new Map<string, number>();
	/** How many clients have each request open (by its id in the host): cancelled on the host only when the last lets go. */
	readonly #clientsOf = new Map<string, number>();
	/** Late frames: requests that ended `timeout` and may still end late. */
	readonly #late: LateWaits;
	#bytes = 0;

	constructor(options: BridgeOptions) {
		this.#options = options;
		this.#version = FRAME_VERSION[options.transport];
		this.#notices = options.notices ?? new NoticeWindow();
		this.#late = new LateWaits(options.handle, this.#version, options.lateCaps);
	}

	get(client: string, id: string): BridgedRequest<Own> | undefined {
		return this.#open.get(keyOf(client, id));
	}

	/** The requests open, of one client or of all. */
	openRequests(client?: string): BridgedRequest<Own>[] {
		return [...this.#open.values()].filter((open) => client === undefined || open.client === client);
	}

	/** A result the bridge gives itself, without the host, in the transport's version. */
	result(id: string, status: Status, note: string, answers: Answer[] = []): ResultFrame {
		return { type: "result", v: this.#version, id, kind: "result", status, answers, note };
	}

	/**
	 * Puts a request on the bus, or answers it at once when a cap, the host's absence or its
	 * protocol stand in the way. The open request, or undefined when it was answered here. The
	 * transport has already refused an id its client has open.
	 */
	take(asked: Asked, own: Own): BridgedRequest<Own> | undefined {
		const { handle, server } = this.#options;
		const session = asked.asker.sessionId;
		const refusal = this.#overCap(asked.client, session, asked.bytes ?? 0);
		// The request is refused, not its client: the client's other requests carry on.
		if (refusal) return void asked.send(this.result(asked.id, "error", refusal));
		const answers = asked.answers?.() ?? [];
		const claim = handle.host();
		// The same answers a local asker gets when there is no host, or one of another version.
		if (!claim)
			return void asked.send(
				this.result(asked.id, "no-host", "No session with a UI holds the host role in the host process (it is between sessions, or it has none)."),
			);
		if (claim.protocol !== PROTOCOL_VERSION)
			return void asked.send(
				this.result(asked.id, "error", `The host speaks checkpoint-bridge protocol v${claim.protocol}; its ${server} speaks v${PROTOCOL_VERSION}.`),
			);
		const store = asked.resent === true ? currentStore() : undefined;
		// Written down before a restart (core/store/): ended meanwhile, its end is sent at once; open, it goes on under its id, shown once.
		const ended = store?.endOf(asked.id);
		// Given up or lost with its host (cancelled, no-host), it was never the human's end: it is asked again.
		const final = ended && ended.askerSession === asked.asker.sessionId && ended.status !== "cancelled" && ended.status !== "no-host";
		if (final) return void asked.send(this.#storedResult(asked.id, ended));
		const hostId = store?.openOf(asked.id, asked.asker.sessionId)?.hostId ?? asked.hostId ?? this.#idInHost(asked.id);
		// Sent again while the host still holds it (through another client): this one hears its replies too, nothing is shown twice.
		const alreadyOpen = this.#clientsOf.has(hostId);
		const key = keyOf(asked.client, asked.id);
		const open: BridgedRequest<Own> = {
			client: asked.client,
			id: asked.id,
			hostId,
			session,
			bytes: asked.bytes ?? 0,
			answers,
			gone: false,
			own,
			...(asked.sendLate ? { sendLate: asked.sendLate } : {}),
			...(asked.later
				? { later: { asker: asked.asker, questions: asked.questions.map((q) => String(q?.question)), createdAt: asked.createdAt ?? Date.now() } }
				: {}),
			listener: (reply) => {
				// Only what the host role sent goes back to the asker.
				if (!handle.isFromHost(reply, hostId)) return;
				open.answers = reply.answers;
				if (reply.kind === "result") {
					this.#discard(open);
					// Lost with its host while the store keeps it, it has not ended: the next host of the directory takes it back.
					if (open.gone) return deliverHere(handle, open, reply);
					if (reply.status === "timeout") this.#late.await(open);
					const frame: ResultFrame = { ...reply, type: "result", v: this.#version, id: asked.id };
					// Its end is the asker's to record: unrecorded there (the asker ended before it could, or its session is gone), it goes to the host's session.
					if (open.later && asked.sendAcked)
						return void asked.sendAcked({ ...frame, ack: true }).then(
							(recorded) => recorded || deliverHere(handle, open, reply),
							() => deliverHere(handle, open, reply),
						);
					asked.send(frame);
				} else if (reply.kind === "progress") asked.send({ ...reply, type: "progress", v: this.#version, id: asked.id });
			},
		};
		this.#add(key, open);
		if (alreadyOpen) return open;
		const now = Date.now();
		const delivered = handle.bus.emit("request", {
			// The frame spoke the transport's version; the bus speaks its own.
			v: PROTOCOL_VERSION,
			id: hostId,
			asker: asked.asker,
			questions: asked.questions,
			// Clamped as a local call's budgets are, so a request from elsewhere cannot hold the queue longer than a local one could;
			// one without a budget (0) is open while its client lives, as a local one is while its session does.
			deadline: deadlineOf(asked, now),
			dialogTimeoutMs: Math.min(asked.dialogTimeoutMs, MAX_TIMEOUT_MS),
			createdAt: asked.createdAt ?? now,
			// Set by the transport, never taken from the frame: an asker cannot claim another client's origin (ADR-0003).
			origin: asked.origin,
			// The asker's own id: the request's name in the store, across a restart of the host.
			askerId: asked.id,
			...(asked.later ? { later: true as const } : {}),
			// What it was told before is not asked again (the host checks each answer).
			...(answers.length > 0 ? { answers } : {}),
			// Sent again after its host went away: shown as asked before the restart.
			...(asked.resent === true ? { resent: true } : {}),
		});
		if (!delivered && this.#open.get(key) === open) {
			this.#discard(open);
			asked.send(this.result(asked.id, "no-host", "The host role is claimed in the host process but nothing is listening for questions."));
			return undefined;
		}
		return open;
	}

	/** The end the store kept of a request its asker sends again after a restart, as the result frame it would have had. */
	#storedResult(id: string, end: StoredEnd): ResultFrame {
		const { status, answers, note, reason } = end;
		return { type: "result", v: this.#version, id, kind: "result", status, answers, ...(note ? { note } : {}), ...(reason ? { reason } : {}) };
	}

	/** The asker gave up: the request goes from the host (queued, it is dropped; shown, its dialog closes), whatever other client still carries it. */
	cancel(open: BridgedRequest<Own>, reason: "timeout" | "cancelled"): void {
		this.#discard(open);
		// Its budget ran out before the host's verdict came: the host keeps the question late, and its end may still come.
		if (reason === "timeout") this.#late.await(open);
		this.#options.handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: open.hostId, reason });
	}

	/** One client stops carrying the request: it goes from the host unless another client still carries it. */
	release(open: BridgedRequest<Own>): void {
		if (this.#discard(open)) this.#options.handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: open.hostId, reason: "cancelled" });
	}

	/** The client went (its asking process ended or dropped it): its requests go, but those asked with `wait: false`, whose end then reaches the host's session. */
	closeClient(client: string): void {
		this.discardLate(client);
		for (const open of this.openRequests(client))
			if (open.later) open.gone = true;
			else this.release(open);
	}

	/** Stops listening for late ends, of one client's requests or of all: the host's session gets those ends. */
	discardLate(client?: string): void {
		this.#late.discard(client);
	}

	/** A notice onto the bus as a local one is put; past the transport's window, dropped (a notice is a courtesy). */
	notice(asker: AskerIdentity, frame: Pick<NoticeFrame, "message" | "level">, origin: string): void {
		if (!this.#notices.take()) return;
		this.#options.handle.bus.emit("relay:notice", { v: PROTOCOL_VERSION, asker, message: frame.message, type: frame.level, origin });
	}

	/**
	 * The asker's own id as the request's id in the host, when it is shaped as the askers' ids are and
	 * names nothing the host holds (open or late) or anyone listens on; else a fresh one. An asker
	 * that picks an id already in use gets its request under another id, never another's replies.
	 */
	#idInHost(id: string): string {
		const { handle } = this.#options;
		const { bus } = handle;
		if (!ASKER_ID.test(id) || this.#clientsOf.has(id) || bus.listenerCount(replyChannel(id)) > 0 || endTakers(bus).has(id)) return nanoid();
		const snapshot = handle.snapshot();
		const named = (request: { requestId: string }) => request.requestId === id;
		return snapshot && (snapshot.open.some(named) || snapshot.late?.some(named)) ? nanoid() : id;
	}

	/** Why one more request of `bytes` from this client and session is refused; undefined when it is not. */
	#overCap(client: string, session: string, bytes: number): string | undefined {
		const { caps = {}, alongside } = this.#options;
		const ofSession = this.#bySession.get(session) ?? 0;
		if (caps.perAsker && ofSession >= caps.perAsker.max) return caps.perAsker.refusal(ofSession);
		const ofClient = this.#byClient.get(client) ?? 0;
		if (caps.perClient && ofClient >= caps.perClient.max) return caps.perClient.refusal(ofClient);
		if (caps.total && this.#open.size >= caps.total.max) return caps.total.refusal(this.#open.size);
		if (!caps.bytes) return undefined;
		const over = () => this.#bytes + (alongside?.bytes() ?? 0) + bytes > caps.bytes!.max;
		// What the transport keeps is a convenience: its oldest make way for a new request before it is refused.
		while (over() && alongside?.freeOldest()) {}
		return over() ? caps.bytes.refusal(this.#bytes, bytes) : undefined;
	}

	#add(key: string, open: BridgedRequest<Own>): void {
		this.#open.set(key, open);
		bump(this.#bySession, open.session, 1);
		bump(this.#byClient, open.client, 1);
		bump(this.#clientsOf, open.hostId, 1);
		this.#bytes += open.bytes;
		// Listening before asking: the host may answer at once (a malformed or expired request).
		this.#options.handle.bus.on(replyChannel(open.hostId), open.listener);
	}

	/** Stops forwarding the request to its client; true when no other client carries it. */
	#discard(open: BridgedRequest<Own>): boolean {
		const key = keyOf(open.client, open.id);
		if (this.#open.get(key) !== open) return false;
		this.#options.handle.bus.off(replyChannel(open.hostId), open.listener);
		this.#open.delete(key);
		bump(this.#bySession, open.session, -1);
		bump(this.#byClient, open.client, -1);
		bump(this.#clientsOf, open.hostId, -1);
		this.#bytes -= open.bytes;
		return !this.#clientsOf.has(open.hostId);
	}
}

/** The ids the host takes as they are: the alphabet of nanoid, the askers' own, long enough not to be guessed. */
const ASKER_ID = /^[A-Za-z0-9_-]{16,128}$/;

/** Two clients' ids cannot collide. */
const keyOf = (client: string, id: string) => `${client}\n${id}`;

/** The deadline in the host's clock: from the budget left when the asker's clock is not ours, clamped as a local call's is. */
function deadlineOf(asked: Asked, now: number): number {
	if (asked.deadline === NO_LIMIT) return NO_LIMIT;
	// The asker's clock is not ours: the deadline is set here from the milliseconds it had left.
	if (asked.budgetMs !== undefined) return now + Math.max(0, Math.min(asked.budgetMs, MAX_TIMEOUT_MS));
	return Math.min(asked.deadline, now + MAX_TIMEOUT_MS);
}
