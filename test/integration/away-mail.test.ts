/**
 * Questions by mail on Debian's postfix (SMTP) and dovecot (IMAP), started on loopback by the test
 * with its own users and mailboxes, with a real `pi --mode rpc` host and a real asker: asked by
 * mail, answered by a reply in each form (`1` the option the RPC dialog lists first), withdrawn
 * when answered in the host's own dialog, and the attacks: a forged sender, a flood of mails
 * without a token (no mail back, the budget untouched), a reused token, an answer that fits no
 * option, an HTML-only reply hiding text, a huge or unreadable mail, a flood of replies; then the
 * SMTP server gone: one warning, the request goes on.
 */
import { ImapFlow } from "imapflow";
import { type ParsedMail, simpleParser } from "mailparser";
import nodemailer, { type SendMailOptions, type Transporter } from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inbox } from "../../extensions/checkpoint-bridge/surfaces/mail/transport.ts";
import { awayAsk, writeAwayAsker } from "./harness/away-asker.ts";
import { HAS_MAIL_SERVERS, type MailServers, type MailUser, startMailServers } from "./harness/mail-servers.ts";
import { isNotify, NOT_ON_OLDEST_PI, onDevPiOnly, PiRpcFixture } from "./harness/pi-cli.ts";

/** A mailbox read over IMAP, as the human's phone does. */
class Mailbox {
	readonly #client: ImapFlow;
	#lastUid = 0;
	/** Every mail read so far. */
	readonly all: ParsedMail[] = [];
	constructor(servers: MailServers, user: MailUser) {
		this.#client = new ImapFlow({ host: "127.0.0.1", port: servers.imapPort, secure: false, auth: { user: user.address, pass: user.password }, logger: false });
		this.#client.on("error", () => {});
	}
	async open(): Promise<void> {
		await this.#client.connect();
		await this.#client.mailboxOpen("INBOX");
	}
	/** Mails that arrived since the last call, after waiting `ms` for more. */
	async arrived(ms = 0): Promise<ParsedMail[]> {
		if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
		const mails: ParsedMail[] = [];
		await this.#client.noop();
		const status = await this.#client.status("INBOX", { uidNext: true });
		if (status === false || (status.uidNext ?? 1) - 1 <= this.#lastUid) return mails;
		for await (const m of this.#client.fetch(`${this.#lastUid + 1}:*`, { uid: true, source: true }, { uid: true }))
			if (m.uid > this.#lastUid && m.source) mails.push(await simpleParser(m.source)), (this.#lastUid = Math.max(this.#lastUid, m.uid));
		this.all.push(...mails);
		return mails;
	}
	/** The next mail whose subject matches, within 20 s. */
	async next(subject: RegExp): Promise<ParsedMail> {
		for (let i = 0; i < 100; i++) {
			const found = (await this.arrived(i ? 200 : 0)).find((m) => subject.test(m.subject ?? ""));
			if (found) return found;
		}
		throw new Error(`no mail matching ${subject} within 20 s`);
	}
	close = () => this.#client.logout().catch(() => {});
}

const replyToOf = (mail: ParsedMail) => (Array.isArray(mail.replyTo) ? mail.replyTo[0] : mail.replyTo)!.value[0]!.address!;

describe.skipIf(!HAS_MAIL_SERVERS)("questions by mail: postfix and dovecot on loopback, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	let servers: MailServers;
	let human: MailUser;
	let bridge: MailUser;
	let stranger: MailUser;
	let inbox: Mailbox;
	let smtp: Transporter;
	beforeAll(async () => {
		servers = await startMailServers();
		bridge = servers.addUser("bridge");
		human = servers.addUser("human");
		stranger = servers.addUser("stranger");
		const piEnv = run.createEnv({
			env: {
				CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0",
				// Reachable from a phone, so the mail carries the one-tap links.
				CHECKPOINT_BRIDGE_WEB_PUBLIC_URL: "https://box.example.test",
				CHECKPOINT_BRIDGE_MAIL_TO: human.address,
				CHECKPOINT_BRIDGE_MAIL_FROM: bridge.address,
				CHECKPOINT_BRIDGE_MAIL_SMTP: `smtp://bridge@127.0.0.1:${servers.smtpPort}`,
				CHECKPOINT_BRIDGE_MAIL_IMAP: `imap://${encodeURIComponent(bridge.address)}:${encodeURIComponent(bridge.password)}@127.0.0.1:${servers.imapPort}`,
				CHECKPOINT_BRIDGE_MAIL_AFTER_MS: "0",
			},
		});
		run.startPi({ args: ["--extension", writeAwayAsker(piEnv)] });
		await run.pi!.command("get_state", {}, 90_000);
		inbox = new Mailbox(servers, human);
		await inbox.open();
		smtp = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false });
	}, 120_000);
	afterAll(async () => {
		await inbox?.close();
		await run.stop();
		await servers?.stop();
	});

	/** Replies to `mail` as a mail program does: to its Reply-To, in its thread, the original quoted below. */
	const reply = (mail: ParsedMail, text: string, over: SendMailOptions = {}) =>
		smtp.sendMail({
			from: human.address,
			to: replyToOf(mail),
			subject: `Re: ${mail.subject}`,
			inReplyTo: mail.messageId,
			references: mail.messageId,
			text: `${text}\n\nOn Thu, 3 Dec 2026 at 07:00, bridge wrote:\n> ${String(mail.text).split("\n").join("\n> ")}\n`,
			...over,
		});

	it("asked by mail with numbered options and one-tap links; `1` is the option the RPC dialog lists first; each answer form of a reply answers; a reply to an ended request is told how it ended", async () => {
		const pi = run.pi!;
		// An option's number, with a signature and the quote below.
		const from = pi.mark();
		const planner = await awayAsk(pi, "planner", [{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }]);
		const dialog = await pi.waitForDialog({ from, timeoutMs: 30_000 });
		const asked = await inbox.next(/planner asks: Which database\?/);
		expect(asked.text).toMatch(/^planner asks:\n\nWhich database\?\n/);
		expect(asked.text).toContain("   1) SQLite (recommended)\n   2) Postgres\n   or write your own answer\n\nTo answer, reply to this mail with");
		expect(asked.text).toMatch(
			/Or answer in one tap \(each link opens a page with one button to press\):\n {3}SQLite: https:\/\/box\.example\.test\/a\/[A-Za-z0-9_-]{43}\n/,
		);
		expect(asked.text).toMatch(/Or open the request: https:\/\/box\.example\.test\/r\/[A-Za-z0-9_-]{43}\/\?via=notify/);
		expect(replyToOf(asked)).toMatch(/^bridge\+[0-9a-f]{32}@example\.test$/);
		expect(asked.headers.get("auto-submitted")).toBe("auto-generated");
		await reply(asked, "1\n\n-- \nSent from the beach\n2");
		const firstInDialog = String((dialog.options as string[])[0]).replace(" (recommended)", "");
		expect(firstInDialog).toBe("SQLite");
		expect((await planner.result).answers).toEqual([{ question: "Which database?", answer: firstInDialog, kind: "option", source: "outside" }]);
		expect((await inbox.next(/^Re: .*planner asks: Which database/)).text).toContain("has ended: answered by your reply.");
		// The same token again: it ended, and the reply says how.
		await reply(asked, "1");
		expect((await inbox.next(/^Re: .*planner asks: Which database/)).text).toContain("has ended: answered by your reply.");

		// Yes, through the thread headers alone (sent to the bridge's plain address).
		const reviewer = await awayAsk(pi, "reviewer", [{ question: "Deploy now?", kind: "confirm" }]);
		const confirm = await inbox.next(/reviewer asks: Deploy now\?/);
		await reply(confirm, "Yes!", { to: "bridge@example.test" });
		expect((await reviewer.result).answers[0]).toMatchObject({ answer: "yes", kind: "confirm", source: "outside" });

		// Several numbers for a multi-select; an option's text, in any case; free text of several lines; an HTML-only reply.
		const targets = await awayAsk(pi, "builder", [{ question: "Targets?", options: ["linux", "mac", "windows"], multiSelect: true }]);
		await reply(await inbox.next(/builder asks: Targets\?/), "1, 3");
		expect((await targets.result).answers[0]).toMatchObject({ answer: "linux, windows" });
		const byText = await awayAsk(pi, "texter", [{ question: "Which one?", options: ["Postgres", "SQLite"], allowOther: false }]);
		await reply(await inbox.next(/texter asks/), "postgres");
		expect((await byText.result).answers[0]).toMatchObject({ answer: "Postgres", kind: "option" });
		const named = await awayAsk(pi, "namer", [{ question: "Name of the table?" }]);
		await reply(await inbox.next(/namer asks/), "storage_items\nplural, as the others");
		expect((await named.result).answers[0]).toMatchObject({ answer: "storage_items\nplural, as the others", kind: "text" });
		const html = await awayAsk(pi, "htmler", [{ question: "Proceed?", kind: "confirm" }]);
		const htmlMail = await inbox.next(/htmler asks/);
		await smtp.sendMail({
			from: human.address,
			to: replyToOf(htmlMail),
			subject: "Re: proceed",
			html: "<div>no</div><blockquote>htmler asks: Proceed?</blockquote>",
		});
		expect((await html.result).answers[0]).toMatchObject({ answer: "no", kind: "confirm" });
		// An HTML-only reply showing "2" with a hidden "1": what it shows is applied. A label longer than the subject's room keeps its pid whole.
		const hidden = await awayAsk(pi, "hidden-html-reader in my-project (pid 7334)", [{ question: "Which one?", options: ["Postgres", "SQLite"] }]);
		const hiddenMail = await inbox.next(/hidden-html-reader/);
		expect(hiddenMail.subject).toBe("[checkpoint-bridge] hidden-html-reader in my-project (pid 7334) asks: Which one?");
		await smtp.sendMail({
			from: human.address,
			to: replyToOf(hiddenMail),
			subject: "Re: which",
			html: '<html><head><title>1</title></head><body><div style="display: none">1</div><div>2</div><blockquote>1) Postgres</blockquote></body></html>',
		});
		expect((await hidden.result).answers[0]).toMatchObject({ answer: "SQLite", kind: "option" });
		// A mail whose header alone is over the bounds, put straight into the bridge's inbox: ignored, and reading goes on.
		const bridgeBox = new ImapFlow({
			host: "127.0.0.1",
			port: servers.imapPort,
			secure: false,
			auth: { user: bridge.address, pass: bridge.password },
			logger: false,
		});
		bridgeBox.on("error", () => {});
		await bridgeBox.connect();
		await bridgeBox.append(
			"INBOX",
			`From: ${stranger.address}\r\nTo: bridge@example.test\r\nSubject: ${`${"s".repeat(70)}\r\n `.repeat(4_300)}x\r\n\r\neu\r\n`,
		);
		await bridgeBox.logout();
		const after = await awayAsk(pi, "after-big-header", [{ question: "Still reading?", kind: "confirm" }]);
		await reply(await inbox.next(/after-big-header asks/), "yes");
		expect((await after.result).answers[0]).toMatchObject({ answer: "yes", source: "outside" });
	});

	it("answered in the host's own dialog: the mail says where; attacks change nothing and are told why, never a stranger", async () => {
		const pi = run.pi!;
		const from = pi.mark();
		const asker = await awayAsk(pi, "guarded", [{ question: "Which region?", options: ["eu", "us"], allowOther: false }]);
		const mail = await inbox.next(/guarded asks: Which region\?/);
		// A forged sender with the right token: nothing applied, and nothing mailed to anyone.
		await smtp.sendMail({ from: stranger.address, to: replyToOf(mail), subject: "Re: x", text: "eu" });
		// A flood of mails "from" the human without a token, or with one nobody was given: one warning at the host, no mail back, no budget spent.
		for (let i = 0; i < 31; i++)
			await smtp.sendMail({
				from: human.address,
				to: i % 2 ? `bridge+${"0".repeat(32)}@example.test` : "bridge@example.test",
				subject: "eu please",
				text: "eu",
			});
		await pi.waitFor((f) => isNotify(f) && String(f.message).includes("a mail with an unknown request token was ignored"), { from, timeoutMs: 30_000 });
		expect(pi.frames.slice(from).filter((f) => isNotify(f) && String(f.message).includes("without a request token was ignored"))).toHaveLength(1);
		// An answer that fits no option: the reply lists them.
		await reply(mail, "7");
		expect((await inbox.next(/^Re: .*guarded asks/)).text).toContain("Your reply was not applied: there is no option 7: 1. eu, 2. us.");
		// A huge mail is not read; one mailparser will not read is refused as unreadable.
		await reply(mail, `eu\n${"x".repeat(300_000)}`);
		expect((await inbox.next(/^Re: .*guarded asks/)).text).toContain("larger than 256 KiB and was not read");
		await reply(mail, "eu", { text: undefined, attachments: Array.from({ length: 1_100 }, (_, i) => ({ filename: `${i}.txt`, content: "x" })) });
		expect((await inbox.next(/^Re: .*guarded asks/)).text).toContain("the mail could not be read (Max allowed child nodes exceeded)");
		// A flood: past three refusals for one request, replies go unanswered.
		for (let i = 0; i < 6; i++) await reply(mail, "nope");
		const flood = await inbox.arrived(3_000);
		expect(flood.length).toBe(0);
		expect(inbox.all.filter((m) => /^Not applied/.test(m.subject ?? "")).map((m) => m.subject)).toEqual([]);
		// Still open: answered in the host's own dialog, and the mail says so.
		const dialog = await pi.waitForDialog({ from, timeoutMs: 30_000 });
		expect(dialog.title).toContain("Which region?");
		pi.answer(dialog, "us");
		expect((await asker.result).answers[0]).toMatchObject({ answer: "us", source: "dialog" });
		expect((await inbox.next(/^Re: .*guarded asks/)).text).toContain("has ended: answered in the RPC client's dialog.");
		const strangers = new Mailbox(servers, stranger);
		await strangers.open();
		expect(await strangers.arrived()).toEqual([]);
		await strangers.close();
	});

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("the IMAP server refusing the login: one warning, tried again after a wait that doubles, never in a loop"),
		async () => {
			const warnings: string[] = [];
			const refused = new Inbox(
				{ secure: false, host: "127.0.0.1", port: servers.imapPort, user: human.address, pass: "not-the-password" },
				async () => {},
				(message) => warnings.push(message),
				{ firstRetryMs: 200 },
			);
			await new Promise((resolve) => setTimeout(resolve, 3_500));
			await refused.close();
			expect(warnings).toHaveLength(1);
			expect(warnings[0]).toMatch(/^cannot read mail from 127\.0\.0\.1:\d+ \(.+\); trying again later$/);
			// dovecot delays a failed login; the waits between tries double from 200 ms: a few tries, not hundreds.
			expect(refused.attempts).toBeGreaterThanOrEqual(2);
			expect(refused.attempts).toBeLessThanOrEqual(5);
		},
	);

	it.skipIf(NOT_ON_OLDEST_PI)(onDevPiOnly("the SMTP server gone: one warning, the requests go on in the host's dialog"), async () => {
		// A host process of its own: the mails earlier tests sent (up to the send budget) and what they warned of are not this test's.
		await run.pi!.close();
		const pi = run.startPi({ args: ["--extension", writeAwayAsker(run.piEnv!)] });
		await pi.command("get_state", {}, 90_000);
		await servers.stopSmtp();
		const from = pi.mark();
		const first = await awayAsk(pi, "offline-1", [{ question: "Still there?", kind: "confirm" }]);
		const second = await awayAsk(pi, "offline-2", [{ question: "And now?", kind: "confirm" }]);
		let at = from;
		for (const call of [first, second]) {
			const dialog = await pi.waitForDialog({ from: at, timeoutMs: 30_000 });
			at = pi.frames.indexOf(dialog) + 1;
			pi.answer(dialog, "Yes");
			expect((await call.result).status).toBe("ok");
		}
		await new Promise((resolve) => setTimeout(resolve, 500));
		const warnings = pi.frames.slice(from).filter((f) => isNotify(f) && String(f.message).includes("cannot send mail"));
		expect(warnings).toHaveLength(1);
		expect(String(warnings[0]!.message)).toContain("requests go on in the terminal and on the page");
	});
});
