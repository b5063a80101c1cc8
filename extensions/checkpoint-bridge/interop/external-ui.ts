/**
 * checkpoint-bridge as pi-agent-ask's external UI (its integration contract: `pi-agent-ask:external-ui`).
 * Outside TUI mode a foreground `ask_user` call emits the event once and waits for a connected provider;
 * this connects, inside the listener (the contract accepts `connect` only then), when a host is
 * reachable. The form's mapping (interop/pi-agent-ask.ts) loads at the first form opened.
 */
import type { ExternalAskRequest, HostRoute, RemoteAskResponse } from "./pi-agent-ask.ts";

/** The negotiation event a foreground `ask_user` call emits outside TUI mode. */
const EXTERNAL_UI_EVENT = "pi-agent-ask:external-ui";
/** The tool whose foreground call emits the negotiation (pi-agent-ask's). */
export const NEGOTIATING_TOOL = "ask_user";
/** The id this provider gives itself. */
export const PROVIDER_ID = "checkpoint-bridge";
/** The contract version this adapter speaks. */
const CONTRACT_VERSION = 1;

/** What this adapter connects. */
export interface ExternalAskProvider {
	version: 1;
	id: string;
	open(request: ExternalAskRequest): Promise<RemoteAskResponse>;
}

/** The event's payload. */
interface ExternalAskConnection {
	version: number;
	mode?: string;
	toolCallId?: string;
	connect(provider: ExternalAskProvider): boolean;
}

let form: Promise<typeof import("./pi-agent-ask.ts")> | undefined;
/** The form's mapping, loaded once for every caller: pi's loader can hand a second, concurrent import a module half run. */
const loadForm = () => (form ??= import("./pi-agent-ask.ts"));

/** The provider: each `open` is one request of the relay, abandoned when the request's signal aborts. */
function provider(route: HostRoute): ExternalAskProvider {
	return {
		version: CONTRACT_VERSION,
		id: PROVIDER_ID,
		open: async (request) => (await loadForm()).openForm(route, request),
	};
}

/**
 * Listens for the negotiation on `events` (the session's `pi.events`) and connects, synchronously,
 * when the call is outside TUI mode and a host is reachable; otherwise leaves the call to its own
 * fallback. Returns the unsubscribe.
 */
export function offerExternalUI(events: { on(channel: string, handler: (data: unknown) => void): () => void }, route: HostRoute): () => void {
	return events.on(EXTERNAL_UI_EVENT, (data) => {
		if (typeof data !== "object" || data === null || Array.isArray(data)) return;
		const connection = data as ExternalAskConnection;
		if (connection.version !== CONTRACT_VERSION || typeof connection.connect !== "function") return;
		// The TUI shows its own form; the contract does not emit there, and a TUI session is the host anyway.
		if (connection.mode === "tui" || !route.reachable()) return;
		connection.connect(provider(route));
	});
}
