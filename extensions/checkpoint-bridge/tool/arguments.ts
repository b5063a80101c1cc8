/**
 * A call the schema refuses (no questions at all, more than LIMITS allows, a wrong type): pi's
 * schema check would refuse it with its own text before the tool runs. prepareArguments carries
 * such a call to execute instead, so it gets the envelope (status error, every problem named by
 * the one validator, model/validate.ts) like any other. The schema states the bounds for the model;
 * the validator is what enforces them.
 */
import { Value } from "typebox/value";
import { type AskParams, AskParamsSchema } from "./schema.ts";

/** Where prepareArguments keeps the raw arguments of a call the schema refuses. */
const RAW_ARGUMENTS = "checkpointBridgeRawArguments";

/** What stands in for a refused call's questions: the least the schema takes, never read (rawArguments unwraps the call). */
const STAND_IN = [{ question: "" }];

/** pi's prepareArguments: the arguments as they are when the schema takes them, else wrapped so it does. */
export const prepareArguments = (args: unknown): AskParams =>
	Value.Check(AskParamsSchema, args) ? (args as AskParams) : ({ questions: STAND_IN, [RAW_ARGUMENTS]: args } as unknown as AskParams);

/** The arguments the model sent, unwrapped from what prepareArguments made of them. */
export const rawArguments = (params: unknown): unknown =>
	typeof params === "object" && params !== null && RAW_ARGUMENTS in params ? (params as Record<string, unknown>)[RAW_ARGUMENTS] : params;
