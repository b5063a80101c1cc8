/**
 * The local endpoint over real Unix sockets: a host role with a fake UI in this process serves
 * askers that reach it only through the socket, side by side with askers on the in-process bus.
 */
import { access, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { askViaHost } from "../../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { PROTOCOL_VERSION, type RelayProgress, replyChannel } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { ENDPOINT_ENV, endpointFromEnv } from "../../../../extensions/checkpoint-bridge/transports/local/address.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { encodeFrame } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { closeProcessEndpoint, ensureProcessEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/process-endpoint.ts";
import { type EndpointOptions, type LocalEndpoint, startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { dialogFeed } from "../../support/dialog-feed.ts";
import { hostWithEndpoint as hostServing } from "../../support/endpoint-host.ts";
import { type FakeDialog, fakeUI } from "../../support/fake-ui.ts";
import { rawConnection, requestLine, tokenAt } from "../../support/raw-endpoint.ts";

const HOST_SESSION = "host-session-id";
const REMOTE_PID = 4242;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Resolves once the host has closed `dialog` through its signal. */
const dismissed = (dialog: FakeDialog) =>
	new Promise<void>((resolve) => {
		if (dialog.signal?.aborted) resolve();
		else dialog.signal?.addEventListener("abort", () => resolve(), { once: true });
	});

async function hostWithEndpoint(options: Partial<Omit<EndpointOptions, "handle">> = {}) {
	const { handle, fake, feed, role, endpoint } = await hostServing(cleanups, { sessionId: HOST_SESSION, ...options });
	const budgets = { budgetMs: 10_000, dialogTimeoutMs: 10_000 };
	const local = (label: string, questions: QuestionInput[]) => askViaHost({ handle, asker: { label, sessionId: `${label}-session` }, questions, ...budgets });
	const remote = (
		label: string,
		questions: QuestionInput[],
		extra: { budgetMs?: number; signal?: AbortSignal; onProgress?: (p: RelayProgress) => void } = {},
	) => askRemote(endpoint.endpoint, { asker: { label, sessionId: `${label}-session` }, questions, pid: REMOTE_PID, ...budgets, ...extra });
	return { handle, fake, feed, role, endpoint, local, remote };
}

/** Resolves when the remote call reports it is queued at the host. */
function queuedProbe() {
	let onQueued!: () => void;
	const queued = new Promise<void>((resolve) => (onQueued = resolve));
	return { queued, onProgress: (p: RelayProgress) => p.stage === "queued" && onQueued() };
}

const q = (text: string): QuestionInput => ({ question: text });

const answersOf = (envelope: Envelope) => envelope.answers.map((a) => a.answer);

describe("a remote asker is served by the host's queue", () => {
	it("shows a remote batch one dialog after another, marked with the asking process, and returns the answers", async () => {
		const { fake, feed, remote } = await hostWithEndpoint();
		const stages: string[] = [];
		const call = remote("planner", [q("Project name?"), q("License?")], { onProgress: (p) => stages.push(p.stage) });
		const first = await feed.next();
		expect([first.method, first.title]).toEqual(["input", `[planner (pid ${REMOTE_PID})] (1/2) Project name?`]);
		first.answer("atlas");
		const second = await feed.next();
		expect(second.title).toBe(`[planner (pid ${REMOTE_PID})] (2/2) License?`);
		second.answer("MIT");
		const envelope = await call;
		expect(envelope.status).toBe("ok");
		expect(envelope.answers.map((a) => [a.question, a.answer])).toEqual([
			["Project name?", "atlas"],
			["License?", "MIT"],
		]);
		expect(envelope.note).toBeUndefined();
		expect(envelope.asker).toBe("planner");
		expect(envelope.requestId).toMatch(/^[\w-]{21}$/);
		expect(stages).toEqual(["queued", "shown", "answered", "shown", "answered"]);
		expect(fake.notices.map((n) => n.message)).toContain(`checkpoint-bridge: [planner (pid ${REMOTE_PID})] asks 2 questions`);
	});

	it("serves local and remote askers in arrival order through one queue, never two dialogs open, each answer to its asker", async () => {
		const { fake, feed, local, remote } = await hostWithEndpoint();
		const calls: Promise<Envelope>[] = [];
		calls.push(local("a", [q("a: name?")]));
		const b = queuedProbe();
		calls.push(remote("b", [q("b: name?")], { onProgress: b.onProgress }));
		await b.queued;
		calls.push(local("c", [q("c: name?")]));
		const d = queuedProbe();
		calls.push(remote("d", [q("d: name?")], { onProgress: d.onProgress }));
		await d.queued;
		const titles: string[] = [];
		for (let served = 0; served < 4; served++) {
			const dialog = await feed.next();
			expect(fake.open).toEqual([dialog]);
			titles.push(dialog.title);
			dialog.answer(`answer for ${dialog.title}`);
		}
		expect(titles).toEqual(["[a] a: name?", `[b (pid ${REMOTE_PID})] b: name?`, "[c] c: name?", `[d (pid ${REMOTE_PID})] d: name?`]);
		const envelopes = await Promise.all(calls);
		expect(envelopes.map((e) => e.status)).toEqual(["ok", "ok", "ok", "ok"]);
		expect(envelopes.map(answersOf)).toEqual(titles.map((title) => [`answer for ${title}`]));
		expect(fake.maxOpen).toBe(1);
	});

	it("answers a malformed remote request with the host's own error, as for a local one", async () => {
		const { fake, remote } = await hostWithEndpoint();
		const envelope = await remote("planner", [{ question: "" }]);
		expect(envelope.status).toBe("error");
		expect(envelope.note).toMatch(/questions\[0\]\.question: is empty/);
		expect(fake.dialogs).toHaveLength(0);
	});
});

describe("only the host role answers a remote asker", () => {
	it("ignores a well-formed reply on the host's reply channel that the host did not send", async () => {
		const { handle, feed, remote } = await hostWithEndpoint();
		const stages: string[] = [];
		const call = remote("victim", [q("Project name?")], { onProgress: (p) => stages.push(p.stage) });
		const dialog = await feed.next();
		// Code in the host process that learned the host-side id (observers see it) forges replies there.
		const hostId = handle.snapshot()!.open[0]!.requestId;
		const forged = [{ question: "Project name?", answer: "forged", kind: "text" as const }];
		handle.bus.emit(replyChannel(hostId), { v: PROTOCOL_VERSION, id: hostId, kind: "progress", stage: "answered", question: 0, answers: forged });
		handle.bus.emit(replyChannel(hostId), { v: PROTOCOL_VERSION, id: hostId, kind: "result", status: "ok", answers: forged });
		// The call settles on the human's answer: had a forgery got through, it would have settled first, with "forged".
		dialog.answer("atlas");
		const envelope = await call;
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "atlas", source: "dialog" }] });
		expect(stages).toEqual(["queued", "shown", "answered"]);
	});
});

describe("what the endpoint forwards", () => {
	/** A raw connection that has done the handshake, as a real client does. */
	async function trusted(endpoint: LocalEndpoint) {
		const raw = rawConnection(endpoint.endpoint);
		cleanups.push(async () => void raw.socket.destroy());
		await raw.handshake(await tokenAt(endpoint.address.tokenPath), 77);
		return raw;
	}

	it("a connection that did the handshake outlives the hello timer", async () => {
		const { feed, endpoint } = await hostWithEndpoint({ helloTimeoutMs: 20 });
		const raw = await trusted(endpoint);
		// Well past the hello timer: a connection it still closed would never see the request's dialog.
		await new Promise((resolve) => setTimeout(resolve, 100));
		raw.send(requestLine("late-1", { question: "Still connected?" }));
		(await feed.next()).answer("yes");
		expect(await raw.frame((f) => f.type === "result")).toMatchObject({ id: "late-1", status: "ok" });
		expect(raw.frames.some((f) => f.type === "error")).toBe(false);
	});

	it("clamps a remote request's deadline and dialog time as a local call's are clamped (at most 3,600,000 ms)", async () => {
		const { feed, endpoint } = await hostWithEndpoint();
		const raw = await trusted(endpoint);
		const tenHours = 36_000_000;
		const now = Date.now();
		raw.send(
			encodeFrame({
				type: "request",
				v: FRAME_VERSION.endpoint,
				id: "long-1",
				asker: { label: "raw", sessionId: "r" },
				questions: [q("Take your time?")],
				deadline: now + tenHours,
				dialogTimeoutMs: tenHours,
				createdAt: now,
			}),
		);
		const dialog = await feed.next();
		expect(dialog.timeout).toBeLessThanOrEqual(3_600_000);
		expect(dialog.timeout).toBeGreaterThan(3_600_000 - 60_000);
		dialog.answer("done");
		await raw.frame((f) => f.type === "result");
	});

	it("holds a remote request without a budget (deadline 0) with no timeout on its dialog while its connection lives, and drops it with the connection", async () => {
		const { feed, endpoint, handle } = await hostWithEndpoint();
		const raw = await trusted(endpoint);
		const now = Date.now();
		raw.send(
			encodeFrame({
				type: "request",
				v: FRAME_VERSION.endpoint,
				id: "forever-1",
				asker: { label: "raw", sessionId: "r" },
				questions: [q("Whenever you are ready?")],
				deadline: 0,
				dialogTimeoutMs: 0,
				createdAt: now,
			}),
		);
		const dialog = await feed.next();
		expect(dialog.timeout).toBeUndefined();
		expect(handle.snapshot()!.open[0]!.deadline).toBe(0);
		raw.socket.destroy();
		await dismissed(dialog);
		expect(handle.snapshot()!.open).toEqual([]);
	});

	it("ignores a cancel that crossed its request's result, and serves the next request on the same connection", async () => {
		const { feed, endpoint } = await hostWithEndpoint();
		const raw = await trusted(endpoint);
		raw.send(requestLine("first-1", { question: "First?" }));
		(await feed.next()).answer("one");
		await raw.frame((f) => f.type === "result" && f.id === "first-1");
		raw.send(encodeFrame({ type: "cancel", v: FRAME_VERSION.endpoint, id: "first-1", reason: "cancelled" }));
		raw.send(requestLine("second-1", { question: "Second?" }));
		(await feed.next()).answer("two");
		expect(await raw.frame((f) => f.type === "result" && f.id === "second-1")).toMatchObject({ status: "ok" });
		expect(raw.frames.filter((f) => f.type === "result").map((f) => f.id)).toEqual(["first-1", "second-1"]);
		expect(raw.frames.some((f) => f.type === "error")).toBe(false);
	});

	it("forgets a cancelled request, so its id can be used again on the same connection", async () => {
		const { feed, endpoint } = await hostWithEndpoint();
		const raw = await trusted(endpoint);
		raw.send(requestLine("again-1", { question: "First time?" }));
		const first = await feed.next();
		raw.send(encodeFrame({ type: "cancel", v: FRAME_VERSION.endpoint, id: "again-1", reason: "cancelled" }));
		await dismissed(first);
		raw.send(requestLine("again-1", { question: "Second time?" }));
		const second = await feed.next();
		expect(second.title).toMatch(/Second time\?$/);
		second.answer("yes");
		expect(await raw.frame((f) => f.type === "result")).toMatchObject({ id: "again-1", status: "ok" });
		expect(raw.frames.some((f) => f.type === "error")).toBe(false);
	});

	it("refuses a second hello or auth after the handshake, saying it came twice", async () => {
		for (const type of ["hello", "auth"] as const) {
			const { endpoint } = await hostWithEndpoint();
			const raw = await trusted(endpoint);
			raw.send(type === "hello" ? raw.helloLine() : encodeFrame({ type: "auth", v: FRAME_VERSION.endpoint, proof: "x".repeat(43) }));
			const refusal = await raw.frame((f) => f.type === "error");
			expect(refusal).toMatchObject({ code: "unexpected", message: `A client does not send ${type} frames twice.` });
		}
		const { endpoint } = await hostWithEndpoint();
		const raw = await trusted(endpoint);
		raw.send(encodeFrame({ type: "progress", v: FRAME_VERSION.endpoint, id: "x", kind: "progress", stage: "queued", answers: [] } as never));
		expect(await raw.frame((f) => f.type === "error")).toMatchObject({ code: "unexpected", message: "A client does not send progress frames." });
		// Nor the host's late frames (ask now, answer later).
		const again = await trusted((await hostWithEndpoint()).endpoint);
		again.send(encodeFrame({ type: "late", v: FRAME_VERSION.endpoint, id: "x", kind: "late", status: "ok", answers: [] }));
		expect(await again.frame((f) => f.type === "error")).toMatchObject({ code: "unexpected", message: "A client does not send late frames." });
	});

	it("answers error naming both versions when the host role speaks another protocol", async () => {
		const handle = createHandle();
		expect(handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION + 1 })).toBeDefined();
		const endpoint = await startEndpoint({ handle });
		cleanups.push(() => endpoint.close());
		const envelope = await askRemote(endpoint.endpoint, {
			asker: { label: "p", sessionId: "p" },
			questions: [q("x?")],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		expect(envelope.status).toBe("error");
		expect(envelope.note).toContain(`v${PROTOCOL_VERSION + 1}`);
		expect(envelope.note).toContain(`endpoint speaks v${PROTOCOL_VERSION}`);
	});

	it("answers no-host when the host role is claimed but nothing listens for questions", async () => {
		const handle = createHandle();
		handle.claimHost({ sessionId: "h", protocol: PROTOCOL_VERSION });
		const endpoint = await startEndpoint({ handle });
		cleanups.push(() => endpoint.close());
		const envelope = await askRemote(endpoint.endpoint, {
			asker: { label: "p", sessionId: "p" },
			questions: [q("x?")],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/nothing is listening for questions/);
		expect(handle.bus.eventNames()).toEqual([]);
	});
});

describe("a remote call that ends on the asker's side", () => {
	it("aborted while its dialog is open: settles cancelled, the dialog closes, the queue moves on", async () => {
		const { feed, local, remote } = await hostWithEndpoint();
		const abort = new AbortController();
		const call = remote("planner", [q("Project name?")], { signal: abort.signal });
		const dialog = await feed.next();
		abort.abort();
		const envelope = await call;
		expect(envelope.status).toBe("cancelled");
		await dismissed(dialog);
		expect(dialog.closedBy).toBe("signal");
		const next = local("reviewer", [q("Ship it?")]);
		(await feed.next()).answer("yes");
		expect((await next).status).toBe("ok");
	});

	it("aborted before it asks: settles cancelled without touching the host", async () => {
		const { fake, remote } = await hostWithEndpoint();
		const envelope = await remote("planner", [q("Project name?")], { signal: AbortSignal.abort() });
		expect(envelope.status).toBe("cancelled");
		expect(fake.notices).toEqual([]);
	});

	it("out of budget while its dialog is open: settles timeout and the dialog closes", async () => {
		const { feed, remote } = await hostWithEndpoint();
		const call = remote("planner", [q("Project name?")], { budgetMs: 300 });
		const dialog = await feed.next();
		const envelope = await call;
		expect(envelope.status).toBe("timeout");
		// The budget's timer ended it, and timers never fire early.
		expect(envelope.waitedMs).toBeGreaterThanOrEqual(300 - 1);
		await dismissed(dialog);
	});

	it("out of budget while queued: its question is never shown", async () => {
		const { feed, local, remote } = await hostWithEndpoint();
		const first = local("a", [q("a: name?")]);
		const blocking = await feed.next();
		const queued = queuedProbe();
		const late = remote("b", [q("b: name?")], { budgetMs: 300, onProgress: queued.onProgress });
		await queued.queued;
		expect((await late).status).toBe("timeout");
		const after = local("c", [q("c: name?")]);
		blocking.answer("one");
		expect((await first).status).toBe("ok");
		const next = await feed.next();
		expect(next.title).toBe("[c] c: name?");
		next.answer("two");
		expect((await after).status).toBe("ok");
	});

	it("its process drops the connection: its dialog closes", async () => {
		const { feed, endpoint } = await hostWithEndpoint();
		const raw = rawConnection(endpoint.endpoint);
		await raw.handshake(await tokenAt(endpoint.address.tokenPath), 77);
		raw.send(requestLine("dropped-1", { label: "gone", question: "Still there?" }));
		const dialog = await feed.next();
		expect(dialog.title).toBe("[gone (pid 77)] Still there?");
		raw.socket.destroy();
		await dismissed(dialog);
	});
});

describe("one connection, several requests", () => {
	it("a cancel frame dismisses its dialog while the connection stays open for the next request, replies addressed by the asker's own ids", async () => {
		const { feed, endpoint } = await hostWithEndpoint();
		const raw = rawConnection(endpoint.endpoint);
		cleanups.push(async () => void raw.socket.destroy());
		await raw.handshake(await tokenAt(endpoint.address.tokenPath), 55);
		raw.send(requestLine("mine-1", { label: "multi", question: "First?" }));
		const first = await feed.next();
		raw.send(encodeFrame({ type: "cancel", v: FRAME_VERSION.endpoint, id: "mine-1", reason: "cancelled" }));
		await dismissed(first);
		raw.send(requestLine("mine-2", { label: "multi", question: "Second?" }));
		const second = await feed.next();
		expect(second.title).toBe("[multi (pid 55)] Second?");
		second.answer("two");
		await raw.frame((f) => f.type === "result");
		const replies = raw.frames.filter((f) => f.type !== "welcome");
		expect(new Set(replies.map((f) => f.id))).toEqual(new Set(["mine-1", "mine-2"]));
		expect(replies.filter((f) => f.type === "result")).toEqual([
			expect.objectContaining({ id: "mine-2", status: "ok", answers: [expect.objectContaining({ answer: "two" })] }),
		]);
		expect(raw.socket.destroyed).toBe(false);
	});
});

describe("writes", () => {
	it("the frames of one turn of the event loop leave in one write: a request answered at once costs the host one write, not four", async () => {
		const handle = createHandle();
		const fake = fakeUI({ respond: (dialog) => dialog.answer("at once") });
		if (!claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: HOST_SESSION })) throw new Error("claim refused");
		const endpoint = await startEndpoint({ handle });
		cleanups.push(() => endpoint.close());
		const raw = rawConnection(endpoint.endpoint);
		cleanups.push(async () => void raw.socket.destroy());
		await raw.handshake(await tokenAt(endpoint.address.tokenPath));
		// What the host's side hands to the kernel, one entry per write; the test's own client writes requests only.
		const writes: string[][] = [];
		// eslint-disable-next-line @typescript-eslint/no-explicit-any -- stream internals, wrapped for the count only
		const proto = net.Socket.prototype as unknown as Record<"_write" | "_writev", (...args: any[]) => unknown>;
		const original = { _write: proto._write, _writev: proto._writev };
		proto._write = function (chunk: unknown, ...rest: unknown[]) {
			writes.push([String(chunk)]);
			return original._write.call(this, chunk, ...rest);
		};
		proto._writev = function (chunks: { chunk: unknown }[], ...rest: unknown[]) {
			writes.push(chunks.map((c) => String(c.chunk)));
			return original._writev.call(this, chunks, ...rest);
		};
		try {
			raw.send(requestLine("r1"));
			await raw.frame((f) => f.type === "result");
		} finally {
			Object.assign(proto, original);
		}
		const replies = raw.frames.filter((f) => f.id === "r1").map((f) => (f.type === "progress" ? `progress:${String(f.stage)}` : String(f.type)));
		expect(replies).toEqual(["progress:queued", "progress:shown", "progress:answered", "result"]);
		const hostWrites = writes.filter((chunks) => chunks.some((c) => c.includes('"kind":')));
		expect(hostWrites).toHaveLength(1);
		expect(hostWrites[0]!.join("").split("\n").filter(Boolean)).toHaveLength(4);
	});
});

describe("the host side going away", () => {
	it("the endpoint closing mid-dialog gives the remote asker no-host at once and closes the dialog", async () => {
		const { feed, remote, endpoint } = await hostWithEndpoint();
		const call = remote("planner", [q("Project name?")]);
		const dialog = await feed.next();
		await endpoint.close();
		const envelope = await call;
		// At once: the endpoint's own note, not the 10 s budget, ended the call.
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/stopped serving other processes/);
		await dismissed(dialog);
	});

	it("the host session quitting gives the remote asker no-host with the host's note, and the answers so far", async () => {
		const { feed, role, remote } = await hostWithEndpoint();
		const call = remote("planner", [q("Project name?"), q("License?")]);
		(await feed.next()).answer("atlas");
		await feed.next();
		role.release("quit", "The host session ended (quit) before the questions were answered.");
		const envelope = await call;
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/^The host session ended \(quit\)/);
		expect(answersOf(envelope)).toEqual(["atlas"]);
	});

	it("with no session holding the host role, the endpoint answers no-host at once", async () => {
		const { fake, role, remote } = await hostWithEndpoint();
		role.release("quit", "bye");
		const envelope = await remote("planner", [q("Project name?")]);
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/No session with a UI holds the host role in the host process/);
		expect(fake.dialogs).toHaveLength(0);
	});

	it("with nothing at the advertised path, the call settles no-host at once", async () => {
		const dir = await mkdtemp(path.join(os.tmpdir(), "cpb-test-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const envelope = await askRemote(path.join(dir, "socket"), {
			asker: { label: "p", sessionId: "p" },
			questions: [q("x?")],
			budgetMs: 10_000,
			dialogTimeoutMs: 10_000,
		});
		// At once: the missing token file, not the 10 s budget or the 1.5 s connect timeout, ended the call.
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/^No host answers at .*socket \(its socket: ENOENT\)/);
		expect(envelope.note).not.toMatch(/longer than/);
	});

	it("a host that comes back at the same path serves the next call, with its new token", async () => {
		const parent = await mkdtemp(path.join(os.tmpdir(), "cpb-test-"));
		cleanups.push(() => rm(parent, { recursive: true, force: true }));
		const dir = path.join(parent, "endpoint");
		const first = await hostWithEndpoint({ dir });
		const socketPath = first.endpoint.endpoint;
		const ask = () => askRemote(socketPath, { asker: { label: "p", sessionId: "p" }, questions: [q("Again?")], budgetMs: 10_000, dialogTimeoutMs: 10_000 });

		const before = ask();
		(await first.feed.next()).answer("first");
		expect(answersOf(await before)).toEqual(["first"]);
		await first.endpoint.close();
		expect((await ask()).status).toBe("no-host");

		const second = await hostWithEndpoint({ dir });
		expect(second.endpoint.endpoint).toBe(socketPath);
		const after = ask();
		(await second.feed.next()).answer("second");
		expect(answersOf(await after)).toEqual(["second"]);
	});
});

describe("advertising the endpoint", () => {
	it("sets the variable while open, to a path a spawned process can use, and restores it at close", async () => {
		const env: NodeJS.ProcessEnv = { [ENDPOINT_ENV]: "/outer/host/socket" };
		const { endpoint, feed } = await hostWithEndpoint({ env });
		expect(env[ENDPOINT_ENV]).toBe(endpoint.endpoint);
		const address = endpointFromEnv(env)!;
		expect(address).toEqual(endpoint.address);
		const call = askRemote(address, { asker: { label: "child", sessionId: "c" }, questions: [q("Via env?")], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
		(await feed.next()).answer("yes");
		expect((await call).status).toBe("ok");
		await endpoint.close();
		expect(env[ENDPOINT_ENV]).toBe("/outer/host/socket");
	});

	it("closing is idempotent and leaves nothing behind", async () => {
		const { endpoint } = await hostWithEndpoint();
		await Promise.all([endpoint.close(), endpoint.close()]);
		await expect(access(path.dirname(endpoint.endpoint))).rejects.toThrow(/ENOENT/);
	});
});

describe("one endpoint per process", () => {
	it("is started once whichever copy asks, and outlives a host being replaced", async () => {
		const registry = {};
		const env: NodeJS.ProcessEnv = {};
		const handle = createHandle();
		const firstFeed = dialogFeed();
		const firstUI = fakeUI({ respond: firstFeed.respond }).ui;
		const first = claimHostRole(handle, { ui: firstUI, surface: dialogSurface(firstUI), sessionId: "first" })!;
		const endpoint = await ensureProcessEndpoint(handle, { env }, registry);
		cleanups.push(() => closeProcessEndpoint(undefined, registry));
		expect(await ensureProcessEndpoint(handle, { env }, registry)).toBe(endpoint);
		expect(env[ENDPOINT_ENV]).toBe(endpoint.endpoint);

		const ask = (text: string) =>
			askRemote(endpointFromEnv(env)!, { asker: { label: "child", sessionId: "c" }, questions: [q(text)], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
		const call = ask("Across the reload?");
		const shownByFirst = await firstFeed.next();
		first.release("reload", "The host session was replaced.");
		await dismissed(shownByFirst);
		// Between two hosts the endpoint answers as the bus would.
		expect((await ask("Anyone?")).status).toBe("no-host");

		const secondFeed = dialogFeed();
		const secondUI = fakeUI({ respond: secondFeed.respond }).ui;
		claimHostRole(handle, { ui: secondUI, surface: dialogSurface(secondUI), sessionId: "second" });
		const shownBySecond = await secondFeed.next();
		expect(shownBySecond.title).toBe(`[child (pid ${process.pid})] Across the reload?`);
		shownBySecond.answer("yes");
		expect(answersOf(await call)).toEqual(["yes"]);

		await closeProcessEndpoint("The host quit.", registry);
		expect(ENDPOINT_ENV in env).toBe(false);
		const again = await ensureProcessEndpoint(handle, { env }, registry);
		expect(again).not.toBe(endpoint);
	});
});
