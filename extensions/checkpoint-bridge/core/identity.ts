/** How an asking session is named to the human, and the host's check of who a request says asks. */

import type { Checked } from "../model/check.ts";
import { MAX_SESSION_ID_LENGTH } from "../model/limits.ts";
import { capLength, cutText, sanitiseText, squeezeSpace } from "../model/sanitise.ts";

/** Who asks, as the host shows it. */
export interface AskerIdentity {
	/** Shown in dialog titles: the session's name when set, else a short session id. */
	label: string;
	/** The asking session's id; equal to the host's own id when the host's model asks. */
	sessionId: string;
}

/** Longest label an asker gives itself. @default 48 */
export const MAX_LABEL_LENGTH = 48;
/** Longest asker label the host shows: room for a transport's mark, e.g. ` (pid 4194304)`. Longer ones are cut. @default 64 */
export const MAX_SHOWN_LABEL_LENGTH = 64;

/**
 * The asker of a request as the host keeps it: label and session id neutralised for the terminal
 * (sanitise.ts), the label cut to MAX_SHOWN_LABEL_LENGTH; or what is wrong with it. A session id
 * longer than MAX_SESSION_ID_LENGTH (model/limits.ts) is refused before any of it is read.
 */
export function checkedAsker(asker: unknown): Checked<{ asker: AskerIdentity }, { reason: string }> {
	const { label, sessionId } = (typeof asker === "object" && asker !== null ? asker : {}) as Partial<Record<keyof AskerIdentity, unknown>>;
	if (typeof label !== "string" || typeof sessionId !== "string") return { ok: false, reason: "The request does not say who asks." };
	// Counted as sent: sanitising a megabyte only to refuse it would cost the host what the asker chose.
	if (sessionId.length > MAX_SESSION_ID_LENGTH)
		return { ok: false, reason: `The request's asker session id is ${sessionId.length} characters, at most ${MAX_SESSION_ID_LENGTH}.` };
	const id = sanitiseText(sessionId);
	const shown = cutText(label, MAX_SHOWN_LABEL_LENGTH, { tidy: squeezeSpace });
	return { ok: true, asker: { label: shown || id.slice(-8), sessionId: id } };
}

/** pi-subagents names a child `subagent-<agent>-<run id>[-<step>]`: the run id means nothing to the human. */
const SUBAGENT_UUID_NAME = /^(subagent-.+?)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-(\d+))?$/i;

/** The agent a pi-subagents child runs as, from the `<active_agent name="…"/>` tag of its system prompt. */
export function activeAgentOf(systemPrompt: string | undefined): string | undefined {
	return systemPrompt ? /<active_agent name="([^"]+)"\s*\/>/.exec(systemPrompt)?.[1] : undefined;
}

/** pi-subagents' own way of turning an agent name into a part of a session name. */
const namePart = (agent: string) =>
	agent
		.trim()
		.toLowerCase()
		.replace(/[^a-z0-9_-]+/g, "-")
		.replace(/^-+|-+$/g, "");

/** pi-subagents numbers every child's step from 1; a lone child's "1" says nothing. */
const stepSuffix = (step: string | undefined) => (step && step !== "1" ? `#${step}` : "");

/** `subagent-<agent>`, with `#<step>` from the second step of parallel children on, when the name is pi-subagents'. */
function childLabel(name: string, agent: string | undefined): string | undefined {
	const uuid = SUBAGENT_UUID_NAME.exec(name);
	if (uuid) return `${uuid[1]}${stepSuffix(uuid[2])}`;
	const prefix = agent ? `subagent-${namePart(agent)}-` : undefined;
	if (!prefix || !name.startsWith(prefix)) return undefined;
	const step = /-(\d{1,3})$/.exec(name.slice(prefix.length));
	return `subagent-${namePart(agent!)}${stepSuffix(step?.[1])}`;
}

/**
 * Who asks: a pi-subagents child by its agent (and step), any other named session by its name,
 * an unnamed one by the last 8 characters of its session id (pi's ids begin with the time they were
 * made: sessions started in the same minute share their first 8).
 */
export function askerIdentity(sessionName: string | undefined, sessionId: string, activeAgent?: string): AskerIdentity {
	// A name longer than this is no pi-subagents name and is cut for the label anyway: the rest is not read.
	const name = sessionName === undefined ? undefined : cutText(sessionName, 4 * MAX_LABEL_LENGTH, { tidy: squeezeSpace });
	if (!name) return { label: sanitiseText(sessionId.slice(0, MAX_SESSION_ID_LENGTH)).slice(-8), sessionId };
	const short = childLabel(name, activeAgent) ?? name;
	return { label: capLength(short, MAX_LABEL_LENGTH), sessionId };
}

/** What names this session at a moment: its id, and its system prompt (read only when needed, pi rebuilds it per read). */
export interface SessionReads {
	sessionId: string;
	systemPrompt: () => string | undefined;
}

/** This session as an asker: the one place the extension builds its own identity (index.ts, tool/ask.ts, interop/). */
export interface SessionAsker {
	/** At session_start: the session now named, its agent read afresh. */
	started(at: SessionReads): void;
	/** The agent a pi-subagents child runs as: read from the prompt until found, then kept (it does not change within a session). */
	agent(): string | undefined;
	/** Who asks from this session; `at`, a tool call's own context, wins over what session_start told. */
	identity(at?: SessionReads): AskerIdentity;
}

/** The asker of one session; `sessionName` is read at every use, as a session may be renamed. */
export function sessionAsker(sessionName: () => string | undefined): SessionAsker {
	let session: SessionReads | undefined;
	let agent: string | undefined;
	const agentOf = (at: SessionReads | undefined) => (agent ??= activeAgentOf(at?.systemPrompt()));
	return {
		started(at) {
			session = at;
			agent = undefined;
		},
		agent: () => agentOf(session),
		identity: (at) => askerIdentity(sessionName(), (at ?? session)?.sessionId ?? "unknown", agentOf(at ?? session)),
	};
}

/** A remote asker as the host shows it: its own label, marked with where it asks from (a pid, a machine and pid). */
export function markedAsker(asker: AskerIdentity, where: string): AskerIdentity {
	const own = askerIdentity(asker.label, asker.sessionId);
	return { label: `${own.label} (${where})`, sessionId: `${where}/${asker.sessionId}` };
}
