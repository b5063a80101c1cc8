/**
 * `ask_user_via_host` as pi registers it: what pi and the model read of it, its parameters' schema
 * and its look. A call runs tool/ask-call.ts, loaded at the session's first call: a session that
 * never asks loads none of it.
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { UNSTARTED_SESSION_ID } from "../core/shared/identity.ts";
import type { Envelope } from "../model/result.ts";
import { prepareArguments } from "./arguments.ts";
import type { AskToolParts } from "./ask-call.ts";
import { renderCallView, renderResultView } from "./render.ts";
import { AskParamsSchema, DESCRIPTION, PROMPT_GUIDELINES, PROMPT_SNIPPET, TOOL_LABEL, TOOL_NAME } from "./schema.ts";

let call: Promise<typeof import("./ask-call.ts")> | undefined;
/** The call's code, loaded once for every caller: pi's loader can hand a second, concurrent import a module half run. */
const loadCall = () => (call ??= import("./ask-call.ts"));

/** The tool's definition; the object itself marks this extension's copy (interop/enable.ts). */
export function askTool(parts: AskToolParts): ToolDefinition<typeof AskParamsSchema, Envelope> {
	return {
		name: TOOL_NAME,
		label: TOOL_LABEL,
		description: DESCRIPTION,
		promptSnippet: PROMPT_SNIPPET,
		promptGuidelines: PROMPT_GUIDELINES,
		parameters: AskParamsSchema,
		prepareArguments,
		renderCall: (args, theme) => {
			const asker = parts.asker();
			return renderCallView(args, asker.sessionId === UNSTARTED_SESSION_ID ? undefined : asker.label, theme);
		},
		renderResult: (result, options, theme) => renderResultView(result, options, theme),
		async execute(...args) {
			const startedAt = Date.now();
			return (await loadCall()).runAsk(parts, startedAt, ...args);
		},
	};
}
