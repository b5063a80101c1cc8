/** A relay with a fake host UI and a web page on a loopback port, and a raw HTTP client for it. */

import http from "node:http";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import type { Envelope } from "../../../../extensions/checkpoint-bridge/model/result.ts";
import { startWebPage, type WebPage, type WebPageOptions } from "../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { type AskArgs, relay } from "../../support/relay.ts";

export interface RawResponse {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: string;
}

export interface RawRequest {
	method?: string;
	path: string;
	/** Sent as given; `host` is the server's own unless set (null leaves it out). */
	headers?: Record<string, string | null>;
	body?: string | Buffer;
}

/** One HTTP request with exactly the headers given (no Host added unless asked). */
export function raw(page: Pick<WebPage, "address">, request: RawRequest): Promise<RawResponse> {
	const { port, host } = page.address;
	const headers: Record<string, string> = {};
	const given = { host: `${host}:${port}`, ...request.headers };
	for (const [name, value] of Object.entries(given)) if (value !== null) headers[name] = value;
	// Node frames no body of a GET, DELETE or OPTIONS by itself: say its length, unless the test chose chunked.
	if (request.body !== undefined && headers["transfer-encoding"] === undefined && headers["content-length"] === undefined)
		headers["content-length"] = String(Buffer.byteLength(request.body));
	return new Promise((resolve, reject) => {
		const req = http.request({ host, port, method: request.method ?? "GET", path: request.path, headers, setHost: false, agent: false }, (res) => {
			let body = "";
			res.setEncoding("utf8");
			res.on("data", (chunk: string) => (body += chunk));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
			res.on("error", reject);
		});
		// The server may answer and close before a large body is written: that is the answer.
		req.on("error", (error: NodeJS.ErrnoException) => (error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error)));
		req.end(request.body);
	});
}

/** The page's path prefix (`/t/<token>/`) and its origin. */
export const pagePath = (page: WebPage) => new URL(page.url).pathname;
export const linkPathOf = (page: WebPage, requestId: string) => new URL(page.linkFor(requestId)!).pathname;

/** POSTs an answer as the page does: same origin, JSON. */
export function postAnswer(page: WebPage, path: string, body: unknown, headers: Record<string, string | null> = {}): Promise<RawResponse> {
	return raw(page, {
		method: "POST",
		path,
		headers: { origin: page.origin, "content-type": "application/json", ...headers },
		body: typeof body === "string" ? body : JSON.stringify(body),
	});
}

/** A host with a fake UI, a page on 127.0.0.1:0, and a way to ask through the relay. */
export async function pageWithRelay(options: Partial<Omit<WebPageOptions, "handle">> = {}) {
	const setup = relay();
	const page = await startWebPage({
		handle: setup.handle,
		address: { host: "127.0.0.1", port: 0, loopback: true },
		notifyCommand: () => undefined,
		...options,
	});
	const settled: Envelope[] = [];
	/** Asks and returns the request id once the host holds the request. */
	const ask = async (questions: QuestionInput[], args: AskArgs = {}) => {
		const before = new Set(setup.handle.snapshot()!.open.map((o) => o.requestId));
		const call = setup.ask(questions, args).then((envelope) => (settled.push(envelope), envelope));
		for (let i = 0; i < 100; i++) {
			const found = setup.handle.snapshot()!.open.find((o) => !before.has(o.requestId));
			if (found) return { requestId: found.requestId, call };
			await new Promise((resolve) => setImmediate(resolve));
		}
		throw new Error("the host never took the request");
	};
	return { ...setup, page, settled, ask };
}

/** Moves each whole server-sent event of `buffer` into `events`; returns what is left of `buffer`. */
export function takeEvents(buffer: string, events: { event: string; data: any }[]): string {
	let end: number;
	while ((end = buffer.indexOf("\n\n")) >= 0) {
		const block = buffer.slice(0, end);
		buffer = buffer.slice(end + 2);
		const event = /^event: (.*)$/m.exec(block)?.[1];
		const data = /^data: (.*)$/m.exec(block)?.[1];
		if (event && data) events.push({ event, data: JSON.parse(data) });
	}
	return buffer;
}

/** Reads server-sent events from a stream until `until` says stop (or the stream ends). */
export function readEvents(
	page: WebPage,
	path: string,
	until: (events: { event: string; data: any }[]) => boolean,
	onChunk?: (chunk: string) => void,
): Promise<{ event: string; data: any }[]> {
	const { port, host } = page.address;
	return new Promise((resolve, reject) => {
		const events: { event: string; data: any }[] = [];
		const req = http.get({ host, port, path, agent: false }, (res) => {
			if (res.statusCode !== 200) {
				res.resume();
				return reject(new Error(`events: ${res.statusCode}`));
			}
			let buffer = "";
			res.setEncoding("utf8");
			res.on("data", (chunk: string) => {
				onChunk?.(chunk);
				buffer = takeEvents(buffer + chunk, events);
				if (until(events)) {
					req.destroy();
					resolve(events);
				}
			});
			res.on("end", () => resolve(events));
		});
		req.on("error", (error) => (events.length ? resolve(events) : reject(error)));
	});
}

/** pageWithRelay, remembered: `closeAll` (for afterEach) releases each host and closes each page. */
export function trackedPages() {
	const made: Awaited<ReturnType<typeof pageWithRelay>>[] = [];
	return {
		async setup(...args: Parameters<typeof pageWithRelay>) {
			const s = await pageWithRelay(...args);
			made.push(s);
			return s;
		},
		async closeAll() {
			for (const s of made.splice(0)) {
				s.role.release("quit", "test over");
				await s.page.close();
			}
		},
	};
}
