/**
 * Nothing lost on the way back: the end of a request asked with `wait: false` (and a late end) goes to
 * the asker's process in a frame the asker acks once it has recorded the end in its session. An asker
 * that ends between receiving and recording, says it cannot record (its session is gone), or sends
 * no ack within the bound: the host's session gets the end, once. An asker that records it: the host's
 * session gets nothing. Real endpoint, real sockets, asker processes of their own.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { closePooledConnections } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { until } from "../../../support/until.ts";
import { hostWithEndpoint } from "../../support/endpoint-host.ts";
import { hostSessionMessages } from "../../support/host-messages.ts";
import { type RawFrame, rawConnection, tokenAt } from "../../support/raw-endpoint.ts";

const HOST = "host-session";
const hostMessages = hostSessionMessages(HOST);
const CLIENT = fileURLToPath(new URL("../../../../extensions/checkpoint-bridge/transports/local/client.ts", import.meta.url));
/** The bound the endpoint waits for an ack in these tests. */
const ACK_WAIT_MS = 400;

/**
 * An asker process whose session records ends the way argv[3] says: `kill` (the process is killed
 * between receiving the end and recording it), `gone` (its session is gone: it cannot record),
 * `record` (recorded), `hang` (its event loop never comes back). It asks once with `wait: false`
 * and stays running, as a runner whose child has finished may, after the host has taken the request.
 */
const ASKER = `
const { askRemote } = await import(process.argv[1]);
const mode = process.argv[3];
setInterval(() => {}, 1000);
let taken = false;
void askRemote(process.argv[2], {
	asker: { label: "runner", sessionId: "runner-session" },
	questions: [{ question: "Deploy to prod?", options: ["yes", "no"] }],
	budgetMs: 60000,
	dialogTimeoutMs: 0,
	later: true,
	onProgress: () => { if (!taken) { taken = true; console.log("taken"); } },
	recordEnd: (envelope) => {
		console.log("received " + envelope.status);
		if (mode === "kill") process.kill(process.pid, "SIGKILL");
		if (mode === "hang") for (;;) {}
		if (mode === "gone") return false;
		console.log("recorded");
		return true;
	},
});
`;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
	closePooledConnections();
	hostMessages.length = 0;
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function askerProcess(endpoint: string, mode: "kill" | "gone" | "record" | "hang") {
	const child = spawn(process.execPath, ["--input-type=module", "--no-warnings", "-e", ASKER, CLIENT, endpoint, mode], { stdio: ["ignore", "pipe", "pipe"] });
	cleanups.push(() => child.kill("SIGKILL"));
	const run = {
		out: "",
		signal: undefined as NodeJS.Signals | null | undefined,
		exited: new Promise<void>((resolve) => child.on("exit", (_code, signal) => resolve(void (run.signal = signal)))),
	};
	child.stdout.on("data", (chunk: Buffer) => (run.out += chunk.toString()));
	child.stderr.on("data", (chunk: Buffer) => (run.out += chunk.toString()));
	return run;
}

/** A host serving the endpoint, an asker process in `mode` whose request it holds, and the human's answer to give. */
async function askedLater(mode: "kill" | "gone" | "record" | "hang") {
	const served = await hostWithEndpoint(cleanups, { sessionId: HOST, ackWaitMs: ACK_WAIT_MS });
	const asker = askerProcess(served.endpoint.endpoint, mode);
	const dialog = await served.feed.next();
	await until(() => asker.out.includes("taken"), "the receipt in the asker");
	return { ...served, asker, answer: () => dialog.answer("no") };
}

const forwardedOk = { forwarded: true, envelope: { status: "ok", answers: [{ question: "Deploy to prod?", answer: "no" }] } };

describe("a queued answer acknowledged once recorded (local endpoint)", () => {
	it("an asker killed between receiving the end and recording it: the host's session gets it, forwarded, once", async () => {
		const run = await askedLater("kill");
		run.answer();
		await run.asker.exited;
		expect(run.asker.signal, run.asker.out).toBe("SIGKILL");
		expect(run.asker.out).toContain("received ok");
		expect(run.asker.out).not.toContain("recorded");
		await until(() => hostMessages.length > 0, "the message in the host's session");
		await new Promise((resolve) => setTimeout(resolve, ACK_WAIT_MS * 2));
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject(forwardedOk);
		expect(hostMessages[0]!.details.asker).toContain("runner");
	}, 30_000);

	it("an asker whose session is gone while its process runs: it says so, and the host's session gets it at once, not after the bound", async () => {
		const run = await askedLater("gone");
		const answeredAt = Date.now();
		run.answer();
		await until(() => hostMessages.length > 0, "the message in the host's session");
		expect(Date.now() - answeredAt).toBeLessThan(ACK_WAIT_MS);
		expect(run.asker.out).toContain("received ok");
		await new Promise((resolve) => setTimeout(resolve, ACK_WAIT_MS * 2));
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject(forwardedOk);
	}, 30_000);

	it("an asker that records the end: the host's session gets nothing", async () => {
		const run = await askedLater("record");
		run.answer();
		await until(() => run.asker.out.includes("recorded"), "the record in the asker");
		await new Promise((resolve) => setTimeout(resolve, ACK_WAIT_MS * 3));
		expect(hostMessages).toEqual([]);
	}, 30_000);

	it("an asker that never acks (its event loop hangs): the host's session gets it once the bound has passed", async () => {
		const run = await askedLater("hang");
		const answeredAt = Date.now();
		run.answer();
		await until(() => hostMessages.length > 0, "the message in the host's session");
		expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(ACK_WAIT_MS);
		expect(hostMessages).toHaveLength(1);
		expect(hostMessages[0]!.details).toMatchObject(forwardedOk);
	}, 30_000);
});

/** A raw client of `served`'s endpoint past the handshake: `send` takes a frame. */
async function provenConnection(endpoint: { address: { socketPath: string; tokenPath: string } }) {
	const raw = rawConnection(endpoint.address.socketPath);
	await raw.handshake(await tokenAt(endpoint.address.tokenPath));
	return { frame: raw.frame, send: (frame: RawFrame) => raw.send(`${JSON.stringify(frame)}\n`), close: () => raw.socket.destroy() };
}

describe("the ack on the wire", () => {
	const request = (id: string, acks: boolean) => ({
		type: "request",
		v: FRAME_VERSION.endpoint,
		id,
		asker: { label: "raw", sessionId: "raw-session" },
		questions: [{ question: "Deploy to prod?", options: ["yes", "no"] }],
		deadline: Date.now() + 60_000,
		dialogTimeoutMs: 0,
		createdAt: Date.now(),
		later: true,
		...(acks ? { acks: true } : {}),
	});

	it("an asker that says it acks gets the end marked ack; its ack that says not recorded sends it to the host's session", async () => {
		const served = await hostWithEndpoint(cleanups, { sessionId: HOST, ackWaitMs: 60_000 });
		const raw = await provenConnection(served.endpoint);
		cleanups.push(() => raw.close());
		raw.send(request("r-1", true));
		(await served.feed.next()).answer("yes");
		const result = await raw.frame((f) => f.type === "result");
		expect(result).toMatchObject({ id: "r-1", status: "ok", ack: true });
		expect(hostMessages).toEqual([]);
		raw.send({ type: "ack", v: FRAME_VERSION.endpoint, id: "r-1", recorded: false });
		await until(() => hostMessages.length > 0, "the message in the host's session");
		expect(hostMessages[0]!.details).toMatchObject({ forwarded: true, envelope: { status: "ok", answers: [{ answer: "yes" }] } });
	});

	it("an older asker (no acks) gets the end unmarked, and nothing goes to the host's session while its connection is open", async () => {
		const served = await hostWithEndpoint(cleanups, { sessionId: HOST, ackWaitMs: 100 });
		const raw = await provenConnection(served.endpoint);
		cleanups.push(() => raw.close());
		raw.send(request("r-2", false));
		(await served.feed.next()).answer("no");
		const result = await raw.frame((f) => f.type === "result");
		expect(result).toMatchObject({ id: "r-2", status: "ok" });
		expect(result).not.toHaveProperty("ack");
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(hostMessages).toEqual([]);
	});

	it("an ack of nothing awaited changes nothing, and an ack that does not check out is refused", async () => {
		const served = await hostWithEndpoint(cleanups, { sessionId: HOST });
		const raw = await provenConnection(served.endpoint);
		cleanups.push(() => raw.close());
		raw.send({ type: "ack", v: FRAME_VERSION.endpoint, id: "nothing", recorded: true });
		raw.send({ type: "ack", v: FRAME_VERSION.endpoint, id: "nothing", recorded: "yes" });
		const error = await raw.frame((f) => f.type === "error");
		expect(error).toMatchObject({ code: "malformed", message: expect.stringContaining("ack.recorded must be a boolean") });
	});
});
