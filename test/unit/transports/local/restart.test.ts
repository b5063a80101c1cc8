/**
 * A host that restarts keeps its questions (local endpoint): an asker in another process whose host
 * goes away (killed, or quitting) waits for the next host within its grace, never past its budget,
 * and sends its request there again with the answers it was given: the next host shows only the
 * rest, marked as asked before the restart. Grace 0, or a process that never had a host, gives
 * `no-host` at once. A request sent again twice is shown once, and a re-sent request meets every
 * check and cap a new one meets.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import type { RelayProgress } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { addressOf, type EndpointAddress } from "../../../../extensions/checkpoint-bridge/transports/local/address.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { encodeFrame } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { clearHadHost, closePooledConnections } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { dialogFeed } from "../../support/dialog-feed.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { EXTENSION, hostProcessScript, killStarted, startScript } from "../../support/host-process.ts";
import { rawConnection, tokenAt } from "../../support/raw-endpoint.ts";

const cleanups: (() => Promise<unknown>)[] = [];
beforeEach(() => clearHadHost());
afterEach(async () => {
	killStarted();
	closePooledConnections();
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir() {
	const dir = await mkdtemp(path.join(os.tmpdir(), "cpb-restart-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	return dir;
}

/** A host in this process with its own handle, serving at `dir`. */
async function hostAt(dir: string, sessionId = "next-host") {
	const handle = createHandle();
	const feed = dialogFeed();
	const fake = fakeUI({ respond: feed.respond });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId });
	const endpoint = await startEndpoint({ handle, dir });
	cleanups.push(() => endpoint.close());
	return { handle, feed, endpoint };
}

/** A host in a process of its own that answers the first dialog with "atlas" and leaves every later one open until it is killed. */
async function hostProcessAt(dir: string) {
	const script = hostProcessScript(
		`(() => { let n = 0; const open = () => new Promise(() => {}); return { select: open, input: () => (n++ === 0 ? Promise.resolve("atlas") : open()), notify() {} }; })()`,
		"setInterval(() => {}, 60_000);",
	);
	const started = startScript(script, [EXTENSION, dir]);
	const ready = await started.waitFor(/^READY (.+)$/m);
	return { child: started.child, socketPath: ready[1]! };
}

const TWO: QuestionInput[] = [{ question: "Project name?" }, { question: "License?", options: ["MIT", "Apache-2.0"] }];

function ask(
	first: EndpointAddress | string,
	extra: { graceMs?: number; budgetMs?: number; find?: () => EndpointAddress | undefined; onProgress?: (p: RelayProgress) => void } = {},
) {
	return askRemote(first, {
		asker: { label: "worker", sessionId: "worker-session" },
		questions: TWO,
		budgetMs: extra.budgetMs ?? 20_000,
		dialogTimeoutMs: 20_000,
		pid: 4242,
		...extra,
	});
}

/** Resolves when progress says question `index` is shown. */
function shownProbe(index: number) {
	let onShown!: () => void;
	const shown = new Promise<void>((resolve) => (onShown = resolve));
	return { shown, onProgress: (p: RelayProgress) => p.stage === "shown" && p.question === index && onShown() };
}

describe("an asker waits for the next host", () => {
	it("a killed host: the next host in the directory shows only the unanswered question, marked as asked before the restart; both answers reach the asker", {
		timeout: 20_000,
	}, async () => {
		const root = await tempDir();
		const old = await hostProcessAt(path.join(root, "old"));
		let next: EndpointAddress | undefined;
		const probe = shownProbe(1);
		const call = ask(old.socketPath, { graceMs: 10_000, find: () => next, onProgress: probe.onProgress });
		await probe.shown;
		old.child.kill("SIGKILL");
		const killedAt = Date.now();
		const { feed, endpoint } = await hostAt(path.join(root, "new"));
		next = endpoint.address;
		const dialog = await feed.next();
		expect(Date.now() - killedAt).toBeLessThan(5_000);
		expect(dialog.title).toBe("[worker (pid 4242) · asked before the restart] (2/2) License?");
		dialog.answer("MIT");
		const envelope = await call;
		expect(envelope.status).toBe("ok");
		expect(envelope.answers.map((a) => a.answer)).toEqual(["atlas", "MIT"]);
		expect(feed.all).toHaveLength(1);
	});

	it("a host that quits: its no-host is not final within the grace; the next host at the same path gets the request", { timeout: 20_000 }, async () => {
		const root = await tempDir();
		const dir = path.join(root, "endpoint");
		const first = await hostAt(dir, "first-host");
		const call = ask(first.endpoint.endpoint, { graceMs: 10_000 });
		await first.feed.next();
		await first.endpoint.close("The host session ended (quit) before the questions were answered.");
		const second = await hostAt(dir);
		const dialog = await second.feed.next();
		expect(dialog.title).toBe("[worker (pid 4242) · asked before the restart] (1/2) Project name?");
		dialog.answer("atlas");
		(await second.feed.next()).answer("MIT");
		expect((await call).answers.map((a) => a.answer)).toEqual(["atlas", "MIT"]);
	});

	it("grace 0: no-host at once", { timeout: 20_000 }, async () => {
		const root = await tempDir();
		const old = await hostProcessAt(path.join(root, "old"));
		const probe = shownProbe(1);
		const call = ask(old.socketPath, { onProgress: probe.onProgress });
		await probe.shown;
		old.child.kill("SIGKILL");
		const killedAt = Date.now();
		const envelope = await call;
		expect(envelope.status).toBe("no-host");
		expect(Date.now() - killedAt).toBeLessThan(2_000);
		expect(envelope.answers.map((a) => a.answer)).toEqual(["atlas"]);
	});

	it("an asker that never had a host gets no-host at once, grace or not", async () => {
		const root = await tempDir();
		const startedAt = Date.now();
		const envelope = await ask(addressOf(path.join(root, "nobody", "socket")), { graceMs: 60_000 });
		expect(envelope.status).toBe("no-host");
		expect(Date.now() - startedAt).toBeLessThan(1_000);
	});

	it("the grace ends with no-host naming it; never past the call's budget", { timeout: 20_000 }, async () => {
		const root = await tempDir();
		const first = await hostAt(path.join(root, "a"), "first-host");
		const call = ask(first.endpoint.endpoint, { graceMs: 600 });
		await first.feed.next();
		const closedAt = Date.now();
		await first.endpoint.close();
		const envelope = await call;
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/No host came back within 600 ms\./);
		expect(Date.now() - closedAt).toBeGreaterThanOrEqual(550);

		const second = await hostAt(path.join(root, "b"), "second-host");
		const budgeted = ask(second.endpoint.endpoint, { graceMs: 60_000, budgetMs: 1_500 });
		await second.feed.next();
		await second.endpoint.close();
		const short = await budgeted;
		expect(short.status).toBe("no-host");
		expect(short.note).toMatch(/the call's budget ended first/);
		expect(short.waitedMs).toBeLessThan(2_000);
	});
});

describe("a request sent again", () => {
	/** A re-sent request as a line, carrying `answers`. */
	const resentLine = (id: string, answers: unknown[] = []) => {
		const now = Date.now();
		return encodeFrame({
			type: "request",
			v: FRAME_VERSION.endpoint,
			id,
			asker: { label: "worker", sessionId: "s" },
			questions: TWO,
			deadline: now + 10_000,
			dialogTimeoutMs: 10_000,
			createdAt: now,
			resent: true,
			...(answers.length > 0 ? { answers: answers as never } : {}),
		});
	};

	it("twice, over two connections, is shown once; the first answer given stands and reaches both", async () => {
		const root = await tempDir();
		const { feed, endpoint } = await hostAt(path.join(root, "e"));
		const token = await tokenAt(endpoint.address.tokenPath);
		const a = rawConnection(endpoint.endpoint);
		const b = rawConnection(endpoint.endpoint);
		await a.handshake(token, 77);
		await b.handshake(token, 77);
		a.send(resentLine("same-id", [{ question: "Project name?", answer: "atlas", kind: "text" }]));
		const dialog = await feed.next();
		b.send(resentLine("same-id", [{ question: "Project name?", answer: "other", kind: "text" }]));
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(feed.all).toHaveLength(1);
		expect(dialog.title).toBe("[worker (pid 77) · asked before the restart] (2/2) License?");
		// The first connection goes: the request stays for the second.
		a.socket.destroy();
		await a.closed;
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(dialog.signal?.aborted).toBe(false);
		dialog.answer("MIT");
		const result = await b.frame((f) => f.type === "result");
		expect([result.status, (result.answers as { answer: string }[]).map((x) => x.answer)]).toEqual(["ok", ["atlas", "MIT"]]);
	});

	it("an answer that fails the answer check is asked again, never taken", async () => {
		const root = await tempDir();
		const { feed, endpoint } = await hostAt(path.join(root, "e"));
		const token = await tokenAt(endpoint.address.tokenPath);
		const raw = rawConnection(endpoint.endpoint);
		await raw.handshake(token);
		raw.send(resentLine("r1", [{ question: "License?", answer: "GPL", kind: "option" }]));
		const first = await feed.next();
		expect(first.title).toMatch(/\(1\/2\) Project name\?$/);
		first.answer("atlas");
		const second = await feed.next();
		expect(second.title).toMatch(/\(2\/2\) License\?$/);
		second.answer("Apache-2.0");
		const result = await raw.frame((f) => f.type === "result");
		expect((result.answers as { answer: string }[]).map((x) => x.answer)).toEqual(["atlas", "Apache-2.0"]);
	});

	it("a flood of re-sent requests meets the per-asker cap and the per-connection cap", async () => {
		const root = await tempDir();
		const { endpoint } = await hostAt(path.join(root, "e"));
		const token = await tokenAt(endpoint.address.tokenPath);
		const raw = rawConnection(endpoint.endpoint);
		await raw.handshake(token);
		for (let i = 0; i < 40; i++) raw.send(resentLine(`flood-${i}`));
		const refused = await raw.frame((f) => f.type === "result" && f.status === "error");
		expect(refused.note).toMatch(/the most one asker session may have \(16\)/);
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(raw.frames.filter((f) => f.type === "result" && f.status === "error")).toHaveLength(24);
	});

	it("a malformed re-send is refused like any malformed frame", async () => {
		const root = await tempDir();
		const { endpoint } = await hostAt(path.join(root, "e"));
		const token = await tokenAt(endpoint.address.tokenPath);
		for (const bad of [{ resent: "yes" }, { resent: true, answers: [{ question: 1 }] }, { resent: true, answers: "all" }]) {
			const raw = rawConnection(endpoint.endpoint);
			await raw.handshake(token);
			const line = JSON.parse(resentLine("bad")) as Record<string, unknown>;
			raw.send(`${JSON.stringify({ ...line, ...bad })}\n`);
			const error = await raw.frame((f) => f.type === "error");
			expect(error.code).toBe("malformed");
		}
	});
});
