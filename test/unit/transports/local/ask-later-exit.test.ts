/**
 * A request asked with `wait: false` from another process does not hold that process once the host has
 * taken it: a `pi -p` run ends when its turn does, its connection closes, and the host's session gets
 * the request's end, forwarded, naming the asker. Held open, the process outlived its session and
 * took the answer into a session that had ended: the human's answer reached nobody.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { closePooledConnections } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { until } from "../../../support/until.ts";
import { hostWithEndpoint } from "../../support/endpoint-host.ts";
import { hostSessionMessages } from "../../support/host-messages.ts";
import { openConnections } from "../../support/server-sockets.ts";

const HOST = "host-session";
const hostMessages = hostSessionMessages(HOST);
const CLIENT = fileURLToPath(new URL("../../../../extensions/checkpoint-bridge/transports/local/client.ts", import.meta.url));

/** An asker process: asks once with `later`, prints "taken" at the host's first reply, and does nothing else. */
const ASKER = `
const { askRemote } = await import(process.argv[1]);
let taken = false;
void askRemote(process.argv[2], {
	asker: { label: "print-run", sessionId: "print-run-session" },
	questions: [{ question: "Deploy to prod?", options: ["yes", "no"] }],
	budgetMs: 60000,
	dialogTimeoutMs: 0,
	later: true,
	onProgress: () => { if (!taken) { taken = true; console.log("taken"); } },
});
`;

/** An asker process: asks once with `later`, then, once that call no longer holds it, a question it waits for, with no budget. */
const ASKER_THEN_WAITS = `
const { askRemote } = await import(process.argv[1]);
const asker = { label: "print-run", sessionId: "print-run-session" };
let taken = false;
void askRemote(process.argv[2], {
	asker,
	questions: [{ question: "Deploy to prod?", options: ["yes", "no"] }],
	budgetMs: 60000,
	dialogTimeoutMs: 0,
	later: true,
	onProgress: () => {
		if (taken) return;
		taken = true;
		setTimeout(() => {
			void askRemote(process.argv[2], { asker, questions: [{ question: "Roll back?", options: ["yes", "no"] }], budgetMs: 0, dialogTimeoutMs: 0 }).then((envelope) =>
				console.log("second: " + envelope.status),
			);
		}, 300);
	},
});
`;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
	closePooledConnections();
	hostMessages.length = 0;
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The asker script `script` in a process of its own, on the served endpoint: its output so far, and its exit. */
function askerProcess(endpoint: string, script: string) {
	const child = spawn(process.execPath, ["--input-type=module", "--no-warnings", "-e", script, CLIENT, endpoint], { stdio: ["ignore", "pipe", "pipe"] });
	cleanups.push(() => child.kill("SIGKILL"));
	const run = {
		out: "",
		exitCode: undefined as number | null | undefined,
		exited: new Promise<number | null>((resolve) => child.on("exit", (code) => resolve((run.exitCode = code)))),
	};
	child.stdout.on("data", (chunk: Buffer) => (run.out += chunk.toString()));
	child.stderr.on("data", (chunk: Buffer) => (run.out += chunk.toString()));
	return run;
}

describe("ask now, answer later from another process", () => {
	it("the asker's process is not held once the host has its request: it exits, and the answer given later reaches the host's session, forwarded", async () => {
		const served = await hostWithEndpoint(cleanups, { sessionId: HOST });
		const asker = askerProcess(served.endpoint.endpoint, ASKER);
		await served.feed.next();
		await until(() => asker.out.includes("taken"), "the host's first reply in the asker");
		const code = await Promise.race([asker.exited, new Promise<string>((resolve) => setTimeout(() => resolve("still running"), 5_000))]);
		expect(code, asker.out).toBe(0);
		await until(() => openConnections(served.endpoint.endpoint) === 0, "the connection's close at the host");
		served.fake.current()!.answer("no");
		await until(() => hostMessages.length > 0, "the message in the host's session");
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject({ forwarded: true, envelope: { status: "ok", answers: [{ answer: "no" }] } });
		expect(hostMessages[0]!.details.asker).toContain("print-run");
	}, 30_000);

	it("a call it waits for on the same connection holds the process again, after one that was let go", async () => {
		const served = await hostWithEndpoint(cleanups, { sessionId: HOST });
		const asker = askerProcess(served.endpoint.endpoint, ASKER_THEN_WAITS);
		const first = await served.feed.next();
		await until(() => (served.handle.snapshot()?.open.length === 2 ? true : undefined), "the waiting question at the host");
		await new Promise((resolve) => setTimeout(resolve, 1_500));
		expect(asker.exitCode, asker.out).toBeUndefined();
		first.answer("no");
		(await served.feed.next()).answer("yes");
		expect(await asker.exited, asker.out).toBe(0);
		expect(asker.out).toContain("second: ok");
	}, 30_000);
});
