/**
 * Where an ended request's answer goes: the route home's one decision (ADR-0034), from the facts of
 * the end as one plain value. Every caller asks it, the delivery box included, so what `/checkpoints`
 * says of an end and where the end then goes are the same answer to the same facts.
 */
import type { AskerIdentity } from "../shared/identity.ts";

/** Where an ended request goes, as the route home decides it. */
export type Home =
	/** A wait on it in this process (`wait_for_host_answers`): the wait's result carries it. */
	| { to: "wait" }
	/** Its session, in this process, as a message. */
	| { to: "asker" }
	/** Its process, over the transport that carried it, which puts it in its session; the host's session when it cannot. */
	| { to: "asker-process" }
	/** Not ended: lost with its host while the store keeps it open, for the next host of the directory and a later run's wait. */
	| { to: "store" }
	/**
	 * The host's session, its asker gone: recorded and shown; a turn of the host's model only when `wakes`. An asker of
	 * this process not known to be gone gets a grace to attach again first (a `/reload`).
	 */
	| { to: "host"; wakes: boolean }
	/** Delivered in this process already: nowhere again. */
	| { to: "nowhere" };

/** The asker of an end, and where it asked from (`origin`, protocol.ts: absent for this process). */
export interface EndOf {
	asker: Pick<AskerIdentity, "sessionId" | "kind">;
	origin?: string;
	/** Its id in the host, under which a transport registers to take its ends back (route-home.ts). @default none: the caller's way back is taken as it is */
	id?: string;
}

/** Everything the route home decides from, each a fact of this moment. */
export interface EndFacts {
	/** Asked from this process (no origin). */
	here: boolean;
	/** This end was delivered in this process already (a request's own end and its late end are two). */
	delivered: boolean;
	/** The asker is known to be gone: its client closed, its process did not record the end, nobody heard its result. */
	gone: boolean;
	/** A wait on the request runs in this process. */
	waited: boolean;
	/** Its session is attached in this process (the host's own session counts as attached). */
	attached: boolean;
	/** A transport registered to take its ends back to its process, and has a way to. */
	takesBack: boolean;
	/** Lost with its host (`no-host`) while the store keeps it open. */
	openInStore: boolean;
	/** Forwarded to the host's session, whether it may start a turn of the host's model (wakesHost). */
	wakes: boolean;
}

/**
 * The one decision, in this order: an end delivered already goes nowhere; one the store keeps open is
 * not an end; an asker of this process gets it in its wait, else its session while attached; an asker
 * of another process gets it over its transport while one takes it back; anything else goes to the
 * host's session.
 */
export function homeOf(facts: EndFacts): Home {
	if (facts.delivered) return { to: "nowhere" };
	if (facts.openInStore) return { to: "store" };
	if (facts.here && !facts.gone) {
		if (facts.waited) return { to: "wait" };
		if (facts.attached) return { to: "asker" };
	}
	if (!facts.here && !facts.gone && facts.takesBack) return { to: "asker-process" };
	return { to: "host", wakes: facts.wakes };
}

/**
 * Whether an end forwarded to the host's session may start a turn of the host's model: only when that
 * model has a reason to act, its own question or one of its own sub-agents' (a foreground child in this
 * process, an asker that says it is a pi-subagents child); never an MCP client's, nor another session's.
 */
export function wakesHost(end: EndOf, hostSessionId: string | undefined): boolean {
	if (end.asker.sessionId === hostSessionId) return true;
	if (end.asker.kind === "mcp") return false;
	return end.asker.kind === "agent" || end.origin === undefined;
}

/** Where an end goes, in words for the human (`/checkpoints`), of an asker labelled `label`. */
export function homeText(home: Home, label: string): string {
	switch (home.to) {
		case "wait":
			return `goes to ${label}, which is waiting for it`;
		case "asker":
			return `goes to ${label} as a message`;
		case "asker-process":
			return `goes back to ${label}, whose process is still connected`;
		case "store":
			return "stays written down for the next host of this directory";
		case "nowhere":
			return `was given to ${label} already`;
		case "host":
			return home.wakes
				? "goes to this session (the asker is gone) and starts a turn of its model"
				: "goes to this session (the asker is gone): recorded and shown here, without starting a turn of its model";
	}
}
