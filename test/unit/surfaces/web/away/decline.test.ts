/**
 * Decline on a real page and relay: the card's `{ requestId, decline: true }` and a request's
 * one-tap decline URL end it as the terminal's Esc does, saying where; every refusal changes
 * nothing, and random bodies never get a 5xx nor end a request. Then the commands a phone's set-up
 * needs: `/checkpoints web qr` and `/checkpoints notify test` on loopback, and the notify command's
 * `test` run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pressAction } from "../../../../support/ntfy.ts";
import { tempDir } from "../../../../support/temp-dir.ts";
import { until } from "../../../../support/until.ts";
import { loadExtensionCopy, playedSessions } from "../../../support/fake-pi.ts";
import { fakeUI } from "../../../support/fake-ui.ts";
import { propertyRun } from "../../../support/property-policy.ts";
import { linkPathOf, pagePath, postAnswer, raw, trackedPages } from "../support.ts";

const pages = trackedPages();
const sessions = playedSessions();
afterEach(async () => {
	await pages.closeAll();
	await sessions.shutdownAll();
	vi.unstubAllEnvs();
});

const answerPath = (page: Parameters<typeof pagePath>[0]) => `${pagePath(page)}answer`;

describe("Decline", () => {
	it("the card's decline ends the request as Esc does (timeout-or-cancelled, dismissed), its note naming the page; through a request link, that link", async () => {
		const s = await pages.setup();
		const first = await s.ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { label: "planner" });
		const declined = await postAnswer(s.page, answerPath(s.page), { requestId: first.requestId, decline: true });
		expect(declined.status).toBe(200);
		const envelope = await first.call;
		expect(envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [] });
		expect(envelope.note).toContain("The user declined the question on the page.");
		const second = await s.ask([{ question: "Name?" }], { label: "writer" });
		expect((await postAnswer(s.page, `${linkPathOf(s.page, second.requestId)}answer`, { decline: true })).status).toBe(200);
		expect((await second.call).note).toContain("The user declined the question through the request's own link.");
	});

	it("refuses, each with its reason and nothing ended: decline not true, decline with answers, another request through a link, a foreign origin, an ended request", async () => {
		const s = await pages.setup();
		const open = await s.ask([{ question: "Deploy now?", kind: "confirm" }], { label: "reviewer" });
		const other = await s.ask([{ question: "Name?" }], { label: "writer" });
		const refusals: [unknown, string, number, string][] = [
			[{ requestId: open.requestId, decline: "yes" }, answerPath(s.page), 400, "decline is true without answers"],
			[{ requestId: open.requestId, decline: true, answers: ["yes"] }, answerPath(s.page), 400, "decline is true without answers"],
			[{ requestId: open.requestId, decline: true }, `${linkPathOf(s.page, other.requestId)}answer`, 403, "this link answers its own request only"],
		];
		for (const [body, path, status, reason] of refusals) {
			const reply = await postAnswer(s.page, path, body);
			expect([reply.status, reply.body], JSON.stringify(body)).toEqual([status, expect.stringContaining(reason)]);
		}
		const foreign = await postAnswer(s.page, answerPath(s.page), { requestId: open.requestId, decline: true }, { origin: "https://attacker.example" });
		expect(foreign.status).toBe(403);
		expect(s.settled).toEqual([]);
		expect((await postAnswer(s.page, answerPath(s.page), { requestId: open.requestId, decline: true })).status).toBe(200);
		await open.call;
		const again = await postAnswer(s.page, answerPath(s.page), { requestId: open.requestId, decline: true });
		expect(again.status).toBe(409);
		expect(s.settled).toHaveLength(1);
	});

	it("a decline URL: a GET or HEAD only shows its one button, a POST declines once; every URL of the request dies with it", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { label: "planner" });
		const actions = s.page.actionsFor(requestId)!;
		expect(actions.decline.label).toBe("Decline");
		const path = new URL(actions.decline.answer).pathname;
		const shown = await raw(s.page, { path });
		expect(shown.status).toBe(200);
		expect(shown.body).toContain('<button type="submit" id="confirm">Decline</button>');
		expect(shown.body).toContain("Nothing is declined until you press the button.");
		expect((await raw(s.page, { path, method: "HEAD" })).status).toBe(200);
		expect(s.settled).toEqual([]);
		expect(await pressAction({ url: actions.decline.answer })).toEqual({ status: 200, body: "declined: the asker is told, as Esc in the terminal tells it\n" });
		expect(await call).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed" });
		expect((await pressAction({ url: actions.decline.answer })).status).toBe(410);
		expect((await pressAction({ url: actions.buttons[0]!.answer })).status).toBe(410);
	});

	it("random bodies to the answer route: never a 5xx, and a request ends only by a well-formed decline or answer", async () => {
		const s = await pages.setup();
		const { requestId, call } = await s.ask([{ question: "Name?" }], { label: "writer" });
		let ended = false;
		void call.then(() => (ended = true));
		const value = fc.oneof(fc.constant(true), fc.constant(false), fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
		await fc.assert(
			fc.asyncProperty(
				fc.record(
					{ requestId: fc.oneof(fc.constant(requestId), fc.string()), decline: value, answers: fc.option(value, { nil: undefined }) },
					{ requiredKeys: [] },
				),
				async (body) => {
					const valid =
						body.requestId === requestId &&
						((body.decline === true && body.answers === undefined) || (body.decline === undefined && Array.isArray(body.answers) && body.answers.length === 1));
					if (valid) return;
					const reply = await postAnswer(s.page, answerPath(s.page), body);
					expect(reply.status, JSON.stringify(body)).toBeLessThan(500);
					expect(reply.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
				},
			),
			propertyRun(150),
		);
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(ended).toBe(false);
	});
});

describe("a phone's set-up, in the terminal", () => {
	async function host() {
		const fake = fakeUI();
		const s = sessions.play(await loadExtensionCopy(), { sessionId: "host", ui: fake.ui });
		await s.start();
		return { s, fake, said: () => fake.notices.map((n) => n.message) };
	}

	it("/checkpoints web qr and /checkpoints notify test on loopback say a phone cannot open the link; notify test without the page, or without a channel, says what is missing", async () => {
		const { s, fake, said } = await host();
		await s.command("checkpoints", "web off");
		await s.command("checkpoints", "notify test");
		expect(said().at(-1)).toContain("the answer page is not running: a notification's buttons and links need it");
		await s.command("checkpoints", "notify");
		expect(fake.notices.at(-1)).toMatchObject({ type: "warning", message: expect.stringContaining("/checkpoints notify test sends a test notification") });
		await s.command("checkpoints", "web");
		const before = fake.notices.length;
		await s.command("checkpoints", "web qr");
		const [warning] = fake.notices.slice(before);
		expect(warning).toMatchObject({ type: "warning", message: expect.stringContaining("this code and its link point at this machine's loopback") });
		expect(warning!.message).toContain("CHECKPOINT_BRIDGE_WEB_PUBLIC_URL");
		delete process.env.CHECKPOINT_BRIDGE_NTFY_URL;
		delete process.env.CHECKPOINT_BRIDGE_NOTIFY_COMMAND;
		await s.command("checkpoints", "notify test");
		expect(said().at(-2)).toContain("the test notification's button and links point at this machine's loopback");
		expect(said().at(-1)).toContain("no notification is set: set CHECKPOINT_BRIDGE_NTFY_URL (ntfy) or CHECKPOINT_BRIDGE_NOTIFY_COMMAND");
		await s.command("checkpoints", "web off");
	});

	it("at the claim: ntfy without the page is named; a wrong CHECKPOINT_BRIDGE_NTFY_URL is a warning naming it; with the page on loopback, its links are said to be unreachable, once", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_NTFY_URL", "https://ntfy.sh/my-topic");
		const first = await host();
		expect(first.said()).toContain(
			"checkpoint-bridge: CHECKPOINT_BRIDGE_NTFY_URL is set, but the answer page is not running: ntfy's buttons and links need it (set CHECKPOINT_BRIDGE_WEB=127.0.0.1:0, or /checkpoints web)",
		);
		await sessions.shutdownAll();
		vi.stubEnv("CHECKPOINT_BRIDGE_NTFY_URL", "ntfy.sh/my-topic");
		vi.stubEnv("CHECKPOINT_BRIDGE_WEB", "127.0.0.1:0");
		const second = await host();
		const warnings = second.fake.notices.filter((n) => n.type === "warning").map((n) => n.message);
		expect(warnings).toContainEqual(expect.stringContaining('CHECKPOINT_BRIDGE_NTFY_URL="ntfy.sh/my-topic" is not a URL'));
		expect(warnings.filter((w) => w.includes("the links CHECKPOINT_BRIDGE_NTFY_URL sends point at this machine's loopback"))).toHaveLength(1);
	});

	it("the notify command's test run: event test, one It works button; its press is said at the host", async () => {
		const dir = tempDir("cb-notify-test-");
		const out = join(dir, "run");
		const notices: string[] = [];
		const s = await pages.setup({
			ntfy: null,
			notifyCommand: () =>
				`printf '%s\\n%s\\n%s' "$CHECKPOINT_BRIDGE_EVENT" "$CHECKPOINT_BRIDGE_NTFY_ACTIONS" "$CHECKPOINT_BRIDGE_ACTIONS" > ${JSON.stringify(out)}`,
			notice: (m) => notices.push(m),
		});
		expect(await s.page.notifyTest("checkpoint-bridge")).toMatch(
			/^checkpoint-bridge: test notification: the notify command ran; its "It works" button answers at /,
		);
		const [event, ntfy, actions] = readFileSync(out, "utf8").split("\n");
		expect(event).toBe("test");
		const [button] = JSON.parse(ntfy!) as { label: string; url: string }[];
		expect(button!.label).toBe("It works");
		expect(JSON.parse(actions!)).toMatchObject({ requestId: "test", buttons: [{ label: "It works", answer: button!.url }] });
		expect((await pressAction(button!)).status).toBe(200);
		await until(() => notices.length === 1, "the press's notice");
		expect(notices[0]).toContain('"It works" was pressed');
	});
});
