/**
 * The tool's parameter schema as the model sees it. Deliberately lenient (no minItems, no minLength):
 * pi rejects schema violations before the tool runs, and the tool's own validator gives a better
 * envelope, naming every problem at once (see validate.ts).
 */
import { Type, type Static } from "typebox";

export const QuestionSchema = Type.Object({
	question: Type.String({ description: "The question, one decision, phrased for a human who has not seen your work." }),
	options: Type.Optional(
		Type.Array(Type.String(), { description: "Choices to pick from. Omit for a free-text answer." }),
	),
	placeholder: Type.Optional(Type.String({ description: "Hint shown in the empty text field (free-text questions only)." })),
});

export const AskParamsSchema = Type.Object({
	questions: Type.Array(QuestionSchema, {
		description: "Every question you need answered now, batched in one call. They are shown one after another.",
	}),
	timeoutMs: Type.Optional(
		Type.Number({ description: "How long to wait for the human in total, in ms (1000 to 3600000). Default 300000." }),
	),
});

export type AskParams = Static<typeof AskParamsSchema>;
