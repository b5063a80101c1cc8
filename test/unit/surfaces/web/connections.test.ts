/**
 * The page's TCP connections over raw TCP (issue 19, item 2): past the bound the oldest idle
 * connection makes room and streams in use are kept; a connection that never finishes its headers
 * is destroyed at the header timeout even though it never reads (the in-process half of
 * fd-flood.test.ts, which proves it under `ulimit -n 256`).
 */
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HEADERS_TIMEOUT_MS, MAX_CONNECTIONS } from "../../../../extensions/checkpoint-bridge/surfaces/web/http/connections.ts";
import type { WebPage } from "../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { until } from "../../../support/until.ts";
import { openConnections } from "../../support/server-sockets.ts";
import { pagePath, readEvents, trackedPages } from "./support.ts";

const pages = trackedPages();
const sockets: net.Socket[] = [];
afterEach(async () => {
	for (const socket of sockets.splice(0)) socket.destroy();
	await pages.closeAll();
});

/** A connection that sends half a request line and never reads. */
function halfRequest(page: WebPage): Promise<void> {
	const socket = net.connect({ host: page.address.host, port: page.address.port });
	sockets.push(socket);
	socket.pause();
	socket.on("error", () => {});
	return new Promise((resolve) => socket.once("connect", () => socket.write("GET /t/", () => resolve())));
}

describe("web page: connections", () => {
	it("past 128 connections the oldest idle one makes room; streams in use are kept and keep streaming", async () => {
		expect(MAX_CONNECTIONS).toBe(128);
		const s = await pages.setup();
		const opened = new Set<number>();
		const ended = new Set<number>();
		const tabs = Array.from({ length: 10 }, (_, i) =>
			readEvents(
				s.page,
				`${pagePath(s.page)}events`,
				(events) => events.some((e) => e.event === "added"),
				() => void opened.add(i),
			).finally(() => ended.add(i)),
		);
		await until(() => (opened.size === 10 ? true : undefined), "ten streams");
		for (let i = 0; i < 300; i++) await halfRequest(s.page);
		await until(() => (openConnections(s.page.address.port) <= MAX_CONNECTIONS ? true : undefined), "the bound to hold");
		// None of the ten streams was closed to make room.
		expect([...ended]).toEqual([]);
		await s.ask([{ question: "Still live?" }]);
		for (const events of await Promise.all(tabs)) expect(events.map((e) => e.event)).toEqual(["state", "added"]);
	});

	it("a connection that never finishes its headers is destroyed at the header timeout, though it never reads", { timeout: 15_000 }, async () => {
		expect(HEADERS_TIMEOUT_MS).toBe(5_000);
		const s = await pages.setup();
		await halfRequest(s.page);
		expect(openConnections(s.page.address.port)).toBe(1);
		const startedAt = Date.now();
		await until(() => (openConnections(s.page.address.port) === 0 ? true : undefined), "the connection to be destroyed", HEADERS_TIMEOUT_MS + 4_000);
		expect(Date.now() - startedAt).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 1_000);
	});
});
