/**
 * `wait_for_host_answers`: a model with nothing else to do waits, within a budget, for the requests
 * it asked with `wait: false`. Each that ends in the wait comes back in the tool result (and is then
 * not delivered as a message); a wait that ends first lists what is still open. Ids that are not the
 * session's queued requests, and too many ids, are refused by name.
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { DeliveryBox } from "../core/delivery/delivery.ts";
import { MAX_OPEN_PER_ASKER } from "../model/limits.ts";
import { type WaitOutcome, type WaitWords, waitOutcome, waitRefused } from "../model/wait-outcome.ts";

/** The tool's name. */
const WAIT_TOOL_NAME = "wait_for_host_answers";
/** A wait's budget when the call names none. @default 60_000 */
export const DEFAULT_WAIT_MS = 60_000;
/** The longest a wait may last; longer is clamped. @default 600_000 (10 min) */
export const MAX_WAIT_MS = 600_000;
/** The shortest; shorter is clamped. @default 1_000 */
const MIN_WAIT_MS = 1_000;

export const WaitParamsSchema = Type.Object({
	requestIds: Type.Optional(
		Type.Array(Type.String(), {
			description: `Ids of requests you asked with wait: false (at most ${MAX_OPEN_PER_ASKER}). Default: every one of yours still open.`,
		}),
	),
	timeoutMs: Type.Optional(Type.Number({ description: `How long to wait, in ms (${MIN_WAIT_MS} to ${MAX_WAIT_MS}). Default ${DEFAULT_WAIT_MS}.` })),
});

/** How this tool's notes read: an answer not waited for arrives as a message. */
const WORDS: WaitWords = {
	asker: "this session",
	handedBack: "delivered before, as a message in this session",
	stillOpen: "their answers arrive later as messages.",
};

const PARAMETERS = ["requestIds", "timeoutMs"];

/** Runs one wait for `sessionId`; never throws. */
export async function waitForAnswers(box: DeliveryBox, sessionId: string, raw: unknown, signal?: AbortSignal): Promise<WaitOutcome> {
	const params = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
	const unknown = Object.keys(params).filter((key) => !PARAMETERS.includes(key));
	if (unknown.length > 0)
		return waitRefused(
			`Unknown parameter${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")} (known: ${PARAMETERS.join(", ")}).`,
		);
	const { requestIds, timeoutMs } = params;
	if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs)))
		return waitRefused("timeoutMs must be a finite number of milliseconds.");
	if (requestIds !== undefined && (!Array.isArray(requestIds) || requestIds.some((id) => typeof id !== "string")))
		return waitRefused("requestIds must be an array of request ids (strings).");
	const ids = requestIds === undefined ? box.open(sessionId).map((ask) => ask.requestId) : [...new Set(requestIds as string[])];
	if (ids.length > MAX_OPEN_PER_ASKER) return waitRefused(`${ids.length} request ids; a wait takes at most ${MAX_OPEN_PER_ASKER}.`);
	const delivered = ids.filter((id) => box.wasDelivered(id));
	const foreign = ids.filter((id) => !box.wasDelivered(id) && box.ownerOf(id) !== undefined && box.ownerOf(id) !== sessionId);
	const unknownIds = ids.filter((id) => !box.wasDelivered(id) && box.ownerOf(id) === undefined);
	if (foreign.length > 0) return waitRefused(`Not requests of this session: ${foreign.map((id) => JSON.stringify(id)).join(", ")}.`);
	if (unknownIds.length > 0)
		return waitRefused(
			`Unknown request ids (not asked with wait: false in this session, or long gone): ${unknownIds.map((id) => JSON.stringify(id)).join(", ")}.`,
		);
	const open = ids.filter((id) => !delivered.includes(id));
	const budget = Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.round((timeoutMs as number | undefined) ?? DEFAULT_WAIT_MS)));
	if (open.length === 0) return waitOutcome([], [], delivered, WORDS);
	const result = await box.waitFor(sessionId, open, budget, signal);
	return waitOutcome(
		result.ended.map((d) => d.envelope),
		result.open,
		delivered,
		WORDS,
	);
}

/** The tool's definition over this process's delivery box, for the calling session. */
export function waitTool(box: DeliveryBox): ToolDefinition<typeof WaitParamsSchema, WaitOutcome> {
	return {
		name: WAIT_TOOL_NAME,
		label: "Wait for host answers",
		description:
			"Wait, within a budget, for the answers to questions you asked with ask_user_via_host and wait: false. Returns each that ended; the rest arrive later as messages. Use only when you have nothing else to do.",
		parameters: WaitParamsSchema,
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const outcome = await waitForAnswers(box, ctx.sessionManager.getSessionId(), params, signal);
			return { content: [{ type: "text", text: JSON.stringify(outcome) }], details: outcome };
		},
	};
}
