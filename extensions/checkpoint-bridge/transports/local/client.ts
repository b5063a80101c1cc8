/**
 * The asking side across processes: one connection per call to the host's local endpoint, with
 * the same contract as askViaHost. The call settles exactly once: on its result, its budget, its
 * abort, or the connection closing (the host is gone: `no-host` at once). A connection per call
 * also means a host that comes back, at the same path or at a new one, serves the next call.
 * Connecting, the trust checks and the handshake are connect.ts's.
 */
import { runCall, type CallOptions } from "../../core/call.ts";
import type { Envelope } from "../../tool/envelope.ts";
import { addressOf, type EndpointAddress } from "./address.ts";
import { connectToHost, type HostConnection } from "./connect.ts";
import { WIRE_VERSION, type Frame } from "../wire.ts";

export interface RemoteAskOptions extends CallOptions {
	/** Give up when the host has not proven itself after this long (connecting included): `no-host`. @default DEFAULT_CONNECT_TIMEOUT_MS (3000) */
	connectTimeoutMs?: number;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
}

/** Asks the host behind `endpoint` (an address, or the socket's path) and resolves with the call's envelope. Never rejects. */
export function askRemote(endpoint: EndpointAddress | string, options: RemoteAskOptions): Promise<Envelope> {
	const address = typeof endpoint === "string" ? addressOf(endpoint) : endpoint;
	return runCall(options, (call) => {
		const abandon = new AbortController();
		let connection: HostConnection | undefined;
		let ended = false;

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

		void connectToHost(address, {
			...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
			...(options.pid === undefined ? {} : { pid: options.pid }),
			signal: abandon.signal,
			onFrame,
			onFault: (note) => call.finish("error", note),
			onClose: () => call.finish("no-host", "The host process closed the connection (it ended, crashed, or stopped serving) before the questions were answered."),
		}).then((connected) => {
			if (!connected.ok) return call.finish(connected.status, connected.note);
			if (ended) return connected.connection.close();
			connection = connected.connection;
			connection.send({ ...call.request, type: "request", v: WIRE_VERSION });
		});

		return (cancelHost, status) => {
			ended = true;
			abandon.abort();
			// The host drops the request from its queue or dismisses its open dialog; closing alone would do too.
			connection?.close(cancelHost ? { type: "cancel", v: WIRE_VERSION, id: call.id, reason: status === "timeout" ? "timeout" : "cancelled" } : undefined);
		};
	});
}
