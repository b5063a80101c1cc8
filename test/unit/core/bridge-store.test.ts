/**
 * The bridge with the store (core/bridge/bridge.ts, core/store/): an asker that sends its request
 * again after its host restarted is matched by its own id and session to the record written down
 * (the same id in the host, one request), gets a final end kept meanwhile at once, and is asked
 * again when what was kept is only its own give-up or its host's going; only re-sent requests look.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Asked, Bridge } from "../../../extensions/checkpoint-bridge/core/bridge/bridge.ts";
import { FRAME_VERSION, type ReplyFrame } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { NO_LIMIT } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { PROTOCOL_VERSION, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { openStore, useStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import type { RequestStore, StoredEnd } from "../../../extensions/checkpoint-bridge/core/store/store.ts";

const ASKER = { label: "planner (pid 7)", sessionId: "pid 7/planner-session" };
const ID = "V1StGXR8_Z5jdHi6B-myT";

let store: RequestStore;
beforeEach(() => {
	const opened = openStore(":memory:");
	if (!opened.ok) throw new Error(opened.warning);
	store = opened.store;
	useStore(store);
});
afterEach(() => {
	useStore(undefined);
	store.close();
});

function setUp() {
	const handle = createHandle();
	handle.claimHost({ sessionId: "host-session", protocol: PROTOCOL_VERSION });
	const requests: RelayRequest[] = [];
	handle.bus.on("request", (r) => void requests.push(r));
	const bridge = new Bridge({ handle, transport: "endpoint", server: "endpoint" });
	const sent: ReplyFrame[] = [];
	const asked = (more: Partial<Asked> = {}): Asked => ({
		client: "local:two",
		id: ID,
		asker: ASKER,
		questions: [{ question: "Ship it?" }],
		deadline: NO_LIMIT,
		dialogTimeoutMs: 0,
		createdAt: 1_000,
		origin: "local:two",
		resent: true,
		hostId: "an-hmac-of-the-new-endpoint",
		send: (frame) => void sent.push(frame),
		...more,
	});
	return { bridge, requests, sent, asked };
}

const end = (over: Partial<StoredEnd> = {}): StoredEnd => ({
	askerId: ID,
	hostId: "host-id-1",
	askerSession: ASKER.sessionId,
	asker: ASKER.label,
	questions: ["Ship it?"],
	status: "ok",
	answers: [{ question: "Ship it?", answer: "yes", kind: "option" }],
	queuedAt: 0,
	endedAt: 1,
	expiresAt: Date.now() + 60_000,
	...over,
});

describe("the bridge with the store", () => {
	it("a re-sent request whose record is written down goes on under the record's id in the host, with the asker's id beside it", () => {
		store.put({ hostId: "host-id-1", askerId: ID, askerSession: ASKER.sessionId, record: "{}" });
		const { bridge, requests, asked } = setUp();
		expect(bridge.take(asked(), undefined)?.hostId).toBe("host-id-1");
		expect(requests.map((r) => [r.id, r.askerId, r.resent])).toEqual([["host-id-1", ID, true]]);
	});

	it("another session's re-send with the same id is not matched: it gets an id of its own", () => {
		store.put({ hostId: "host-id-1", askerId: ID, askerSession: ASKER.sessionId, record: "{}" });
		const { bridge, asked } = setUp();
		expect(bridge.take(asked({ asker: { label: "other", sessionId: "pid 9/other" } }), undefined)?.hostId).toBe("an-hmac-of-the-new-endpoint");
	});

	it("a re-sent request whose end was kept meanwhile gets that end at once, under its own id; nothing reaches the host", () => {
		store.ended(end({ note: "Answered on the phone." }));
		const { bridge, requests, sent, asked } = setUp();
		expect(bridge.take(asked(), undefined)).toBeUndefined();
		expect(requests).toEqual([]);
		expect(sent).toEqual([
			{
				type: "result",
				v: FRAME_VERSION.endpoint,
				id: ID,
				kind: "result",
				status: "ok",
				answers: [{ question: "Ship it?", answer: "yes", kind: "option" }],
				note: "Answered on the phone.",
			},
		]);
	});

	it("an end kept with its reason is sent with it", () => {
		store.ended(end({ status: "timeout", answers: [], reason: "dialog-timeout" }));
		const { bridge, sent, asked } = setUp();
		bridge.take(asked(), undefined);
		expect(sent).toEqual([{ type: "result", v: FRAME_VERSION.endpoint, id: ID, kind: "result", status: "timeout", answers: [], reason: "dialog-timeout" }]);
	});

	it("an end kept for another session's request of the same id is not this asker's: its request is asked anew", () => {
		store.ended(end({ askerSession: "pid 9/other" }));
		const { bridge, requests, sent, asked } = setUp();
		expect(bridge.take(asked(), undefined)?.hostId).toBe("an-hmac-of-the-new-endpoint");
		expect(requests.map((r) => r.askerId)).toEqual([ID]);
		expect(sent).toEqual([]);
	});

	it("kept as cancelled or no-host (its own give-up, its host's going), it is asked again; a request not re-sent never looks", () => {
		const { bridge, requests, sent, asked } = setUp();
		store.ended(end({ status: "cancelled", answers: [] }));
		bridge.take(asked(), undefined);
		store.ended(end({ askerId: "second-id-of-21-chars", status: "no-host", answers: [] }));
		bridge.take(asked({ id: "second-id-of-21-chars", hostId: "h2" }), undefined);
		store.ended(end({ askerId: "third-id-of-21-charss" }));
		bridge.take(asked({ id: "third-id-of-21-charss", resent: undefined, hostId: "h3" }), undefined);
		expect(requests.map((r) => r.id)).toEqual(["an-hmac-of-the-new-endpoint", "h2", "h3"]);
		expect(sent).toEqual([]);
	});
});
