/**
 * Answers by mail on a real relay, its mails recorded instead of sent: what is mailed and when,
 * each refusal (with its mail, or none to a stranger), and random mails that never crash it and
 * never change a request.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { RequestBook } from "../../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { MAIL_BUDGET, MailBudget } from "../../../../extensions/checkpoint-bridge/surfaces/mail/budget.ts";
import type { MailConfig } from "../../../../extensions/checkpoint-bridge/surfaces/mail/config.ts";
import { type IncomingMail, MailAnswers, type OutgoingMail } from "../../../../extensions/checkpoint-bridge/surfaces/mail/mail-answers.ts";
import { answersFromReply } from "../../../../extensions/checkpoint-bridge/surfaces/mail/reply.ts";
import { reachableFromPhone } from "../../../../extensions/checkpoint-bridge/surfaces/mail/start.ts";
import { until } from "../../../support/until.ts";
import { relay } from "../../support/relay.ts";

const server = { secure: false, host: "127.0.0.1", port: 1, user: "bridge", pass: "" };
const config: MailConfig = { to: "me@example.org", from: "bridge@example.org", smtp: server, imap: server, afterMs: 0 };

const stops: (() => void)[] = [];
afterEach(() => {
	for (const stop of stops.splice(0)) stop();
});

function setup(over: Partial<MailConfig> = {}, send?: (mail: OutgoingMail) => Promise<void>, late = false, budget?: MailBudget) {
	const r = late ? relay({}, { book: new RequestBook(readLateConfig({})) }) : relay();
	const sent: OutgoingMail[] = [];
	const notices: string[] = [];
	const byMail = new MailAnswers({
		handle: r.handle,
		config: { ...config, ...over },
		send: send ?? (async (mail) => void sent.push(mail)),
		notice: (message) => notices.push(message),
		budget,
	});
	stops.push(
		() => byMail.close(),
		() => r.role.release("quit", "test over"),
	);
	const tokenOf = (mail: OutgoingMail) => /\+([0-9a-f]{32})@/.exec(mail.replyTo)![1]!;
	const from = (token: string, text: string, over: Partial<IncomingMail> = {}): IncomingMail => ({
		from: "me@example.org",
		recipients: [`bridge+${token}@example.org`],
		thread: [],
		text,
		automatic: false,
		...over,
	});
	return { ...r, byMail, sent, notices, tokenOf, from };
}

describe("answers by mail", () => {
	it("mails a relayed request once after the delay, never the host's own nor one answered before; the end mail says how", async () => {
		const s = setup({ afterMs: 200 });
		const quick = s.ask([{ question: "Quick?", options: ["a", "b"] }], { label: "quick" });
		const slow = s.ask([{ question: "Slow?", options: ["a", "b"], recommended: "b" }], { label: "slow" });
		await until(() => s.fake.current(), "the first dialog");
		s.fake.current()!.answer("a");
		await quick;
		await until(() => s.sent.length === 1, "the mail", 2_000);
		expect(s.sent[0]).toMatchObject({ to: "me@example.org", from: "bridge@example.org", subject: "[checkpoint-bridge] slow asks: Slow?" });
		// Numbered in the order every surface shows: the recommended option first.
		expect(s.sent[0]!.text).toContain("   1) b (recommended)\n   2) a\n");
		expect(s.sent[0]!.messageId).toBe(`<cb.${s.tokenOf(s.sent[0]!)}@example.org>`);
		await s.byMail.receive(s.from(s.tokenOf(s.sent[0]!), "1"));
		expect((await slow).answers[0]).toMatchObject({ answer: "b", source: "outside" });
		await until(() => s.sent.length === 2, "the end mail", 2_000);
		expect(s.sent[1]!.text).toContain("has ended: answered by your reply.");
		expect(s.sent[1]!.inReplyTo).toBe(s.sent[0]!.messageId);
		// The host's own question is never mailed.
		const own = s.ask([{ question: "Own?" }], { label: "host", sessionId: "host-session-id" });
		await until(() => s.fake.current(), "the host's own dialog");
		await new Promise((resolve) => setTimeout(resolve, 300));
		s.fake.current()!.answer("x");
		await own;
		expect(s.sent).toHaveLength(2);
	});

	it("refuses, each with its reason and nothing applied: a forged sender (no mail to it), a robot's mail, no token and an unknown token (a warning, no mail), an answer that fits no option, a huge or unreadable mail, a flood; an ended request's token gets how it ended", async () => {
		const s = setup();
		const call = s.ask([{ question: "Region?", options: ["eu", "us"], allowOther: false }], { label: "planner" });
		await until(() => s.sent.length === 1, "the mail", 2_000);
		const token = s.tokenOf(s.sent[0]!);
		const sentAfter = async (mail: IncomingMail) => {
			const before = s.sent.length;
			await s.byMail.receive(mail);
			return s.sent.slice(before);
		};
		expect(await sentAfter(s.from(token, "eu", { from: "mallory@example.net" }))).toEqual([]);
		expect(s.notices).toEqual(['checkpoint-bridge: a mail from "mallory@example.net" was ignored: answers are taken only from me@example.org']);
		expect(await sentAfter(s.from(token, "eu", { automatic: true }))).toEqual([]);
		// Without a token of ours, or with one nobody was given: whoever can mail the bridge could send these, so no mail answers them.
		expect(await sentAfter(s.from(token, "eu", { recipients: ["bridge@example.org"] }))).toEqual([]);
		expect(s.notices.at(-1)).toContain("without a request token was ignored");
		expect(await sentAfter(s.from("0".repeat(32), "eu"))).toEqual([]);
		expect(s.notices.at(-1)).toContain("a mail with an unknown request token was ignored");
		const [fits] = await sentAfter(s.from(token, "7"));
		expect(fits!.text).toContain("Your reply was not applied: there is no option 7: 1. eu, 2. us.");
		const [huge] = await sentAfter(s.from(token, undefined as unknown as string, { text: undefined }));
		expect(huge!.text).toContain("larger than 256 KiB and was not read");
		// The third refusal is the last mailed for this request.
		const [unreadable] = await sentAfter(s.from(token, "", { text: undefined, unread: "the mail could not be read (nested too deep)" }));
		expect(unreadable!.text).toContain("Your reply was not applied: the mail could not be read (nested too deep).");
		expect(await sentAfter(s.from(token, "asia"))).toEqual([]);
		expect(s.notices.at(-1)).toContain("later ones are dropped unanswered");
		expect(s.handle.snapshot()!.open).toHaveLength(1);
		expect(s.fake.current()?.closedBy).toBeUndefined();
		// Answered through the thread headers alone; its token then gets how it ended.
		await s.byMail.receive(s.from(token, "us", { recipients: ["bridge@example.org"], thread: [s.sent[0]!.messageId!] }));
		expect((await call).answers[0]).toMatchObject({ answer: "us" });
		const [ended] = await sentAfter(s.from(token, "eu"));
		expect(ended!.text).toContain("has ended: answered by your reply.");
	});

	it("a mail server that refuses: one warning, the request goes on", async () => {
		let tries = 0;
		const s = setup({}, async () => {
			tries++;
			throw new Error("connect ECONNREFUSED 127.0.0.1:587");
		});
		const first = s.ask([{ question: "One?", options: ["a", "b"] }], { label: "planner" });
		const second = s.ask([{ question: "Two?", options: ["a", "b"] }], { label: "reviewer" });
		await until(() => tries === 2, "both mails tried", 2_000);
		expect(s.notices).toEqual(["checkpoint-bridge: cannot send mail (connect ECONNREFUSED 127.0.0.1:587); requests go on in the terminal and on the page"]);
		for (const call of [first, second]) {
			await until(() => s.fake.current(), "a dialog");
			s.fake.current()!.answer("a");
			expect((await call).status).toBe("ok");
		}
	});

	it("random mails: never a crash, never a changed request", async () => {
		const s = setup();
		const question = [{ question: "Region?", options: ["eu", "us"], allowOther: false }];
		const call = s.ask(question, { label: "planner" });
		await until(() => s.sent.length === 1, "the mail", 2_000);
		const token = s.tokenOf(s.sent[0]!);
		const held = s.handle.snapshot()!.open[0]!.questions;
		const text = fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(..."0123456789 ,;>-\n#.usaeiny") }), fc.constant(undefined));
		const address = fc.oneof(
			fc.constantFrom("me@example.org", "ME@example.org", `bridge+${token}@example.org`, "bridge@example.org"),
			fc.emailAddress(),
			fc.string(),
		);
		await fc.assert(
			fc.asyncProperty(
				fc.record({
					from: address,
					recipients: fc.array(fc.oneof(address, fc.constant(`bridge+${token}@example.org`), fc.constant(`bridge+${token.toUpperCase()}@EXAMPLE.org`)), {
						maxLength: 3,
					}),
					thread: fc.array(fc.oneof(fc.string(), fc.constant(`<cb.${token}@example.org>`), fc.constant(`<cb.${token}@evil.example>`)), { maxLength: 2 }),
					text,
					automatic: fc.boolean(),
				}),
				async (mail) => {
					// A valid answer from the human with the token would rightly answer: those are not random input.
					fc.pre(mail.text === undefined || !answersFromReply(held, mail.text).ok);
					await s.byMail.receive(mail as IncomingMail);
				},
			),
			{ numRuns: 300 },
		);
		expect(s.handle.snapshot()!.open).toHaveLength(1);
		expect(s.fake.current()?.closedBy).toBeUndefined();
		// Never a mail to anyone but the configured address.
		expect(new Set(s.sent.map((m) => m.to))).toEqual(new Set(["me@example.org"]));
		s.fake.current()!.answer("eu");
		expect((await call).answers[0]).toMatchObject({ answer: "eu" });
	});

	it("a late request (its call stopped waiting, the question open) is still answered by a reply; the end mail follows", async () => {
		const s = setup({}, undefined, true);
		const call = s.ask([{ question: "Which?", options: ["a", "b"] }], { label: "planner", budgetMs: 1_000, dialogTimeoutMs: 60_000 });
		await until(() => s.sent.length === 1, "the mail", 2_000);
		expect((await call).status).toBe("timeout");
		expect(s.handle.snapshot()!.late?.map((l) => l.asker.label)).toEqual(["planner"]);
		await s.byMail.receive(s.from(s.tokenOf(s.sent[0]!), "b"));
		await until(() => s.sent.length === 2, "the end mail", 2_000);
		expect(s.sent[1]!.text).toContain("has ended: answered by your reply.");
		expect(s.handle.snapshot()!.late ?? []).toEqual([]);
	});

	it("one-tap links go into a mail only when a phone can reach the page", () => {
		const page = (url: string, loopback: boolean) => ({ address: { host: "h", port: 1, loopback }, origin: "http://127.0.0.1:1", url });
		expect(reachableFromPhone(page("http://127.0.0.1:1/t/x/", true))).toBe(false);
		expect(reachableFromPhone(page("https://box.tailnet.example/t/x/", true))).toBe(true);
		expect(reachableFromPhone(page("http://127.0.0.1:1/t/x/", false))).toBe(true);
	});
});

describe("the mail budget", () => {
	it("is 30 mails in 10 minutes, at most 10 for one asker's requests", () => {
		expect(MAIL_BUDGET).toEqual({ mails: 30, perAsker: 10, windowMs: 600_000 });
	});

	it("mails without a token or with an unknown one cost none of it: after 31 of them a request is mailed at once, and the host was warned once", async () => {
		const s = setup();
		for (let i = 0; i < 31; i++)
			await s.byMail.receive(s.from(i % 2 ? "f".repeat(32) : "0".repeat(32), "eu", i % 2 ? {} : { recipients: ["bridge@example.org"] }));
		expect(s.sent).toEqual([]);
		expect(s.notices).toHaveLength(2);
		s.ask([{ question: "Region?", options: ["eu", "us"] }], { label: "planner" });
		await until(() => s.sent.length === 1, "the request's mail", 2_000);
		expect(s.sent[0]!.subject).toContain("planner asks: Region?");
	});

	it("is shared between askers: one asker's 15 requests take its share, another's is mailed at once, the held ones are mailed as the budget allows, and every mailed request's end mail is sent", async () => {
		// The whole budget is two askers' worth here: 5 requests of one (10 mails) and one of another.
		const s = setup({}, undefined, false, new MailBudget({ mails: 12, perAsker: 10, windowMs: 1_500 }));
		const requests = () => s.sent.filter((m) => !m.subject.startsWith("Re:"));
		for (let i = 0; i < 15; i++) void s.ask([{ question: `Busy ${i}?`, options: ["a", "b"] }], { label: "busy" });
		await until(() => requests().length === 5, "the busy asker's share", 2_000);
		expect(s.notices.at(-1)).toContain(
			"the mail budget (12 mails in 0.025 minutes, 10 for one asker's requests) is spent for now; busy's request is mailed as soon as it allows",
		);
		const other = s.ask([{ question: "Other?", options: ["a", "b"] }], { label: "other" });
		await until(() => requests().length === 6, "the other asker's mail", 1_000);
		expect(requests()[5]!.subject).toContain("other asks: Other?");
		// The whole budget is spent: the end mails of the six come all the same.
		for (const mail of requests()) await s.byMail.receive(s.from(s.tokenOf(mail), "a"));
		expect((await other).answers[0]).toMatchObject({ answer: "a", source: "outside" });
		await until(() => s.sent.filter((m) => m.subject.startsWith("Re:")).length === 6, "six end mails", 2_000);
		expect(s.sent.filter((m) => m.text.includes("has ended: answered by your reply."))).toHaveLength(6);
		// The next window: the busy asker's held requests are mailed, not dropped.
		await until(() => requests().length === 11, "five more of the busy asker's requests", 4_000);
		expect(new Set(requests().map((m) => m.subject)).size).toBe(11);
	}, 15_000);
});
