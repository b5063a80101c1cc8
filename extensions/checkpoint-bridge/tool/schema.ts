/**
 * The tool's parameter schema as the model sees it: how many questions and options a call may have
 * (minItems, maxItems) from LIMITS, as the descriptions say them. A call the schema refuses still
 * reaches the tool (arguments.ts), whose own validator gives an envelope that names every problem at
 * once (validate.ts); text lengths stay in the descriptions, checked there after neutralising.
 * Every bound is taken from LIMITS and the budget's bounds, never typed twice.
 */
import { type Static, Type } from "typebox";
import { DEFAULT_CALL_TIMEOUT_MS, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, NO_LIMIT } from "../core/shared/config.ts";
import { LIMITS } from "../model/limits.ts";

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
