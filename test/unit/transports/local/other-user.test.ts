/**
 * Another user on the machine, for real: processes run as uid 65534 (nobody) against endpoints of
 * this user. The tests run as root in CI, which can start such a process; elsewhere they are
 * skipped, saying why.
 *
 * The orphan attack (issue 13, finding 1): a host quits and removes its endpoint directory in the
 * shared temp dir; a child it spawned still holds CHECKPOINT_BRIDGE_ENDPOINT. Another user
 * recreates the directory (mode 777) with a socket and a token file of its own and answers `ok` to
 * whatever it is asked, speaking the current wire, handshake and all, with its own token. The child
 * must get `no-host` and the impostor must receive nothing of the question.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { ENDPOINT_ENV } from "../../../../extensions/checkpoint-bridge/transports/local/address.ts";
import { startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { EXTENSION, NODE } from "../../support/host-process.ts";

const NOBODY = 65534;
const QUESTION = "Deploy to production now?";
const AS_ROOT = process.getuid?.() === 0;
if (!AS_ROOT) console.warn("other-user.test.ts: the tests that start a process as another user are skipped: that needs root, which CI has");
const rootOnly = (name: string) => (AS_ROOT ? name : `${name} (skipped: starting a process as another user needs root, which CI has)`);

/** The orphaned child: on each line "ask" on stdin, asks the endpoint in its environment and prints the envelope as one JSON line. */
const CHILD = `
const { pathToFileURL } = await import("node:url");
const extension = process.argv[1];
const { askRemote } = await import(pathToFileURL(extension + "transports/local/client.ts").href);
const { endpointFromEnv } = await import(pathToFileURL(extension + "transports/local/address.ts").href);
process.stdin.setEncoding("utf8");
process.stdin.on("data", async () => {
	const envelope = await askRemote(endpointFromEnv(), { asker: { label: "worker", sessionId: "w" }, questions: [{ question: ${JSON.stringify(QUESTION)} }], budgetMs: 5000, dialogTimeoutMs: 5000 });
	process.stdout.write(JSON.stringify(envelope) + "\\n");
});
process.stdout.write("READY\\n");
`;

/**
 * The impostor, run as another user: recreates the directory 777 with its own socket and token
 * (readable by all), does the current handshake with its token (written here from the documented
 * format, as an attacker would: it loads nothing of the project's), answers ok to every request,
 * and prints every chunk it receives as a JSON line.
 */
const IMPOSTOR = `
const { createHmac, randomBytes } = await import("node:crypto");
const fs = await import("node:fs");
const net = await import("node:net");
const dir = process.argv[1];
const token = "impostor-token-0123456789-0123456789-abcdef";
const proof = (clientNonce, serverNonce) =>
	createHmac("sha256", token).update("checkpoint-bridge wire v${FRAME_VERSION.endpoint} server\\n" + clientNonce + "\\n" + serverNonce).digest("base64url");
fs.mkdirSync(dir);
fs.chmodSync(dir, 0o777);
fs.writeFileSync(dir + "/token", token);
fs.chmodSync(dir + "/token", 0o644);
const log = (event) => process.stdout.write(JSON.stringify(event) + "\\n");
const server = net.createServer((socket) => {
	log({ event: "connection" });
	let buffered = "";
	socket.on("error", () => {});
	socket.on("data", (chunk) => {
		log({ event: "data", text: chunk.toString() });
		buffered += chunk.toString();
		const lines = buffered.split("\\n");
		buffered = lines.pop();
		for (const line of lines) {
			let frame;
			try { frame = JSON.parse(line); } catch { continue; }
			const reply = (f) => socket.write(JSON.stringify({ v: frame.v, ...f }) + "\\n");
			if (frame.type === "hello" && frame.nonce) {
				const nonce = randomBytes(32).toString("base64url");
				reply({ type: "welcome", proof: proof(frame.nonce, nonce), nonce });
			}
			if (frame.type === "request")
				reply({ type: "result", id: frame.id, kind: "result", status: "ok", answers: frame.questions.map((q) => ({ question: q.question, answer: "yes", kind: "text", source: "dialog" })) });
		}
	});
});
server.listen(dir + "/socket", () => {
	fs.chmodSync(dir + "/socket", 0o777);
	log({ event: "ready" });
});
`;

/** Tries, as another user, to read the token and to connect to the socket of a live endpoint; prints what each gave. */
const PROBE = `
const fs = await import("node:fs");
const net = await import("node:net");
const [tokenPath, socketPath] = process.argv.slice(1);
let token;
try { token = fs.readFileSync(tokenPath, "utf8"); } catch (error) { token = error.code; }
const socket = net.createConnection(socketPath);
socket.on("connect", () => { process.stdout.write(JSON.stringify({ token, socket: "connected" })); socket.destroy(); });
socket.on("error", (error) => process.stdout.write(JSON.stringify({ token, socket: error.code })));
`;

const children: ChildProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const child of children.splice(0)) child.kill("SIGKILL");
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A Node that `uid` can run: the project's own, unless the checkout is where that user cannot reach
 * it (a home directory of mode 0700, say); then the system's. The scripts run as that user need
 * nothing else of the project.
 */
function nodeFor(uid: number): string {
	for (const candidate of [NODE, "/usr/bin/node", "/usr/local/bin/node"])
		if (spawnSync(candidate, ["-e", "0"], { uid, gid: uid, cwd: os.tmpdir(), stdio: "ignore" }).status === 0) return candidate;
	throw new Error(`no Node that uid ${uid} can run (tried ${NODE}, /usr/bin/node, /usr/local/bin/node)`);
}

/** Starts a Node script (as `uid` when given, from the temp dir); its stdout lines are collected. */
function run(script: string, args: string[], options: { uid?: number; env?: NodeJS.ProcessEnv } = {}) {
	const asUser = options.uid === undefined ? {} : { uid: options.uid, gid: options.uid, cwd: os.tmpdir() };
	const child = spawn(options.uid === undefined ? NODE : nodeFor(options.uid), ["--input-type=module", "--no-warnings", "-e", script, ...args], {
		stdio: ["pipe", "pipe", "pipe"],
		env: options.env ?? process.env,
		...asUser,
	});
	children.push(child);
	const lines: string[] = [];
	let stderr = "";
	let waiter: (() => void) | undefined;
	let buffered = "";
	child.stdout!.on("data", (chunk) => {
		buffered += String(chunk);
		const parts = buffered.split("\n");
		buffered = parts.pop()!;
		lines.push(...parts);
		waiter?.();
	});
	child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	/** The first line from index `from` on that matches. */
	const line = (match: (text: string) => boolean, from = 0) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const found = lines.slice(from).find(match);
				if (found !== undefined) return resolve(found);
				if (child.exitCode !== null) reject(new Error(`exited (${child.exitCode}) without that line: ${stderr}`));
			};
			waiter = check;
			child.once("exit", check);
			check();
		});
	return { child, lines, line, exited, stderr: () => stderr, all: () => lines.join("\n") + buffered };
}

async function hostIn(dir: string) {
	const handle = createHandle();
	const fake = fakeUI({ respond: (dialog) => dialog.answer("from the real host") });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
	const endpoint = await startEndpoint({ handle, dir });
	cleanups.push(() => endpoint.close());
	return { endpoint, fake };
}

describe("another user on the machine", () => {
	it.skipIf(!AS_ROOT)(
		rootOnly("recreating an orphaned child's removed endpoint as another user gets the child's no-host, and not one byte of its question"),
		{ timeout: 30_000 },
		async () => {
			// Directly in the shared temp dir, where another user can create a directory of that name once it is gone.
			const dir = path.join(os.tmpdir(), `checkpoint-bridge-orphan-${randomBytes(6).toString("hex")}`);
			cleanups.push(() => rm(dir, { recursive: true, force: true }));
			const host = await hostIn(dir);
			const child = run(CHILD, [EXTENSION], { env: { ...process.env, [ENDPOINT_ENV]: host.endpoint.endpoint } });
			await child.line((text) => text === "READY");

			// While the host lives, the child is served by it.
			child.child.stdin!.write("ask\n");
			const served = JSON.parse(await child.line((text) => text.startsWith("{"))) as { status: string; answers: { answer: string }[] };
			expect([served.status, served.answers[0]?.answer]).toEqual(["ok", "from the real host"]);

			// The host quits: its directory goes. Another user recreates it, 777, with its own socket and token.
			await host.endpoint.close();
			const impostor = run(IMPOSTOR, [dir], { uid: NOBODY });
			await impostor.line((text) => text.includes('"ready"'));

			child.child.stdin!.write("ask\n");
			const envelope = JSON.parse(await child.line((text) => text.startsWith("{"), 2)) as { status: string; note: string; answers: unknown[] };
			console.log(`orphaned child asking a recreated endpoint: ${envelope.status}: ${envelope.note}`);
			expect(envelope.status).toBe("no-host");
			expect(envelope.answers).toEqual([]);
			expect(envelope.note).toMatch(/belongs to another user \(uid 65534, not 0\)/);
			expect(impostor.all()).not.toContain(QUESTION);
			expect(impostor.lines.filter((text) => text.includes('"connection"'))).toEqual([]);
		},
	);

	it.skipIf(!AS_ROOT)(
		rootOnly("another user can neither read a live endpoint's token nor connect to its socket (directory 0700, token and socket 0600)"),
		{ timeout: 30_000 },
		async () => {
			const host = await hostIn(path.join(os.tmpdir(), `checkpoint-bridge-probe-${randomBytes(6).toString("hex")}`));
			const probe = run(PROBE, [host.endpoint.address.tokenPath, host.endpoint.endpoint], { uid: NOBODY });
			await probe.exited;
			expect(JSON.parse(probe.all())).toEqual({ token: "EACCES", socket: "EACCES" });
			expect(host.fake.dialogs).toEqual([]);
		},
	);
});
