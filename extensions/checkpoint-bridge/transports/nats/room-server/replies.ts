/**
 * What the room server sends to askers: progress, results, acked ends, late frames and
 * refusals, each to the asker's inbox and, once the asker's key is known, sealed for it (seal.ts).
 */
import { type ErrorCode, errorFrame, type LateFrame, type ReplyFrame, type ResultFrame } from "../../../core/bridge/frames.ts";
import type { Broker, BrokerMessage, RequestOutcome } from "../broker.ts";
import { decodeNatsFrame, encodeNatsFrame, type NatsFrame } from "../frames.ts";
import { seal, sealValid } from "../seal.ts";

/** How long the host waits for the reply of an older asker (one that does not ack records) to a late frame before its session takes the answer. @default 2000 */
const LATE_ACK_MS = 2_000;

/** Where a request's frames go and how they are sealed: the asker's inbox and the MAC key of its public key. */
interface AskerAddress {
	inbox: string;
	macKey: Buffer;
}

/**
 * Whether the reply to a frame marked `ack` says its end is recorded: an ack frame for request `id`,
 * sealed by the asker the request came from (anyone who reads the room may see the reply subject).
 */
function ackedRecorded(outcome: RequestOutcome, id: string, macKey: Buffer): boolean {
	if (outcome.kind !== "reply") return false;
	const checked = decodeNatsFrame(outcome.data);
	if (!checked.ok || checked.frame.type !== "ack" || checked.frame.id !== id) return false;
	return checked.frame.recorded && sealValid(checked.frame as unknown as Record<string, unknown>, macKey);
}

export interface RoomReplies {
	/** Sends `frame` unsealed (the host's id to whoever asks for it). */
	send(inbox: string, frame: NatsFrame): void;
	/** Sends `frame` sealed when the asker's key is known, so the asker can tell this host's frames from anyone's. */
	sendFor(inbox: string, frame: NatsFrame, macKey: Buffer | undefined): void;
	/** Progress or a result of a request of `questions` questions (progress without a new answer waits for the end of the turn). */
	reply(to: AskerAddress, reply: ReplyFrame, questions: number): void;
	/** Sends a frame marked `ack` as a request; whether its reply is the asker's ack saying recorded. */
	acked(to: AskerAddress, frame: ResultFrame | LateFrame): Promise<boolean>;
	/** Sends a late frame to an asker that does not ack records: whether anyone replied (its process has it). */
	late(to: AskerAddress, frame: LateFrame): Promise<boolean>;
	/** Refuses `message` to its sender only, and only when it gave an address; never shown, never logged. */
	refuse(message: BrokerMessage, code: ErrorCode, text: string): void;
	/** Discards progress not sent yet (stale once the room lets its requests go). */
	clear(): void;
}

export function roomReplies(broker: Broker, publicKey: string, ackWaitMs: number): RoomReplies {
	const send = (inbox: string, frame: NatsFrame) => broker.publish(inbox, encodeNatsFrame(frame));
	const sendFor = (inbox: string, frame: NatsFrame, macKey: Buffer | undefined) => send(inbox, macKey ? seal(frame, publicKey, macKey) : frame);
	const keyOf = (inbox: string, id: string) => `${inbox}\n${id}`;
	/**
	 * Progress that carries no answer the asker lacks (none yet, or every one: its result follows) waits
	 * for the end of the turn of the event loop, and a later frame of the same request by then replaces
	 * it: a request answered at once gets its result alone, sent at once, and such progress of one turn
	 * leaves in one write. Each write wakes nats-server and then the asker, who take the cores the host
	 * needs, and each frame is one more to seal here and to check and verify there. Progress with some
	 * of the answers goes at once, as the result does: should the host die before its turn ends, the
	 * answers given reached the asker, and the next host asks only the open questions.
	 */
	const unsentProgress = new Map<string, () => void>();
	let flushQueued = false;
	const flushProgress = () => {
		flushQueued = false;
		const batch = [...unsentProgress.values()];
		unsentProgress.clear();
		for (const sendIt of batch) sendIt();
	};
	return {
		send,
		sendFor,
		reply({ inbox, macKey }, reply, questions) {
			const key = keyOf(inbox, reply.id);
			unsentProgress.delete(key);
			const waits = reply.type === "progress" && (reply.answers.length === 0 || reply.answers.length >= questions);
			if (!waits) return sendFor(inbox, reply, macKey);
			unsentProgress.set(key, () => sendFor(inbox, reply, macKey));
			if (!flushQueued) {
				flushQueued = true;
				setImmediate(flushProgress);
			}
		},
		acked({ inbox, macKey }, frame) {
			// Progress of the request still waiting for the end of the turn would follow its end: it goes.
			unsentProgress.delete(keyOf(inbox, frame.id));
			return broker
				.request(inbox, encodeNatsFrame(seal({ ...frame, ack: true }, publicKey, macKey)), ackWaitMs)
				.then((outcome) => ackedRecorded(outcome, frame.id, macKey));
		},
		late: ({ inbox, macKey }, frame) =>
			broker.request(inbox, encodeNatsFrame(seal(frame, publicKey, macKey)), LATE_ACK_MS).then((outcome) => outcome.kind === "reply"),
		refuse(message, code, text) {
			if (message.reply) send(message.reply, errorFrame("nats", code, text));
		},
		clear: () => unsentProgress.clear(),
	};
}
