/**
 * The asking side across processes: one connection per call to the host's local endpoint, with
 * the same contract as askViaHost. The call settles exactly once: on its result, its budget, its
 * abort, or the connection closing (the host is gone: `no-host` at once). A connection per call
 * also means a host that comes back, at the same path or at a new one, serves the next call.
 */
import { promises as fs } from "node:fs";
import net from "node:net";
import { runCall, type CallOptions } from "../../core/call.ts";
import type { Envelope } from "../../tool/envelope.ts";
import { PROTOCOL_VERSION } from "../../core/protocol.ts";
import { addressOf, ENDPOINT_ENV, type EndpointAddress } from "./address.ts";
import { decodeFrame, encodeFrame, LineReader, type Frame } from "../wire.ts";

export interface RemoteAskOptions extends CallOptions {
	/** Give up connecting after this long: `no-host`. @default 1500 */
	connectTimeoutMs?: number;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
}

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));

/** Asks the host behind `endpoint` (an address, or the socket's path) and resolves with the call's envelope. Never rejects. */
export function askRemote(endpoint: EndpointAddress | string, options: RemoteAskOptions): Promise<Envelope> {
	const address = typeof endpoint === "string" ? addressOf(endpoint) : endpoint;
	const connectTimeoutMs = options.connectTimeoutMs ?? 1_500;
	return runCall(options, (call) => {
		let ended = false;
		let socket: net.Socket | undefined;
		let connected = false;
		let failure: string | undefined;
		let connectTimer: ReturnType<typeof setTimeout> | undefined;

		const onFrame = (frame: Frame) => {
			switch (frame.type) {
				case "progress":
				case "result": {
					if (frame.id !== call.id) return;
					const { type: _type, ...reply } = frame;
					return call.reply(reply);
				}
				case "error":
					return call.finish("error", `The host refused the connection (${frame.code}): ${frame.message}`);
				default:
					return call.finish("error", `The host sent a ${frame.type} frame, which only askers send.`);
			}
		};

		const connect = (token: string) => {
			const reader = new LineReader();
			const open = net.createConnection(address.socketPath);
			socket = open;
			connectTimer = setTimeout(() => {
				failure = `connecting took longer than ${connectTimeoutMs} ms`;
				open.destroy();
			}, connectTimeoutMs);
			open.once("connect", () => {
				connected = true;
				clearTimeout(connectTimer);
			});
			open.on("error", (error) => (failure ??= errnoOf(error)));
			open.on("close", () => {
				if (connected)
					call.finish("no-host", "The host process closed the connection (it ended, crashed, or stopped serving) before the questions were answered.");
				else call.finish("no-host", `No host answers at ${address.socketPath} (${failure ?? "closed"}): the host process advertised in ${ENDPOINT_ENV} is gone.`);
			});
			open.on("data", (chunk: Buffer) => {
				if (ended) return;
				const lines = reader.push(chunk);
				if (lines === "too-large") return call.finish("error", "The host sent a frame larger than the limit.");
				for (const line of lines) {
					if (ended) return;
					const checked = decodeFrame(line);
					if (!checked.ok) return call.finish("error", `The host sent a bad frame (${checked.code}): ${checked.message}`);
					onFrame(checked.frame);
				}
			});
			// Hello and request in one write, held until the socket connects: a host that refuses the hello
			// then has nothing left to reject with a reset, and its error frame is read.
			open.write(
				encodeFrame({ type: "hello", v: PROTOCOL_VERSION, token, pid: options.pid ?? process.pid }) + encodeFrame({ type: "request", ...call.request }),
			);
		};

		fs.readFile(address.tokenPath, "utf8").then(
			(token) => {
				if (!ended) connect(token.trim());
			},
			(error: unknown) =>
				call.finish("no-host", `No host endpoint at ${address.socketPath} (its token file: ${errnoOf(error)}): the host process advertised in ${ENDPOINT_ENV} is gone.`),
		);

		return (cancelHost, status) => {
			ended = true;
			clearTimeout(connectTimer);
			if (!socket || socket.destroyed) return;
			// The host drops the request from its queue or dismisses its open dialog; closing alone would do too.
			const open = socket;
			const close = () => open.destroy();
			if (cancelHost) open.end(encodeFrame({ type: "cancel", v: PROTOCOL_VERSION, id: call.id, reason: status === "timeout" ? "timeout" : "cancelled" }), close);
			else open.end(close);
		};
	});
}
