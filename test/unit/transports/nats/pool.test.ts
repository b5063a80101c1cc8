/**
 * One NATS connection per asker process, kept across calls: consecutive and concurrent calls share
 * it, each call's subscriptions go when it ends, it closes once idle, and a failed open is retried.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { NatsConfig } from "../../../../extensions/checkpoint-bridge/transports/nats/config.ts";
import { POOL_IDLE_MS, pooledBroker, pooledBrokerCount } from "../../../../extensions/checkpoint-bridge/transports/nats/pool.ts";
import { FakeNats } from "../../support/fake-broker.ts";
import { askFake, natsHost } from "../../support/nats-room.ts";

const CONFIG: NatsConfig = { servers: ["nats://fake:4222"], room: "test", prefix: "cpb.test", graceMs: 0 };

beforeEach(() => void vi.useFakeTimers());
afterEach(async () => {
	await vi.advanceTimersByTimeAsync(POOL_IDLE_MS * 2);
	vi.useRealTimers();
});

describe("the asker process keeps one NATS connection", () => {
	it("consecutive and concurrent calls ride one connection; it closes once idle for POOL_IDLE_MS", async () => {
		const nats = new FakeNats();
		natsHost(nats, (dialog) => dialog.answer("yes"));
		const clients: ReturnType<FakeNats["client"]>[] = [];
		const open = async () => {
			const client = nats.client();
			clients.push(client);
			return client;
		};
		const connect = () => pooledBroker(CONFIG, open);
		for (let i = 0; i < 3; i++) expect((await askFake(nats, [{ question: `One ${i}?` }], { connect })).status).toBe("ok");
		const both = await Promise.all([askFake(nats, [{ question: "A?" }], { connect }), askFake(nats, [{ question: "B?" }], { connect })]);
		expect(both.map((e) => e.status)).toEqual(["ok", "ok"]);
		expect(clients).toHaveLength(1);
		expect(pooledBrokerCount()).toBe(1);
		await vi.advanceTimersByTimeAsync(POOL_IDLE_MS + 10);
		expect(pooledBrokerCount()).toBe(0);
		expect(clients[0]!.closed).toBe(true);
	});

	it("a lease's close unsubscribes what it subscribed and leaves the connection to the others", async () => {
		const nats = new FakeNats();
		const client = nats.client();
		const one = await pooledBroker(CONFIG, async () => client);
		const two = await pooledBroker(CONFIG, async () => nats.client());
		const inbox = one.inbox();
		const seen: number[] = [];
		one.subscribe(inbox, () => seen.push(1));
		two.subscribe(inbox, () => seen.push(2));
		await one.close();
		two.publish(inbox, new Uint8Array([1]));
		await vi.advanceTimersByTimeAsync(0);
		expect(seen).toEqual([2]);
		await vi.advanceTimersByTimeAsync(POOL_IDLE_MS * 2);
		expect(client.closed).toBe(false);
		await two.close();
		await vi.advanceTimersByTimeAsync(POOL_IDLE_MS + 10);
		expect(client.closed).toBe(true);
	});

	it("calls share one reply subscription per connection (each call's own inbox under it, no SUB per call) and one key pair", async () => {
		const nats = new FakeNats();
		natsHost(nats, (dialog) => dialog.answer("yes"));
		const client = nats.client();
		const subscribed: string[] = [];
		const subscribe = client.subscribe.bind(client);
		client.subscribe = (subject, onMessage) => (subscribed.push(subject), subscribe(subject, onMessage));
		const connect = () => pooledBroker(CONFIG, async () => client);
		const ends = await Promise.all(["A?", "B?", "C?"].map((question) => askFake(nats, [{ question }], { connect })));
		expect(ends.map((e) => e.status)).toEqual(["ok", "ok", "ok"]);
		expect((await askFake(nats, [{ question: "D?" }], { connect })).status).toBe("ok");
		expect(subscribed).toEqual([expect.stringMatching(/^_INBOX\.\w+\.\*$/)]);
		const requests = client.sent.filter((m) => m.subject.endsWith(".request"));
		expect(new Set(requests.map((m) => m.reply)).size).toBe(4);
		// One key pair per asker process: no key pair and no ECDH per call.
		expect(new Set(requests.map((m) => (JSON.parse(new TextDecoder().decode(m.data)) as { key: string }).key)).size).toBe(1);
	});

	it("a failed open is forgotten: the next call opens again", async () => {
		const nats = new FakeNats();
		await expect(pooledBroker(CONFIG, () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
		const lease = await pooledBroker(CONFIG, async () => nats.client());
		expect(pooledBrokerCount()).toBe(1);
		await lease.close();
	});
});
