/**
 * A hand-driven connection to a local endpoint, for tests of what it accepts and refuses: sends
 * raw bytes, collects the frames it gets back, and can do the handshake as a real client does
 * (or with a wrong proof).
 */
import { readFile } from "node:fs/promises";
import net from "node:net";
import { FRAME_VERSION } from "../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { encodeFrame } from "../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { freshNonce, proofOf } from "../../../extensions/checkpoint-bridge/transports/local/proof.ts";

export type RawFrame = Record<string, unknown>;

/** A connection to `socketPath`; nothing is sent until asked. */
export function rawConnection(socketPath: string) {
	const socket = net.createConnection(socketPath);
	const frames: RawFrame[] = [];
	const waiters: (() => void)[] = [];
	let buffered = "";
	socket.setEncoding("utf8");
	socket.on("data", (text: string) => {
		buffered += text;
		for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
			frames.push(JSON.parse(buffered.slice(0, newline)) as RawFrame);
			buffered = buffered.slice(newline + 1);
		}
		for (const waiter of waiters.splice(0)) waiter();
	});
	// The server may close while this side is still writing (EPIPE): that is the point.
	socket.on("error", () => {});
	let isClosed = false;
	const closed = new Promise<void>((resolve) =>
		socket.on("close", () => {
			isClosed = true;
			for (const waiter of waiters.splice(0)) waiter();
			resolve();
		}),
	);
	/** Resolves with the first frame matching `match`, once it has arrived. */
	const frame = (match: (f: RawFrame) => boolean) =>
		new Promise<RawFrame>((resolve, reject) => {
			const check = () => {
				const found = frames.find(match);
				if (found) return resolve(found);
				if (isClosed) return reject(new Error(`closed without the frame; got ${JSON.stringify(frames)}`));
				waiters.push(check);
			};
			check();
		});
	const send = (text: string) => socket.write(text);
	const nonce = freshNonce();
	const helloLine = (pid = 99, v = FRAME_VERSION.endpoint) => encodeFrame({ type: "hello", v, nonce, pid });
	/** Sends a hello and waits for the welcome; returns the auth line for `token` (a wrong token gives a wrong proof). */
	const welcome = async (token: string, pid = 99) => {
		send(helloLine(pid));
		const got = await frame((f) => f.type === "welcome" || f.type === "error");
		if (got.type !== "welcome") throw new Error(`no welcome: ${JSON.stringify(got)}`);
		return encodeFrame({ type: "auth", v: FRAME_VERSION.endpoint, proof: proofOf(token, "client", nonce, String(got.nonce)) });
	};
	/** The whole handshake, ready for requests. */
	const handshake = async (token: string, pid = 99) => void send(await welcome(token, pid));
	return { socket, frames, closed, frame, send, helloLine, welcome, handshake, nonce };
}

/** The token of the endpoint whose token file is at `tokenPath`. */
export const tokenAt = (tokenPath: string) => readFile(tokenPath, "utf8");

/** A request frame as a line, with a budget of 10 s. */
export function requestLine(id: string, extra: { label?: string; question?: string; v?: number } = {}): string {
	const now = Date.now();
	return encodeFrame({
		type: "request",
		v: extra.v ?? FRAME_VERSION.endpoint,
		id,
		asker: { label: extra.label ?? "intruder", sessionId: "i" },
		questions: [{ question: extra.question ?? "Let me in?" }],
		deadline: now + 10_000,
		dialogTimeoutMs: 10_000,
		createdAt: now,
	});
}
