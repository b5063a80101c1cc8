/**
 * A wait over MCP on ids another process asked (mcp/receipts.ts over core/store/): found in the store
 * of the host's directory by the id alone, ended or still open, beside the client's own receipts.
 */
import { describe, expect, it } from "vitest";
import type { StoredEnd } from "../../../extensions/checkpoint-bridge/core/store/store.ts";
import { Receipts } from "../../../extensions/checkpoint-bridge/mcp/receipts.ts";
import { makeEnvelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { memoryStores } from "../support/memory-store.ts";

const memoryStore = memoryStores();

const end = (askerId: string, answer: string): StoredEnd => ({
	askerId,
	hostId: `host-${askerId}`,
	askerSession: "mcp-gone",
	asker: "codex in work",
	questions: ["Which cache?"],
	status: "ok",
	answers: [{ question: "Which cache?", answer, kind: "option" }],
	queuedAt: Date.now() - 1_000,
	endedAt: Date.now(),
	expiresAt: Date.now() + 60_000,
});

describe("Receipts over the store", () => {
	it("an id this server never saw, ended in the store, comes back as its envelope, to every wait that names it", async () => {
		const store = memoryStore();
		store.ended(end("earlier-id", "redis"));
		const receipts = new Receipts(() => store);
		for (const owner of ["mcp-a", "mcp-b"]) {
			const waited = await receipts.wait(owner, ["earlier-id"], 1_000);
			expect(waited).toMatchObject({ status: "ok", open: [], ended: [{ requestId: "earlier-id", status: "ok", answers: [{ answer: "redis" }] }] });
		}
	});

	it("an id still open in the store is waited for, and listed open when the wait ends first", async () => {
		const store = memoryStore();
		store.put({ hostId: "host-open-id", askerId: "open-id", askerSession: "mcp-gone", record: "{}" });
		const receipts = new Receipts(() => store);
		const waited = await receipts.wait("mcp-a", ["open-id"], 300);
		expect(waited).toMatchObject({ status: "timeout", ended: [], open: ["open-id"] });
		setTimeout(() => store.ended(end("open-id", "memcached")), 100);
		expect(await receipts.wait("mcp-a", ["open-id"], 5_000)).toMatchObject({ ended: [{ requestId: "open-id", answers: [{ answer: "memcached" }] }], open: [] });
	});

	it("a wait on its own receipt and a stored id ends with the first end, the other listed open", async () => {
		const store = memoryStore();
		store.put({ hostId: "host-stored", askerId: "stored", askerSession: "mcp-gone", record: "{}" });
		const receipts = new Receipts(() => store);
		receipts.open("mcp-a", "mine", async () => makeEnvelope("ok", [{ question: "Q", answer: "yes", kind: "confirm" }], undefined, { requestId: "mine" }));
		const waited = await receipts.wait("mcp-a", ["mine", "stored"], 5_000);
		expect(waited).toMatchObject({ ended: [{ requestId: "mine" }], open: ["stored"] });
	});

	it("an id neither here nor in the store is refused by name; with no store, so is one another process asked", async () => {
		const store = memoryStore();
		store.ended(end("earlier-id", "redis"));
		expect(await new Receipts(() => store).wait("mcp-a", ["nobody-asked"], 100)).toMatchObject({
			status: "error",
			note: expect.stringMatching(/Unknown request ids.*"nobody-asked"/),
		});
		expect(await new Receipts().wait("mcp-a", ["earlier-id"], 100)).toMatchObject({
			status: "error",
			note: expect.stringMatching(/Unknown request ids.*"earlier-id"/),
		});
	});

	it("allTaken resolves once every open call was taken by the host, or its bound passed", async () => {
		const receipts = new Receipts();
		let takeIt = () => {};
		receipts.open("mcp-a", "r1", (_signal, taken) => {
			takeIt = taken;
			return new Promise(() => {});
		});
		let done = false;
		const all = receipts.allTaken(5_000).then(() => {
			done = true;
		});
		await new Promise((r) => setTimeout(r, 50));
		expect(done).toBe(false);
		takeIt();
		await all;
		expect(done).toBe(true);
		const t0 = Date.now();
		receipts.open("mcp-a", "r2", () => new Promise(() => {}));
		await receipts.allTaken(100);
		expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
	});
});
