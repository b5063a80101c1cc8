/** The host's session as pi keeps it, attached to the process's delivery box: what reaches it as a message. */
import { deliveryBox, type MessageApi, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery.ts";

/**
 * Makes the process's box (the host's session is `sessionId` for every host of the test file) and
 * attaches that session to it; returns the messages it gets, in order.
 */
export function hostSessionMessages(sessionId: string): Parameters<MessageApi["sendMessage"]>[0][] {
	const messages: Parameters<MessageApi["sendMessage"]>[0][] = [];
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	deliveryBox(() => sessionId).attach(
		sessionId,
		sessionPoster(
			{ sendMessage: (message) => void messages.push(message), appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }) },
			() => entries,
		),
	);
	return messages;
}
