/**
 * The process's box as one session reaches it. The box's code (delivery.ts) loads at the session's
 * first call, wait or claim, once for every caller, and the session attaches when it loads. Only a
 * process that has a box already can hold ends for a session that starts (a resumed one), so such a
 * session, and a host's, loads it at its start and attaches at once.
 */
import type { EntryLike } from "../shared/session-entry.ts";
import type { DeliveryBox, MessageApi } from "./delivery.ts";
import { boxInProcess } from "./names.ts";

/** One session's way to the box. */
export interface SessionBox {
	/** The box, loaded at the first use, the started session attached to it. */
	box(): Promise<DeliveryBox>;
	/** At session_start, once the role is settled: attaches the session now when `now` or the process has a box, else at its first use. */
	start(sessionId: string, entries: () => readonly EntryLike[], now: boolean): Promise<void>;
	/** At session_shutdown: detaches the session; a box loaded later does not attach it. */
	close(): void;
}

/** The way to the box of the session that sends with `pi`; `hostSessionId` finds the host's session. */
export function sessionBox(pi: MessageApi, hostSessionId: () => string | undefined): SessionBox {
	let loading: Promise<{ box: DeliveryBox; poster: typeof import("./delivery.ts").sessionPoster }> | undefined;
	const load = () => (loading ??= import("./delivery.ts").then((code) => ({ box: code.deliveryBox(hostSessionId), poster: code.sessionPoster })));
	/** The session started and not yet attached; cleared at its attach and at its end. */
	let unattached: { sessionId: string; entries: () => readonly EntryLike[] } | undefined;
	let detach: (() => void) | undefined;
	const attached = async () => {
		const { box, poster } = await load();
		if (unattached) {
			detach?.();
			detach = box.attach(unattached.sessionId, poster(pi, unattached.entries));
			unattached = undefined;
		}
		return box;
	};
	return {
		box: attached,
		async start(sessionId, entries, now) {
			unattached = { sessionId, entries };
			if (now || boxInProcess()) await attached();
		},
		close() {
			unattached = undefined;
			detach?.();
			detach = undefined;
		},
	};
}
