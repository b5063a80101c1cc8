/** One room server per process and one host per room, on the in-memory broker with fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import type { NatsConfig } from "../../../../extensions/checkpoint-bridge/transports/nats/config.ts";
import { HOST_CHECK_TIMEOUT_MS } from "../../../../extensions/checkpoint-bridge/transports/nats/liveness.ts";
import { closeProcessRoom, ensureProcessRoom } from "../../../../extensions/checkpoint-bridge/transports/nats/process-room.ts";
import { FakeNats } from "../../support/fake-broker.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { askFake, natsHost, PREFIX } from "../../support/nats-room.ts";

const CONFIG: NatsConfig = { servers: ["nats://fake:4222"], room: "test", prefix: PREFIX, graceMs: 0 };
const Q = [{ question: "Which?", options: [{ label: "a" }, { label: "b" }] }];

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("ensureProcessRoom", () => {
	it("serves a room nobody serves, once per process: a second call gets the same server", async () => {
		const nats = new FakeNats();
		const registry = {};
		const connect = vi.fn(async () => nats.client());
		const first = await ensureProcessRoom(createHandle(), CONFIG, registry, connect);
		const again = await ensureProcessRoom(createHandle(), CONFIG, registry, connect);
		expect(first.kind).toBe("serving");
		expect(again).toEqual(first);
		expect(connect).toHaveBeenCalledTimes(1);
		await closeProcessRoom(undefined, registry);
	});

	it("a room another host answers for is taken: not served, the connection closed, and the next claim asks again", async () => {
		const nats = new FakeNats();
		const other = natsHost(nats);
		const registry = {};
		const clients: ReturnType<FakeNats["client"]>[] = [];
		const connect = async () => {
			const client = nats.client();
			clients.push(client);
			return client;
		};
		expect(await ensureProcessRoom(createHandle(), CONFIG, registry, connect)).toEqual({ kind: "taken", room: "test", hostId: other.server.hostId });
		expect(clients[0]!.closed).toBe(true);
		other.quit();
		expect((await ensureProcessRoom(createHandle(), CONFIG, registry, connect)).kind).toBe("serving");
		await closeProcessRoom(undefined, registry);
	});

	it(`a host that is subscribed but hung does not answer: after ${HOST_CHECK_TIMEOUT_MS} ms the room is served`, async () => {
		const nats = new FakeNats();
		natsHost(nats).client.cut();
		const registry = {};
		let outcome: string | undefined;
		void ensureProcessRoom(createHandle(), CONFIG, registry, async () => nats.client()).then((r) => (outcome = r.kind));
		await vi.advanceTimersByTimeAsync(HOST_CHECK_TIMEOUT_MS - 1);
		expect(outcome).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(outcome).toBe("serving");
		await closeProcessRoom(undefined, registry);
	});

	it("a connection that fails rejects with its reason and is forgotten: the next claim retries", async () => {
		const registry = {};
		await expect(ensureProcessRoom(createHandle(), CONFIG, registry, () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
		expect((await ensureProcessRoom(createHandle(), CONFIG, registry, async () => new FakeNats().client())).kind).toBe("serving");
		await closeProcessRoom(undefined, registry);
	});

	it("a server that asks for no credentials: the first start warns once, naming the server; later claims and an authenticating server do not", async () => {
		const nats = new FakeNats();
		const registry = {};
		const open = async () => Object.assign(nats.client(), { authRequired: false });
		const first = await ensureProcessRoom(createHandle(), CONFIG, registry, open);
		expect(first).toMatchObject({ kind: "serving", warning: expect.stringContaining("nats://fake:4222 asks for no credentials") });
		expect(await ensureProcessRoom(createHandle(), CONFIG, registry, open)).not.toHaveProperty("warning");
		await closeProcessRoom(undefined, registry);
		const other = {};
		const authed = await ensureProcessRoom(createHandle(), CONFIG, other, async () => Object.assign(nats.client(), { authRequired: true }));
		expect(authed.kind === "serving" && authed.warning).toBeFalsy();
		await closeProcessRoom(undefined, other);
	});

	it("closeProcessRoom lets held askers go at once with the note, and closes the connection", async () => {
		const nats = new FakeNats();
		const registry = {};
		const handle = createHandle();
		const fake = fakeUI();
		claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
		const client = nats.client();
		await ensureProcessRoom(handle, CONFIG, registry, async () => client);
		const asked = askFake(nats, Q);
		await vi.advanceTimersByTimeAsync(0);
		expect(fake.dialogs).toHaveLength(1);
		await closeProcessRoom("The host session ended (quit).", registry);
		expect(await asked).toMatchObject({ status: "no-host", note: expect.stringContaining("The host session ended (quit).") });
		expect(fake.dialogs[0]!.closedBy).toBe("signal");
		expect(client.closed).toBe(true);
	});
});
