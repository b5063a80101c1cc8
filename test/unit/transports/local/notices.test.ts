/**
 * Notices over the local endpoint: another extension's `ctx.ui.notify` in a session without UI in
 * another process (interop/dialog-relay.ts) reaches the host's human as `[asker (pid N)] message`,
 * over real Unix sockets. What the endpoint refuses, what it drops, and that a notice never touches
 * the session's calls.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FRAME_VERSION, MAX_NOTICE_LENGTH } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { MAX_NOTICES_PER_WINDOW, NOTICE_WINDOW_MS } from "../../../../extensions/checkpoint-bridge/core/shared/notice-window.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { askRemote, noticeRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { encodeFrame } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { closePooledConnections, pooledConnectionCount } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { type LocalEndpoint, startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { until } from "../../../support/until.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { rawConnection, requestLine, tokenAt } from "../../support/raw-endpoint.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
	closePooledConnections();
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ASKER = { label: "subagent-gatekeeper", sessionId: "child-session" };

async function host() {
	const handle = createHandle();
	const fake = fakeUI({ respond: (dialog) => dialog.answer("Yes") });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
	const endpoint = await startEndpoint({ handle });
	cleanups.push(() => endpoint.close());
	/** Resolves once the host's UI has shown `count` notices. */
	const notices = (count: number) => until(() => fake.notices.length >= count && fake.notices, `${count} notices`, 5_000, 5);
	return { handle, fake, endpoint, notices };
}

/** A raw connection that did the handshake, as `pid`. */
async function trusted(endpoint: LocalEndpoint, pid = 77) {
	const raw = rawConnection(endpoint.endpoint);
	cleanups.push(() => void raw.socket.destroy());
	await raw.handshake(await tokenAt(endpoint.address.tokenPath), pid);
	return raw;
}

const noticeLine = (fields: Record<string, unknown> = {}) =>
	encodeFrame({ type: "notice", v: FRAME_VERSION.endpoint, asker: ASKER, message: "Build started.", level: "info", ...fields } as never);

describe("a notice from another process reaches the host's human", () => {
	it("prefixed with who sends it and the process it sends from, at its own level", async () => {
		const { endpoint, notices } = await host();
		noticeRemote(endpoint.endpoint, { asker: ASKER, message: "Disk almost full.", type: "warning" }, { pid: 4242 });
		expect(await notices(1)).toEqual([{ message: "[subagent-gatekeeper (pid 4242)] Disk almost full.", type: "warning" }]);
	});

	it("rides a connection of its own, so a host that refuses the frame ends none of the session's calls", async () => {
		const { endpoint, fake, notices } = await host();
		const call = askRemote(endpoint.endpoint, { asker: ASKER, questions: [{ question: "Go?" }], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
		noticeRemote(endpoint.endpoint, { asker: ASKER, message: "Asking now.", type: "info" });
		expect((await call).status).toBe("ok");
		await notices(1);
		expect(pooledConnectionCount()).toBe(2);
		expect(fake.dialogs).toHaveLength(1);
	});

	it("a message longer than the frame takes is cut before it is sent, never refused", async () => {
		const { endpoint, notices } = await host();
		noticeRemote(endpoint.endpoint, { asker: ASKER, message: "😀".repeat(MAX_NOTICE_LENGTH + 10), type: "error" });
		const [shown] = await notices(1);
		expect(shown?.type).toBe("error");
		expect(shown?.message.endsWith("…")).toBe(true);
	});

	it(`at most ${MAX_NOTICES_PER_WINDOW} per endpoint in ${NOTICE_WINDOW_MS} ms: the rest are dropped, and the connection serves on`, async () => {
		const { endpoint, fake, notices } = await host();
		const raw = await trusted(endpoint);
		for (let i = 0; i < MAX_NOTICES_PER_WINDOW + 5; i++) raw.send(noticeLine({ message: `notice ${i}` }));
		raw.send(requestLine("after-the-flood", { label: "gate", question: "Still served?" }));
		expect(await raw.frame((f) => f.type === "result" && f.id === "after-the-flood")).toMatchObject({ status: "ok" });
		await notices(MAX_NOTICES_PER_WINDOW);
		// The request's own arrival notice aside.
		expect(fake.notices.map((n) => n.message).filter((m) => m.startsWith("[subagent-gatekeeper"))).toEqual(
			Array.from({ length: MAX_NOTICES_PER_WINDOW }, (_, i) => `[subagent-gatekeeper (pid 77)] notice ${i}`),
		);
		expect(raw.frames.some((f) => f.type === "error")).toBe(false);
	});

	it("one window for the whole endpoint: 100 connections of one process sending 20 notices each bring the human 20", async () => {
		const { endpoint, fake } = await host();
		const clients = await Promise.all(Array.from({ length: 100 }, () => trusted(endpoint, 4242)));
		for (const [c, raw] of clients.entries()) for (let i = 0; i < MAX_NOTICES_PER_WINDOW; i++) raw.send(noticeLine({ message: `c${c} n${i}` }));
		// Every frame is read once a request sent after them on each connection is answered.
		for (const [c, raw] of clients.entries()) raw.send(requestLine(`after-${c}`, { label: "gate", question: `Still served ${c}?` }));
		for (const [c, raw] of clients.entries()) await raw.frame((f) => f.type === "result" && f.id === `after-${c}`);
		const relayed = fake.notices.map((n) => n.message).filter((m) => m.startsWith("[subagent-gatekeeper"));
		expect(relayed).toHaveLength(MAX_NOTICES_PER_WINDOW);
		expect(clients.some((raw) => raw.frames.some((f) => f.type === "error"))).toBe(false);
	});
});

describe("what the endpoint refuses", () => {
	it("a notice before the handshake: refused, nothing shown", async () => {
		const { endpoint, fake } = await host();
		const raw = rawConnection(endpoint.endpoint);
		cleanups.push(() => void raw.socket.destroy());
		raw.send(noticeLine());
		expect(await raw.frame((f) => f.type === "error")).toMatchObject({ code: "unexpected", message: "The first frame must be hello, not notice." });
		await raw.closed;
		expect(fake.notices).toEqual([]);
	});

	it("a notice between the welcome and the client's proof: refused, nothing shown", async () => {
		const { endpoint, fake } = await host();
		const raw = rawConnection(endpoint.endpoint);
		cleanups.push(() => void raw.socket.destroy());
		await raw.welcome(await tokenAt(endpoint.address.tokenPath));
		raw.send(noticeLine());
		expect(await raw.frame((f) => f.type === "error")).toMatchObject({ code: "unexpected" });
		expect(fake.notices).toEqual([]);
	});

	it.each([
		["an asker that is not {label, sessionId}", { asker: "me" }, "notice.asker"],
		["an asker label of a megabyte", { asker: { label: "L".repeat(1_000_000), sessionId: "s" } }, "notice.asker"],
		["a message that is not text", { message: 42 }, "notice.message"],
		["a message longer than the frame takes", { message: "x".repeat(MAX_NOTICE_LENGTH + 1) }, "notice.message"],
		["an unknown level", { level: "shout" }, "notice.level"],
	])("%s: refused as malformed, naming the field, nothing shown", async (_what, fields, field) => {
		const { endpoint, fake } = await host();
		const raw = await trusted(endpoint);
		raw.send(noticeLine(fields));
		const refusal = await raw.frame((f) => f.type === "error");
		expect(refusal).toMatchObject({ code: "malformed" });
		expect(String(refusal.message)).toContain(field);
		await raw.closed;
		expect(fake.notices).toEqual([]);
	});
});
