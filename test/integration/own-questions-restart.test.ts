/**
 * Issue 33 item 4 on the real pi CLI: the host session's own question survives a crash. pi in RPC
 * mode with a session file asks its own question; pi is killed (SIGKILL); `pi --continue` opens the
 * question again, marked as asked before the restart; the answer arrives as exactly one message in
 * the session file; a reopened question the human dismisses does not open again.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { baseArgs, createPiEnv, isDialog, type PiEnv, PiRpc } from "./harness/pi-cli.ts";

const QUESTION = "Which database should the service use?";
let piEnv: PiEnv | undefined;
let running: PiRpc | undefined;

afterEach(async () => {
	await running?.close();
	piEnv?.cleanup();
	running = undefined;
	piEnv = undefined;
});

/** pi in RPC mode with its session kept in `sessions` (the suite's runs otherwise keep none). */
function startPi(env: PiEnv, extra: string[] = []): PiRpc {
	const args = [...baseArgs().filter((arg) => arg !== "--no-session"), "--session-dir", join(env.root, "sessions"), ...extra];
	running = new PiRpc(env, args);
	return running;
}

type Entry = { type: string; customType?: string; data?: { requestId?: string }; message?: { role?: string; customType?: string } };
function sessionEntries(env: PiEnv): Entry[] {
	const dir = join(env.root, "sessions");
	const files = readdirSync(dir, { recursive: true })
		.map(String)
		.filter((f) => f.endsWith(".jsonl"));
	expect(files).toHaveLength(1);
	return readFileSync(join(dir, files[0]!), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as Entry);
}
const answerMessages = (entries: Entry[]) => entries.filter((e) => e.type === "custom_message" && e.customType === "checkpoint-bridge:answer");

/** `pi --continue`: the question opens again, marked as asked before the restart; answered, it is one message in the session. */
async function answerReopened(env: PiEnv, value: string): Promise<void> {
	const pi = startPi(env, ["--continue"]);
	const again = await pi.waitForDialog({ timeoutMs: 60_000 });
	expect(again.title).toContain(QUESTION);
	expect(JSON.stringify(again)).toContain("asked before the restart");
	const from = pi.mark();
	pi.answer(again, value);
	await pi.waitFor((f) => f.type === "agent_end", { from, timeoutMs: 60_000 });
	await pi.close();
	const messages = answerMessages(sessionEntries(env));
	expect(messages).toHaveLength(1);
	expect(JSON.stringify(messages[0])).toContain(value);
}

/** One more `pi --continue`: no dialog opens, and the session still holds exactly one answer message. */
async function expectNothingReopens(env: PiEnv): Promise<void> {
	const pi = startPi(env, ["--continue"]);
	await pi.command("get_state");
	await new Promise((r) => setTimeout(r, 1_500));
	expect(pi.frames.filter(isDialog)).toHaveLength(0);
	await pi.close();
	expect(answerMessages(sessionEntries(env))).toHaveLength(1);
}

describe("the host session's own question across a crash (pi --continue)", () => {
	it("opens again after SIGKILL, marked as asked before the restart; the answer is one message, not repeated at the next --continue", async () => {
		piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } } });
		const pi = startPi(piEnv);
		await pi.prompt("pick a database");
		const first = await pi.waitForDialog({ timeoutMs: 60_000 });
		expect(first.title).toContain(QUESTION);
		pi.kill("SIGKILL");
		await pi.exited;

		await answerReopened(piEnv, "Postgres");

		// Once more: nothing is open, nothing is delivered again.
		await expectNothingReopens(piEnv);
	}, 180_000);

	it("a reopened question the human dismisses does not open on the next --continue", async () => {
		piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } } });
		let pi = startPi(piEnv);
		await pi.prompt("pick a database");
		await pi.waitForDialog({ timeoutMs: 60_000 });
		pi.kill("SIGKILL");
		await pi.exited;

		pi = startPi(piEnv, ["--continue"]);
		const again = await pi.waitForDialog({ timeoutMs: 60_000 });
		const from = pi.mark();
		pi.cancel(again);
		await pi.waitFor((f) => f.type === "message_end" && f.message?.customType === "checkpoint-bridge:answer", { from, timeoutMs: 30_000 });
		await pi.close();

		await expectNothingReopens(piEnv);
	}, 180_000);

	it("opens again after a quit (stdin closed while the question is open) and is answered once", async () => {
		piEnv = createPiEnv({ script: { main: { ask: { questions: [{ question: QUESTION, options: ["Postgres", "SQLite"] }] } } } });
		const pi = startPi(piEnv);
		await pi.prompt("pick a database");
		await pi.waitForDialog({ timeoutMs: 60_000 });
		await pi.close();

		await answerReopened(piEnv, "SQLite");
	}, 180_000);
});
