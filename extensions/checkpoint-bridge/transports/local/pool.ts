/**
 * Proven connections kept for later calls (ADR-0010). A connection is keyed by the endpoint and the
 * asker (its session and pid): answers are shared per connection origin (ADR-0003) and the cap of
 * open requests is per connection, so two sessions of one process never share one. The trust
 * checks, the token read and the handshake are done once per connection (connect.ts); a
 * connection that closes (the host is gone) ends every call on it with `no-host` at once and
 * leaves the pool, so the next call opens a fresh one with fresh checks. An idle connection does
 * not keep the process alive and is closed after `idleMs`.
 */

import { FRAME_VERSION, type LateFrame, type ReplyFrame } from "../../core/bridge/frames.ts";
import { waitAtMost } from "../../core/shared/wait.ts";
import type { EndpointAddress } from "./address.ts";
import { connectToHost, type HostConnection } from "./connect.ts";
import type { Frame } from "./frames.ts";
import { DEFAULT_MAX_OPEN_REQUESTS } from "./server.ts";

/** Default of PoolKey.idleMs: long enough to carry a burst of calls, short enough not to hold a host's descriptor for long. */
export const DEFAULT_POOL_IDLE_MS = 10_000;
/** Most calls one pooled connection carries at once: the endpoint's default cap; a further call opens another connection. */
const MAX_CALLS_PER_CONNECTION = DEFAULT_MAX_OPEN_REQUESTS;

/** The note for calls in flight on a connection that closed. */
const CLOSED_NOTE = "The host process closed the connection (it ended, crashed, or stopped serving) before the questions were answered.";

/** Whose connection it is, and how it is opened. */
export interface PoolKey {
	/** The asker's session: connections are never shared across sessions. */
	sessionId: string;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
	/** Give up when the host has not proven itself after this long: `no-host`. @default DEFAULT_CONNECT_TIMEOUT_MS (3000) */
	connectTimeoutMs?: number;
	/** Close the connection once it has carried no call for this long. @default DEFAULT_POOL_IDLE_MS (10000) */
	idleMs?: number;
}

/** One call on a pooled connection. */
export interface PooledCall {
	/** The request's line (encodeFrame), sent once the host has proven itself. */
	readonly line: string;
	/**
	 * A progress or result frame carrying this call's id. A result marked `ack` comes with `ack`, which
	 * the call calls once it has recorded the end (true) or knows it will not (false); a call that does
	 * not call it leaves the end unrecorded, and the host's session takes it.
	 */
	onReply(frame: ReplyFrame, ack?: (recorded: boolean) => void): void;
	/** The connection could not be opened, or ended: the call settles with this. */
	onEnd(status: "no-host" | "error", note: string): void;
}

/** A call's place on a connection. */
export interface Seat {
	/**
	 * The call is over: sends `last` (a cancel) if the connection is open, and frees the seat. With
	 * `onLate` (a call that ended `timeout`), the connection stays open, holding nothing, for the
	 * call's late frame, for at most `lateMs`.
	 */
	close(last?: Frame & { type: "cancel" }, late?: { onLate: (frame: LateFrame) => boolean; lateMs: number }): void;
	/**
	 * The call stays open but no longer holds the process (asked with `wait: false`, once the host has it): a process
	 * with nothing else to do exits, its connection closes, and the host gives the request's end to its own session.
	 */
	letGo(): void;
}

/** Calls one connection waits for a late frame of, the oldest forgotten first. @default 64 (the host's MAX_LATE_PER_CONNECTION) */
const MAX_LATE_WAITERS = 64;

const pools = new Map<string, PooledConnection[]>();
/** Whether any host has proven itself to this process: an asker that never had a host does not wait for one. */
let proven = false;

/** Whether a host has ever proven itself to this process over the local endpoint. */
export function hadHost(): boolean {
	return proven;
}

/** Forgets that a host was ever reached (for tests). */
export function clearHadHost(): void {
	proven = false;
}

/** Puts call `id` on a pooled connection to `address` for `key`, opening one when none has room. */
export function takeSeat(address: EndpointAddress, key: PoolKey, id: string, call: PooledCall): Seat {
	const name = JSON.stringify([address.socketPath, address.tokenPath, key.sessionId, key.pid ?? process.pid]);
	let list = pools.get(name);
	if (!list) pools.set(name, (list = []));
	let pooled = list.find((candidate) => candidate.calls.size < MAX_CALLS_PER_CONNECTION && !candidate.released);
	if (!pooled) list.push((pooled = new PooledConnection(name, address, key)));
	return pooled.seat(id, call);
}

/**
 * Sends one line that wants no reply (a notice) on a pooled connection to `address` for `key`,
 * opening one when there is none; dropped when the connection cannot be opened or ends.
 */
export function postLine(address: EndpointAddress, key: PoolKey, line: string): void {
	const name = JSON.stringify([address.socketPath, address.tokenPath, key.sessionId, key.pid ?? process.pid]);
	let list = pools.get(name);
	if (!list) pools.set(name, (list = []));
	let pooled = list[0];
	if (!pooled) list.push((pooled = new PooledConnection(name, address, key)));
	pooled.post(line);
}

/** Closes every pooled connection (calls in flight on them end `no-host`). For tests and shutdown. */
export function closePooledConnections(): void {
	for (const list of [...pools.values()]) for (const pooled of [...list]) pooled.end("no-host", CLOSED_NOTE);
}

/**
 * The session is gone while its process runs: the late frames its connections await are not taken
 * here (its host's session takes them), as over NATS. The host has no ack of a late frame on the
 * socket: it learns the session is gone when the connection closes, at once when it carries no
 * call, else once its last call is over.
 */
export function releaseLateWaits(sessionId: string): void {
	for (const list of [...pools.values()]) for (const pooled of [...list]) if (pooled.sessionId === sessionId) pooled.release();
}

/** Pooled connections open or opening now (for tests and diagnostics). */
export function pooledConnectionCount(): number {
	let count = 0;
	for (const list of pools.values()) count += list.length;
	return count;
}

class PooledConnection {
	readonly calls = new Map<string, PooledCall>();
	/** The asker session whose calls it carries (its key). */
	readonly sessionId: string;
	/** Its session is gone (releaseLateWaits): no new call, no late frame awaited, closed once it carries no call. */
	get released(): boolean {
		return this.#released;
	}
	/** Open calls that do not hold the process (Seat.letGo). */
	readonly #letGo = new Set<string>();
	/** Calls over whose late frame may still come (ask now, answer later), by id, oldest first. */
	readonly #late = new Map<string, { onLate: (frame: LateFrame) => boolean; end: () => void }>();
	/** Lines posted before the host proved itself, sent once it has. */
	#posted: string[] = [];
	#connection: HostConnection | undefined;
	#over = false;
	#released = false;
	#idleTimer: ReturnType<typeof setTimeout> | undefined;
	readonly #abandon = new AbortController();
	readonly #name: string;
	readonly #idleMs: number;

	constructor(name: string, address: EndpointAddress, key: PoolKey) {
		this.#name = name;
		this.sessionId = key.sessionId;
		this.#idleMs = key.idleMs ?? DEFAULT_POOL_IDLE_MS;
		void connectToHost(address, {
			...(key.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: key.connectTimeoutMs }),
			...(key.pid === undefined ? {} : { pid: key.pid }),
			signal: this.#abandon.signal,
			onFrame: (frame) => this.#onFrame(frame),
			onFault: (note) => this.end("error", note),
			onClose: () => this.end("no-host", CLOSED_NOTE),
		}).then((connected) => {
			if (!connected.ok) return this.end(connected.status, connected.note);
			proven = true;
			if (this.#over) return connected.connection.close();
			this.#connection = connected.connection;
			// Requests go in the same flight as the client's proof.
			for (const line of this.#posted.splice(0)) this.#connection.send(line);
			for (const call of this.calls.values()) this.#connection.send(call.line);
			if (this.calls.size === 0) this.#idle();
		});
	}

	/** Adds a call; its request is sent now if the host has proven itself, else once it has. */
	seat(id: string, call: PooledCall): Seat {
		if (this.calls.has(id)) {
			call.onEnd("error", `Request id ${id} is already open on this connection.`);
			return { close() {}, letGo() {} };
		}
		this.calls.set(id, call);
		if (this.#idleTimer) {
			clearTimeout(this.#idleTimer);
			this.#idleTimer = undefined;
		}
		// Taken again for this call: idle, or serving only calls let go, the connection had nothing open.
		this.#holdWhileNeeded();
		this.#connection?.send(call.line);
		return {
			letGo: () => {
				if (this.calls.get(id) !== call) return;
				this.#letGo.add(id);
				this.#holdWhileNeeded();
			},
			close: (last, late) => {
				if (this.calls.get(id) !== call) return;
				this.calls.delete(id);
				this.#letGo.delete(id);
				if (last) this.#connection?.send(last);
				if (late && this.#connection && !this.#released) this.#awaitLate(id, late.onLate, late.lateMs);
				if (this.calls.size > 0) {
					if (!this.#over) this.#holdWhileNeeded();
					return;
				}
				if (this.#released) return this.#close();
				if (this.#over) return;
				// Nobody waits for a connection still opening: give it up rather than hold the process for it.
				if (this.#connection) this.#idle();
				else {
					this.#outOfPool();
					this.#abandon.abort();
				}
			},
		};
	}

	/** Sends a line that wants no reply, now or once the host has proven itself; a connection carrying no call stays idle. */
	post(line: string): void {
		if (!this.#connection) return void this.#posted.push(line);
		this.#connection.send(line);
		if (this.calls.size === 0) this.#idle();
	}

	/** Its session is gone: forgets the late frames awaited on it, and closes it once it carries no call (the next call opens another). */
	release(): void {
		this.#released = true;
		for (const id of [...this.#late.keys()]) this.#endLateWait(id);
		if (this.calls.size === 0) this.#close();
	}

	/** Ends every call on this connection with `status` and closes it; the next call opens another. */
	end(status: "no-host" | "error", note: string): void {
		if (this.#over) return;
		this.#outOfPool();
		this.#abandon.abort();
		this.#connection?.close();
		this.#posted = [];
		const calls = [...this.calls.values()];
		this.calls.clear();
		this.#letGo.clear();
		for (const id of [...this.#late.keys()]) this.#endLateWait(id);
		for (const call of calls) call.onEnd(status, note);
	}

	#onFrame(frame: Frame): void {
		switch (frame.type) {
			case "progress":
				// A reply for a call already over (one that crossed its cancel) is dropped.
				return this.calls.get(frame.id)?.onReply(frame);
			case "result": {
				if (!frame.ack) return this.calls.get(frame.id)?.onReply(frame);
				// An end to record: acked once, after the record; a call over, or one that did not record it, says not recorded.
				const ack = this.#acker(frame.id);
				this.calls.get(frame.id)?.onReply(frame, ack);
				return ack(false);
			}
			case "late": {
				// For a call over whose late end was awaited; any other (forgotten, expired, its session gone) is not recorded here.
				const waiter = this.#late.get(frame.id);
				if (waiter) this.#endLateWait(frame.id);
				const recorded = waiter?.onLate(frame) ?? false;
				if (frame.ack) this.#acker(frame.id)(recorded);
				return;
			}
			case "error":
				return this.end("error", `The host refused the connection (${frame.code}): ${frame.message}`);
			default:
				return this.end("error", `The host sent a ${frame.type} frame, which only askers send.`);
		}
	}

	/** Sends the ack of request `id`'s end, once: the host's session takes an end not recorded here. */
	#acker(id: string): (recorded: boolean) => void {
		let sent = false;
		return (recorded) => {
			if (sent) return;
			sent = true;
			this.#connection?.send({ type: "ack", v: FRAME_VERSION.endpoint, id, recorded });
		};
	}

	/** The connection holds the process while a call on it needs it (one not let go). */
	#holdWhileNeeded(): void {
		this.#connection?.keepAlive([...this.calls.keys()].some((id) => !this.#letGo.has(id)));
	}

	/** Waits for call `id`'s late frame, up to `lateMs`, without holding the process. */
	#awaitLate(id: string, onLate: (frame: LateFrame) => boolean, lateMs: number): void {
		void waitAtMost<void>({ ms: lateMs, elapsed: () => undefined, unref: true }, (settle) => {
			const waiter = { onLate, end: () => settle(undefined) };
			this.#late.set(id, waiter);
			return () => {
				if (this.#late.get(id) !== waiter) return;
				this.#late.delete(id);
				if (this.#late.size === 0 && this.calls.size === 0 && !this.#over) this.#idle();
			};
		});
		if (this.#late.size > MAX_LATE_WAITERS) this.#endLateWait(this.#late.keys().next().value!);
	}

	#endLateWait(id: string): void {
		this.#late.get(id)?.end();
	}

	/** No call in flight: the connection stops holding the process and closes after idleMs, unless a late frame is awaited on it. */
	#idle(): void {
		this.#connection?.keepAlive(false);
		clearTimeout(this.#idleTimer);
		if (this.#late.size > 0) return;
		this.#idleTimer = setTimeout(() => {
			this.#outOfPool();
			this.#connection?.close();
		}, this.#idleMs);
		this.#idleTimer.unref();
	}

	/** Closes it now, or gives it up while it is still opening. */
	#close(): void {
		this.#outOfPool();
		this.#abandon.abort();
		this.#connection?.close();
	}

	/** Takes this connection out of the pool: no new call lands on it. */
	#outOfPool(): void {
		this.#over = true;
		clearTimeout(this.#idleTimer);
		const list = pools.get(this.#name);
		if (!list) return;
		const at = list.indexOf(this);
		if (at !== -1) list.splice(at, 1);
		if (list.length === 0) pools.delete(this.#name);
	}
}
