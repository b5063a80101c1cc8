/**
 * Heartbeat timing of the NATS transport, both ways (ADR-0009). A broker tells neither side when the
 * other dies or hangs, so each open request is pinged by its asker and answered by its host.
 * Worst case to notice a silent peer: SILENCE_MS + TICK_MS (1.4 s), inside the two seconds of ADR-0002.
 */

/** How often an asker pings each open request. @default 400 */
export const PING_INTERVAL_MS = 400;
/** Silence after which a peer counts as gone (the host for an asker, an asker for the host). @default 1200 */
export const SILENCE_MS = 1_200;
/** How often both sides check for silence (and an asker waiting for a host re-sends). @default 200 */
export const TICK_MS = 200;
/** While waiting for a host within the grace, how often the request is re-sent. @default 400 */
export const RESEND_INTERVAL_MS = 400;
/** How long a would-be host waits for a serving host to say so. @default 1000 */
export const HOST_CHECK_TIMEOUT_MS = 1_000;
