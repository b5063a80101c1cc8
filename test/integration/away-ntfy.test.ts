/**
 * ntfy built in, on a real `pi --mode rpc` host with the page running and a stand-in of ntfy's
 * JSON API (test/support/ntfy.ts): the host publishes each relayed request, the test presses its
 * `http` buttons as the phone does (a POST to the action's URL), answers and declines, and the end
 * replaces the message under the same sequence id; a question, an option and an asker naming a
 * secret file with `@` never bring the file into a publish. One host for the file: the loopback
 * warning at its claim and `/checkpoints notify test`, whose "It works" press arrives as a notice.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeNtfy, pressAction } from "../support/ntfy.ts";
import { tempDir } from "../support/temp-dir.ts";
import { until } from "../support/until.ts";
import { awayAsk, writeAwayAsker } from "./harness/away-asker.ts";
import { isNotify, type PiRpc, PiRpcFixture } from "./harness/pi-cli.ts";

describe("ntfy built in, pi --mode rpc host", () => {
	const run = new PiRpcFixture();
	let ntfy: Awaited<ReturnType<typeof fakeNtfy>>;
	let pi: PiRpc;
	const secret = join(tempDir("cb-ntfy-secret-"), "secret.txt");
	const content = "private-file-content-5f0c2a";
	beforeAll(async () => {
		writeFileSync(secret, `${content}\n`);
		ntfy = await fakeNtfy({ token: "tk_topic" });
		const piEnv = run.createEnv({
			env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0", CHECKPOINT_BRIDGE_NTFY_URL: `${ntfy.origin}/cb-topic`, CHECKPOINT_BRIDGE_NTFY_TOKEN: "tk_topic" },
		});
		pi = run.startPi({ args: ["--extension", writeAwayAsker(piEnv)] });
		await pi.command("get_state", {}, 90_000);
	}, 120_000);
	afterAll(async () => {
		await run.stop();
		await ntfy.close();
	});
	const published = async (count: number) => {
		await until(() => ntfy.received.length >= count, `publish ${count}`, 15_000);
		return ntfy.received[count - 1]!.json;
	};

	it("publishes each relayed request by ntfy's JSON API; the phone's buttons answer and decline; the end replaces the message; no question reads a file", async () => {
		const planner = await awayAsk(pi, `@${secret}`, [{ question: `@${secret}`, options: [`@${secret}`, "SQLite"], recommended: "SQLite" }]);
		const asked = await published(1);
		expect(asked).toMatchObject({ topic: "cb-topic", title: expect.stringMatching(/^@.*secret\.txt asks \(.+\)$/), tags: ["question"] });
		expect(asked.message).toMatch(/^@.*secret\.txt\n• SQLite \(recommended\)\n• @.*secret\.txt\n\nTime: (2:00|1:5\d) left$/);
		const origin = new URL(asked.click!).origin;
		expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		expect(asked.actions!.map((a) => [a.action, a.label, a.method, a.clear])).toEqual([
			["http", "SQLite", "POST", true],
			["http", `@${secret}`, "POST", true],
			["http", "Decline", "POST", true],
		]);
		for (const a of asked.actions!) expect(new URL(a.url!).origin).toBe(origin);
		// The phone presses "SQLite": the answer reaches the asker as the recommendation taken.
		expect(await pressAction(asked.actions![0]!)).toEqual({ status: 200, body: "answered: SQLite\n" });
		expect(await planner.result).toMatchObject({ status: "ok", answers: [{ answer: "SQLite", kind: "option", source: "web", recommended: true }] });
		const ended = await published(2);
		expect(ended).toEqual({
			topic: "cb-topic",
			sequence_id: asked.sequence_id,
			title: `@${secret}: answered through the link the notify command sent`,
			message: `@${secret}`,
			priority: 2,
		});
		expect((await pressAction(asked.actions![2]!)).status).toBe(410);

		// Decline on the next one: Esc's envelope, saying where.
		const reviewer = await awayAsk(pi, "reviewer", [{ question: "Deploy now?", kind: "confirm" }]);
		const confirm = await published(3);
		expect(confirm.actions!.map((a) => a.label)).toEqual(["Yes", "No", "Decline"]);
		expect(await pressAction(confirm.actions![2]!)).toEqual({ status: 200, body: "declined: the asker is told, as Esc in the terminal tells it\n" });
		const declined = await reviewer.result;
		expect(declined).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [] });
		expect(declined.note).toContain("The user declined the question through the link the notify command sent.");
		expect(await published(4)).toMatchObject({ sequence_id: confirm.sequence_id, title: "reviewer: cancelled from outside the terminal" });
		for (const message of ntfy.received) {
			expect(message.headers.authorization).toBe("Bearer tk_topic");
			expect(message.raw).not.toContain(content);
		}
	});

	it("the loopback warning at the claim and /checkpoints notify test over RPC: its button's press is a notice", async () => {
		const warning = await pi.waitFor((f) => isNotify(f) && String(f.message).includes("point at this machine's loopback"), {
			from: 0,
			what: "the loopback warning",
		});
		expect(warning.notifyType).toBe("warning");
		expect(warning.message).toMatch(
			/^checkpoint-bridge: the links CHECKPOINT_BRIDGE_NTFY_URL sends point at this machine's loopback \(http:\/\/127\.0\.0\.1:\d+\)/,
		);
		expect(warning.message).toContain("CHECKPOINT_BRIDGE_WEB_PUBLIC_URL");
		expect(warning.message).toContain("tailscale serve --bg");
		expect(pi.frames.filter((f) => isNotify(f) && String(f.message).includes("point at this machine's loopback"))).toHaveLength(1);

		const from = pi.mark();
		const before = ntfy.received.length;
		await pi.prompt("/checkpoints notify test");
		const said = await pi.waitFor((f) => isNotify(f) && String(f.message).startsWith("checkpoint-bridge: test notification:"), {
			from,
			what: "the test's report",
		});
		expect(said.message).toContain("published to ntfy topic cb-topic");
		const test = await published(before + 1);
		expect(test.actions!.map((a) => a.label)).toEqual(["It works"]);
		expect(await pressAction(test.actions![0]!)).toEqual({ status: 200, body: "it works: the terminal says this button was pressed\n" });
		const pressed = await pi.waitFor((f) => isNotify(f) && String(f.message).includes('"It works" was pressed'), { from, what: "the press's notice" });
		expect(pressed.message).toBe(`checkpoint-bridge: the test notification's "It works" was pressed: a tap from your phone reaches this host`);
	});
});
