/** The cross-process transport: what the extension wires in when it holds, or lacks, the host role. */
export { endpointFromEnv } from "./address.ts";
export { findHostEndpoint } from "./advertisement.ts";
export { askRemote, noticeRemote } from "./client.ts";
export { releaseLateWaits } from "./pool.ts";
export { closeProcessEndpoint, ensureProcessEndpoint } from "./process-endpoint.ts";
