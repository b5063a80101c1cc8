/**
 * The route home on the real `pi --mode rpc` host (ADR-0025): askers of another process that asked
 * with `wait: false` and left (an MCP client, a raw client as any asker of the same user may be) get
 * their answer recorded and shown in the host's session, neutralised, and the host's model does not
 * start a turn for a question it never asked.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { FRAME_VERSION } from "../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { UNSAFE_CHARACTER } from "../../extensions/checkpoint-bridge/model/sanitise.ts";
import { addressOf } from "../../extensions/checkpoint-bridge/transports/local/address.ts";
import { encodeFrame } from "../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { encodeNatsFrame } from "../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { requestFrame } from "../unit/support/nats-room.ts";
import { rawConnection, tokenAt } from "../unit/support/raw-endpoint.ts";
import { NATS_SERVER_MISSING, roomServedAt, startNatsServer } from "./harness/nats-server.ts";
import { hostEndpoint, isAnswerMessage, PiRpcFixture } from "./harness/pi-cli.ts";

const RAW = "Deploy\u001b]8;;http://evil\u0007 now\u001b[2J\u0007\u202e\u009b?";

describe("the route home on a real pi host", () => {
	const run = new PiRpcFixture();
	const cleanups: (() => unknown)[] = [];
	afterEach(async () => {
		await run.stop();
		for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
	});

	it("an MCP client's wait: false question with raw escapes, its client gone: answered, it is recorded and shown in the host's session, neutralised, and starts no turn", async () => {
		const piEnv = run.createEnv({ script: { main: {} } });
		const rpc = run.startPi();
		const socket = await hostEndpoint(piEnv);
		const raw = rawConnection(socket);
		await raw.handshake(await tokenAt(addressOf(socket).tokenPath), 4242);
		const now = Date.now();
		raw.send(
			encodeFrame({
				type: "request",
				v: FRAME_VERSION.endpoint,
				id: "mcp-1",
				asker: { label: `claude${RAW}`, sessionId: "mcp-abc", kind: "mcp" },
				questions: [{ question: RAW, options: ["yes", "no"] }],
				deadline: now + 60_000,
				dialogTimeoutMs: 60_000,
				createdAt: now,
				later: true,
			}),
		);
		await raw.frame((f) => f.type === "progress");
		// The client goes, as an MCP server's process does once its client has its receipt.
		raw.socket.destroy();
		await raw.closed;

		const dialog = await rpc.waitForDialog({ timeoutMs: 60_000 });
		const answeredAt = rpc.mark();
		rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("yes"))!);
		const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, what: "the forwarded answer in the host's session" });
		const { content, details, display } = message.message;
		expect(display).toBe(true);
		expect(details).toMatchObject({ forwarded: true, envelope: { status: "ok", answers: [{ answer: "yes" }] } });
		expect(String(content)).not.toMatch(UNSAFE_CHARACTER);
		expect(JSON.stringify(details)).not.toMatch(UNSAFE_CHARACTER);
		expect(JSON.stringify(details)).not.toMatch(/\\u001b|\\u0007/);
		// No turn of the host's model: nothing runs after the message.
		await sleep(2_000);
		const after = rpc.frames.slice(rpc.frames.indexOf(message) + 1);
		expect(after.filter((f) => f.type === "agent_start" || (f.type === "message_end" && f.message?.role === "assistant"))).toEqual([]);
		expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
	});

	it.skipIf(NATS_SERVER_MISSING)(
		"a raw NATS room member's wait: false question with raw escapes, the member gone: answered, it reaches the host's session neutralised in content and details",
		async () => {
			const nats = await startNatsServer();
			cleanups.push(() => nats.cleanup());
			run.createEnv({ script: { main: {} }, env: { CHECKPOINT_BRIDGE_NATS: nats.url, CHECKPOINT_BRIDGE_ROOM: "escapes" } });
			const rpc = run.startPi();
			await roomServedAt(nats.url, "escapes");
			// A member that asks, sends no liveness at all and leaves: the host hears it gone within SILENCE_MS + TICK_MS.
			const { connect } = await import("@nats-io/transport-node");
			const nc = await connect({ servers: nats.url, name: "raw member" });
			nc.publish(
				"cpb.escapes.request",
				encodeNatsFrame(requestFrame("escapes-1", [{ question: RAW, options: [{ label: "yes" }, { label: "no" }] }], { later: true })),
				{
					reply: "_INBOX.gone-member",
				},
			);
			await nc.flush();
			await nc.close();

			const dialog = await rpc.waitForDialog({ timeoutMs: 60_000 });
			expect(String(dialog.title)).not.toMatch(UNSAFE_CHARACTER);
			await sleep(2_000);
			const answeredAt = rpc.mark();
			rpc.answer(dialog, (dialog.options as string[]).find((o) => o.startsWith("yes"))!);
			const message = await rpc.waitFor(isAnswerMessage, { from: answeredAt, what: "the room member's answer in the host's session" });
			const { content, details } = message.message;
			expect(details).toMatchObject({ forwarded: true, envelope: { status: "ok", answers: [{ answer: "yes" }] } });
			expect(String(content)).toContain("Deploy");
			expect(String(content)).not.toMatch(UNSAFE_CHARACTER);
			expect(JSON.stringify(details)).not.toMatch(UNSAFE_CHARACTER);
			expect(JSON.stringify(details)).not.toMatch(/\\u001b|\\u0007/);
			expect(rpc.frames.filter(isAnswerMessage)).toHaveLength(1);
		},
	);
});
