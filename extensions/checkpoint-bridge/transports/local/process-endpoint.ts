/**
 * One endpoint per process, whichever copy of the extension starts it. The endpoint reaches the
 * host over the process-global bus, so it outlives a host being replaced (/new, /resume, /fork,
 * /reload): the socket path that spawned processes inherited stays valid, and between two hosts
 * it answers `no-host` as the bus would. Like the shared handle, it lives on `globalThis`.
 */
import { processSlot, type StartSlot, startOnce, takeStarted } from "../../core/shared/process-slot.ts";
import type { SharedHandle } from "../../core/shared/shared-handle.ts";
import { type EndpointOptions, type LocalEndpoint, startEndpoint } from "./server.ts";

/** Registry key of the process's endpoint; `Symbol.for` makes it the same in every module copy. */
const ENDPOINT_KEY = Symbol.for("checkpoint-bridge.endpoint");

const slotOf = (target: object) => processSlot<StartSlot<LocalEndpoint>>(target, ENDPOINT_KEY, () => ({}));

/**
 * The process's endpoint, started on the first call (advertised in `options.env`, default
 * process.env, and for the working directory in the user's private place) and the same one after. A failed start is forgotten, so the next claim retries.
 */
export function ensureProcessEndpoint(
	handle: SharedHandle,
	options: Omit<EndpointOptions, "handle"> = {},
	target: object = globalThis,
): Promise<LocalEndpoint> {
	return startOnce(slotOf(target), () => startEndpoint({ handle, env: process.env, advertiseFor: process.cwd(), ...options }));
}

/** Closes the process's endpoint, if one was started (the host quits): its askers get `no-host` with `note`. */
export async function closeProcessEndpoint(note?: string, target: object = globalThis): Promise<void> {
	const endpoint = await takeStarted(slotOf(target));
	await endpoint?.close(note);
}
