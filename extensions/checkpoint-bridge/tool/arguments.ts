/**
 * A call without questions at all: pi's schema check would refuse it with its own text before the
 * tool runs. prepareArguments carries such a call to execute instead, so it gets the envelope
 * (status error, every problem named) like any other.
 */
import type { AskParams } from "./schema.ts";

/** Where prepareArguments keeps the raw arguments of a call that has no questions at all. */
const WITHOUT_QUESTIONS = "checkpointBridgeRawArguments";

const hasQuestions = (args: unknown) => typeof args === "object" && args !== null && (args as { questions?: unknown }).questions != null;

/** pi's prepareArguments: the arguments as they are when they hold questions, else wrapped so the schema passes them. */
export const prepareArguments = (args: unknown): AskParams =>
	hasQuestions(args) ? (args as AskParams) : ({ questions: [], [WITHOUT_QUESTIONS]: args } as unknown as AskParams);

/** The arguments the model sent, unwrapped from what prepareArguments made of them. */
export const rawArguments = (params: unknown): unknown =>
	typeof params === "object" && params !== null && WITHOUT_QUESTIONS in params ? (params as Record<string, unknown>)[WITHOUT_QUESTIONS] : params;
