/**
 * Same ids, same links, across a restart (ADR-0033, "Secrets that survive"), on real `pi --mode rpc`
 * hosts killed with SIGKILL and started again in the same directory with the same state directory,
 * the question asked by a `pi -p` run (`wait: false`) through the local endpoint. The page on a fixed
 * port: the request's link and one-tap URLs made before the kill are the ones after it, and a tap on
 * one answers once; the notify command and ntfy are told the request again, then its end, under the
 * same request id and sequence id. Mail on postfix and dovecot: a reply sent while the host is down is
 * applied when it comes back, once, the question is not mailed again, the end mail says it was
 * answered by the reply, and a second restart changes nothing.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ImapFlow } from "imapflow";
import type { ParsedMail } from "mailparser";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { fakeNtfy } from "../support/ntfy.ts";
import { until } from "../support/until.ts";
import type { ScriptAsk } from "./fixtures/scripted-model.ts";
import { type HeadlessBin, startHeadlessBin } from "./harness/headless-host.ts";
import { HAS_MAIL_SERVERS, type MailServers, type MailUser, startMailServers } from "./harness/mail-servers.ts";
import { baseArgs, createPiEnv, envelopesIn, hostAdvertised, hostEndpoint, isDialog, type PiEnv, PiRpc, runPi } from "./harness/pi-cli.ts";

const QUEUED = { questions: [{ question: "Which database?", options: ["Postgres", "SQLite"] }], wait: false } as unknown as ScriptAsk;
const DIALOG_MS = 90_000;

/** A port free right now on loopback: the page listens there in every run of the host. */
async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as { port: number };
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

interface Notified {
	event: string;
	requestId: string;
	actions?: { link: string; buttons: { label: string; answer: string }[]; decline: { answer: string } };
}

/** A notify command that appends each run's event, request id and actions to `file`, one line each. */
function notifyLog(file: string) {
	const command = `printf '%s\\t%s\\t%s\\n' "$CHECKPOINT_BRIDGE_EVENT" "$CHECKPOINT_BRIDGE_REQUEST_ID" "$CHECKPOINT_BRIDGE_ACTIONS" >> ${JSON.stringify(file)}`;
	const runs = (): Notified[] =>
		existsSync(file)
			? readFileSync(file, "utf8")
					.split("\n")
					.filter(Boolean)
					.map((line) => {
						const [event, requestId, actions] = line.split("\t");
						return { event: event!, requestId: requestId!, ...(actions ? { actions: JSON.parse(actions) } : {}) };
					})
			: [];
	return { command, runs };
}

describe("same ids, same links: a pi --mode rpc host killed and started again in the same directory", () => {
	let env: PiEnv | undefined;
	const hosts: PiRpc[] = [];
	const cleanups: (() => Promise<void>)[] = [];
	const startHost = (name: string) => {
		const host = PiRpc.start(env!, { args: ["--name", name] });
		hosts.push(host);
		return host;
	};
	const killed = async (host: PiRpc) => {
		host.kill("SIGKILL");
		await host.exited;
	};
	afterEach(async () => {
		for (const host of hosts.splice(0)) await host.close();
		for (const cleanup of cleanups.splice(0)) await cleanup();
		env?.cleanup();
		env = undefined;
	});

	it("a one-tap URL and the request link made before the kill are the same after it and answer once; the notify command and ntfy see the request again and its end under the same request id and sequence id", async () => {
		const ntfy = await fakeNtfy();
		cleanups.push(() => ntfy.close());
		const port = await freePort();
		env = createPiEnv({ script: { prompts: { "ask later": { ask: QUEUED } } } });
		const log = notifyLog(join(env.root, "notified.log"));
		Object.assign(env.env, {
			CHECKPOINT_BRIDGE_WEB: `127.0.0.1:${port}`,
			CHECKPOINT_BRIDGE_NOTIFY_COMMAND: log.command,
			CHECKPOINT_BRIDGE_NTFY_URL: `${ntfy.origin}/cb-topic`,
			CHECKPOINT_BRIDGE_STATE_DIR: join(env.root, "state"),
		});
		const first = startHost("host");
		await hostEndpoint(env);
		const asked = await runPi(env, [...baseArgs(), "-p", "ask later"], 90_000);
		expect(asked.code, asked.stderr.slice(-2_000)).toBe(0);
		expect(envelopesIn(asked.stdout).find((e) => e.status === "queued")?.requestId).toEqual(expect.any(String));
		await first.waitForDialog({ timeoutMs: DIALOG_MS });
		const before = await until(() => log.runs().find((r) => r.event === "asked"), "the notify command's first run", 30_000);
		const published = await until(() => ntfy.received[0]?.json, "the first ntfy publish", 30_000);
		expect(published.sequence_id).toBe(before.requestId);
		const tap = before.actions!.buttons.find((b) => b.label === "SQLite")!.answer;
		expect(new URL(tap).port).toBe(String(port));
		await killed(first);

		const second = startHost("host-again");
		await second.waitForDialog({ timeoutMs: DIALOG_MS });
		// Told again after the restart: the same request id, the same link and buttons, the same ntfy message.
		const again = await until(() => log.runs().filter((r) => r.event === "asked")[1], "the notify command's run after the restart", 30_000);
		expect(again.requestId).toBe(before.requestId);
		expect(again.actions!.link).toBe(before.actions!.link);
		expect(again.actions!.buttons).toEqual(before.actions!.buttons);
		expect(again.actions!.decline).toEqual(before.actions!.decline);
		const republished = await until(() => ntfy.received[1]?.json, "the ntfy publish after the restart", 30_000);
		expect(republished.sequence_id).toBe(before.requestId);
		// The request's link made before the kill shows the open request.
		const page = await fetch(before.actions!.link.replace(/\?.*$/, ""));
		expect(page.status).toBe(200);
		await page.body?.cancel();

		// The tap made before the kill answers, once.
		const pressed = await fetch(tap, { method: "POST" });
		expect([pressed.status, await pressed.text()]).toEqual([200, "answered: SQLite\n"]);
		const twice = await fetch(tap, { method: "POST" });
		expect(twice.status).toBeGreaterThanOrEqual(400);
		expect(await twice.text()).toMatch(/used already|has ended/);
		const ended = await until(() => log.runs().find((r) => r.event === "ended"), "the notify command's end run", 30_000);
		expect(ended.requestId).toBe(before.requestId);
		const endMessage = await until(() => ntfy.received.find((m, i) => i >= 2 && m.json.sequence_id === before.requestId)?.json, "the ntfy end", 30_000);
		expect(endMessage.title).toMatch(/: answered /);
		await sleep(500);
		expect(log.runs().filter((r) => r.event === "ended")).toHaveLength(1);
		expect(second.frames.filter(isDialog)).toHaveLength(1);
	});
});

/**
 * postfix and dovecot for both mail tests below, started by the first: each test has a bridge and a
 * human of its own, all made before any mail flows (a postfix daemon may keep the mailbox map it read at its start).
 */
let mailServers: Promise<{ servers: MailServers; users: Record<"rpc" | "bin", { bridge: MailUser; human: MailUser }> }> | undefined;
const sharedMailServers = () =>
	(mailServers ??= startMailServers().then((servers) => ({
		servers,
		users: {
			rpc: { bridge: servers.addUser("bridge"), human: servers.addUser("human") },
			bin: { bridge: servers.addUser("bin-bridge"), human: servers.addUser("bin-human") },
		},
	})));
afterAll(async () => {
	await mailServers?.then(
		({ servers }) => servers.stop(),
		() => {},
	);
});

/** The human's mailbox, read over IMAP without marking anything seen. */
class Mailbox {
	readonly #client: ImapFlow;
	#lastUid = 0;
	readonly all: ParsedMail[] = [];
	constructor(servers: MailServers, user: MailUser) {
		this.#client = new ImapFlow({ host: "127.0.0.1", port: servers.imapPort, secure: false, auth: { user: user.address, pass: user.password }, logger: false });
		this.#client.on("error", () => {});
	}
	async open(): Promise<void> {
		await this.#client.connect();
		await this.#client.mailboxOpen("INBOX");
	}
	async arrived(): Promise<ParsedMail[]> {
		await this.#client.noop();
		const mails: ParsedMail[] = [];
		const status = await this.#client.status("INBOX", { uidNext: true });
		if (status === false || (status.uidNext ?? 1) - 1 <= this.#lastUid) return mails;
		for await (const m of this.#client.fetch(`${this.#lastUid + 1}:*`, { uid: true, source: true }, { uid: true }))
			if (m.uid > this.#lastUid && m.source) mails.push(await simpleParser(m.source)), (this.#lastUid = Math.max(this.#lastUid, m.uid));
		this.all.push(...mails);
		return mails;
	}
	async next(subject: RegExp, ms = 30_000): Promise<ParsedMail> {
		const deadline = Date.now() + ms;
		for (;;) {
			const found = (await this.arrived()).find((m) => subject.test(m.subject ?? ""));
			if (found) return found;
			if (Date.now() > deadline) throw new Error(`no mail matching ${subject} within ${ms} ms`);
			await sleep(200);
		}
	}
	close = () => this.#client.logout().catch(() => {});
}

describe.skipIf(!HAS_MAIL_SERVERS)("same token across a restart: postfix and dovecot on loopback, a pi --mode rpc host killed", () => {
	it("a reply sent while the host is down is applied when it comes back, once; the question is not mailed again; the end mail says it was answered by the reply; a second restart changes nothing", async () => {
		const {
			servers,
			users: {
				rpc: { bridge, human },
			},
		} = await sharedMailServers();
		const env = createPiEnv({ script: { prompts: { "ask later": { ask: QUEUED } } } });
		mkdirSync(join(env.root, "state"), { recursive: true, mode: 0o700 });
		Object.assign(env.env, {
			CHECKPOINT_BRIDGE_MAIL_TO: human.address,
			CHECKPOINT_BRIDGE_MAIL_FROM: bridge.address,
			CHECKPOINT_BRIDGE_MAIL_SMTP: `smtp://bridge@127.0.0.1:${servers.smtpPort}`,
			CHECKPOINT_BRIDGE_MAIL_IMAP: `imap://${encodeURIComponent(bridge.address)}:${encodeURIComponent(bridge.password)}@127.0.0.1:${servers.imapPort}`,
			CHECKPOINT_BRIDGE_MAIL_AFTER_MS: "0",
			CHECKPOINT_BRIDGE_STATE_DIR: join(env.root, "state"),
		});
		const inbox = new Mailbox(servers, human);
		const hosts: PiRpc[] = [];
		const start = (name: string) => {
			const host = PiRpc.start(env, { args: ["--name", name] });
			hosts.push(host);
			return host;
		};
		const kill = async (host: PiRpc) => {
			host.kill("SIGKILL");
			await host.exited;
		};
		try {
			await inbox.open();
			const first = start("host");
			await hostEndpoint(env);
			const asked = await runPi(env, [...baseArgs(), "-p", "ask later"], 90_000);
			expect(asked.code, asked.stderr.slice(-2_000)).toBe(0);
			await first.waitForDialog({ timeoutMs: DIALOG_MS });
			const mailed = await inbox.next(/^(?!Re: ).*asks: Which database\?/);
			await kill(first);

			// The human replies while no host runs; the reply waits in the bridge's mailbox.
			const smtp = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false });
			const replyTo = (Array.isArray(mailed.replyTo) ? mailed.replyTo[0] : mailed.replyTo)!.value[0]!.address!;
			await smtp.sendMail({
				from: human.address,
				to: replyTo,
				subject: `Re: ${mailed.subject}`,
				inReplyTo: mailed.messageId,
				references: mailed.messageId,
				text: "SQLite\n",
			});
			const bridgeBox = new Mailbox(servers, bridge);
			await bridgeBox.open();
			await bridgeBox.next(/^Re: /);
			await bridgeBox.close();

			const second = start("host-again");
			const ended = await inbox.next(/^Re: .*Which database\?/, 60_000);
			expect(ended.text).toContain("has ended: answered by your reply.");
			expect(ended.inReplyTo).toBe(mailed.messageId);
			await sleep(2_000);
			// Mailed once, ended once: nothing mailed again as new.
			expect(inbox.all.filter((m) => !/^Re: /.test(m.subject ?? ""))).toHaveLength(1);
			expect(inbox.all.filter((m) => /^Re: /.test(m.subject ?? ""))).toHaveLength(1);
			await kill(second);

			// A second restart: nothing is asked, read or mailed again.
			const third = start("host-third");
			// The killed host's socket stays until the next one advertises: the window starts once the third is up.
			await hostAdvertised(env, third);
			await sleep(6_000);
			expect(third.frames.filter(isDialog)).toEqual([]);
			expect(await inbox.arrived()).toEqual([]);
			expect(inbox.all).toHaveLength(2);
		} finally {
			for (const host of hosts) await host.close();
			await inbox.close();
			env.cleanup();
		}
	}, 300_000);
});

describe.skipIf(!HAS_MAIL_SERVERS)("same ids, links and token across a restart of checkpoint-bridge-host (the bin): postfix and dovecot on loopback", () => {
	it("the bin killed and started again notifies the request again under its id with the same link and buttons; a reply sent while it was down is applied once, the end told under the same id; a tap made before the kill is known, and ended", async () => {
		const {
			servers,
			users: {
				bin: { bridge, human },
			},
		} = await sharedMailServers();
		const env = createPiEnv({ script: { prompts: { "ask later": { ask: QUEUED } } } });
		const log = notifyLog(join(env.root, "notified.log"));
		Object.assign(env.env, {
			CHECKPOINT_BRIDGE_WEB: `127.0.0.1:${await freePort()}`,
			CHECKPOINT_BRIDGE_NOTIFY_COMMAND: log.command,
			CHECKPOINT_BRIDGE_MAIL_TO: human.address,
			CHECKPOINT_BRIDGE_MAIL_FROM: bridge.address,
			CHECKPOINT_BRIDGE_MAIL_SMTP: `smtp://bridge@127.0.0.1:${servers.smtpPort}`,
			CHECKPOINT_BRIDGE_MAIL_IMAP: `imap://${encodeURIComponent(bridge.address)}:${encodeURIComponent(bridge.password)}@127.0.0.1:${servers.imapPort}`,
			CHECKPOINT_BRIDGE_MAIL_AFTER_MS: "0",
			CHECKPOINT_BRIDGE_STATE_DIR: join(env.root, "state"),
		});
		const inbox = new Mailbox(servers, human);
		let bin: HeadlessBin | undefined;
		try {
			await inbox.open();
			bin = startHeadlessBin(env.cwd, env.env);
			await bin.line(/the host of .*with no screen/, 30_000);
			const asked = await runPi(env, [...baseArgs(), "-p", "ask later"], 90_000);
			expect(asked.code, asked.stderr.slice(-2_000)).toBe(0);
			const before = await until(() => log.runs().find((r) => r.event === "asked"), "the notify command's first run", 30_000);
			const mailed = await inbox.next(/^(?!Re: ).*asks: Which database\?/);
			expect((await bin.stop("SIGKILL")).signal).toBe("SIGKILL");

			const smtp = nodemailer.createTransport({ host: "127.0.0.1", port: servers.smtpPort, secure: false });
			const replyTo = (Array.isArray(mailed.replyTo) ? mailed.replyTo[0] : mailed.replyTo)!.value[0]!.address!;
			await smtp.sendMail({
				from: human.address,
				to: replyTo,
				subject: `Re: ${mailed.subject}`,
				inReplyTo: mailed.messageId,
				references: mailed.messageId,
				text: "SQLite\n",
			});
			const bridgeBox = new Mailbox(servers, bridge);
			await bridgeBox.open();
			await bridgeBox.next(/^Re: /);
			await bridgeBox.close();

			bin = startHeadlessBin(env.cwd, env.env);
			const ended = await inbox.next(/^Re: .*Which database\?/, 60_000);
			expect(ended.text).toContain("has ended: answered by your reply.");
			await bin.line(/ ok, answered by mail at /, 30_000);
			const runs = await until(() => (log.runs().some((r) => r.event === "ended") ? log.runs() : undefined), "the notify command's end run", 30_000);
			// Notified again after the restart under the same id, link and buttons, then its end under the same id.
			// The bin notifies at its claim, before its inbox has even connected: the asked run comes first.
			const again = runs.filter((r) => r.event === "asked")[1];
			expect(again?.requestId).toBe(before.requestId);
			expect(again!.actions!.link).toBe(before.actions!.link);
			expect(again!.actions!.buttons).toEqual(before.actions!.buttons);
			expect(runs.filter((r) => r.event === "ended").map((r) => r.requestId)).toEqual([before.requestId]);
			// The tap made before the kill is one the restarted bin knows: its request ended by the reply.
			const tap = await fetch(before.actions!.buttons.find((b) => b.label === "SQLite")!.answer, { method: "POST" });
			expect([tap.status, await tap.text()]).toEqual([410, expect.stringMatching(/^this request has ended: answered/)]);
			await sleep(1_000);
			expect(inbox.all.filter((m) => !/^Re: /.test(m.subject ?? ""))).toHaveLength(1);
			expect(inbox.all.filter((m) => /^Re: /.test(m.subject ?? ""))).toHaveLength(1);
		} finally {
			await bin?.stop("SIGKILL");
			await inbox.close();
			env.cleanup();
		}
	}, 300_000);
});
