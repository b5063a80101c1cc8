/**
 * The asking side across processes: one connection per call to the host's local endpoint, with
 * the same contract as askViaHost. The call settles exactly once: on its result, its budget, its
 * abort, or the connection closing (the host is gone: `no-host` at once). A connection per call
 * also means a host that comes back, at the same path or at a new one, serves the next call.
 */
import { promises as fs } from "node:fs";
import net from "node:net";
import { nanoid } from "nanoid";
import type { AskOptions } from "../asker.ts";
import { makeEnvelope, type Answer, type Envelope, type Status } from "../envelope.ts";
import { PROTOCOL_VERSION } from "../protocol.ts";
import { addressOf, ENDPOINT_ENV, type EndpointAddress } from "./address.ts";
import { decodeFrame, encodeFrame, LineReader, type Frame } from "./wire.ts";

export interface RemoteAskOptions extends Omit<AskOptions, "handle"> {
	/** Give up connecting after this long: `no-host`. @default 1500 */
	connectTimeoutMs?: number;
	/** Sent in the hello and shown to the human. @default process.pid */
	pid?: number;
}

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));

/** Asks the host behind `endpoint` (an address, or the socket's path) and resolves with the call's envelope. Never rejects. */
export function askRemote(endpoint: EndpointAddress | string, options: RemoteAskOptions): Promise<Envelope> {
	const { asker, questions, budgetMs, dialogTimeoutMs, signal, onProgress } = options;
	const address = typeof endpoint === "string" ? addressOf(endpoint) : endpoint;
	const startedAt = Date.now();
	const id = nanoid();
	const envelopeFor = (status: Status, answers: Answer[], note?: string) =>
		makeEnvelope(status, answers, note, { requestId: id, asker: asker.label, waitedMs: Date.now() - startedAt });

	if (signal?.aborted) return Promise.resolve(envelopeFor("cancelled", [], "The tool call was aborted before it was asked."));

	return new Promise<Envelope>((resolve) => {
		let answers: Answer[] = [];
		let settled = false;
		let socket: net.Socket | undefined;
		let connected = false;
		let failure: string | undefined;
		let connectTimer: ReturnType<typeof setTimeout> | undefined;

		const finish = (status: Status, note: string | undefined, tellHost: boolean) => {
			if (settled) return;
			settled = true;
			clearTimeout(budgetTimer);
			clearTimeout(connectTimer);
			signal?.removeEventListener("abort", onAbort);
			if (socket && !socket.destroyed) {
				// The host drops the request from its queue or dismisses its open dialog; closing alone would do too.
				const open = socket;
				const close = () => open.destroy();
				if (tellHost && (status === "timeout" || status === "cancelled")) open.end(encodeFrame({ type: "cancel", v: PROTOCOL_VERSION, id, reason: status }), close);
				else open.end(close);
			}
			resolve(envelopeFor(status, answers, note));
		};

		const onFrame = (frame: Frame) => {
			switch (frame.type) {
				case "progress":
					if (frame.id !== id) return;
					answers = frame.answers;
					try {
						const { type: _type, ...progress } = frame;
						onProgress?.(progress);
					} catch {
						// A failing observer must not break the call.
					}
					return;
				case "result":
					if (frame.id !== id) return;
					answers = frame.answers;
					return finish(frame.status, frame.note, false);
				case "error":
					return finish("error", `The host refused the connection (${frame.code}): ${frame.message}`, false);
				default:
					return finish("error", `The host sent a ${frame.type} frame, which only askers send.`, true);
			}
		};

		const connect = (token: string) => {
			const reader = new LineReader();
			const open = net.createConnection(address.socketPath);
			socket = open;
			connectTimer = setTimeout(() => {
				failure = `connecting took longer than ${options.connectTimeoutMs ?? 1_500} ms`;
				open.destroy();
			}, options.connectTimeoutMs ?? 1_500);
			open.once("connect", () => {
				connected = true;
				clearTimeout(connectTimer);
			});
			open.on("error", (error) => (failure ??= errnoOf(error)));
			open.on("close", () => {
				if (connected)
					finish("no-host", "The host process closed the connection (it ended, crashed, or stopped serving) before the questions were answered.", false);
				else finish("no-host", `No host answers at ${address.socketPath} (${failure ?? "closed"}): the host process advertised in ${ENDPOINT_ENV} is gone.`, false);
			});
			open.on("data", (chunk: Buffer) => {
				if (settled) return;
				const lines = reader.push(chunk);
				if (lines === "too-large") return finish("error", "The host sent a frame larger than the limit.", true);
				for (const line of lines) {
					if (settled) return;
					const checked = decodeFrame(line);
					if (!checked.ok) return finish("error", `The host sent a bad frame (${checked.code}): ${checked.message}`, true);
					onFrame(checked.frame);
				}
			});
			// Hello and request in one write, held until the socket connects: a host that refuses the hello
			// then has nothing left to reject with a reset, and its error frame is read.
			open.write(
				encodeFrame({ type: "hello", v: PROTOCOL_VERSION, token, pid: options.pid ?? process.pid }) +
				encodeFrame({
					type: "request",
					v: PROTOCOL_VERSION,
					id,
					asker,
					questions,
					deadline: startedAt + budgetMs,
					dialogTimeoutMs: Math.min(dialogTimeoutMs, budgetMs),
					createdAt: startedAt,
				}),
			);
		};

		const onAbort = () => finish("cancelled", "The tool call was aborted.", true);
		const budgetTimer = setTimeout(
			() => finish("timeout", `The call's budget of ${budgetMs} ms ran out before every question was answered.`, true),
			budgetMs,
		);
		signal?.addEventListener("abort", onAbort, { once: true });

		fs.readFile(address.tokenPath, "utf8").then(
			(token) => {
				if (!settled) connect(token.trim());
			},
			(error: unknown) =>
				finish("no-host", `No host endpoint at ${address.socketPath} (its token file: ${errnoOf(error)}): the host process advertised in ${ENDPOINT_ENV} is gone.`, false),
		);
	});
}
