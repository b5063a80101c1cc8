/** How an asking session is named to the human. */
import type { AskerIdentity } from "./protocol.ts";

/** Longest label shown in a dialog title; pi-subagents names children `agent: task excerpt`. */
export const MAX_LABEL_LENGTH = 48;

/** The session's name when set (pi-subagents names its children), else the first 8 characters of its id. */
export function askerIdentity(sessionName: string | undefined, sessionId: string): AskerIdentity {
	const name = sessionName?.replace(/\s+/g, " ").trim();
	const label = name ? (name.length > MAX_LABEL_LENGTH ? `${name.slice(0, MAX_LABEL_LENGTH - 1)}…` : name) : sessionId.slice(0, 8);
	return { label, sessionId };
}
