/**
 * A pi session as the delivery box sees it, and an ended request to deliver: shared by the tests of
 * core/delivery/ (delivery.test.ts, delivery-texts.test.ts, unsent.test.ts).
 */
import { DELIVERED_ENTRY_TYPE, type Delivery, type MessageApi, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { makeEnvelope, type Status } from "../../../extensions/checkpoint-bridge/model/result.ts";

export type Entry = { type: string; customType?: string; data?: unknown };

/**
 * A session as pi keeps it: entries appended, messages sent, both in order. Its first `stale` appends
 * throw (a session that cannot take a message any more).
 */
export function fakeSession(stale = 0) {
	const entries: Entry[] = [];
	const messages: { message: Parameters<MessageApi["sendMessage"]>[0]; options: Parameters<MessageApi["sendMessage"]>[1] }[] = [];
	let throws = stale;
	const pi: MessageApi = {
		sendMessage: (message, options) => {
			messages.push({ message, options });
			entries.push({ type: "custom_message", customType: message.customType, data: message.details });
		},
		appendEntry: (customType, data) => {
			if (throws-- > 0) throw new Error("this session is stale");
			entries.push({ type: "custom", customType, data });
		},
	};
	return {
		entries,
		messages,
		/** The request ids of the messages sent, in order. */
		ids: () => messages.map((m) => m.message.details.requestId),
		/** What the session recorded as delivered. */
		records: () => entries.filter((e) => e.type === "custom" && e.customType === DELIVERED_ENTRY_TYPE).map((e) => e.data),
		texts: () => messages.map((m) => m.message.content),
		poster: () => sessionPoster(pi, () => entries),
	};
}

/** An ended request for `askerSessionId` ("host": the host session's own, asked by "main"). */
export const delivery = (requestId: string, askerSessionId: string, status: Status = "ok", questions = ["Which database?"]): Delivery => ({
	requestId,
	askerSessionId,
	asker: askerSessionId === "host" ? "main" : "planner",
	questions,
	queuedAt: 0,
	envelope: makeEnvelope(status, [], status === "ok" ? undefined : "ended", { requestId }),
});
