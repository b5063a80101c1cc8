/**
 * `/checkpoints` tells truthfully where each late answer will go, per asker kind, from the one route
 * home (core/delivery/delivery.ts, ADR-0025); and the late answer of an MCP client reaches the host's session
 * without starting a turn of its model. Fake timers; the host role on a private handle.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createDeliveryBox, type MessageApi, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { endTakers, homeRoute } from "../../../extensions/checkpoint-bridge/core/delivery/route-home.ts";
import { checkpointsReport } from "../../../extensions/checkpoint-bridge/core/host/audit.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { flush, HOST_SESSION, relay, relayRequest } from "../support/relay.ts";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** The host's session as pi keeps it, attached to a box of its own. */
function hostSession() {
	const messages: Parameters<MessageApi["sendMessage"]>[] = [];
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	const pi: MessageApi = {
		sendMessage: (...args) => void messages.push(args),
		appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }),
	};
	const box = createDeliveryBox({ hostSessionId: () => HOST_SESSION });
	box.attach(
		HOST_SESSION,
		sessionPoster(pi, () => entries),
	);
	return { messages, box };
}

describe("where a late answer goes, said truthfully and done so", () => {
	it("per asker kind: an MCP client's and a gone pi -p run's go to this session without a turn; a connected asker's go back to it", async () => {
		const session = hostSession();
		const late = new RequestBook({ ...readLateConfig({}), expiryMs: 600_000 });
		// A transport registers to take a request's late end back (the route's takers), as the bridge does.
		const shared = createHandle();
		const takers = endTakers(shared.bus);
		const { handle, role } = relay({}, { book: late, home: homeRoute(() => HOST_SESSION, session.box, takers) }, shared);
		const soon = () => Date.now() + 1_000;
		handle.bus.emit(
			"request",
			relayRequest("mcp", { asker: { label: "claude-code", sessionId: "pid 8/mcp-x", kind: "mcp" }, origin: "local:2", deadline: soon() }),
		);
		handle.bus.emit("request", relayRequest("pi-p", { asker: { label: "run", sessionId: "pid 7/run" }, origin: "local:1", deadline: soon() }));
		handle.bus.emit("request", relayRequest("connected", { asker: { label: "far", sessionId: "host/1/far" }, origin: "nats:inbox", deadline: soon() }));
		const frames: unknown[] = [];
		takers.register("connected", (frame, taken) => {
			frames.push(frame);
			taken(true);
		});
		await flush(vi);
		await vi.advanceTimersByTimeAsync(1_000);
		expect(role.whereLate("mcp")).toEqual({ to: "host", wakes: false });
		expect(role.whereLate("connected")).toEqual({ to: "asker-process" });
		expect(role.whereLate("nope")).toBeUndefined();

		const report = checkpointsReport(handle.snapshot(), [], undefined, (id) => role.whereLate(id));
		expect(report).toMatch(
			/\[claude-code\][^\n]*\n\s+Its answer goes to this session \(the asker is gone\): recorded and shown here, without starting a turn of its model\./,
		);
		expect(report).toMatch(/\[run\][^\n]*\n\s+Its answer goes to this session \(the asker is gone\): recorded and shown here, without starting a turn/);
		expect(report).toMatch(/\[far\][^\n]*\n\s+Its answer goes back to far, whose process is still connected\./);

		for (const requestId of ["mcp", "pi-p", "connected"]) handle.bus.emit("answer", { requestId, answers: ["Ada"] }, () => {});
		// The MCP client's and the pi -p run's reach this session, shown, without a turn; the connected asker's went back to it.
		expect(session.messages.map(([message, options]) => [message.details.requestId, message.display, options])).toEqual([
			["mcp", true, { triggerTurn: false }],
			["pi-p", true, { triggerTurn: false }],
		]);
		expect(frames).toHaveLength(1);
	});
});
