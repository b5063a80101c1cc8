/**
 * `wait_for_host_answers`: a model with nothing else to do waits, within a budget, for the requests
 * it asked with `wait: false`. Each that ends in the wait comes back in the tool result (and is then
 * not delivered as a message); a wait that ends first lists what is still open. Ids that are not the
 * session's queued requests, and too many ids, are refused by name.
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { DeliveryBox } from "../core/delivery/delivery.ts";
import type { RequestStore } from "../core/store/store.ts";
import { MAX_OPEN_PER_ASKER } from "../model/limits.ts";
import type { WaitOutcome, WaitWords } from "../model/wait-outcome.ts";

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
			description: `Ids of requests asked with wait: false (at most ${MAX_OPEN_PER_ASKER}), in this run or an earlier one (the receipt's requestId). Default: every one of yours still open.`,
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

// Loaded once, at the first wait that needs them: a session that never waits loads no outcome, one that never waits for an earlier run's request no store.
let storeOpen: Promise<typeof import("../core/store/open.ts")> | undefined;
const loadStoreOpen = () => (storeOpen ??= import("../core/store/open.ts"));
let outcomes: Promise<typeof import("../model/wait-outcome.ts")> | undefined;
const loadOutcomes = () => (outcomes ??= import("../model/wait-outcome.ts"));
let laterWaits: Promise<typeof import("../core/store/later-waits.ts")> | undefined;
const loadLaterWaits = () => (laterWaits ??= import("../core/store/later-waits.ts"));

/** The store of this directory's host (core/store/), where a request asked by an earlier run is found by its id; undefined when there is none. */
async function storeHere(): Promise<RequestStore | undefined> {
	const { processStore } = await loadStoreOpen();
	const opened = processStore(process.cwd());
	return opened.ok ? opened.store : undefined;
}

/**
 * Runs one wait for `sessionId`; never throws. Ids this session did not ask are looked for in the
 * store of the host's directory (`stored`): an earlier run's requests, by their ids (the capability).
 */
export async function waitForAnswers(
	box: DeliveryBox,
	sessionId: string,
	raw: unknown,
	signal?: AbortSignal,
	stored: () => RequestStore | undefined | Promise<RequestStore | undefined> = storeHere,
): Promise<WaitOutcome> {
	// Loaded where an outcome is made, never before a wait starts: an end delivered meanwhile would miss it.
	const waitRefused = async (why: string) => (await loadOutcomes()).waitRefused(why);
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
	const notHere = ids.filter((id) => !box.wasDelivered(id) && box.ownerOf(id) === undefined);
	const store = notHere.length > 0 ? await stored() : undefined;
	const { storeKnows, waitInStore } = store ? await loadLaterWaits() : {};
	// Asked by an earlier run (of this session or another): written down at the host, found by its id.
	const earlier = store && storeKnows ? notHere.filter((id) => storeKnows(store, id)) : [];
	const unknownIds = notHere.filter((id) => !earlier.includes(id));
	if (foreign.length > 0) return waitRefused(`Not requests of this session: ${foreign.map((id) => JSON.stringify(id)).join(", ")}.`);
	if (unknownIds.length > 0)
		return waitRefused(
			`Unknown request ids (not asked with wait: false in this session, or long gone): ${unknownIds.map((id) => JSON.stringify(id)).join(", ")}.`,
		);
	const open = ids.filter((id) => !delivered.includes(id) && !earlier.includes(id));
	const budget = Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.round((timeoutMs as number | undefined) ?? DEFAULT_WAIT_MS)));
	if (open.length === 0 && earlier.length === 0) return (await loadOutcomes()).waitOutcome([], [], delivered, WORDS);
	const [here, before] = await Promise.all([
		open.length > 0 ? box.waitFor(sessionId, open, budget, signal) : { ended: [], open: [] },
		store && waitInStore && earlier.length > 0 ? waitInStore(store, earlier, budget, signal) : { ended: [], open: [] },
	]);
	return (await loadOutcomes()).waitOutcome([...here.ended.map((d) => d.envelope), ...before.ended], [...here.open, ...before.open], delivered, WORDS);
}

/** The tool's definition over this process's delivery box (`box` loads it at the first wait), for the calling session. */
export function waitTool(box: () => Promise<DeliveryBox>): ToolDefinition<typeof WaitParamsSchema, WaitOutcome> {
	return {
		name: WAIT_TOOL_NAME,
		label: "Wait for host answers",
		description:
			"Wait, within a budget, for the answers to questions you asked with ask_user_via_host and wait: false. Returns each that ended; the rest arrive later as messages. Use only when you have nothing else to do.",
		parameters: WaitParamsSchema,
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const outcome = await waitForAnswers(await box(), ctx.sessionManager.getSessionId(), params, signal);
			return { content: [{ type: "text", text: JSON.stringify(outcome) }], details: outcome };
		},
	};
}
