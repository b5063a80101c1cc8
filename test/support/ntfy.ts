/**
 * ntfy as the tests play it, written from ntfy's documentation: how its server reads an `Actions`
 * header (a JSON array when the value starts with `[`, else the simple format: actions split by
 * `;`, fields by `,`, a field `key=value` or by position `action, label, url`, a value quoted with
 * `"` or `'` that ends at the first quote not preceded by `\`, `\<quote>` read as the quote), and a
 * stand-in server of its JSON publish API (`POST /` with `{ topic, … }`) that keeps every message.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ParsedAction {
	action: string;
	label: string;
	url?: string;
	method?: string;
	clear?: boolean;
	body?: string;
	headers?: Record<string, string>;
}

/** The simple format, as ntfy's server reads it; throws where ntfy answers 400. */
function parseSimple(input: string): ParsedAction[] {
	let pos = 0;
	const spaces = () => {
		while (pos < input.length && /[ \t\r\n]/.test(input[pos]!)) pos++;
	};
	const actions: ParsedAction[] = [];
	while (pos < input.length) {
		const fields: Record<string, string> = {};
		let section = 0;
		for (;;) {
			spaces();
			const key = /^([-.\w]+)\s*=\s*/.exec(input.slice(pos));
			if (key) pos += key[0].length;
			let value = "";
			let last = false;
			const c = input[pos];
			if (c === undefined || c === ";" || c === ",") {
				last = c !== ",";
				pos++;
			} else if (c === '"' || c === "'") {
				const start = ++pos;
				while (pos < input.length && !(input[pos] === c && input[pos - 1] !== "\\")) pos++;
				if (pos >= input.length) throw new Error("unexpected end of input in a quoted value");
				value = input.slice(start, pos).replaceAll(`\\${c}`, c);
				pos++;
				spaces();
				const end = input[pos];
				if (end !== undefined && end !== ";" && end !== ",") throw new Error(`unexpected character ${JSON.stringify(end)} after a quoted value`);
				last = end !== ",";
				pos++;
			} else {
				const start = pos;
				while (pos < input.length && input[pos] !== ";" && input[pos] !== ",") pos++;
				value = input.slice(start, pos).trim();
				last = input[pos] !== ",";
				pos++;
			}
			const name =
				key?.[1] ?? (section === 0 ? "action" : section === 1 ? "label" : section === 2 && ["view", "http"].includes(fields.action ?? "") ? "url" : "");
			if (!name) throw new Error(`term ${JSON.stringify(value)} unknown`);
			fields[name.toLowerCase()] = value;
			section++;
			if (last) break;
		}
		const { action = "", label = "", url, method, clear, body } = fields;
		actions.push({
			action: action.toLowerCase(),
			label,
			...(url === undefined ? {} : { url }),
			...(method === undefined ? {} : { method: method.toUpperCase() }),
			...(clear === undefined ? {} : { clear: ["true", "yes", "1"].includes(clear.toLowerCase()) }),
			...(body === undefined ? {} : { body }),
		});
	}
	return actions;
}

/** An `Actions` header as ntfy's server reads it; throws where ntfy refuses it (400). */
export function parseNtfyActionsHeader(header: string): ParsedAction[] {
	const value = header.trim();
	const actions = value.startsWith("[") ? (JSON.parse(value) as ParsedAction[]) : parseSimple(value);
	if (actions.length > 3) throw new Error("only 3 actions allowed");
	for (const a of actions) {
		if (!["view", "http", "broadcast"].includes(a.action)) throw new Error(`action ${JSON.stringify(a.action)} unknown`);
		if (!a.label) throw new Error("parameter 'label' is required");
	}
	return actions;
}

/** One message the stand-in received: its JSON body, and the headers it came with. */
interface NtfyReceived {
	path: string;
	headers: http.IncomingHttpHeaders;
	/** The raw body, for checks that nothing else slipped in. */
	raw: string;
	json: Record<string, unknown> & { topic?: string; sequence_id?: string; actions?: ParsedAction[]; title?: string; message?: string; click?: string };
}

/** A stand-in ntfy server: `POST /` with a JSON message is taken (200), anything else refused; `fail` answers the next n publishes with 503. */
export async function fakeNtfy(options: { token?: string } = {}) {
	const received: NtfyReceived[] = [];
	let failNext = 0;
	const server = http.createServer((req, res) => {
		let raw = "";
		req.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
		req.on("end", () => {
			if (options.token && req.headers.authorization !== `Bearer ${options.token}`)
				return res.writeHead(403, { "content-type": "application/json" }).end('{"code":40301,"error":"forbidden"}');
			if (failNext > 0) {
				failNext--;
				return res.writeHead(503).end();
			}
			let json: NtfyReceived["json"];
			try {
				json = JSON.parse(raw) as NtfyReceived["json"];
			} catch {
				return res.writeHead(400).end('{"error":"invalid request: body must be JSON"}');
			}
			if (req.method !== "POST" || req.url !== "/" || typeof json.topic !== "string") return res.writeHead(400).end('{"error":"invalid request"}');
			received.push({ path: req.url, headers: req.headers, raw, json });
			res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: `m${received.length}`, topic: json.topic, event: "message" }));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		origin,
		received,
		fail(n: number) {
			failNext = n;
		},
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** What a phone does on a tap of an `http` action: its method (POST by default), its body, no Origin. */
export async function pressAction(action: Pick<ParsedAction, "url" | "method" | "body">): Promise<{ status: number; body: string }> {
	const response = await fetch(action.url!, {
		method: action.method ?? "POST",
		headers: { "user-agent": "ntfy Android" },
		...(action.body ? { body: action.body } : {}),
	});
	return { status: response.status, body: await response.text() };
}
