/**
 * One contract for both tools, in pi and over MCP (docs/tool.md): the MCP tools take pi's parameter
 * names and types and give pi's result shapes. Only the bounds a description states may differ.
 */
import { describe, expect, it } from "vitest";
import { MAX_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { askInputSchema, COLLECT_INPUT_SCHEMA, COLLECT_OUTPUT_SCHEMA } from "../../../extensions/checkpoint-bridge/mcp/schema.ts";
import type { WaitOutcome } from "../../../extensions/checkpoint-bridge/model/wait-outcome.ts";
import { AskParamsSchema } from "../../../extensions/checkpoint-bridge/tool/schema.ts";
import { WaitParamsSchema } from "../../../extensions/checkpoint-bridge/tool/wait.ts";

/** A schema's shape without its words: every `description` dropped, typebox's symbol marks gone. */
function shape(schema: object): unknown {
	return JSON.parse(JSON.stringify(schema), (key, value) => (key === "description" ? undefined : value));
}

/** Every key of pi's wait result: a key added to WaitOutcome fails the type check here until it is listed. */
const WAIT_OUTCOME_KEYS: Record<keyof WaitOutcome, true> = { status: true, ended: true, open: true, delivered: true, note: true };

describe("pi's tools and the MCP server's", () => {
	it("ask_user_via_host takes the same parameters, of the same types, in pi and over MCP", () => {
		expect(shape(askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, 300_000))).toEqual(shape(AskParamsSchema));
	});

	it("wait_for_host_answers takes pi's parameters (requestIds, timeoutMs), of the same types", () => {
		expect(shape(COLLECT_INPUT_SCHEMA)).toEqual(shape(WaitParamsSchema));
	});

	it("wait_for_host_answers gives pi's result: status, ended, open, delivered, note; the statuses pi's", () => {
		expect(Object.keys(COLLECT_OUTPUT_SCHEMA.properties ?? {}).sort()).toEqual(Object.keys(WAIT_OUTCOME_KEYS).sort());
		expect(COLLECT_OUTPUT_SCHEMA.properties?.status).toMatchObject({ enum: ["ok", "timeout", "error"] satisfies WaitOutcome["status"][] });
	});
});
