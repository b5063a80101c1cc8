/**
 * One session's way to the process's box (core/delivery/session-box.ts): the box's code loads at the
 * session's first use, unless the process has a box already, which can hold ends for a session that
 * starts: then the session attaches at its start and is handed them.
 */
import { describe, expect, it } from "vitest";
import { type DeliveryBox, deliveryBox, type MessageApi } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { boxInProcess, DELIVERY_KEY } from "../../../extensions/checkpoint-bridge/core/delivery/names.ts";
import { sessionBox } from "../../../extensions/checkpoint-bridge/core/delivery/session-box.ts";
import { delivery } from "../support/delivery-session.ts";

/** A session's message API that records what it is sent. */
function messages() {
	const sent: string[] = [];
	const pi: MessageApi = { sendMessage: (message) => void sent.push(message.details.requestId), appendEntry: () => {} };
	return { pi, sent };
}

describe("a session's way to the box", () => {
	it("loads no box at its start while the process has none; its first use makes the process's box and attaches it, its close detaches it", async () => {
		// Each test file runs in a fresh context: no copy of the extension made a box here yet.
		expect(boxInProcess()).toBe(false);
		const way = sessionBox(messages().pi, () => undefined);
		await way.start("child", () => [], false);
		expect(boxInProcess()).toBe(false);
		const box = await way.box();
		expect(box).toBe((globalThis as Record<symbol, DeliveryBox>)[DELIVERY_KEY]);
		expect(box.attached("child")).toBe(true);
		expect(await way.box()).toBe(box);
		way.close();
		expect(box.attached("child")).toBe(false);
	});

	it("where the process has a box, attaches at its start and is handed the end kept for it", async () => {
		const box = deliveryBox(() => undefined);
		box.deliver(delivery("kept", "resumed"));
		const { pi, sent } = messages();
		await sessionBox(pi, () => undefined).start("resumed", () => [], false);
		expect(box.attached("resumed")).toBe(true);
		expect(sent).toEqual(["kept"]);
	});

	it("a session that starts as the host attaches at its start; one that closed before its box loaded is never attached", async () => {
		const box = deliveryBox(() => undefined);
		const host = sessionBox(messages().pi, () => "host");
		await host.start("host", () => [], true);
		expect(box.attached("host")).toBe(true);
		const gone = sessionBox(messages().pi, () => "host");
		const starting = gone.start("gone", () => [], true);
		gone.close();
		await starting;
		expect(box.attached("gone")).toBe(false);
	});
});
