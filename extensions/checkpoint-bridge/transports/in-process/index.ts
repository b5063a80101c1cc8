/**
 * The transport to a host in this process: over the process-global bus of the shared handle, which
 * every copy of the extension in the process shares. Nothing to serve: the host role listens on it.
 * Small enough to load with the list; the bus's asking side loads at the first call.
 */
import type { Reach, Transport } from "../../core/asking/transport.ts";
import { PROTOCOL_VERSION } from "../../core/shared/protocol.ts";

/** A session of this process holds the host role. */
export interface HostHere extends Reach {
	readonly kind: "host";
}

let asker: Promise<typeof import("../../core/asking/asker.ts")> | undefined;
/** One import for every caller: pi's loader can hand a second, concurrent import a module half run. */
const loadAsker = () => (asker ??= import("../../core/asking/asker.ts"));

export const transport: Transport<HostHere> = {
	// With no host left (it went between the route and the call) the bus call settles `no-host` itself.
	ask: async (_reach, options, handle) => (await loadAsker()).askViaHost({ handle, ...options }),
	notice: (_reach, notice, handle) => void handle.bus.emit("relay:notice", { v: PROTOCOL_VERSION, ...notice }),
};
