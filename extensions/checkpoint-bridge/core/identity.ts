/** How an asking session is named to the human. */
import type { AskerIdentity } from "./protocol.ts";

/** Longest label shown in a dialog title. */
export const MAX_LABEL_LENGTH = 48;

/** pi-subagents names a child `subagent-<agent>-<run id>[-<step>]`: the run id means nothing to the human. */
const SUBAGENT_UUID_NAME = /^(subagent-.+?)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:-(\d+))?$/i;

/** The agent a pi-subagents child runs as, from the `<active_agent name="…"/>` tag of its system prompt. */
export function activeAgentOf(systemPrompt: string | undefined): string | undefined {
	return systemPrompt ? /<active_agent name="([^"]+)"\s*\/>/.exec(systemPrompt)?.[1] : undefined;
}

/** pi-subagents' own way of turning an agent name into a part of a session name. */
const namePart = (agent: string) => agent.trim().toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");

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
 * an unnamed one by the first 8 characters of its session id.
 */
export function askerIdentity(sessionName: string | undefined, sessionId: string, activeAgent?: string): AskerIdentity {
	const name = sessionName?.replace(/\s+/g, " ").trim();
	if (!name) return { label: sessionId.slice(0, 8), sessionId };
	const short = childLabel(name, activeAgent) ?? name;
	const label = short.length > MAX_LABEL_LENGTH ? `${short.slice(0, MAX_LABEL_LENGTH - 1)}…` : short;
	return { label, sessionId };
}
