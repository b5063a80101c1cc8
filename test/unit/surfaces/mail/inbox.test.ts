/**
 * The inbox against a hostile or broken IMAP server: raw TCP servers on loopback that send an
 * endless line, an endless literal, or chatter that never answers a command, read by the real
 * imapflow inside Inbox. Each costs a bounded amount of memory and a warning, and is tried again
 * after a wait, never in a loop.
 */
import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { IMAP_BOUNDS, Inbox } from "../../../../extensions/checkpoint-bridge/surfaces/mail/transport.ts";
import { until } from "../../../support/until.ts";

/** Bytes the hostile servers send at most; far above the bounds, so a client without them takes them all. @default 64 MiB */
const FLOOD_BYTES = 64 * 1024 * 1024;

const servers: Server[] = [];
const inboxes: Inbox[] = [];
afterEach(async () => {
	await Promise.all(inboxes.splice(0).map((inbox) => inbox.close()));
	for (const server of servers.splice(0)) server.close();
});

/** A server on loopback that runs `talk` for each connection; resolves with its port. */
async function hostile(talk: (socket: Socket) => void): Promise<number> {
	const server = createServer((socket) => {
		socket.on("error", () => {});
		talk(socket);
	});
	servers.push(server);
	server.listen(0, "127.0.0.1");
	await once(server, "listening");
	return (server.address() as { port: number }).port;
}

/** Writes `chunk` as fast as the reader takes it, until FLOOD_BYTES or the reader hangs up; `sent` counts what it took. */
function flood(socket: Socket, chunk: Buffer, sent: { bytes: number; closed: boolean }): void {
	socket.on("close", () => (sent.closed = true));
	const more = () => {
		while (!socket.destroyed && sent.bytes < FLOOD_BYTES) {
			sent.bytes += chunk.length;
			if (!socket.write(chunk)) return void socket.once("drain", more);
		}
	};
	more();
}

function read(port: number, warnings: string[], commandMs = 500) {
	const inbox = new Inbox(
		{ secure: false, host: "127.0.0.1", port, user: "bridge", pass: "p" },
		async () => {},
		(m) => warnings.push(m),
		{
			firstRetryMs: 200,
			commandMs,
		},
	);
	inboxes.push(inbox);
	return inbox;
}

describe("the inbox against a hostile IMAP server", () => {
	it("an endless greeting line: the connection is dropped near the line bound, memory stays bounded, one warning", async () => {
		const sent = { bytes: 0, closed: false };
		const port = await hostile((socket) => {
			if (sent.bytes) return socket.destroy();
			socket.write("* OK ");
			flood(socket, Buffer.alloc(64 * 1024, "x"), sent);
		});
		const rss = process.memoryUsage().rss;
		const warnings: string[] = [];
		read(port, warnings);
		await until(() => sent.closed || sent.bytes >= FLOOD_BYTES, "the reader hangs up or takes the whole flood", 10_000);
		await until(() => warnings.length > 0, "the warning", 5_000);
		const grown = process.memoryUsage().rss - rss;
		// The bound plus what the kernel's socket buffers hold on loopback.
		expect(sent.bytes).toBeLessThan(IMAP_BOUNDS.line + 16 * 1024 * 1024);
		expect(grown).toBeLessThan(48 * 1024 * 1024);
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toMatch(/^cannot read mail from 127\.0\.0\.1:\d+ \(.*Line length.*\); trying again later$/);
	});

	it("an endless literal: refused as soon as its size is announced", async () => {
		const sent = { bytes: 0, closed: false };
		const port = await hostile((socket) => {
			if (sent.bytes) return socket.destroy();
			socket.write("* OK IMAP4rev1 ready\r\n");
			socket.once("data", (line) => {
				const tag = String(line).split(" ")[0];
				socket.write(`* 1 FETCH (BODY[] {${FLOOD_BYTES}}\r\n`);
				flood(socket, Buffer.alloc(64 * 1024, "y"), sent);
				void tag;
			});
		});
		const warnings: string[] = [];
		read(port, warnings);
		await until(() => warnings.length > 0, "the warning", 5_000);
		await until(() => sent.closed || sent.bytes >= FLOOD_BYTES, "the reader hangs up or takes the whole flood", 10_000);
		expect(sent.bytes).toBeLessThan(IMAP_BOUNDS.literal + 16 * 1024 * 1024);
		expect(warnings[0]).toMatch(/^cannot read mail from 127\.0\.0\.1:\d+ \(.*Literal size.*\); trying again later$/);
	});

	it("a server that chatters and never answers a command: warned after the command time, tried again after a doubling wait", async () => {
		const chatter: ReturnType<typeof setInterval>[] = [];
		const port = await hostile((socket) => {
			socket.write("* OK IMAP4rev1 ready\r\n");
			// Never idle, so no inactivity timer fires; never a tagged answer.
			const timer = setInterval(() => socket.write("* OK still thinking\r\n"), 50);
			chatter.push(timer);
			socket.on("close", () => clearInterval(timer));
		});
		const warnings: string[] = [];
		const inbox = read(port, warnings);
		const started = Date.now();
		await until(() => warnings.length > 0, "the warning", 5_000);
		const warnedAfter = Date.now() - started;
		await new Promise((resolve) => setTimeout(resolve, 2_500));
		for (const timer of chatter) clearInterval(timer);
		expect(warnedAfter).toBeLessThan(2_000);
		expect(warnings).toEqual([`cannot read mail from 127.0.0.1:${port} (no answer within 0.5 s); trying again later`]);
		// Each try is 0.5 s of waiting for an answer, then 200, 400, 800 ms … between tries.
		expect(inbox.attempts).toBeGreaterThanOrEqual(2);
		expect(inbox.attempts).toBeLessThanOrEqual(5);
	});

	it("random bytes from a server: never a crash, always a warning", async () => {
		await fc.assert(
			fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 4096 }), fc.boolean(), async (bytes, greet) => {
				const port = await hostile((socket) => {
					if (greet) socket.write("* OK ready\r\n");
					socket.write(bytes);
				});
				const warnings: string[] = [];
				const inbox = read(port, warnings, 300);
				await until(() => warnings.length > 0, "the warning", 3_000);
				await inbox.close();
				expect(warnings[0]).toMatch(/^cannot read mail from 127\.0\.0\.1:\d+ \(.+\); trying again later$/s);
			}),
			{ numRuns: 15 },
		);
	}, 60_000);
});
