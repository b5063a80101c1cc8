/** A host role with a fake UI serving a room on the in-memory NATS, and raw clients that speak frames to it. */

import { FRAME_VERSION } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import type { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { askOverNats, type NatsAskOptions } from "../../../extensions/checkpoint-bridge/transports/nats/asker.ts";
import { decodeNatsFrame, encodeNatsFrame, type NatsFrame } from "../../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import { type RoomServer, serveRoom } from "../../../extensions/checkpoint-bridge/transports/nats/room-server.ts";
import { newCancelSecret, newKeyPair } from "../../../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { roomSubjects } from "../../../extensions/checkpoint-bridge/transports/nats/subjects.ts";
import type { FakeClient, FakeNats } from "./fake-broker.ts";
import { type FakeDialog, type FakeUI, fakeUI } from "./fake-ui.ts";

export const PREFIX = "cpb.test";
export const SUBJECTS = roomSubjects(PREFIX);
export const ROOM = { room: "test", prefix: PREFIX, graceMs: 0 };

export interface NatsHost {
	handle: SharedHandle;
	fake: FakeUI;
	client: FakeClient;
	server: RoomServer;
	/** Releases the role (quit) and closes the room server, as a quitting host does. */
	quit(note?: string): void;
}

/** A host process: its own handle, host role (timed-out requests kept in `late` when given) and room server on `nats`. */
export function natsHost(nats: FakeNats, respond?: (dialog: FakeDialog) => void, late?: RequestBook, room: { ackWaitMs?: number } = {}): NatsHost {
	const handle = createHandle();
	const fake = fakeUI(respond ? { respond } : {});
	const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host-session", ...(late ? { book: late } : {}) });
	if (!role) throw new Error("a fresh handle must accept the claim");
	const client = nats.client();
	const server = serveRoom({ broker: client, handle, prefix: PREFIX, ...room });
	return {
		handle,
		fake,
		client,
		server,
		quit(note = "The host session ended (quit).") {
			server.close(note);
			role.release("quit", note);
			void client.close();
		},
	};
}

/** A client that speaks raw frames (or bytes) and keeps every frame its inbox receives. */
export function rawAsker(nats: FakeNats) {
	const client = nats.client();
	const inbox = client.inbox();
	const received: NatsFrame[] = [];
	let bounces = 0;
	client.subscribe(inbox, (message) => {
		if (message.noResponders) return void bounces++;
		const checked = decodeNatsFrame(message.data);
		if (checked.ok) received.push(checked.frame);
	});
	return {
		client,
		inbox,
		received,
		get bounces() {
			return bounces;
		},
		send: (subject: string, frame: NatsFrame | Uint8Array, reply: string | undefined = inbox) =>
			client.publish(subject, frame instanceof Uint8Array ? frame : encodeNatsFrame(frame), reply),
	};
}

/** The raw askers' key pair and cancel secret: request frames carry the public key and the secret's hash. */
export const RAW_KEYS = newKeyPair();
const RAW_CANCEL = newCancelSecret();

/** A cancel frame; with the raw askers' secret unless told otherwise. */
export function cancelFrame(id: string, secret = RAW_CANCEL.secret): NatsFrame {
	return { type: "cancel", v: FRAME_VERSION.nats, id, reason: "cancelled", secret };
}

/** A ping frame. */
export const pingFrame = (id: string): NatsFrame => ({ type: "ping", v: FRAME_VERSION.nats, id });

/** A request frame as an asker sends it. */
export function requestFrame(id: string, questions: QuestionInput[], extra: Record<string, unknown> = {}): NatsFrame {
	const now = Date.now();
	return {
		type: "request",
		v: FRAME_VERSION.nats,
		id,
		asker: { label: "planner", sessionId: "planner-session" },
		questions,
		deadline: now + 60_000,
		dialogTimeoutMs: 30_000,
		createdAt: now,
		budgetMs: 60_000,
		pid: 4242,
		machine: "build-7",
		key: RAW_KEYS.publicKey,
		cancelHash: RAW_CANCEL.hash,
		...extra,
	} as NatsFrame;
}

/** Asks over the in-memory NATS with askOverNats. */
export function askFake(nats: FakeNats, questions: QuestionInput[], options: Partial<NatsAskOptions> = {}) {
	return askOverNats({
		asker: { label: "planner", sessionId: "planner-session" },
		questions,
		budgetMs: 60_000,
		dialogTimeoutMs: 30_000,
		connect: async () => nats.client(),
		config: ROOM,
		machine: "build-7",
		pid: 4242,
		...options,
	});
}
