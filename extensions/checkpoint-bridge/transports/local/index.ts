/** The cross-process transport: an asker reaches the host of another process on this machine through its local endpoint. */
import type { Transport } from "../../core/asking/transport.ts";
import { readHostGrace } from "../../core/shared/config.ts";
import type { EndpointReach } from "./address.ts";
import { findHostEndpoint } from "./advertisement.ts";
import { askRemote, noticeRemote } from "./client.ts";
import { releaseLateWaits } from "./pool.ts";
import { closeProcessEndpoint, ensureProcessEndpoint } from "./process-endpoint.ts";

export { type EndpointReach, endpointFromEnv } from "./address.ts";
export { askRemote } from "./client.ts";
export { closeProcessEndpoint, ensureProcessEndpoint } from "./process-endpoint.ts";

export const transport: Transport<EndpointReach> = {
	// A host that goes away is waited for: the next one in this working directory gets the request again.
	ask: (reach, options) => askRemote(reach.endpoint, { ...options, graceMs: readHostGrace().graceMs, find: (gone) => findHostEndpoint({ gone }) }),
	notice: (reach, notice) => noticeRemote(reach.endpoint, notice),
	releaseLate: releaseLateWaits,
	// Processes the host spawns (background sub-agents, pi -p runs) reach it through a local socket. Awaited: pi waits for
	// session_start, so nothing the session spawns can miss the variable.
	async serve(handle, ui) {
		try {
			const endpoint = await ensureProcessEndpoint(handle);
			// The variable still reaches what this host spawns; a restarted host's askers and tools outside pi will not find it.
			if (endpoint.advertProblem) ui.notify(`checkpoint-bridge: other processes in this directory cannot find this host: ${endpoint.advertProblem}`, "warning");
		} catch (error) {
			ui.notify(`checkpoint-bridge: cannot serve other processes: ${error instanceof Error ? error.message : String(error)}`, "warning");
		}
	},
	close: (note) => closeProcessEndpoint(note),
};
