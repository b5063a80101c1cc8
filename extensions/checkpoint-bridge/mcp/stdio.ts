/**
 * The MCP stdio transport of the bin, bounded both ways. A JSON-RPC line longer than the limit is
 * refused (said on stderr, answered with an error when its id can be read) and the server serves
 * on, where the SDK's own transport closes and ends every open call. When the client does not read
 * what is written to it, reading its input pauses until the output drains: what is queued for it
 * stays bounded, and progress notifications are dropped meanwhile (the next one says as much).
 */
import type { Readable, Writable } from "node:stream";
import { deserializeMessage, type JSONRPCMessage, serializeMessage, type Transport } from "@modelcontextprotocol/server";

/** Longest JSON-RPC line read: the SDK's own limit. @default 10 MiB */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Output queued for the client past which its input is no longer read, and progress is dropped. @default 4 MiB */
const MAX_QUEUED_OUTPUT_BYTES = 4 * 1024 * 1024;
/** What of an over-long line is kept to read its id from: the SDK writes `id` last, after the params. */
const TAIL_BYTES = 256;

export interface BoundedStdioOptions {
	stdin?: Readable;
	stdout?: Writable;
	/** Where a refused line is told. @default process.stderr */
	log?: (line: string) => void;
	/** @default MAX_LINE_BYTES */
	maxLineBytes?: number;
	/** @default MAX_QUEUED_OUTPUT_BYTES */
	maxQueuedBytes?: number;
}

/** The id of a JSON-RPC request from the start or end of its line, when it stands where serialisers put it. */
function idIn(head: string, tail: string): string | number | undefined {
	const match =
		/"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")\s*}\s*$/.exec(tail) ??
		/^\s*{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")/.exec(head);
	if (!match) return undefined;
	try {
		return JSON.parse(match[1]!) as string | number;
	} catch {
		return undefined;
	}
}

export class BoundedStdioTransport implements Transport {
	onclose?: () => void;
	onerror?: (error: Error) => void;
	onmessage?: (message: JSONRPCMessage) => void;
	readonly #stdin: Readable;
	readonly #stdout: Writable;
	readonly #log: (line: string) => void;
	readonly #maxLine: number;
	readonly #maxQueued: number;
	/** The current line's pieces, while it is within the limit. */
	#pieces: Buffer[] = [];
	#size = 0;
	/** Set while an over-long line is skipped to its end: its first bytes and its last. */
	#skipping: { head: string; tail: Buffer; bytes: number } | undefined;
	#closed = false;

	constructor(options: BoundedStdioOptions = {}) {
		this.#stdin = options.stdin ?? process.stdin;
		this.#stdout = options.stdout ?? process.stdout;
		this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
		this.#maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
		this.#maxQueued = options.maxQueuedBytes ?? MAX_QUEUED_OUTPUT_BYTES;
	}

	readonly #onData = (chunk: Buffer) => {
		let start = 0;
		for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
			this.#take(chunk.subarray(start, nl));
			this.#endLine();
			start = nl + 1;
		}
		if (start < chunk.length) this.#take(chunk.subarray(start));
		if (this.#stdout.writableLength > this.#maxQueued) this.#stdin.pause();
	};
	readonly #onDrain = () => {
		if (!this.#closed) this.#stdin.resume();
	};
	readonly #onEnd = () => void this.close();
	readonly #onError = (error: Error) => this.onerror?.(error);

	/** Adds bytes to the current line, or to the skipped one's count once it is over the limit. */
	#take(piece: Buffer): void {
		if (this.#skipping) {
			this.#skipping.bytes += piece.length;
			this.#skipping.tail = Buffer.concat([this.#skipping.tail, piece]).subarray(-TAIL_BYTES);
			return;
		}
		if (this.#size + piece.length <= this.#maxLine) {
			this.#pieces.push(piece);
			this.#size += piece.length;
			return;
		}
		const line = Buffer.concat([...this.#pieces, piece]);
		this.#skipping = { head: line.subarray(0, TAIL_BYTES).toString("utf8"), tail: line.subarray(-TAIL_BYTES), bytes: line.length };
		this.#pieces = [];
		this.#size = 0;
	}

	#endLine(): void {
		const skipped = this.#skipping;
		if (skipped) {
			this.#skipping = undefined;
			return this.#refuse(skipped);
		}
		const line = Buffer.concat(this.#pieces).toString("utf8").replace(/\r$/, "");
		this.#pieces = [];
		this.#size = 0;
		if (line.trim() === "") return;
		let message: JSONRPCMessage;
		try {
			message = deserializeMessage(line);
		} catch (error) {
			this.onerror?.(error instanceof Error ? error : new Error(String(error)));
			return;
		}
		this.onmessage?.(message);
	}

	#refuse(skipped: { head: string; tail: Buffer; bytes: number }): void {
		const id = idIn(skipped.head, skipped.tail.toString("utf8"));
		const why = `a JSON-RPC message of ${skipped.bytes} bytes is over the limit of ${this.#maxLine} bytes and was not read`;
		this.#log(`checkpoint-bridge-mcp: ${why}${id === undefined ? "" : ` (request id ${JSON.stringify(id)})`}; serving on`);
		if (id !== undefined) void this.send({ jsonrpc: "2.0", id, error: { code: -32600, message: `Invalid request: ${why}.` } });
	}

	async start(): Promise<void> {
		this.#stdin.on("data", this.#onData);
		this.#stdin.on("end", this.#onEnd);
		this.#stdin.on("close", this.#onEnd);
		this.#stdin.on("error", this.#onError);
		this.#stdout.on("drain", this.#onDrain);
		this.#stdout.on("error", this.#onError);
	}

	send(message: JSONRPCMessage): Promise<void> {
		if (this.#closed) return Promise.resolve();
		// Progress is advice: a client that reads nothing is not sent more of it.
		if ("method" in message && message.method === "notifications/progress" && this.#stdout.writableLength > this.#maxQueued) return Promise.resolve();
		return new Promise((resolve) => {
			if (this.#stdout.write(serializeMessage(message))) resolve();
			else this.#stdout.once("drain", () => resolve());
		});
	}

	async close(): Promise<void> {
		if (this.#closed) return;
		this.#closed = true;
		this.#stdin.off("data", this.#onData);
		this.#stdin.off("end", this.#onEnd);
		this.#stdin.off("close", this.#onEnd);
		this.#stdin.off("error", this.#onError);
		this.#stdout.off("drain", this.#onDrain);
		this.#stdin.pause();
		this.onclose?.();
	}
}
