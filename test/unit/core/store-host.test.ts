/**
 * The host role with the store (core/host/host-role.ts, core/store/): a refused store is told to the
 * human once and the host runs in memory; a host that claims the role takes back what a host of an
 * earlier process wrote down, shown once, and the end of a `wait: false` request nobody came back for
 * goes to the host's session, named by the asker's id, and stays in the store.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDeliveryBox, type Delivery } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { homeRoute } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { PROTOCOL_VERSION } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { openStore, useStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";

/** Lets the host's queue and dialogs run. */
const flush = async () => {
	for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "cpb-store-host-"));
});
afterEach(() => {
	useStore(undefined);
	rmSync(dir, { recursive: true, force: true });
});

/** A host role of its own process: its own handle, book and box, over the store file `file`. */
function hostOn(file: string) {
	const handle = createHandle();
	const fake = fakeUI();
	const delivered: Delivery[] = [];
	const box = createDeliveryBox({ hostSessionId: () => "host" });
	box.attach("host", { post: (d) => (delivered.push(d), "posted"), record: () => {} });
	const role = claimHostRole(handle, {
		ui: fake.ui,
		surface: dialogSurface(fake.ui),
		sessionId: "host",
		book: new RequestBook(readLateConfig({}), handle.bus),
		home: homeRoute(() => "host", box),
		store: openStore(file),
	})!;
	return { handle, fake, role, delivered };
}

describe("the host role with the store", () => {
	it("a file in the store's place that is not a database: one warning that names it, and questions are still served (in memory)", async () => {
		const file = join(dir, "store.sqlite");
		writeFileSync(file, "not a database, whatever it is\n".repeat(50));
		const { handle, fake, role } = hostOn(file);
		expect(fake.notices.filter((n) => n.type === "warning").map((n) => n.message)).toEqual([
			expect.stringMatching(/^checkpoint-bridge: questions of other processes are not written down \(.*store\.sqlite is refused: it is not a database/),
		]);
		handle.bus.emit("request", {
			v: PROTOCOL_VERSION,
			id: "r1",
			askerId: "r1",
			origin: "local:c",
			asker: { label: "planner", sessionId: "pid 7/p" },
			questions: [{ question: "Go?" }],
			deadline: 0,
			dialogTimeoutMs: 0,
			createdAt: Date.now(),
		});
		await flush();
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[planner] Go?"]);
		role.release("quit", "bye");
	});

	it("a host that quits lets a wait: false question of another process go without an end: the store keeps it, nothing is forwarded, and the next host of the directory shows it; a waiting one ends as before", async () => {
		const file = join(dir, "store.sqlite");
		const first = hostOn(file);
		const ask = (id: string, later: boolean) =>
			first.handle.bus.emit("request", {
				v: PROTOCOL_VERSION,
				id,
				askerId: `asker-${id}`,
				origin: "local:c",
				...(later ? { later: true as const } : {}),
				asker: { label: "nightly (pid 7)", sessionId: "pid 7/n" },
				questions: [{ question: `${id}?` }],
				deadline: 0,
				dialogTimeoutMs: 0,
				createdAt: Date.now(),
			});
		ask("later", true);
		ask("waiting", false);
		await flush();
		first.role.release("quit", "The host quit.");
		await flush();
		expect(first.delivered).toEqual([]);
		const kept = openStore(file);
		expect(kept.ok && kept.store.openRequests().map((r) => r.askerId)).toEqual(["asker-later"]);
		expect(kept.ok && kept.store.endOf("asker-waiting")?.status).toBe("no-host");
		const second = hostOn(file);
		await flush();
		expect(second.fake.dialogs.map((d) => d.title)).toEqual(["[nightly (pid 7) · asked before the restart] later?"]);
	});

	it("a later host of the same directory takes back a wait: false question whose asker is gone, shown once marked as asked before the restart; its end goes to the host's session under the asker's id and stays for a later wait", async () => {
		const file = join(dir, "store.sqlite");
		const first = hostOn(file);
		first.handle.bus.emit("request", {
			v: PROTOCOL_VERSION,
			id: "h-1",
			askerId: "V1StGXR8_Z5jdHi6B-myT",
			origin: "local:c",
			later: true,
			asker: { label: "nightly (pid 7)", sessionId: "pid 7/n" },
			questions: [{ question: "Ship it?", options: ["yes", "no"] }],
			deadline: 0,
			dialogTimeoutMs: 0,
			createdAt: Date.now(),
		});
		await flush();
		expect(first.fake.dialogs).toHaveLength(1);
		// The process dies here: nothing of the first host runs any more; the second opens the same file.
		const second = hostOn(file);
		await flush();
		expect(second.fake.dialogs.map((d) => d.title)).toEqual(["[nightly (pid 7) · asked before the restart] Ship it?"]);
		second.fake.current()!.answer("yes");
		await flush();
		expect(second.delivered).toHaveLength(1);
		expect(second.delivered[0]).toMatchObject({
			requestId: "V1StGXR8_Z5jdHi6B-myT",
			asker: "nightly (pid 7) · asked before the restart",
			envelope: { status: "ok", requestId: "V1StGXR8_Z5jdHi6B-myT", answers: [{ question: "Ship it?", answer: "yes" }] },
		});
		const kept = openStore(file);
		expect(kept.ok && kept.store.endOf("V1StGXR8_Z5jdHi6B-myT")).toMatchObject({ status: "ok", hostId: "h-1" });
		expect(kept.ok && kept.store.openRequests()).toEqual([]);
		// A third host finds nothing to take back.
		const third = hostOn(file);
		await flush();
		expect(third.fake.dialogs).toEqual([]);
	});
});
