/**
 * A session without a UI whose tool list leaves out `ask_user_via_host` (a pi-subagents child whose
 * agent file has a `tools:` allowlist, which drops extension tools) cannot ask: its model reads
 * "Tool ask_user_via_host not found" and guesses. The session tells the host instead, which shows
 * one notice per agent naming the agent and the fix.
 */
import { cutText } from "../../model/sanitise.ts";
import type { HostNotice } from "../shared/protocol.ts";
import type { SharedHandle } from "../shared/shared-handle.ts";

/** Notice keys a host remembers, so a runaway stream of distinct keys cannot grow it without end. @default 256 */
const MAX_NOTICE_KEYS = 256;
/** Longest notice the host shows, in code points. @default 400 */
const MAX_NOTICE_LENGTH = 400;

/** The notice for `agent` (an agent name, or the session's label when it has none). */
export function toolMissingNotice(agent: string, tool: string): string {
	return `checkpoint-bridge: sub-agent "${agent}" cannot ask you: its agent file's tools: line leaves out ${tool} (its model reads "Tool ${tool} not found"). Use excludeTools: instead of tools: in that agent file.`;
}

/** Tells the host in this process that `agent`'s sessions lack the tool; a host shows it once per agent. */
export function reportToolMissing(handle: SharedHandle, agent: string, tool: string): void {
	handle.bus.emit("notice", { key: `tool-missing:${agent}`, message: toolMissingNotice(agent, tool) });
}

/** The host's side: each key's notice once, made safe for the terminal. */
export function noticeOnce(notify: (message: string) => void): (notice: HostNotice) => void {
	const seen = new Set<string>();
	return (notice) => {
		if (typeof notice?.key !== "string" || typeof notice.message !== "string" || seen.has(notice.key)) return;
		if (seen.size >= MAX_NOTICE_KEYS) return;
		seen.add(notice.key);
		notify(cutText(notice.message, MAX_NOTICE_LENGTH));
	};
}
