/**
 * `wait_for_host_answers`: a model with nothing else to do waits, within a budget, for the requests
 * it asked with `wait: false`. Each that ends in the wait comes back in the tool result (and is then
 * not delivered as a message); a wait that ends first lists what is still open. Ids that are not the
 * session's queued requests, and too many ids, are refused by name.
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { DeliveryBox } from "../core/delivery/delivery.ts";
import { DEFAULT_WAIT_MS, MAX_OPEN_PER_ASKER, MAX_WAIT_MS, MIN_WAIT_MS } from "../model/limits.ts";
import type { WaitOutcome } from "../model/wait-outcome.ts";

/** The tool's name. */
const WAIT_TOOL_NAME = "wait_for_host_answers";

export const WaitParamsSchema = Type.Object({
	requestIds: Type.Optional(
		Type.Array(Type.String(), {
			description: `Ids of requests asked with wait: false (at most ${MAX_OPEN_PER_ASKER}), in this run or an earlier one (the receipt's requestId). Default: every one of yours still open.`,
		}),
	),
	timeoutMs: Type.Optional(Type.Number({ description: `How long to wait, in ms (${MIN_WAIT_MS} to ${MAX_WAIT_MS}). Default ${DEFAULT_WAIT_MS}.` })),
});

/** The tool's definition over this process's delivery box (`box` loads it, and waiting.ts the wait, at the first wait), for the calling session. */
export function waitTool(box: () => Promise<DeliveryBox>): ToolDefinition<typeof WaitParamsSchema, WaitOutcome> {
	return {
		name: WAIT_TOOL_NAME,
		label: "Wait for host answers",
		description:
			"Wait, within a budget, for the answers to questions you asked with ask_user_via_host and wait: false. Returns each that ended; the rest arrive later as messages. Use only when you have nothing else to do.",
		parameters: WaitParamsSchema,
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const [{ waitForAnswers }, loaded] = await Promise.all([import("./waiting.ts"), box()]);
			const outcome = await waitForAnswers(loaded, ctx.sessionManager.getSessionId(), params, signal);
			return { content: [{ type: "text", text: JSON.stringify(outcome) }], details: outcome };
		},
	};
}
