/**
 * The bin's stdio transport, bounded both ways: a line over the limit is refused (said on stderr,
 * answered with an error naming its id) and the next line is served; a client that does not read
 * what is written to it stops being read, so what is queued for it stays bounded.
 */
import { PassThrough, Writable } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedStdioTransport } from "../../../extensions/checkpoint-bridge/mcp/stdio.ts";

const line = (message: object) => `${JSON.stringify(message)}\n`;
const tick = () => new Promise((resolve) => setImmediate(resolve));

function rig(options: { maxLineBytes?: number; maxQueuedBytes?: number; stdout?: Writable } = {}) {
	const stdin = new PassThrough();
	const written: string[] = [];
	const stdout =
		options.stdout ??
		new Writable({
			write(chunk, _encoding, done) {
				written.push(String(chunk));
				done();
			},
		});
	const logged: string[] = [];
	const transport = new BoundedStdioTransport({ stdin, stdout, log: (l) => logged.push(l), ...options });
	const received: JSONRPCMessage[] = [];
	transport.onmessage = (message) => received.push(message);
	return { stdin, stdout, written, logged, transport, received };
}

describe("a line over the limit", () => {
	it("is refused: said on stderr, its id answered with an error, and the next line is served", async () => {
		const { stdin, written, logged, transport, received } = rig({ maxLineBytes: 1_000 });
		await transport.start();
		// The SDK's client writes the id last, after the params.
		stdin.write(`{"method":"tools/call","params":{"x":"${"a".repeat(600)}`);
		stdin.write(`${"b".repeat(600)}"},"jsonrpc":"2.0","id":7}\n`);
		stdin.write(line({ jsonrpc: "2.0", id: 8, method: "ping" }));
		await tick();
		expect(logged).toHaveLength(1);
		expect(logged[0]).toMatch(/a JSON-RPC message of 1\d{3} bytes is over the limit of 1000 bytes and was not read \(request id 7\); serving on/);
		expect(written.map((w) => JSON.parse(w))).toEqual([
			{ jsonrpc: "2.0", id: 7, error: { code: -32600, message: expect.stringContaining("over the limit of 1000 bytes") } },
		]);
		expect(received).toEqual([{ jsonrpc: "2.0", id: 8, method: "ping" }]);
	});

	it("whose id cannot be read is still refused on stderr, and nothing is answered for it", async () => {
		const { stdin, written, logged, transport, received } = rig({ maxLineBytes: 100 });
		await transport.start();
		stdin.write(`${"z".repeat(500)}\n${line({ jsonrpc: "2.0", id: 1, method: "ping" })}`);
		await tick();
		expect(logged).toHaveLength(1);
		expect(written).toEqual([]);
		expect(received).toHaveLength(1);
	});

	it("random chunking of random lines: every line within the limit arrives whole, every line over it is refused once (property)", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 12 }),
				fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 30 }),
				async (sizes, cuts) => {
					const { stdin, logged, transport, received } = rig({ maxLineBytes: 150 });
					await transport.start();
					const lines = sizes.map((size, id) => line({ jsonrpc: "2.0", id, method: "ping", params: { pad: "p".repeat(size) } }));
					const all = Buffer.from(lines.join(""));
					let at = 0;
					for (let i = 0; at < all.length; i++) {
						const size = cuts[i % cuts.length]!;
						stdin.write(all.subarray(at, at + size));
						at += size;
					}
					await tick();
					const fits = lines.map((l, id) => [Buffer.byteLength(l) - 1 <= 150, id] as const);
					expect(received.map((m) => (m as { id: number }).id)).toEqual(fits.filter(([ok]) => ok).map(([, id]) => id));
					expect(logged).toHaveLength(fits.filter(([ok]) => !ok).length);
				},
			),
			{ numRuns: 200 },
		);
	});
});

describe("a client that does not read", () => {
	it("is no longer read once what is queued for it passes the bound; progress is dropped meanwhile; reading resumes when it drains", async () => {
		// A pipe nobody reads: it buffers what is written, up to its high-water mark, then more in its queue.
		const stdout = new PassThrough({ highWaterMark: 1_024 });
		const { stdin, transport } = rig({ maxQueuedBytes: 4_096, stdout });
		transport.onmessage = (message) => {
			// Each request is answered with 1 KB, as an echo of what was wrong with it might be.
			void transport.send({ jsonrpc: "2.0", id: (message as { id: number }).id, result: { pad: "r".repeat(1_000) } });
		};
		await transport.start();
		for (let id = 0; id < 1_000; id++) stdin.write(line({ jsonrpc: "2.0", id, method: "ping" }));
		await tick();
		await tick();
		expect(stdin.isPaused()).toBe(true);
		expect(stdout.writableLength).toBeLessThan(4_096 + 64 * 1_100);
		const before = stdout.writableLength;
		await transport.send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } });
		expect(stdout.writableLength).toBe(before);
		// The client reads again: everything it asked is answered, in order.
		const answered: number[] = [];
		let rest = "";
		stdout.on("data", (chunk: Buffer) => {
			rest += chunk.toString();
			const parts = rest.split("\n");
			rest = parts.pop()!;
			for (const part of parts) answered.push(JSON.parse(part).id);
		});
		for (let i = 0; i < 200 && answered.length < 1_000; i++) await tick();
		expect(answered).toEqual(Array.from({ length: 1_000 }, (_, id) => id));
	});
});
