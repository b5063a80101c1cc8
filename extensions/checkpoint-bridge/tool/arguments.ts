/**
 * A call's arguments on their way to execute: pi checks them against the tool's schema first and
 * refuses a call the schema does not take with its own text; prepareArguments wraps such a call so
 * it reaches execute, which answers it with the validator's envelope. Apart from schema.ts because
 * typebox's checker is loaded with it: the MCP server shares the schema and never prepares a pi call.
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
