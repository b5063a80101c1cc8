/**
 * The live stream under abuse (issue 19, items 3 and 4), over raw HTTP and raw TCP on a real
 * loopback port: request links draw on their own small quota, never the page token's, and a tab
 * that stops reading costs a bounded amount of memory (it gets a fresh state once it reads again,
 * and is closed if it stays behind).
 */
import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_LINK_STREAMS, MAX_STREAMS_PER_LINK, STREAM_BUFFER_BYTES } from "../../../../extensions/checkpoint-bridge/surfaces/web/live/stream.ts";
import type { WebPage } from "../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { until } from "../../../support/until.ts";
import { openConnections, serverSockets, unsentBytes } from "../../support/server-sockets.ts";
import { linkPathOf, pagePath, trackedPages } from "./support.ts";

const pages = trackedPages();
const held: (http.ClientRequest | net.Socket)[] = [];
afterEach(async () => {
	for (const r of held.splice(0)) r.destroy();
	await pages.closeAll();
});

/** Opens a stream and keeps it open; resolves with its status (and a refusal's reason) once the headers are in. */
function openStream(page: WebPage, path: string): Promise<{ status: number; reason: string }> {
	const { host, port } = page.address;
	return new Promise((resolve, reject) => {
		const req = http.get({ host, port, path, agent: false }, (res) => {
			if (res.statusCode === 200) return resolve({ status: 200, reason: "" });
			let reason = "";
			res.setEncoding("utf8");
			res.on("data", (chunk: string) => (reason += chunk));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, reason: reason.trim() }));
		});
		req.on("error", reject);
		held.push(req);
	});
}

describe("web page: request links' own stream quota", () => {
	it("64 streams on one request link never lock the page out: the link gets 4, the page still opens", async () => {
		const s = await pages.setup();
		const { requestId } = await s.ask([{ question: "Q?", options: ["a", "b"] }]);
		const link = `${linkPathOf(s.page, requestId)}events`;
		const results = [];
		for (let i = 0; i < 64; i++) results.push(await openStream(s.page, link));
		expect(results.filter((r) => r.status === 200)).toHaveLength(MAX_STREAMS_PER_LINK);
		expect(MAX_STREAMS_PER_LINK).toBe(4);
		const refused = results.filter((r) => r.status !== 200);
		expect(new Set(refused.map((r) => `${r.status} ${r.reason}`))).toEqual(
			new Set([`429 this request's link is open in too many tabs (${MAX_STREAMS_PER_LINK}); close one`]),
		);
		// The owner's page, with its token: its own slots are untouched.
		for (let i = 0; i < 3; i++) expect(await openStream(s.page, `${pagePath(s.page)}events`)).toEqual({ status: 200, reason: "" });
		// The refused ones are closed: the page holds the link's streams and its own three.
		await until(() => (openConnections(s.page.address.port) === MAX_STREAMS_PER_LINK + 3 ? true : undefined), "the refused connections to close");
	});

	it("all links together hold at most 32 streams; the page's 64 are its own", async () => {
		const s = await pages.setup();
		const links: string[] = [];
		for (let i = 0; i < 9; i++) links.push(`${linkPathOf(s.page, (await s.ask([{ question: `Q${i}?` }], { label: `asker${i}` })).requestId)}events`);
		const statuses: number[] = [];
		for (const link of links) for (let i = 0; i < MAX_STREAMS_PER_LINK; i++) statuses.push((await openStream(s.page, link)).status);
		expect(statuses.filter((status) => status === 200)).toHaveLength(MAX_LINK_STREAMS);
		expect(await openStream(s.page, links[8]!)).toEqual({ status: 429, reason: `too many request links are open (${MAX_LINK_STREAMS}); close one` });
		for (let i = 0; i < 64; i++) expect((await openStream(s.page, `${pagePath(s.page)}events`)).status).toBe(200);
		expect((await openStream(s.page, `${pagePath(s.page)}events`)).status).toBe(429);
	});
});

/** Connections the page has begun to answer: a stream once its headers and first state are written. */
const streaming = (page: WebPage) => serverSockets(page.address.port).filter((socket) => socket.bytesWritten > 0).length;

/** A question whose card is about 50 KB in every frame that carries it. */
const big = (i: number) => ({
	question: `Big ${i}?`,
	details: "d".repeat(2_000),
	options: Array.from({ length: 12 }, (_, o) => ({ label: `option ${o}`, description: "x".repeat(200), preview: "p".repeat(4_000) })),
});

/** A raw GET of the page's stream that reads nothing until told to. */
function stalledTab(page: WebPage): { socket: net.Socket; read(): Promise<string[]> } {
	const { host, port } = page.address;
	const socket = net.connect({ host, port });
	held.push(socket);
	socket.pause();
	socket.write(`GET ${pagePath(page)}events HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
	return {
		socket,
		/** Reads again; resolves with the events' names once a second `state` arrives. */
		read: () =>
			new Promise((resolve) => {
				let text = "";
				socket.setEncoding("utf8");
				socket.on("data", (chunk: string) => {
					text += chunk;
					const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]!);
					if (names.filter((n) => n === "state").length >= 2) resolve(names);
				});
				socket.resume();
			}),
	};
}

describe("web page: a tab that stops reading", () => {
	it("holds back its changes past 256 KiB unsent (at most one fresh state more), whatever the traffic, and gets that state once it reads again", async () => {
		const s = await pages.setup();
		const tab = stalledTab(s.page);
		await until(() => (streaming(s.page) === 1 ? true : undefined), "the stream to open");
		// 30 big requests open at once: each one settling moves every other card up, each move a ~50 KB frame.
		const calls = [];
		for (let i = 0; i < 30; i++) calls.push((await s.ask([big(i)], { label: `asker${i}` })).call);
		// A fresh state, written once the tab drained, holds every open card: at most this much.
		const fullState = Buffer.byteLength(JSON.stringify(s.handle.snapshot()!.open)) + 64 * 1024;
		let most = 0;
		for (let i = 0; i < 30; i++) {
			const dialog = await until(() => s.fake.current(), "a dialog");
			dialog.answer("option 0");
			await calls[i];
			await new Promise((resolve) => setImmediate(resolve));
			most = Math.max(most, unsentBytes(s.page.address.port));
		}
		// Without the bound this is every frame since the stall, tens of MB.
		expect(most).toBeLessThanOrEqual(STREAM_BUFFER_BYTES + fullState);
		expect(fullState).toBeLessThan(2 * 1024 * 1024);
		expect(openConnections(s.page.address.port)).toBe(1);
		const events = await tab.read();
		// What was held back is replaced by the state as it is now: nothing open.
		expect(events.at(-1)).toBe("state");
		expect(events.length).toBeLessThan(30 * 30);
	}, 60_000);

	it("is closed when it is still behind at two keep-alive pings in a row", async () => {
		const s = await pages.setup({ keepAliveMs: 100 });
		stalledTab(s.page);
		await until(() => (streaming(s.page) === 1 ? true : undefined), "the stream to open");
		const calls = [];
		for (let i = 0; i < 20; i++) calls.push((await s.ask([big(i)], { label: `asker${i}` })).call);
		// Answered over several keep-alive periods, so the pings come while changes pile up, however fast the host settles them.
		for (let i = 0; i < 20; i++) {
			(await until(() => s.fake.current(), "a dialog")).answer("option 0");
			await calls[i];
			await new Promise((resolve) => setTimeout(resolve, 30));
		}
		await until(() => (openConnections(s.page.address.port) === 0 ? true : undefined), "the stalled stream to be closed", 3_000);
		expect(unsentBytes(s.page.address.port)).toBe(0);
	}, 60_000);
});
