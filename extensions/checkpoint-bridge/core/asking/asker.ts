/**
 * The asking side in the host's process: sends one request over the shared bus and listens on its
 * own reply channel. The call's life (budget, abort, settling once) is call.ts's.
 */

import { type Envelope, STATUSES, type Status } from "../../model/result.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayResult, replyChannel } from "../shared/protocol.ts";
import type { SharedHandle } from "../shared/shared-handle.ts";
import { type CallOptions, runCall } from "./call.ts";

export interface AskOptions extends CallOptions {
	/** The process's shared handle, whose bus reaches the host. */
	handle: SharedHandle;
}

/** Whether a message on a reply channel is a well-formed reply to request `id`. */
function isReplyFor(reply: unknown, id: string): reply is RelayReply {
	if (typeof reply !== "object" || reply === null) return false;
	const r = reply as Omit<Partial<RelayResult>, "kind"> & { kind?: string; stage?: string };
	if (r.v !== PROTOCOL_VERSION || r.id !== id || !Array.isArray(r.answers)) return false;
	if (r.kind === "progress") return r.stage === "queued" || r.stage === "shown" || r.stage === "answered";
	return r.kind === "result" && STATUSES.includes(r.status as Status);
}

/** Asks the host in this process over the shared bus and resolves with the call's envelope. Never rejects. */
export function askViaHost(options: AskOptions): Promise<Envelope> {
	const { handle } = options;
	return runCall(options, (call) => {
		const host = handle.host();
		if (!host) return call.end("no-host", "No session with a UI holds the host role (headless run, or the host is gone).");
		if (host.protocol !== PROTOCOL_VERSION)
			return call.end("error", `The host speaks checkpoint-bridge protocol v${host.protocol}; this session speaks v${PROTOCOL_VERSION}.`);
		const channel = replyChannel(call.id);
		// Anything else on this channel (junk, another version, a reply the host did not send) is ignored.
		const onReply = (reply: RelayReply) => handle.isFromHost(reply, call.id) && isReplyFor(reply, call.id) && call.reply(reply);
		handle.bus.on(channel, onReply);
		if (!handle.bus.emit("request", call.request)) call.end("no-host", "The host role is claimed but nothing is listening for questions.");
		return (cancelHost, status) => {
			handle.bus.off(channel, onReply);
			// The host drops the request from its queue or dismisses its open dialog.
			if (cancelHost) handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id: call.id, reason: status === "timeout" ? "timeout" : "cancelled" });
		};
	});
}
