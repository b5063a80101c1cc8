/**
 * checkpoint-bridge: every session gets `ask_user_via_host`; the one session with a UI (the host)
 * shows the questions, one dialog at a time for the whole process, and the answers come back as
 * the tool result. Imports nothing from pi at run time, so any pi with this extension API loads it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { askViaHost } from "./asker.ts";
import { callBudget, readConfig } from "./config.ts";
import { makeEnvelope, toToolResult, type Envelope } from "./envelope.ts";
import { askerIdentity } from "./identity.ts";
import { claimHostRole, type HostRole } from "./host-role.ts";
import { renderCallView, renderResultView } from "./render.ts";
import { AskParamsSchema } from "./schema.ts";
import { sharedHandle } from "./shared-handle.ts";
import { validateAskParams } from "./validate.ts";

export const TOOL_NAME = "ask_user_via_host";

const DESCRIPTION = [
	"Ask the human a question and wait for the answer. Works from any session, sub-agents included: the question is shown in the main session's UI.",
	"Batch every related question into one call; ask only what changes the outcome.",
	'Returns JSON {status, answers:[{question, answer}], note}. Proceed only on status "ok"; on any other status do not guess: return a structured needs_input result listing the open questions.',
].join(" ");

const PROMPT_GUIDELINES = [
	`Use ${TOOL_NAME} when a decision belongs to the human and you cannot infer it; never guess instead.`,
	`Batch related questions into a single ${TOOL_NAME} call, give options when the choices are known, and ask only what changes the outcome.`,
	`If ${TOOL_NAME} returns any status other than "ok", stop and return a structured needs_input result with the open questions instead of guessing.`,
];

export default function checkpointBridge(pi: ExtensionAPI): void {
	const handle = sharedHandle();
	let role: HostRole | undefined;
	/** This session's id, known from session_start on; names the asker in the transcript. */
	let sessionId: string | undefined;

	// A session with a UI claims the role at start; the next one claims it after /new, /resume, /fork, /reload.
	pi.on("session_start", (_event, ctx) => {
		sessionId = ctx.sessionManager.getSessionId();
		if (!role && ctx.hasUI) role = claimHostRole(handle, ctx.ui, ctx.sessionManager.getSessionId());
	});

	pi.on("session_shutdown", (event) => {
		role?.release(`The host session ended (${event.reason}) before the questions were answered.`);
		role = undefined;
	});

	pi.registerTool<typeof AskParamsSchema, Envelope>({
		name: TOOL_NAME,
		label: "Ask user via host",
		description: DESCRIPTION,
		promptSnippet: `${TOOL_NAME}: ask the human (shown in the main session's UI), even from a sub-agent`,
		promptGuidelines: PROMPT_GUIDELINES,
		parameters: AskParamsSchema,
		renderCall: (args, theme) => renderCallView(args, askerIdentity(pi.getSessionName(), sessionId ?? "this session").label, theme),
		renderResult: (result, options, theme) => renderResultView(result, options, theme),
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const startedAt = Date.now();
			try {
				const asker = askerIdentity(pi.getSessionName(), ctx.sessionManager.getSessionId());
				const checked = validateAskParams(params);
				if (!checked.ok)
					return toToolResult(makeEnvelope("error", [], `Invalid parameters: ${checked.problems.join("; ")}.`, { asker: asker.label, waitedMs: 0 }));
				const config = readConfig();
				const envelope = await askViaHost({
					handle,
					asker,
					questions: checked.questions,
					budgetMs: callBudget(checked.timeoutMs, config),
					dialogTimeoutMs: config.dialogTimeoutMs,
					...(signal ? { signal } : {}),
				});
				return toToolResult(envelope);
			} catch (error) {
				// Environmental failures become a status, never an exception into pi.
				const reason = error instanceof Error ? error.message : String(error);
				return toToolResult(makeEnvelope("error", [], `checkpoint-bridge failed: ${reason}`, { waitedMs: Date.now() - startedAt }));
			}
		},
	});
}
