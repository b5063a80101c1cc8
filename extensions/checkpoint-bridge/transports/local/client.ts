/**
 * The asking side across processes, with the same contract as askViaHost. A call takes a seat on
 * a proven connection kept for its asker's session (pool.ts, ADR-0010), so the trust checks, the
 * token read and the handshake are paid once per connection, not per call. The call settles
 * exactly once: on its result, its budget, its abort, or the connection closing (the host is
 * gone: `no-host` at once; the next call opens a fresh connection, so a host that comes back, at
 * the same path or at a new one, serves it). A request the host would refuse, and so close the
 * connection for, is refused here for that call alone, before anything is sent.
 */
import { type CallOptions, runCall } from "../../core/call.ts";
import type { AskerIdentity } from "../../core/identity.ts";
import type { Envelope } from "../../model/result.ts";
import { capLength } from "../../model/sanitise.ts";
import { decodeFrame, encodeFrame, MAX_FRAME_BYTES, MAX_NOTICE_LENGTH, WIRE_VERSION } from "../wire.ts";
import { addressOf, type EndpointAddress } from "./address.ts";
import { postLine, takeSeat } from "./pool.ts";

export interface RemoteAskOptions extends CallOptions {
	/** Give up when the host has not proven itself after this long (connecting included): `no-host`. @default DEFAULT_CONNECT_TIMEOUT_MS (3000) */
	connectTimeoutMs?: number;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
	/** Close the asker's pooled connection once it has carried no call for this long (ms). @default DEFAULT_POOL_IDLE_MS (10000) */
	poolIdleMs?: number;
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
	const line = encodeFrame({ type: "notice", v: WIRE_VERSION, asker: notice.asker, message: capLength(notice.message, MAX_NOTICE_LENGTH), level: notice.type });
	postLine(address, { sessionId: `${notice.asker.sessionId}\u0000notices`, ...(options.pid === undefined ? {} : { pid: options.pid }) }, line);
}

/** Asks the host behind `endpoint` (an address, or the socket's path) and resolves with the call's envelope. Never rejects. */
export function askRemote(endpoint: EndpointAddress | string, options: RemoteAskOptions): Promise<Envelope> {
	const address = typeof endpoint === "string" ? addressOf(endpoint) : endpoint;
	return runCall(options, (call) => {
		const line = encodeFrame({ ...call.request, type: "request", v: WIRE_VERSION });
		const problem = requestProblem(line);
		if (problem !== undefined) return call.finish("error", problem);
		const seat = takeSeat(
			address,
			{
				sessionId: options.asker.sessionId,
				...(options.pid === undefined ? {} : { pid: options.pid }),
				...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
				...(options.poolIdleMs === undefined ? {} : { idleMs: options.poolIdleMs }),
			},
			call.id,
			{
				line,
				onReply: ({ type: _type, ...reply }) => call.reply(reply),
				onEnd: (status, note) => call.finish(status, note),
			},
		);
		return (cancelHost, status) =>
			// The host drops the request from its queue or dismisses its open dialog.
			seat.leave(cancelHost ? { type: "cancel", v: WIRE_VERSION, id: call.id, reason: status === "timeout" ? "timeout" : "cancelled" } : undefined);
	});
}
