/**
 * Holding the host role: claiming it on the shared handle, listening on the bus, and giving it
 * back. The first session with a UI claims it; the role is free again once its holder releases it.
 */
import { nanoid } from "nanoid";
import { DialogHost, type DialogUI } from "./dialog-host.ts";
import { PROTOCOL_VERSION, replyChannel, type RelayCancel, type RelayRequest } from "./protocol.ts";
import type { SharedHandle } from "./shared-handle.ts";

export interface HostRole {
	/** The dialog queue this role serves. */
	readonly host: DialogHost;
	/** Stops listening, frees the role, and settles every held request with `no-host` and `note`. */
	release(note: string): void;
}

/** Claims the host role for a session with a UI; undefined when another session holds it. */
export function claimHostRole(handle: SharedHandle, ui: DialogUI, sessionId: string): HostRole | undefined {
	const claimId = nanoid();
	if (!handle.claimHost({ claimId, sessionId, protocol: PROTOCOL_VERSION })) return undefined;
	const host = new DialogHost({ ui, sessionId, reply: (reply) => handle.bus.emit(replyChannel(reply.id), reply) });
	const onRequest = (request: RelayRequest) => host.serve(request);
	const onCancel = (cancel: RelayCancel) => host.cancel(cancel);
	handle.bus.on("request", onRequest);
	handle.bus.on("cancel", onCancel);
	let released = false;
	return {
		host,
		release(note: string) {
			if (released) return;
			released = true;
			handle.bus.off("request", onRequest);
			handle.bus.off("cancel", onCancel);
			handle.releaseHost(claimId);
			host.shutdown(note);
		},
	};
}
