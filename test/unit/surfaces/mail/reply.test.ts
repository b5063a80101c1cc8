/** What a reply mail means: each answer form, quote and signature cut, the reason when it fits nothing, and what an HTML reply shows. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import { validateAskParams } from "../../../../extensions/checkpoint-bridge/model/validate.ts";
import { readMailConfig } from "../../../../extensions/checkpoint-bridge/surfaces/mail/config.ts";
import { visibleText } from "../../../../extensions/checkpoint-bridge/surfaces/mail/html-text.ts";
import { answersFromReply, ownText } from "../../../../extensions/checkpoint-bridge/surfaces/mail/reply.ts";
import { readMail } from "../../../../extensions/checkpoint-bridge/surfaces/mail/transport.ts";

/** Questions as the host holds them: validated and normalised as the tool does. */
function q(input: QuestionInput[]) {
	const checked = validateAskParams({ questions: input });
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	return checked.questions;
}

describe("a reply's answer", () => {
	it("keeps only the text above the quote and the signature", () => {
		const cases: [string, string][] = [
			["2\n\n-- \nAlex\n1", "2"],
			["yes\n\nOn Thu, 3 Dec 2026 at 07:00, bridge wrote:\n> 1) eu\n> 2) us", "yes"],
			["> quoted first\nsqlite\n> quoted after", "sqlite"],
			["no\r\n-----Original Message-----\r\nFrom: bridge", "no"],
			["ok\n\nSent from my phone", "ok"],
			["storage_items\nplural\n________________________________\nFrom: bridge", "storage_items\nplural"],
		];
		for (const [text, own] of cases) expect(ownText(text)).toBe(own);
	});

	it("reads an option's number or text, yes or no, free text, several numbers for a multi-select, one line per question", () => {
		const choice = q([{ question: "Which?", options: ["Postgres", "SQLite"] }]);
		expect(answersFromReply(choice, "2")).toEqual({ ok: true, answers: ["SQLite"] });
		expect(answersFromReply(choice, "  postgres \n-- \nsig")).toEqual({ ok: true, answers: ["Postgres"] });
		expect(answersFromReply(choice, "MariaDB")).toEqual({ ok: true, answers: ["MariaDB"] });
		const confirm = q([{ question: "Ship?", kind: "confirm" }]);
		for (const yes of ["yes", "Y", "ok", "1", "Yes!"]) expect(answersFromReply(confirm, yes)).toEqual({ ok: true, answers: [true] });
		for (const no of ["no", "n", "2", "No."]) expect(answersFromReply(confirm, no)).toEqual({ ok: true, answers: [false] });
		const multi = q([{ question: "Targets?", options: ["linux", "mac", "windows"], multiSelect: true, allowOther: false }]);
		expect(answersFromReply(multi, "1, 3")).toEqual({ ok: true, answers: [["linux", "windows"]] });
		expect(answersFromReply(multi, "1 3 and 2")).toEqual({ ok: true, answers: [["linux", "windows", "mac"]] });
		expect(answersFromReply(multi, "mac, Linux")).toEqual({ ok: true, answers: [["mac", "linux"]] });
		expect(answersFromReply(q([{ question: "Name?" }]), "a\nb\n\n> q")).toEqual({ ok: true, answers: ["a\nb"] });
		const two = q([
			{ question: "Which?", options: ["a", "b"] },
			{ question: "Ship?", kind: "confirm" },
		]);
		expect(answersFromReply(two, "1. b\n2. yes")).toEqual({ ok: true, answers: ["b", true] });
	});

	it("says why a reply fits nothing, naming the options", () => {
		const closed = q([{ question: "Region?", options: ["eu", "us"], allowOther: false }]);
		expect(answersFromReply(closed, "7")).toEqual({ ok: false, reason: "there is no option 7: 1. eu, 2. us" });
		expect(answersFromReply(closed, "asia")).toEqual({ ok: false, reason: '"asia" is none of the options: 1. eu, 2. us' });
		expect(answersFromReply(closed, "> only a quote")).toEqual({ ok: false, reason: "the reply has no answer above the quoted mail" });
		expect(answersFromReply(q([{ question: "Ship?", kind: "confirm" }]), "maybe")).toEqual({
			ok: false,
			reason: '"maybe" is neither yes nor no: 1. Yes, 2. No',
		});
		const two = q([{ question: "A?" }, { question: "B?" }]);
		expect(answersFromReply(two, "only one")).toEqual({ ok: false, reason: "2 questions need 2 lines, one answer each in order; the reply has 1" });
	});
});

describe("the mail set-up", () => {
	const base = {
		CHECKPOINT_BRIDGE_MAIL_TO: "me@example.org",
		CHECKPOINT_BRIDGE_MAIL_FROM: "bridge@example.org",
		CHECKPOINT_BRIDGE_MAIL_SMTP: "smtp://bridge%40example.org:p%40ss@mail.example.org",
		CHECKPOINT_BRIDGE_MAIL_IMAP: "imaps://bridge%40example.org:p%40ss@mail.example.org",
	};
	it("is off without CHECKPOINT_BRIDGE_MAIL_TO, read with its defaults, and refused naming the variable that is wrong", () => {
		expect(readMailConfig({})).toEqual({ kind: "off" });
		expect(readMailConfig(base)).toEqual({
			kind: "ok",
			config: {
				to: "me@example.org",
				from: "bridge@example.org",
				smtp: { secure: false, host: "mail.example.org", port: 587, user: "bridge@example.org", pass: "p@ss" },
				imap: { secure: true, host: "mail.example.org", port: 993, user: "bridge@example.org", pass: "p@ss" },
				afterMs: 300_000,
			},
		});
		const wrong: [Record<string, string>, string][] = [
			[{ CHECKPOINT_BRIDGE_MAIL_TO: "me" }, "CHECKPOINT_BRIDGE_MAIL_TO"],
			[{ CHECKPOINT_BRIDGE_MAIL_FROM: "bridge+x@example.org" }, 'must have no "+"'],
			[{ CHECKPOINT_BRIDGE_MAIL_SMTP: "http://mail.example.org" }, "CHECKPOINT_BRIDGE_MAIL_SMTP must start with smtp:// or smtps://"],
			[{ CHECKPOINT_BRIDGE_MAIL_IMAP: "" }, "CHECKPOINT_BRIDGE_MAIL_IMAP is not set"],
			[{ CHECKPOINT_BRIDGE_MAIL_IMAP: "imap://mail.example.org" }, "must name a user and a host"],
			[{ CHECKPOINT_BRIDGE_MAIL_AFTER_MS: "soon" }, "CHECKPOINT_BRIDGE_MAIL_AFTER_MS"],
		];
		for (const [over, named] of wrong) {
			const read = readMailConfig({ ...base, ...over });
			expect(read.kind).toBe("error");
			expect(read.kind === "error" && read.error).toContain(named);
		}
	});
});

describe("a reply as a mail program shows it", () => {
	const head = "From: me@example.org\r\nTo: bridge+0123456789abcdef0123456789abcdef@example.org\r\nSubject: Re: x\r\nMIME-Version: 1.0\r\n";
	const mime = (body: string) => Buffer.from(`${head}${body}`);

	it("reads the text part when there is one, else only the HTML's visible text; refuses HTML that hides text by styles, and a mail mailparser will not read as unreadable", async () => {
		const html = (markup: string) => mime(`Content-Type: text/html; charset=utf-8\r\n\r\n${markup}\r\n`);
		expect((await readMail(html('<div style="display:none">1</div><div>2</div>'))).text).toBe("2");
		expect((await readMail(html("<head><title>1</title><style>p{color:red}</style></head><p hidden>1</p><p>no</p><blockquote>1) yes</blockquote>"))).text).toBe(
			"no\n> 1) yes",
		);
		for (const hiding of [
			'<span style="font-size:0">1</span>2',
			"<style>.x{display:none}</style><span class=x>1</span>2",
			'<span style="opacity: 0">1</span>2',
		])
			expect(await readMail(html(hiding))).toMatchObject({
				text: undefined,
				unread: "its HTML hides some of its text by styles, so what it shows is unclear; reply in plain text",
			});
		const alternative = mime(
			'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n2\r\n--b\r\nContent-Type: text/html\r\n\r\n<div style="display:none">1</div>2\r\n--b--\r\n',
		);
		expect((await readMail(alternative)).text?.trim()).toBe("2");
		const parts = Array.from({ length: 1_100 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\n${i}\r\n`).join("");
		await expect(readMail(mime(`Content-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`))).rejects.toThrow(/child nodes/);
		expect(
			answersFromReply(q([{ question: "Which?", options: ["a", "b"] }]), (await readMail(html('<div style="display:none">1</div><div>2</div>'))).text!),
		).toEqual({
			ok: true,
			answers: ["b"],
		});
	});

	it("takes a bounded time on any reply up to the mail size limit", () => {
		const unit = fc.constantFrom(
			"On ",
			"Op ",
			"W dniu ",
			"Den ",
			"Am ",
			" um ",
			"From: ",
			"wrote:",
			"schreef",
			"pisze",
			"skrev",
			" ",
			"\n",
			"> ",
			"-- ",
			"x",
			"a ",
			"(",
			"<",
			">",
			":",
			"\t",
		);
		fc.assert(
			fc.property(fc.array(unit, { maxLength: 200 }), fc.integer({ min: 1, max: 2_000 }), (parts, repeat) => {
				const text = parts
					.join("")
					.repeat(repeat)
					.slice(0, 256 * 1024);
				const started = performance.now();
				ownText(text);
				expect(performance.now() - started).toBeLessThan(1_000);
			}),
			{ numRuns: 100 },
		);
	}, 120_000);
});

describe("an HTML reply's visible text", () => {
	it("refuses HTML nested deeper than 256 levels, in a bounded time", () => {
		const started = performance.now();
		expect(visibleText(`${"<div>".repeat(52_000)}1`)).toEqual({ ok: false, reason: "its HTML is nested deeper than 256 levels; reply in plain text" });
		expect(performance.now() - started).toBeLessThan(300);
		expect(visibleText(`${"<div>".repeat(200)}2`)).toEqual({ ok: true, text: "2" });
	});

	it("random HTML: never a throw, and never text that an element hides", () => {
		const piece = fc.constantFrom(
			"<div>",
			"</div>",
			"<p hidden>",
			"</p>",
			'<span style="display:none">',
			"</span>",
			"<br>",
			"<blockquote>",
			"</blockquote>",
			"x",
			" ",
			"&amp;",
			"<!--",
			"-->",
			"<",
			">",
		);
		fc.assert(
			fc.property(fc.array(piece, { maxLength: 60 }), (pieces) => {
				const seen = visibleText(`${pieces.join("")}<div style="display:none">SECRET</div><p hidden>SECRET</p>`);
				if (seen.ok) expect(seen.text).not.toContain("SECRET");
			}),
			{ numRuns: 300 },
		);
	});
});
