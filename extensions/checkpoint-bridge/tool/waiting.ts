/**
 * What `wait_for_host_answers` does when called (wait.ts defines the tool): its parameters checked by
 * the one validator, then the wait itself. Loaded at a session's first wait, with the delivery box.
 */
import type { DeliveryBox } from "../core/delivery/delivery.ts";
import type { RequestStore } from "../core/store/store.ts";
import { DEFAULT_WAIT_MS, MAX_OPEN_PER_ASKER, MAX_WAIT_MS, MIN_WAIT_MS } from "../model/limits.ts";
import { validateWaitParams } from "../model/validate.ts";
import type { WaitOutcome, WaitWords } from "../model/wait-outcome.ts";

/** How this tool's notes read: an answer not waited for arrives as a message. */
const WORDS: WaitWords = {
	asker: "this session",
	handedBack: "delivered before, as a message in this session",
	stillOpen: "their answers arrive later as messages.",
};

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
	const checked = validateWaitParams(raw);
	if (!checked.ok) return waitRefused(`Invalid parameters: ${checked.problems.join("; ")}.`);
	const { requestIds, timeoutMs } = checked;
	const ids = requestIds === undefined ? box.open(sessionId).map((ask) => ask.requestId) : [...new Set(requestIds)];
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
	const budget = Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.round(timeoutMs ?? DEFAULT_WAIT_MS)));
	if (open.length === 0 && earlier.length === 0) return (await loadOutcomes()).waitOutcome([], [], delivered, WORDS);
	const [here, before] = await Promise.all([
		open.length > 0 ? box.waitFor(sessionId, open, budget, signal) : { ended: [], open: [] },
		store && waitInStore && earlier.length > 0 ? waitInStore(store, earlier, budget, signal) : { ended: [], open: [] },
	]);
	return (await loadOutcomes()).waitOutcome([...here.ended.map((d) => d.envelope), ...before.ended], [...here.open, ...before.open], delivered, WORDS);
}
