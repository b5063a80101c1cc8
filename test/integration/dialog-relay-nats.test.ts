/**
 * A relayed dialog's notice (another extension's `ctx.ui.notify` in a session without UI,
 * interop/dialog-relay.ts) from another machine, over a real nats-server: the asker's side as
 * route.ts sends it, the host's room as the extension serves it, a programmatic UI as the human.
 */
import { afterEach, describe, expect, it } from "vitest";
import { claimHostRole } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { closeProcessRoom, connectBroker, ensureProcessRoom, noticeOverNats } from "../../extensions/checkpoint-bridge/transports/nats/index.ts";
import { roomSubjects } from "../../extensions/checkpoint-bridge/transports/nats/subjects.ts";
import { until } from "../support/until.ts";
import { fakeUI } from "../unit/support/fake-ui.ts";
import { NATS_SERVER_MISSING, natsConfigOf, startNatsServer } from "./harness/nats-server.ts";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

if (NATS_SERVER_MISSING) console.warn(`dialog-relay-nats.test.ts: skipped: ${NATS_SERVER_MISSING}`);
describe.skipIf(NATS_SERVER_MISSING)(`a relayed notice over a real nats-server${NATS_SERVER_MISSING ? ` (skipped: ${NATS_SERVER_MISSING})` : ""}`, () => {
	it("reaches the host's human as [asker (machine:pid)] message; its connection is closed once sent; junk on the subject is never shown", async () => {
		const nats = await startNatsServer();
		cleanups.push(() => nats.cleanup());
		const config = natsConfigOf({ CHECKPOINT_BRIDGE_NATS: nats.url });
		const handle = createHandle();
		const fake = fakeUI();
		const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host-session" });
		if (!role) throw new Error("claim refused");
		cleanups.push(() => role.release("quit", "done"));
		const registry = {};
		expect((await ensureProcessRoom(handle, config, registry)).kind).toBe("serving");
		cleanups.push(() => closeProcessRoom(undefined, registry));

		// Junk first, from a raw client: refused to its reply subject, never shown.
		const raw = await connectBroker(config, { name: "raw client" });
		cleanups.push(() => raw.close());
		const inbox = raw.inbox();
		const refusals: string[] = [];
		raw.subscribe(inbox, (message) => void refusals.push(new TextDecoder().decode(message.data)));
		raw.publish(roomSubjects(config.prefix).notice, new TextEncoder().encode('{"type":"notice","v":3}'), inbox);
		await until(() => refusals.length === 1, "the refusal");
		expect(JSON.parse(refusals[0]!)).toMatchObject({ type: "error", code: "malformed" });

		await noticeOverNats({
			connect: () => connectBroker(config, { name: "checkpoint-bridge notice test" }),
			config,
			notice: { asker: { label: "subagent-gatekeeper", sessionId: "child" }, message: "guarded_step: a risky step is next", type: "warning" },
			machine: "build-7",
			pid: 4242,
		});
		await until(() => fake.notices.length === 1, "the notice");
		expect(fake.notices).toEqual([{ message: "[subagent-gatekeeper (build-7:4242)] guarded_step: a risky step is next", type: "warning" }]);
		// Sent and closed: a notice holds no connection to the server.
		expect(await nats.clientsNamed("checkpoint-bridge notice")).toBe(0);
	});
});
