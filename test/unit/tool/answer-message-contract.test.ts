/** docs/tool.md states the `wait: false` contract other extensions build on: pinned here against the code. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	ANSWER_MESSAGE_TYPE,
	DELIVERED_ENTRY_TYPE,
	DELIVERY_VERSION,
	type MessageApi,
	sessionPoster,
} from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { makeEnvelope, STATUSES } from "../../../extensions/checkpoint-bridge/model/result.ts";

const doc = readFileSync(join(import.meta.dirname, "../../../docs/tool.md"), "utf8");
/** The `details: { … }` block of the documented message, its field names in order. */
const documentedFields = () => {
	const block = /details: \{\n([\s\S]*?)\n {2}\},/.exec(doc)?.[1] ?? "";
	return [...block.matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]);
};

describe("the answer message's contract (docs/tool.md)", () => {
	it("names the message's custom type, its record's type, its version and the status queued as the code has them", () => {
		expect(doc).toContain(`customType: "${ANSWER_MESSAGE_TYPE}"`);
		expect(doc).toContain(`\`${DELIVERED_ENTRY_TYPE}\``);
		expect(doc).toContain(`v: ${DELIVERY_VERSION},`);
		expect(doc).toMatch(/\| `queued` +\|/);
		// A receipt is never a request's end: a host's result cannot carry it.
		expect(STATUSES).not.toContain("queued");
	});

	it("lists exactly the fields a message's details carry, forwarded and late included", () => {
		const sent: Parameters<MessageApi["sendMessage"]>[0][] = [];
		const poster = sessionPoster({ sendMessage: (m) => void sent.push(m), appendEntry: () => {} }, () => []);
		const delivery = { requestId: "r", askerSessionId: "s", asker: "planner", questions: ["Q?"], queuedAt: 0, envelope: makeEnvelope("ok", []) };
		poster.post({ ...delivery, late: true }, true);
		expect(Object.keys(sent[0]!.details).sort()).toEqual([...documentedFields()].sort());
		expect(sent[0]).toMatchObject({ customType: ANSWER_MESSAGE_TYPE, display: true });
	});
});
