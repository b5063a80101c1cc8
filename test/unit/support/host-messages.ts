/** The host's session as pi keeps it, attached to the process's delivery box: what reaches it as a message. */
import { afterAll, expect } from "vitest";
import { deliveryBox, type MessageApi, sessionPoster } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { until } from "../../support/until.ts";

/**
 * Makes the process's box (the host's session is `sessionId` for every host of the test file) and
 * attaches that session to it until the file's tests end; returns the messages it gets, in order.
 */
export function hostSessionMessages(sessionId: string): Parameters<MessageApi["sendMessage"]>[0][] {
	const messages: Parameters<MessageApi["sendMessage"]>[0][] = [];
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	// Detached after the file: files that share one process (the mutation run's) each get their own messages.
	const detach = deliveryBox(() => sessionId).attach(
		sessionId,
		sessionPoster(
			{ sendMessage: (message) => void messages.push(message), appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }) },
			() => entries,
		),
	);
	afterAll(detach);
	return messages;
}

/** Answers a late question, then waits for the one message its end becomes in the host's session when the asker's process did not take it: forwarded, naming `asker`; its details. */
export async function forwardedLate(messages: Parameters<MessageApi["sendMessage"]>[0][], asker: string, answer: () => void) {
	answer();
	await until(() => messages.length > 0, "the message in the host's session");
	expect(messages).toHaveLength(1);
	const { details } = messages[0]!;
	expect(details).toMatchObject({ forwarded: true, late: true, envelope: { status: "ok" } });
	expect(details.asker).toContain(asker);
	return details;
}
