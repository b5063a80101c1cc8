/**
 * What an asker's process answers when a transport brings back an end to ack (ask-later.ts): recorded
 * while the asking session is attached (a message, once, even when the end comes twice), not recorded
 * once it is gone, and then nothing is kept in the process to be delivered later as well: the host's
 * session, told so by the ack, takes it instead.
 */
import { describe, expect, it } from "vitest";
import { withLate } from "../../extensions/checkpoint-bridge/ask-later.ts";
import { createDeliveryBox, type MessageApi, sessionPoster } from "../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { makeEnvelope } from "../../extensions/checkpoint-bridge/model/result.ts";

function attachedSession(box: ReturnType<typeof createDeliveryBox>, sessionId: string) {
	const entries: { type: string; customType?: string; data?: unknown }[] = [];
	const messages: unknown[] = [];
	const pi: MessageApi = {
		sendMessage: (message) => void messages.push(message),
		appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }),
	};
	const detach = box.attach(
		sessionId,
		sessionPoster(pi, () => entries),
	);
	return { messages, detach };
}

const asker = { label: "worker", sessionId: "worker-session" };
const questions = [{ question: "Deploy?", options: ["yes", "no"] }];
const late = (requestId: string) => makeEnvelope("ok", [{ question: "Deploy?", answer: "yes", kind: "option" }], undefined, { requestId });

describe("a late end brought back by a transport", () => {
	it("is recorded while the asking session is attached: one message, true, and true again for the same end sent twice", () => {
		const box = createDeliveryBox({ hostSessionId: () => undefined, graceMs: 10 });
		const session = attachedSession(box, asker.sessionId);
		const onLate = withLate(box, { asker, questions }).onLate!;
		expect(onLate(late("r-1"))).toBe(true);
		expect(onLate(late("r-1"))).toBe(true);
		expect(session.messages).toHaveLength(1);
	});

	it("is not recorded once the session is gone, and nothing is held for it: the host's session here gets nothing later", async () => {
		const box = createDeliveryBox({ hostSessionId: () => "host", graceMs: 10 });
		const host = attachedSession(box, "host");
		attachedSession(box, asker.sessionId).detach();
		const onLate = withLate(box, { asker, questions }).onLate!;
		expect(onLate(late("r-2"))).toBe(false);
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(host.messages).toEqual([]);
	});
});
