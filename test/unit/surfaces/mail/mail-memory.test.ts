/**
 * Answers by mail with a store open (ADR-0033): a request's reply token is derived from the store's
 * seed and which requests were mailed is written in its meta table, so mail started again over the
 * same store (a host after a restart) knows the token, does not mail the question again, applies a
 * reply once and says so in the end mail; the mark goes with the request.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore, useStore } from "../../../../extensions/checkpoint-bridge/core/store/open.ts";
import type { RequestStore } from "../../../../extensions/checkpoint-bridge/core/store/store.ts";
import type { MailConfig } from "../../../../extensions/checkpoint-bridge/surfaces/mail/config.ts";
import { type IncomingMail, MailAnswers, type OutgoingMail } from "../../../../extensions/checkpoint-bridge/surfaces/mail/mail-answers.ts";
import { storeMailMemory } from "../../../../extensions/checkpoint-bridge/surfaces/mail/start.ts";
import { until } from "../../../support/until.ts";
import { relay } from "../../support/relay.ts";

const server = { secure: false, host: "127.0.0.1", port: 1, user: "bridge", pass: "" };
const config: MailConfig = { to: "me@example.org", from: "bridge@example.org", smtp: server, imap: server, afterMs: 0 };

const stops: (() => void)[] = [];
afterEach(() => {
	for (const stop of stops.splice(0)) stop();
	useStore(undefined);
});

function memoryStore(): RequestStore {
	const opened = openStore(":memory:");
	if (!opened.ok) throw new Error(opened.warning);
	stops.push(() => opened.store.close());
	return opened.store;
}

const tokenOf = (mail: OutgoingMail) => /\+([0-9a-f]{32})@/.exec(mail.replyTo)![1]!;
const reply = (token: string, text: string): IncomingMail => ({
	from: "me@example.org",
	recipients: [`bridge+${token}@example.org`],
	thread: [],
	text,
	automatic: false,
});

describe("answers by mail that outlive the process", () => {
	it("mail started again over the same store takes the request's first token, mails nothing new, applies the reply once and ends with 'answered by your reply'; the mark is gone after", async () => {
		const store = memoryStore();
		useStore(store);
		const r = relay();
		stops.push(() => r.role.release("quit", "test over"));
		const sent: OutgoingMail[] = [];
		const start = () => {
			const byMail = new MailAnswers({ handle: r.handle, config, send: async (mail) => void sent.push(mail), notice: () => {}, memory: storeMailMemory() });
			stops.push(() => byMail.close());
			return byMail;
		};
		const first = start();
		const call = r.ask([{ question: "Region?", options: ["eu", "us"] }], { label: "planner" });
		await until(() => sent.length === 1, "the mail", 2_000);
		const token = tokenOf(sent[0]!);
		const requestId = r.handle.snapshot()!.open[0]!.requestId;
		expect(store.meta.get("mail.mailed")).toBe(JSON.stringify([requestId]));
		// The process goes without a word: nothing settles, the next mail reads the store.
		first.close();
		const second = start();
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(sent).toHaveLength(1);
		await second.receive(reply(token, "us"));
		expect((await call).answers[0]).toMatchObject({ answer: "us", source: "outside" });
		await until(() => sent.length === 2, "the end mail", 2_000);
		expect(sent[1]!.text).toContain("has ended: answered by your reply.");
		expect(sent[1]!.inReplyTo).toBe(sent[0]!.messageId);
		expect(store.meta.get("mail.mailed")).toBe("[]");
		// A second reply with the token: told it ended, nothing applied again.
		await second.receive(reply(token, "eu"));
		expect(sent[2]!.text).toContain("has ended: answered by your reply.");
	});

	it("without a store the token is random each time and nothing is written; the same request id gives the same token over one store and another over a second", () => {
		expect(storeMailMemory().token("req-1")).toBeUndefined();
		expect(storeMailMemory().wasMailed("req-1")).toBe(false);
		const a = memoryStore();
		useStore(a);
		const memory = storeMailMemory();
		const token = memory.token("req-1")!;
		expect(token).toMatch(/^[0-9a-f]{32}$/);
		expect(memory.token("req-1")).toBe(token);
		expect(memory.token("req-2")).not.toBe(token);
		memory.mark("req-1", true);
		expect(memory.wasMailed("req-1")).toBe(true);
		useStore(memoryStore());
		expect(storeMailMemory().token("req-1")).not.toBe(token);
		expect(storeMailMemory().wasMailed("req-1")).toBe(false);
		// The marks are bounded: the oldest go first.
		useStore(a);
		for (let i = 0; i < 300; i++) memory.mark(`many-${i}`, true);
		expect(memory.wasMailed("req-1")).toBe(false);
		expect(memory.wasMailed("many-299")).toBe(true);
		expect(JSON.parse(a.meta.get("mail.mailed")!)).toHaveLength(256);
	});
});
