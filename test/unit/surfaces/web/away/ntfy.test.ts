/**
 * ntfy: the `Actions` header the notify command gets, read as ntfy's server reads it, whatever the
 * labels; the built-in channel's settings, its messages and its retries against a stand-in of
 * ntfy's JSON API; a test notification whose "It works" press is said at the host.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { RequestBook } from "../../../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { ntfyActions } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/notify-life.ts";
import { NtfyChannel, readNtfyConfig } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/ntfy.ts";
import { OneTap } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/one-tap.ts";
import { unreachableLinksWarning } from "../../../../../extensions/checkpoint-bridge/surfaces/web/away/reachable.ts";
import { startWebPage } from "../../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { fakeNtfy, parseNtfyActionsHeader, pressAction } from "../../../../support/ntfy.ts";
import { until } from "../../../../support/until.ts";
import { propertyRun } from "../../../support/property-policy.ts";
import { relay } from "../../../support/relay.ts";
import { trackedPages } from "../support.ts";

const ORIGIN = "https://box.tailnet.ts.net";
const pages = trackedPages();
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
	await pages.closeAll();
	for (const s of servers.splice(0)) await s.close();
});

/** The header a request of one question with `labels` as options gets. */
function headerFor(labels: string[], recommended?: string) {
	const actions = new OneTap().actionsFor(
		{
			requestId: "req-1",
			asker: "planner",
			questions: [{ question: "Which?", kind: "choice", options: labels.map((label) => ({ label })), ...(recommended ? { recommended } : {}) }],
		},
		ORIGIN,
		`${ORIGIN}/r/link/`,
	);
	return { actions, header: ntfyActions(actions) };
}

/** Labels an asker may send: anything, the characters of ntfy's simple format and line breaks most of all. */
const label = fc.oneof(
	fc.string({
		minLength: 1,
		maxLength: 40,
		unit: fc.constantFrom(",", ";", "\\", '"', "'", "=", " ", "\n", "\r", "\t", "a", "é", "😀", "http", "://", "[", "]"),
	}),
	fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }),
);

/** Labels of the attack: a trailing backslash that escapes the closing quote, and a label that carries a whole action. */
const FORGED = ["Deny ,\\", ", https://attacker.example/steal, method=POST, clear=true; http, Approve"];
const LABEL_COUNTEREXAMPLES: [string[]][] = [[FORGED], [['a"', "\\"]], [["x\n, https://attacker.example/, method=POST"]]];

describe("ntfy's Actions header for the notify command", () => {
	it("forged labels cannot add or redirect a button: ntfy's parser finds the page's own buttons, each label as it was, and Decline", () => {
		const { actions, header } = headerFor(FORGED);
		const parsed = parseNtfyActionsHeader(header);
		expect(parsed.map((a) => [a.action, a.label, a.url, a.method, a.clear])).toEqual([
			["http", FORGED[0], actions.buttons[0]!.answer, "POST", true],
			["http", FORGED[1], actions.buttons[1]!.answer, "POST", true],
			["http", "Decline", actions.decline.answer, "POST", true],
		]);
	});

	it("random labels: every button of the header, as ntfy's server reads it, points at the page's own origin, and the labels round-trip", () => {
		fc.assert(
			fc.property(fc.uniqueArray(label, { minLength: 1, maxLength: 5 }), (labels) => {
				const { actions, header } = headerFor(labels);
				// Printable ASCII only: no line break or other byte can end the header or start another.
				expect(header).toMatch(/^[\x20-\x7e]*$/);
				const parsed = parseNtfyActionsHeader(header);
				expect(parsed.length).toBeLessThanOrEqual(3);
				for (const a of parsed) {
					expect(a.action).toBe("http");
					expect(new URL(a.url!).origin).toBe(ORIGIN);
					expect(a.url).toMatch(/^https:\/\/box\.tailnet\.ts\.net\/a\/[A-Za-z0-9_-]{43}$/);
					expect(a.method).toBe("POST");
				}
				const own = [...actions.buttons.slice(0, 2), actions.decline];
				expect(parsed.map((a) => [a.label, a.url])).toEqual(own.map((b) => [b.label, b.answer]));
				expect(parsed.slice(0, -1).map((a) => a.label)).toEqual(labels.slice(0, 2));
			}),
			propertyRun(300, LABEL_COUNTEREXAMPLES),
		);
	});
});

describe("CHECKPOINT_BRIDGE_NTFY_URL and CHECKPOINT_BRIDGE_NTFY_TOKEN", () => {
	it("reads the server and the topic; refuses, naming the variable, what is not a server and a topic", () => {
		expect(readNtfyConfig({})).toEqual({ ok: true, config: undefined });
		expect(readNtfyConfig({ CHECKPOINT_BRIDGE_NTFY_URL: "https://ntfy.sh/my-topic_1" })).toEqual({
			ok: true,
			config: { server: "https://ntfy.sh/", topic: "my-topic_1" },
		});
		expect(readNtfyConfig({ CHECKPOINT_BRIDGE_NTFY_URL: "http://box:8080/ntfy/t", CHECKPOINT_BRIDGE_NTFY_TOKEN: " tk_1 " })).toEqual({
			ok: true,
			config: { server: "http://box:8080/ntfy/", topic: "t", token: "tk_1" },
		});
		for (const [value, why] of [
			["ntfy.sh/topic", "is not a URL"],
			["ftp://ntfy.sh/topic", "must start with https://"],
			["https://user:pw@ntfy.sh/topic", "CHECKPOINT_BRIDGE_NTFY_TOKEN"],
			["https://ntfy.sh/topic?x=1", "without ? or #"],
			["https://ntfy.sh/", "must end with a topic"],
			["https://ntfy.sh/a%20b", "must end with a topic"],
			[`https://ntfy.sh/${"t".repeat(65)}`, "must end with a topic"],
		] as const) {
			const read = readNtfyConfig({ CHECKPOINT_BRIDGE_NTFY_URL: value });
			expect(read.ok, value).toBe(false);
			expect(!read.ok && read.reason).toContain("CHECKPOINT_BRIDGE_NTFY_URL=");
			expect(!read.ok && read.reason).toContain(why);
		}
	});
});

describe("the built-in ntfy channel", () => {
	it("publishes each relayed request by the JSON API (title, questions and options, time left, buttons, click), replaces it in place when it ends; a button pressed as the phone does answers", async () => {
		const ntfy = await fakeNtfy({ token: "tk_secret" });
		servers.push(ntfy);
		const s = await pages.setup({ ntfy: { server: `${ntfy.origin}/`, topic: "cb", token: "tk_secret" }, notifyAfterMs: () => 0 });
		const { requestId, call } = await s.ask([{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }], {
			label: "planner",
			budgetMs: 300_000,
		});
		await until(() => ntfy.received.length === 1, "the publish", 5_000);
		const [asked] = ntfy.received;
		const actions = s.page.actionsFor(requestId)!;
		expect(asked!.json).toMatchObject({
			topic: "cb",
			sequence_id: requestId,
			title: expect.stringMatching(/^planner asks \(.+\)$/),
			click: actions.link,
		});
		expect(asked!.json.message).toMatch(/^Which database\?\n• SQLite \(recommended\)\n• Postgres\n\nTime: [45]:\d\d left$/);
		expect(asked!.json.actions).toEqual([
			{ action: "http", label: "SQLite", url: actions.buttons[0]!.answer, method: "POST", clear: true },
			{ action: "http", label: "Postgres", url: actions.buttons[1]!.answer, method: "POST", clear: true },
			{ action: "http", label: "Decline", url: actions.decline.answer, method: "POST", clear: true },
		]);
		expect(await pressAction(asked!.json.actions![1]!)).toEqual({ status: 200, body: "answered: Postgres\n" });
		expect((await call).answers[0]).toMatchObject({ answer: "Postgres", source: "web" });
		await until(() => ntfy.received.length === 2, "the end update", 5_000);
		expect(ntfy.received[1]!.json).toEqual({
			topic: "cb",
			sequence_id: requestId,
			title: "planner: answered through the link the notify command sent",
			message: "Which database?",
			priority: 2,
		});
	});

	it("Decline on the notification gives the asker what Esc gives (timeout-or-cancelled, dismissed), saying where", async () => {
		const ntfy = await fakeNtfy();
		servers.push(ntfy);
		const s = await pages.setup({ ntfy: { server: `${ntfy.origin}/`, topic: "cb" }, notifyAfterMs: () => 0 });
		const { call } = await s.ask([{ question: "Free text?" }], { label: "writer" });
		await until(() => ntfy.received.length === 1, "the publish", 5_000);
		const decline = ntfy.received[0]!.json.actions!;
		expect(decline.map((a) => a.label)).toEqual(["Decline"]);
		expect(await pressAction(decline[0]!)).toEqual({ status: 200, body: "declined: the asker is told, as Esc in the terminal tells it\n" });
		const envelope = await call;
		expect(envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [] });
		expect(envelope.note).toContain("The user declined the question through the link the notify command sent.");
		await until(() => ntfy.received.length === 2, "the end update", 5_000);
		expect(ntfy.received[1]!.json.title).toBe("writer: cancelled from outside the terminal");
	});

	it("late: the same message says the asker stopped waiting, its buttons still answer, and the end replaces it", async () => {
		const ntfy = await fakeNtfy();
		servers.push(ntfy);
		const r = relay({}, { book: new RequestBook(readLateConfig({})) });
		const page = await startWebPage({
			handle: r.handle,
			address: { host: "127.0.0.1", port: 0, loopback: true },
			notifyCommand: () => undefined,
			ntfy: { server: `${ntfy.origin}/`, topic: "cb" },
			notifyAfterMs: () => 0,
		});
		try {
			const call = r.ask([{ question: "Which?", options: ["a", "b"] }], { label: "planner", budgetMs: 1_000, dialogTimeoutMs: 60_000 });
			await until(() => ntfy.received.length === 1, "the publish", 5_000);
			expect((await call).status).toBe("timeout");
			await until(() => ntfy.received.length === 2, "the late update", 5_000);
			const [asked, late] = ntfy.received.map((m) => m.json);
			expect(late).toEqual({ ...asked, message: "Which?\n• a\n• b\n\nTime: the asker's call stopped waiting; an answer still reaches it, as a message" });
			expect(await pressAction(late!.actions![1]!)).toEqual({ status: 200, body: "answered: b\n" });
			await until(() => ntfy.received.length === 3, "the end update", 5_000);
			expect(ntfy.received[2]!.json).toMatchObject({ sequence_id: asked!.sequence_id, title: "planner: answered through the link the notify command sent" });
		} finally {
			r.role.release("quit", "test over");
			await page.close();
		}
	});

	it("a server in trouble is tried again a bounded number of times; a refusal is not; one warning, never a throw", async () => {
		const ntfy = await fakeNtfy({ token: "right" });
		servers.push(ntfy);
		const warnings: string[] = [];
		const good = new NtfyChannel({ server: `${ntfy.origin}/`, topic: "cb", token: "right" }, { retryMs: 10, warn: (w) => warnings.push(w) });
		ntfy.fail(2);
		expect(await good.publish({ topic: "cb", title: "t", message: "m", sequence_id: "s1" })).toBe(true);
		expect(ntfy.received).toHaveLength(1);
		ntfy.fail(10);
		expect(await good.publish({ topic: "cb", title: "t", message: "m", sequence_id: "s2" })).toBe(false);
		expect(warnings).toEqual([`checkpoint-bridge: publishing to ntfy failed (${ntfy.origin}/ answered 503); the request is unaffected`]);
		ntfy.fail(0);
		const wrong = new NtfyChannel({ server: `${ntfy.origin}/`, topic: "cb", token: "wrong" }, { retryMs: 10_000, warn: (w) => warnings.push(w) });
		const started = Date.now();
		expect(await wrong.publish({ topic: "cb", title: "t", message: "m" })).toBe(false);
		expect(Date.now() - started).toBeLessThan(2_000);
		expect(await wrong.publish({ topic: "cb", title: "t", message: "m" })).toBe(false);
		expect(warnings.slice(1)).toEqual([`checkpoint-bridge: publishing to ntfy failed (${ntfy.origin}/ answered 403); the request is unaffected`]);
		const gone = new NtfyChannel({ server: "http://127.0.0.1:9/", topic: "cb" }, { retries: 1, retryMs: 10 });
		expect(await gone.publish({ topic: "cb", title: "t", message: "m" })).toBe(false);
	});

	it("a test notification carries one It works button; its press is said at the host, once", async () => {
		const ntfy = await fakeNtfy();
		servers.push(ntfy);
		const notices: string[] = [];
		const s = await pages.setup({ ntfy: { server: `${ntfy.origin}/`, topic: "cb" }, notifyCommand: () => undefined, notice: (m) => notices.push(m) });
		const said = await s.page.notifyTest("checkpoint-bridge");
		expect(said).toMatch(/^checkpoint-bridge: test notification: published to ntfy topic cb; its "It works" button answers at http:\/\/127\.0\.0\.1:\d+\/a\//);
		const [test] = ntfy.received;
		expect(test!.json.actions!.map((a) => a.label)).toEqual(["It works"]);
		expect(await pressAction(test!.json.actions![0]!)).toEqual({ status: 200, body: "it works: the terminal says this button was pressed\n" });
		expect(notices).toEqual([`checkpoint-bridge: the test notification's "It works" was pressed: a tap from your phone reaches this host`]);
		expect((await pressAction(test!.json.actions![0]!)).status).toBe(410);
		const none = await pages.setup({ ntfy: null, notifyCommand: () => undefined });
		expect(await none.page.notifyTest("checkpoint-bridge")).toContain(
			"no notification is set: set CHECKPOINT_BRIDGE_NTFY_URL (ntfy) or CHECKPOINT_BRIDGE_NOTIFY_COMMAND",
		);
	});
});

describe("links a phone can open", () => {
	it("a loopback link is named, with the ways that work and this machine's addresses listed; a public one is not", () => {
		const interfaces = {
			lo: [{ address: "127.0.0.1", family: "IPv4", internal: true }],
			eth0: [
				{ address: "192.168.1.20", family: "IPv4", internal: false },
				{ address: "fe80::1", family: "IPv6", internal: false },
			],
			tailscale0: [{ address: "100.101.102.103", family: "IPv4", internal: false }],
		} as unknown as Parameters<typeof unreachableLinksWarning>[2];
		const warning = unreachableLinksWarning("http://127.0.0.1:8787/t/x/", "the links CHECKPOINT_BRIDGE_NTFY_URL sends", interfaces)!;
		expect(warning).toContain("the links CHECKPOINT_BRIDGE_NTFY_URL sends point at this machine's loopback (http://127.0.0.1:8787)");
		expect(warning).toContain("CHECKPOINT_BRIDGE_WEB_PUBLIC_URL");
		expect(warning).toContain("tailscale serve --bg 8787");
		expect(warning).toContain("reverse proxy");
		expect(warning).toContain("192.168.1.20 (eth0), 100.101.102.103 (tailscale0, tailnet)");
		expect(warning).not.toContain("fe80");
		expect(unreachableLinksWarning("http://localhost:1/", "x", interfaces)).toBeDefined();
		expect(unreachableLinksWarning("https://box.tailnet.ts.net/t/x/", "x", interfaces)).toBeUndefined();
		expect(unreachableLinksWarning("http://192.168.1.20:8787/t/x/", "x", interfaces)).toBeUndefined();
	});
});
