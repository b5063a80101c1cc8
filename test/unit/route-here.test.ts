/**
 * A host in this process is found on the shared handle: no advertisement file, no NATS setting is
 * read for a call that goes to it; without one, both are read at every call.
 */
import { afterEach, describe, expect, it } from "vitest";
import { claimHostRole } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { TRANSPORTS, waysFrom } from "../../extensions/checkpoint-bridge/route.ts";
import { dialogSurface } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "./support/fake-ui.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
	for (const cleanup of cleanups.splice(0)) cleanup();
});

/** The list with the transports that read outside the process (the endpoint's advertisement, the NATS settings) counting their reads, finding nothing. */
function countedReads() {
	const reads = { endpoint: 0, nats: 0 };
	const outside = TRANSPORTS.map((entry) =>
		entry.kind === "endpoint" || entry.kind === "nats" ? { ...entry, find: () => void reads[entry.kind as keyof typeof reads]++ } : entry,
	);
	return { reads, outside };
}

describe("finding a host in this process", () => {
	it("reads nothing outside the process while a session of it holds the role, and asks that host", async () => {
		const handle = createHandle();
		const fake = fakeUI({ respond: (d) => d.answer("Yes") });
		const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
		if (!role) throw new Error("a fresh handle must accept the claim");
		cleanups.push(() => role.release("quit", "done"));
		const { reads, outside } = countedReads();
		const ways = waysFrom(handle, outside);
		expect(ways.now()).toEqual({ kind: "host" });
		expect(ways.reachable()).toBe(true);
		const envelope = await ways.ask({
			asker: { label: "planner", sessionId: "p" },
			questions: [{ question: "Ship it?", kind: "confirm" }],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		expect(reads).toEqual({ endpoint: 0, nats: 0 });
	});

	it("reads the endpoint's advertisement and the NATS settings at every call while no session of it holds the role", () => {
		const { reads, outside } = countedReads();
		const ways = waysFrom(createHandle(), outside);
		expect(ways.now()).toEqual({ kind: "none" });
		expect(ways.now()).toEqual({ kind: "none" });
		expect(reads).toEqual({ endpoint: 2, nats: 2 });
	});
});
