/**
 * What pi and the model read of the tool: its name, description, snippet and guidelines.
 */

/** The tool's name, as the model calls it. */
export const TOOL_NAME = "ask_user_via_host";

/** Its label in pi's UI. */
export const TOOL_LABEL = "Ask user via host";

/** The tool's description for the model. */
export const DESCRIPTION = [
	"Ask the human a question and wait for the answer. Works from any session, sub-agents included: the question is shown in the main session's UI.",
	"Batch every related question into one call; ask only what changes the outcome.",
	"Questions can offer options (with descriptions, a preview such as code or a diff, a recommended one, multiSelect, and an 'Other' free-text entry), be free text, or be a yes/no confirm.",
	'Returns JSON {status, answers:[{question, answer, kind, values?, id?, note?}], note}; an answer\'s note is what the human added in their own words. Proceed only on status "ok"; on any other status do not guess: return a structured needs_input result listing the open questions.',
].join(" ");

/** The tool's line in the system prompt's tool list. */
export const PROMPT_SNIPPET = `${TOOL_NAME}: ask the human (shown in the main session's UI), even from a sub-agent`;

/** When and how to use the tool, for the system prompt. */
export const PROMPT_GUIDELINES = [
	`Use ${TOOL_NAME} when a decision belongs to the human and you cannot infer it; never guess instead.`,
	`Batch related questions into a single ${TOOL_NAME} call, give options when the choices are known, and ask only what changes the outcome.`,
	`If ${TOOL_NAME} returns any status other than "ok", stop and return a structured needs_input result with the open questions instead of guessing.`,
];
