/** How an asking session is named to the human, and the host's check of who a request says asks. */

import type { Checked } from "../../model/check.ts";
import { MAX_SESSION_ID_LENGTH } from "../../model/limits.ts";
import { capLength, cutText, sanitiseText, squeezeSpace } from "../../model/sanitise.ts";

/**
 * What kind of asker it is, for where its answer goes once it is gone (core/delivery/delivery.ts, ADR-0025):
 * `agent`, a pi-subagents child (its answer may start a turn of the host's model, whose sub-agent it
 * is); `mcp`, a client of the MCP server (never). Absent: any other session (a `pi -p` run).
 */
export type AskerKind = "agent" | "mcp";
const ASKER_KINDS: readonly unknown[] = ["agent", "mcp"] satisfies AskerKind[];

/** Who asks, as the host shows it. */
export interface AskerIdentity {
	/** Shown in dialog titles: the session's name when set, else a short session id. */
	label: string;
	/** The asking session's id; equal to the host's own id when the host's model asks. */
	sessionId: string;
	/** What kind of asker it is. @default absent: a session that is neither */
	kind?: AskerKind;
}

/** The asker's kind when it names a known one, else none (an unknown kind is no kind). */
const kindOf = (asker: { kind?: unknown }): { kind?: AskerKind } => (ASKER_KINDS.includes(asker.kind) ? { kind: asker.kind as AskerKind } : {});

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
	const given = (typeof asker === "object" && asker !== null ? asker : {}) as Partial<Record<keyof AskerIdentity, unknown>>;
	const { label, sessionId } = given;
	if (typeof label !== "string" || typeof sessionId !== "string") return { ok: false, reason: "The request does not say who asks." };
	// Counted as sent: sanitising a megabyte only to refuse it would cost the host what the asker chose.
	if (sessionId.length > MAX_SESSION_ID_LENGTH)
		return { ok: false, reason: `The request's asker session id is ${sessionId.length} characters, at most ${MAX_SESSION_ID_LENGTH}.` };
	const id = sanitiseText(sessionId);
	const shown = cutText(label, MAX_SHOWN_LABEL_LENGTH, { tidy: squeezeSpace });
	return { ok: true, asker: { label: shown || `session ${id.slice(-8)}`, sessionId: id, ...kindOf(given) } };
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

/** What the human is told the host's own session is, when its model asks. */
const MAIN_SESSION_LABEL = "main session";
/** Words of a task a label keeps: enough to recognise the run, short enough for a title. @default 24 */
const TASK_WORDS_LENGTH = 24;
/** Characters of a directory's name a label keeps. @default 18 */
const DIR_LENGTH = 18;

/** What else names a session to a human when pi-subagents' name does not: where it runs and what it was asked. */
export interface AskerPlace {
	/** The session has a UI of its own: it is the main session, whose model asks the human beside it. */
	main?: boolean;
	/** The session's first prompt (a `pi -p` run's task). */
	task?: string;
	/** The directory it works in. */
	cwd?: string;
}

/** The first words of a task, cut at a word within TASK_WORDS_LENGTH, with a mark when cut. */
function firstWords(task: string): string {
	const text = squeezeSpace(sanitiseText(task.slice(0, 8 * TASK_WORDS_LENGTH)));
	if (text.length <= TASK_WORDS_LENGTH) return text;
	const cut = text.slice(0, TASK_WORDS_LENGTH);
	const atWord = text[TASK_WORDS_LENGTH] === " " ? TASK_WORDS_LENGTH : cut.lastIndexOf(" ");
	return `${(atWord > TASK_WORDS_LENGTH / 2 ? cut.slice(0, atWord) : cut).replace(/[\s.,;:!?-]+$/, "")}…`;
}

/** A directory as a label names it: its last part (`~` for the home directory), cut to DIR_LENGTH. */
export function dirName(cwd: string | undefined): string | undefined {
	if (!cwd) return undefined;
	const home = process.env.HOME;
	if (home && cwd.replace(/\/+$/, "") === home.replace(/\/+$/, "")) return "~";
	const last = cwd
		.split(/[\\/]+/)
		.filter(Boolean)
		.pop();
	return last ? capLength(squeezeSpace(sanitiseText(last)), DIR_LENGTH) : "/";
}

/** `what in dir`: how an asker without a name of its own is named (a `pi -p` run by its task, an MCP client by its name). */
export function labelIn(what: string, cwd: string | undefined): string {
	const dir = dirName(cwd);
	return capLength(dir ? `${what} in ${dir}` : what, MAX_LABEL_LENGTH);
}

/**
 * Who asks: a pi-subagents child by its agent (and step); any other named session by its name;
 * the unnamed main session as such; any other unnamed one (a `pi -p` run) by the first words of
 * its task and its directory. A session id alone tells the human nothing: it is the
 * last resort, marked as a session's (its last 8 characters: pi's ids begin with the time they
 * were made, so sessions started in the same minute share their first 8).
 */
export function askerIdentity(sessionName: string | undefined, sessionId: string, activeAgent?: string, place: AskerPlace = {}): AskerIdentity {
	// A name longer than this is no pi-subagents name and is cut for the label anyway: the rest is not read.
	const name = sessionName === undefined ? undefined : cutText(sessionName, 4 * MAX_LABEL_LENGTH, { tidy: squeezeSpace });
	const child = name ? childLabel(name, activeAgent) : undefined;
	if (child) return { label: capLength(child, MAX_LABEL_LENGTH), sessionId };
	// A name the human gave is what the human reads; the main session is named as such otherwise.
	if (name) return { label: capLength(name, MAX_LABEL_LENGTH), sessionId };
	if (place.main) return { label: MAIN_SESSION_LABEL, sessionId };
	const task = place.task ? firstWords(place.task) : "";
	if (task) return { label: labelIn(`"${task}"`, place.cwd), sessionId };
	const id = `session ${sanitiseText(sessionId.slice(0, MAX_SESSION_ID_LENGTH)).slice(-8)}`;
	return { label: labelIn(id, place.cwd), sessionId };
}

/** What names this session at a moment: its id, and its system prompt (read only when needed, pi rebuilds it per read). */
export interface SessionReads {
	sessionId: string;
	systemPrompt: () => string | undefined;
	/** Whether it is the main session: it holds the host role, so its model asks the human beside it. @default false */
	main?: () => boolean;
	/** Its first prompt, when there is one yet (read until found, then kept). */
	task?: () => string | undefined;
	/** The directory it works in. */
	cwd?: string;
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

/** The session id of an asker whose session pi has not started yet (a resumed session's calls drawn before its start). */
export const UNSTARTED_SESSION_ID = "unknown";

/** The asker of one session; `sessionName` is read at every use, as a session may be renamed. */
export function sessionAsker(sessionName: () => string | undefined): SessionAsker {
	let session: SessionReads | undefined;
	let agent: string | undefined;
	let task: string | undefined;
	const agentOf = (at: SessionReads | undefined) => (agent ??= activeAgentOf(at?.systemPrompt()));
	const taskOf = (at: SessionReads | undefined) => (task ||= at?.task?.() ?? session?.task?.());
	return {
		started(at) {
			session = at;
			agent = task = undefined;
		},
		agent: () => agentOf(session),
		identity: (at) => {
			const reads = at ?? session;
			const main = (reads?.main ?? session?.main)?.() === true;
			const cwd = reads?.cwd ?? session?.cwd;
			// The task is read only when no name says more: a child's or the main session's label never needs it.
			const agent = agentOf(reads);
			const named = main || agent !== undefined || sessionName()?.trim();
			const identity = askerIdentity(sessionName(), reads?.sessionId ?? UNSTARTED_SESSION_ID, agent, {
				main,
				cwd,
				...(named ? {} : { task: taskOf(reads) }),
			});
			// A pi-subagents child says so: once it is gone, its answer may start a turn of the host's model (core/delivery/delivery.ts).
			return agent !== undefined && !main ? { ...identity, kind: "agent" as const } : identity;
		},
	};
}

/** What a session start gives to name the session by: pi's context, read structurally (core imports nothing of pi). */
interface SessionContext {
	sessionManager: { getSessionId(): string; getEntries(): readonly { type: string; message?: unknown }[] };
	getSystemPrompt?: () => string | undefined;
	cwd?: string;
}

/**
 * A session's reads at its start, for the human: the main session as such (`main`: it holds the host
 * role), a `pi -p` run by its first prompt and its directory.
 */
export function sessionReads(ctx: SessionContext, main: () => boolean): SessionReads {
	return {
		sessionId: ctx.sessionManager.getSessionId(),
		systemPrompt: () => ctx.getSystemPrompt?.(),
		main,
		task: () => firstPrompt(ctx.sessionManager.getEntries()),
		...(ctx.cwd ? { cwd: ctx.cwd } : {}),
	};
}

/** False once pi replaced the session (/resume, /new, /fork, /reload) under a handler still running: its context throws on every read. */
export function isLiveSession(ctx: { readonly hasUI: boolean }): boolean {
	try {
		return typeof ctx.hasUI === "boolean";
	} catch {
		return false;
	}
}

/** The first prompt of a session, from its entries: what a `pi -p` run was asked to do. */
export function firstPrompt(entries: readonly { type: string; message?: unknown }[]): string | undefined {
	for (const entry of entries) {
		const message = entry.type === "message" ? (entry.message as { role?: unknown; content?: unknown } | undefined) : undefined;
		if (message?.role !== "user") continue;
		const { content } = message;
		if (typeof content === "string") return content;
		if (Array.isArray(content))
			return content.map((part: { type?: unknown; text?: unknown }) => (part?.type === "text" && typeof part.text === "string" ? part.text : "")).join(" ");
		return undefined;
	}
	return undefined;
}

/** A remote asker as the host shows it: its own label, marked with where it asks from (a pid, a machine and pid), its kind kept. */
export function markedAsker(asker: AskerIdentity, where: string): AskerIdentity {
	const own = askerIdentity(asker.label, asker.sessionId);
	return { label: `${own.label} (${where})`, sessionId: `${where}/${asker.sessionId}`, ...kindOf(asker) };
}
