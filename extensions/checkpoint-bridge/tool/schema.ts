/**
 * The tool as pi and the model read it: its name, description, snippet and guidelines, and its
 * parameter schema: how many questions and options a call may have (minItems, maxItems) from
 * LIMITS, as the descriptions say them. A call the schema refuses (no questions at all, more than
 * LIMITS allows, a wrong type) would be refused by pi's schema check with its own text before the
 * tool runs: prepareArguments (arguments.ts) carries it to execute instead, so it gets the envelope
 * (status error, every problem named at once by the one validator, model/validate.ts) like any other. The schema
 * states the bounds for the model; the validator enforces them, text lengths included after
 * neutralising. Every bound is taken from LIMITS and the budget's bounds, never typed twice.
 */
import { type Static, Type } from "typebox";
import { DEFAULT_CALL_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, NO_LIMIT } from "../core/shared/config.ts";
import { LIMITS } from "../model/limits.ts";

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

const OptionSchema = Type.Union([
	Type.String(),
	Type.Object({
		label: Type.String({ description: "What the human picks; returned as the answer." }),
		description: Type.Optional(Type.String({ description: "One line on what this choice means." })),
		preview: Type.Optional(
			Type.String({ description: `Text the human sees while this option is under the cursor, e.g. code or a diff (max ${LIMITS.preview} chars).` }),
		),
	}),
]);

const QuestionSchema = Type.Object({
	question: Type.String({ description: "The question, one decision, phrased for a human who has not seen your work." }),
	id: Type.Optional(Type.String({ description: "Your id for the question; echoed in its answer." })),
	header: Type.Optional(Type.String({ description: `A short label shown before the question (max ${LIMITS.header} chars).` })),
	details: Type.Optional(Type.String({ description: "Context the human needs to decide, shown with the question." })),
	options: Type.Optional(
		Type.Array(OptionSchema, {
			minItems: LIMITS.options.min,
			maxItems: LIMITS.options.max,
			description: `${LIMITS.options.min} to ${LIMITS.options.max} choices. Omit for a free-text answer.`,
		}),
	),
	multiSelect: Type.Optional(Type.Boolean({ description: "Let the human pick several options. Default false." })),
	allowOther: Type.Optional(Type.Boolean({ description: 'Offer "Other (type your own)" with the options. Default true.' })),
	recommended: Type.Optional(Type.String({ description: "The label of the option you recommend; shown first and marked." })),
	kind: Type.Optional(Type.Literal("confirm", { description: 'Set "confirm" for a yes/no question (no options).' })),
	placeholder: Type.Optional(Type.String({ description: "Hint shown in the empty text field." })),
	share: Type.Optional(
		Type.Union([Type.Literal("origin"), Type.Literal("any")], {
			description:
				'Who may get this answer when another asker asks the identical question at the same time: "origin" (default) only askers of your own process or connection; "any" also askers elsewhere that say "any" too. Typed text is never shared across origins.',
		}),
	),
});

export const AskParamsSchema = Type.Object({
	questions: Type.Array(QuestionSchema, {
		minItems: LIMITS.questions.min,
		maxItems: LIMITS.questions.max,
		description: `${LIMITS.questions.min} to ${LIMITS.questions.max} questions you need answered now, batched in one call. The human sees them together in one form (in the terminal) or one after another.`,
	}),
	timeoutMs: Type.Optional(
		Type.Number({
			description: `How long to wait for the human in total, in ms (${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}; ${NO_LIMIT}: no limit, wait until answered or dismissed). Default ${DEFAULT_CALL_TIMEOUT_MS}.`,
		}),
	),
	wait: Type.Optional(
		Type.Boolean({
			description:
				'false: do not wait. Returns at once with status "queued" and the requestId; the answer arrives later in this session as a message while it runs (once it has ended, in the host\'s session instead; wait_for_host_answers collects it within this run). A receipt is not an answer. Default true.',
		}),
	),
});

export type AskParams = Static<typeof AskParamsSchema>;
