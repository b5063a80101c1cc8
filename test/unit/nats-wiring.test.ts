/**
 * How the extension wires the NATS transport into pi (fake pi, real timers): bad configuration is a
 * warning for the host and an `error` for an asker, each naming the variable; an unreachable
 * server is never a hang; the local endpoint comes before NATS.
 */
import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadExtensionCopy, playedSessions } from "./support/fake-pi.ts";
import { fakeUI } from "./support/fake-ui.ts";

const question = { question: "Ship it?", options: ["yes", "no"] };
const sessions = playedSessions();
const session = sessions.play;
afterEach(async () => {
	await sessions.shutdownAll();
	vi.unstubAllEnvs();
});

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
	const server = net.createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as net.AddressInfo;
	await new Promise((resolve) => server.close(resolve));
	return port;
}

describe("the extension with CHECKPOINT_BRIDGE_NATS", () => {
	it("a host with a bad room says so in a warning naming CHECKPOINT_BRIDGE_ROOM, and still serves locally", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_NATS", "nats://127.0.0.1:4222");
		vi.stubEnv("CHECKPOINT_BRIDGE_ROOM", "team.a");
		const ui = fakeUI({ respond: (d) => d.answer("yes") });
		const host = session(await loadExtensionCopy(), { sessionId: "host-1", ui: ui.ui });
		await host.start();
		expect(ui.notices).toEqual([
			expect.objectContaining({ type: "warning", message: expect.stringMatching(/not serving over NATS: CHECKPOINT_BRIDGE_ROOM="team.a"/) }),
		]);
		expect((await host.call({ questions: [question] })).status).toBe("ok");
	});

	it("a host whose server cannot be reached warns within the connect timeout instead of hanging its start", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_NATS", `nats://127.0.0.1:${await closedPort()}`);
		const ui = fakeUI();
		const host = session(await loadExtensionCopy(), { sessionId: "host-2", ui: ui.ui });
		const started = Date.now();
		await host.start();
		expect(Date.now() - started).toBeLessThan(2_000);
		expect(ui.notices).toEqual([
			expect.objectContaining({ type: "warning", message: expect.stringMatching(/cannot serve room "default" on NATS: cannot connect to NATS/) }),
		]);
	});

	it("an asker with a bad value gets an error envelope naming the variable, at once", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_NATS", "http://example.org");
		const asker = session(await loadExtensionCopy(), { sessionId: "asker-1" });
		await asker.start();
		const envelope = await asker.call({ questions: [question] });
		expect(envelope.status).toBe("error");
		expect(envelope.note).toMatch(/CHECKPOINT_BRIDGE_NATS: "http:\/\/example.org" uses http:\/\//);
	});

	it("an asker whose server is down gets no-host in < 2 s, naming the servers", async () => {
		const port = await closedPort();
		vi.stubEnv("CHECKPOINT_BRIDGE_NATS", `127.0.0.1:${port}`);
		const asker = session(await loadExtensionCopy(), { sessionId: "asker-2" });
		await asker.start();
		const envelope = await asker.call({ questions: [question] });
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toContain(`cannot connect to NATS at nats://127.0.0.1:${port}`);
		expect(envelope.waitedMs).toBeLessThan(2_000);
	});

	it("an asker with a local endpoint advertised uses it before NATS", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_NATS", "http://example.org");
		vi.stubEnv("CHECKPOINT_BRIDGE_ENDPOINT", "/nonexistent/checkpoint-bridge/socket");
		const asker = session(await loadExtensionCopy(), { sessionId: "asker-3" });
		await asker.start();
		const envelope = await asker.call({ questions: [question] });
		// The socket's own no-host, not the NATS configuration's error.
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/CHECKPOINT_BRIDGE_ENDPOINT/);
	});
});
