/**
 * The asking side across processes, with the same contract as askViaHost. A call takes a seat on
 * a proven connection kept for its asker's session (pool.ts, ADR-0010), so the trust checks, the
 * token read and the handshake are paid once per connection, not per call. The call settles
 * exactly once: on its result, its budget, its abort, or the connection closing (the host is
 * gone: `no-host` at once; the next call opens a fresh connection, so a host that comes back, at
 * the same path or at a new one, serves it). A request the host would refuse, and so close the
 * connection for, is refused here for that call alone, before anything is sent.
 */
import { statSync } from "node:fs";
import { type CallOptions, lateEnd, recordedEnd, runCall } from "../../core/asking/call.ts";
import { FRAME_VERSION, MAX_FRAME_BYTES, MAX_NOTICE_LENGTH } from "../../core/bridge/frames.ts";
import { graceEnd } from "../../core/shared/config.ts";
import type { AskerIdentity } from "../../core/shared/identity.ts";
import { readLateConfig } from "../../core/shared/late-config.ts";
import { waitAtMost } from "../../core/shared/wait.ts";
import type { Answer } from "../../model/answer.ts";
import type { Envelope } from "../../model/result.ts";
import { capLength } from "../../model/sanitise.ts";
import { addressOf, type EndpointAddress } from "./address.ts";
import { decodeFrame, encodeFrame } from "./frames.ts";
import { hadHost, postLine, type Seat, takeSeat } from "./pool.ts";

export interface RemoteAskOptions extends CallOptions {
	/** Give up when the host has not proven itself after this long (connecting included): `no-host`. @default DEFAULT_CONNECT_TIMEOUT_MS (3000) */
	connectTimeoutMs?: number;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
	/** Close the asker's pooled connection once it has carried no call for this long (ms). @default DEFAULT_POOL_IDLE_MS (10000) */
	poolIdleMs?: number;
	/**
	 * How long to wait for the next host when this one goes away, never past the call's budget; only
	 * once this process has had a host (CHECKPOINT_BRIDGE_HOST_GRACE_MS). @default 0: `no-host` at once
	 */
	graceMs?: number;
	/** Where the next host is, looked up while waiting for it; `gone` is the endpoint just lost. @default the same endpoint */
	find?: (gone: EndpointAddress) => EndpointAddress | undefined;
}

/** What is wrong with a request's line in the host's eyes (which would close the connection), or undefined. */
function requestProblem(line: string): string | undefined {
	const bytes = Buffer.byteLength(line) - 1;
	if (bytes > MAX_FRAME_BYTES) return `The request is ${bytes} bytes; the host takes at most ${MAX_FRAME_BYTES} bytes in one frame. Nothing was sent.`;
	const checked = decodeFrame(line.slice(0, -1));
	return checked.ok ? undefined : `The request would be refused by the host (${checked.code}): ${checked.message} Nothing was sent.`;
}

/** What a notice says: the bus's RelayNotice without its version. */
export interface RemoteNotice {
	asker: AskerIdentity;
	message: string;
	type: "info" | "warning" | "error";
}

/**
 * Hands a notice to the host behind `endpoint`, cut to MAX_NOTICE_LENGTH. It rides a connection of
 * its own per asker session, so a host too old to know notice frames, which refuses one by closing
 * its connection, ends no call. Fire and forget: dropped when the host cannot be reached.
 */
export function noticeRemote(endpoint: EndpointAddress | string, notice: RemoteNotice, options: { pid?: number } = {}): void {
	const address = typeof endpoint === "string" ? addressOf(endpoint) : endpoint;
	const line = encodeFrame({
		type: "notice",
		v: FRAME_VERSION.endpoint,
		asker: notice.asker,
		message: capLength(notice.message, MAX_NOTICE_LENGTH),
		level: notice.type,
	});
	postLine(address, { sessionId: `${notice.asker.sessionId}\u0000notices`, ...(options.pid === undefined ? {} : { pid: options.pid }) }, line);
}

/** How often an asker waiting for the next host looks for it. @default 200 */
const LOOK_AGAIN_MS = 200;

/** Whether a socket is at `socketPath` now. */
function socketThere(socketPath: string): boolean {
	try {
		return statSync(socketPath).isSocket();
	} catch {
		return false;
	}
}

/**
 * Asks the host behind `endpoint` (an address, or the socket's path) and resolves with the call's
 * envelope. Never rejects. When the host goes away (its connection closes, or it ends the request
 * with `no-host`) and this process has had a host, the call waits up to `graceMs` (never past its
 * budget) for the next one, found by `find`, and sends the request there again, marked as re-sent,
 * with the answers it was given so far: only the rest is asked.
 */
export function askRemote(endpoint: EndpointAddress | string, options: RemoteAskOptions): Promise<Envelope> {
	const first = typeof endpoint === "string" ? addressOf(endpoint) : endpoint;
	const graceMs = options.graceMs ?? 0;
	const find = options.find ?? (() => first);
	const key = {
		sessionId: options.asker.sessionId,
		...(options.pid === undefined ? {} : { pid: options.pid }),
		...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
		...(options.poolIdleMs === undefined ? {} : { idleMs: options.poolIdleMs }),
	};
	return runCall(options, (call) => {
		const problem = requestProblem(encodeFrame({ ...call.request, type: "request", v: FRAME_VERSION.endpoint }));
		if (problem !== undefined) return call.end("error", problem);
		let ended = false;
		let seat: Seat | undefined;
		/** Answers the host gave so far: a re-sent request carries them, so they are not asked again. */
		let answers: Answer[] = [];
		let resent = false;
		/** While waiting for the next host: the next look for it, and how the wait ends before its time. */
		let grace: { look?: ReturnType<typeof setTimeout>; end: () => void } | undefined;

		const endGrace = () => grace?.end();
		const lineNow = () =>
			encodeFrame({
				...call.request,
				type: "request",
				v: FRAME_VERSION.endpoint,
				...(options.onLate ? { lateFrames: true as const } : {}),
				// Its ends are recorded in the asking session: the host awaits an ack of each (core/bridge/frames.ts AckFrame).
				...(options.onLate || options.recordEnd ? { acks: true as const } : {}),
				...(resent ? { resent: true, ...(answers.length > 0 ? { answers } : {}) } : {}),
			});
		/** The endpoint the call is on now (or was on when its host was lost). */
		let current = first;
		const sit = (address: EndpointAddress) => {
			current = address;
			const mine: Seat = takeSeat(address, key, call.id, {
				line: lineNow(),
				onReply: ({ type: _type, ...reply }, ack) => {
					if (ended || seat !== mine) return;
					// A host ending the request because it goes away (quit, no role) is a host lost, not an outcome.
					if (reply.kind === "result" && reply.status === "no-host" && mayWait()) {
						answers = reply.answers;
						// This call carries it on to the next host: not an end for the host's session.
						ack?.(true);
						return lost(reply.note ?? "The host went away before the questions were answered.");
					}
					endGrace();
					answers = reply.answers;
					// An end to ack: recorded in the asking session before the call lets its connection go.
					call.reply(reply, ack && ((envelope) => ack(recordedEnd(envelope, options))));
					// Asked with wait: false, the host has it: the end is delivered if this process still runs then, else at the host.
					if (options.later && reply.kind === "progress") mine.letGo();
				},
				onEnd: (status, note) => {
					if (ended || seat !== mine) return;
					if (status === "no-host" && mayWait()) return lost(note);
					call.end(status, note);
				},
			});
			seat = mine;
		};
		const mayWait = () => graceMs > 0 && hadHost();
		/** The host is gone: wait for the next one within the grace, or settle `no-host`. */
		const lost = (note: string) => {
			seat?.close();
			seat = undefined;
			if (grace) return void (grace.look = setTimeout(look, LOOK_AGAIN_MS));
			const now = Date.now();
			const until = graceEnd(graceMs, call.request.deadline, now);
			const give = () =>
				call.end("no-host", `${note} No host came back within ${graceMs} ms${until < now + graceMs ? " (the call's budget ended first)" : ""}.`);
			if (until <= Date.now()) return give();
			void waitAtMost<"back" | "none">({ ms: until - Date.now(), elapsed: () => "none" }, (settle) => {
				const thisGrace = { look: setTimeout(look, LOOK_AGAIN_MS), end: () => settle("back") };
				grace = thisGrace;
				return (outcome) => {
					clearTimeout(thisGrace.look);
					if (grace === thisGrace) grace = undefined;
					if (outcome === "none") give();
				};
			});
		};
		/** Looks for the next host; asks it again when one is there, else looks again shortly. */
		const look = () => {
			if (ended || !grace) return;
			const address = find(current);
			if (!address || !socketThere(address.socketPath)) return void (grace.look = setTimeout(look, LOOK_AGAIN_MS));
			resent = true;
			sit(address);
		};

		sit(first);
		return (cancelHost, status) => {
			ended = true;
			endGrace();
			// Ended `timeout`: the host may keep the question late, and its end still come on this connection.
			const late = status === "timeout" && options.onLate ? { onLate: lateEnd(call, options), lateMs: readLateConfig().expiryMs } : undefined;
			// The host drops the request from its queue or dismisses its open dialog.
			seat?.close(
				cancelHost ? { type: "cancel", v: FRAME_VERSION.endpoint, id: call.id, reason: status === "timeout" ? "timeout" : "cancelled" } : undefined,
				late,
			);
		};
	});
}
