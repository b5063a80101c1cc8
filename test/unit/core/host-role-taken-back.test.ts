/**
 * The host role's side of the store (core/host/host-role.ts, ADR-0033): the store it is given becomes
 * the process's, a write that fails is told to the human once, and of the requests a host of an
 * earlier process wrote down, only a `wait: false` one whose end nobody hears goes home to the host's
 * session, once, with its status, reason and wait.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDeliveryBox, type Delivery } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { endTakers, homeRoute } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { PROTOCOL_VERSION, type RelayRequest, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { currentStore, openStore, useStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";

/** Lets the host's queue and dialogs run. */
const flush = async () => {
	for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};

let dir: string;
let file: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "cpb-taken-back-"));
	file = join(dir, "store.sqlite");
});
afterEach(() => {
	useStore(undefined);
	rmSync(dir, { recursive: true, force: true });
});

/** A host role of its own process: its own handle, book and box, over the store file; what reaches the host's session. */
function hostOn(storeFile: string) {
	const handle = createHandle();
	const fake = fakeUI();
	const delivered: Delivery[] = [];
	const box = createDeliveryBox({ hostSessionId: () => "host" });
	box.attach("host", { post: (d) => (delivered.push(d), "posted"), record: () => {} });
	const store = openStore(storeFile);
	const role = claimHostRole(handle, {
		ui: fake.ui,
		surface: dialogSurface(fake.ui),
		sessionId: "host",
		book: new RequestBook(readLateConfig({}), handle.bus),
		home: homeRoute(() => "host", box, endTakers(handle.bus)),
		store,
	})!;
	return { handle, fake, role, delivered, store, box };
}

/** A request of another process, written down by the host that takes it. */
const farRequest = (id: string, over: Partial<RelayRequest> = {}): RelayRequest => ({
	v: PROTOCOL_VERSION,
	id,
	askerId: `asker-${id}`,
	origin: "local:c",
	asker: { label: "nightly (pid 7)", sessionId: "pid 7/n" },
	questions: [{ question: `${id}?` }],
	deadline: 0,
	dialogTimeoutMs: 0,
	createdAt: Date.now(),
	...over,
});

/** A request the host refuses (another protocol's) under `id`: its result goes out, and nobody hears it. */
const refusedUnder = (id: string): RelayRequest => ({ ...farRequest(id), v: PROTOCOL_VERSION + 1 });

describe("the store a host role is given", () => {
	it("becomes the process's store, which the page, mail and later waits read", () => {
		const { store, role } = hostOn(file);
		expect(store.ok && currentStore()).toBe(store.ok && store.store);
		role.release("quit", "bye");
	});

	it("tells the human once when writing it fails, and the host goes on in memory", async () => {
		const { handle, fake, role, store } = hostOn(file);
		if (store.ok) store.store.close();
		handle.bus.emit("request", farRequest("w-1"));
		handle.bus.emit("request", farRequest("w-2"));
		await flush();
		expect(fake.notices.filter((n) => n.type === "warning").map((n) => n.message)).toEqual([
			expect.stringMatching(/^checkpoint-bridge: writing the store failed \(.+\); questions live only in this host from now on\.$/),
		]);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[nightly (pid 7)] w-1?"]);
		role.release("quit", "bye");
	});
});

describe("requests a host of an earlier process wrote down, taken back", () => {
	it("a waiting one answered while nobody listens sends nothing to the host's session: its asker waits on its own transport", async () => {
		const first = hostOn(file);
		first.handle.bus.emit("request", farRequest("wait-1"));
		await flush();
		// The process dies here: the second host opens the same file.
		const second = hostOn(file);
		await flush();
		expect(second.fake.dialogs.map((d) => d.title)).toEqual(["[nightly (pid 7) · asked before the restart] wait-1?"]);
		second.fake.current()!.answer("yes");
		await flush();
		expect(second.delivered).toEqual([]);
	});

	it("a wait: false one dismissed while nobody listens goes to the host's session once, dismissed, with how long it waited", async () => {
		const first = hostOn(file);
		first.handle.bus.emit("request", farRequest("later-1", { later: true }));
		await flush();
		const second = hostOn(file);
		await flush();
		second.fake.current()!.answer(undefined);
		await flush();
		expect(second.delivered).toHaveLength(1);
		const [{ envelope }] = second.delivered as [Delivery];
		expect(envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", requestId: "asker-later-1" });
		expect(envelope.waitedMs).toBeGreaterThanOrEqual(0);
		expect(envelope.waitedMs).toBeLessThan(60_000);
		// A request the host refuses later under the same id sends nothing more of it, also once the box no longer remembers the first.
		second.handle.bus.emit("request", refusedUnder("later-1"));
		await flush();
		expect(second.delivered).toHaveLength(1);
		for (let i = 0; i < 1_100; i++)
			second.box.deliver({ requestId: `other-${i}`, askerSessionId: "host", asker: "other", questions: [], queuedAt: Date.now(), envelope }, { gone: true });
		second.handle.bus.emit("request", refusedUnder("later-1"));
		await flush();
		expect(second.delivered.filter((d) => d.requestId === "asker-later-1")).toHaveLength(1);
	});

	it("a wait: false one whose asker listens again gets its end there, not in the host's session", async () => {
		const first = hostOn(file);
		first.handle.bus.emit("request", farRequest("later-2", { later: true }));
		await flush();
		const second = hostOn(file);
		const heard: unknown[] = [];
		second.handle.bus.on(replyChannel("later-2"), (reply) => void heard.push(reply));
		await flush();
		second.fake.current()!.answer("yes");
		await flush();
		expect(heard).toContainEqual(expect.objectContaining({ kind: "result", status: "ok" }));
		expect(second.delivered).toEqual([]);
	});

	it("a wait: false one taken back late goes home by its late end alone, once", async () => {
		const first = hostOn(file);
		first.handle.bus.emit("request", farRequest("late-1", { later: true, deadline: Date.now() + 50 }));
		await flush();
		// Its budget runs out on the real clock: waited for, however busy the machine is.
		for (let waited = 0; first.handle.snapshot()!.late === undefined && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
		expect(first.handle.snapshot()!.late?.map((l) => l.requestId)).toEqual(["late-1"]);
		const second = hostOn(file);
		await flush();
		expect(second.handle.snapshot()!.late?.map((l) => l.requestId)).toEqual(["late-1"]);
		second.handle.bus.emit("answer", { requestId: "late-1", answers: ["yes"], source: "web" }, () => {});
		await flush();
		expect(second.delivered.map((d) => [d.late === true, d.envelope.status])).toEqual([[true, "ok"]]);
		second.handle.bus.emit("request", refusedUnder("late-1"));
		await flush();
		expect(second.delivered).toHaveLength(1);
	});
});
