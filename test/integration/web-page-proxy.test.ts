/**
 * The page behind a real HTTPS reverse proxy (issue 19, item 9): Debian's nginx on loopback with a
 * self-signed certificate made by openssl, forwarding the Host it was sent, as `tailscale serve`
 * does. With CHECKPOINT_BRIDGE_WEB_PUBLIC_URL naming the proxy's origin the page, its stream and
 * its answers work through the proxy and the announced link is the proxy's; every other Host and
 * Origin is still refused. Raw HTTPS requests, each header exactly as given.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pageWithRelay } from "../unit/surfaces/web/support.ts";
import { selfSigned } from "./harness/certificates.ts";

const NAME = "cpb.test";
/** Debian puts it in /usr/sbin, which a non-root PATH may lack. */
const NGINX = existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";
let dir: string;
let cert: Buffer;
let proxyPort: number;
let pagePort: number;
let nginx: ChildProcess | undefined;
const cleanups: (() => Promise<void> | void)[] = [];

const freePort = () =>
	new Promise<number>((resolve) => {
		const server = net.createServer().listen(0, "127.0.0.1", () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
	});

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), "cpb-proxy-"));
	selfSigned(dir, "cert", `/CN=${NAME}`, `DNS:${NAME}`);
	cert = readFileSync(join(dir, "cert.pem"));
	proxyPort = await freePort();
	pagePort = await freePort();
	const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((name) => `${name}_temp_path ${dir}/${name};`).join(" ");
	writeFileSync(
		join(dir, "nginx.conf"),
		`master_process off; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 64; }
http { access_log off; ${temp}
	server {
		listen 127.0.0.1:${proxyPort} ssl; server_name ${NAME};
		ssl_certificate ${dir}/cert.pem; ssl_certificate_key ${dir}/cert.key;
		location / {
			proxy_pass http://127.0.0.1:${pagePort};
			proxy_set_header Host $http_host;
			proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off;
		}
	}
}
`,
	);
	nginx = spawn(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "ignore", "pipe"] });
	// Ready once it accepts connections.
	for (let i = 0; ; i++) {
		const up = await new Promise<boolean>((resolve) => {
			const socket = net.connect(proxyPort, "127.0.0.1", () => (socket.destroy(), resolve(true)));
			socket.on("error", () => resolve(false));
		});
		if (up) break;
		if (i > 200) throw new Error(`nginx did not start: ${readFileSync(join(dir, "error.log"), "utf8")}`);
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
});

afterAll(() => {
	nginx?.kill("SIGKILL");
	rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
	for (const cleanup of cleanups.splice(0)) await cleanup();
});

const publicOrigin = () => `https://${NAME}:${proxyPort}`;

/** One HTTPS request to the proxy, with exactly the headers given (Host is the proxy's public name unless set). */
function viaProxy(
	path: string,
	options: { method?: string; headers?: Record<string, string>; body?: string; untilEvent?: string } = {},
): Promise<{ status: number; body: string }> {
	const headers: Record<string, string> = { host: `${NAME}:${proxyPort}`, ...options.headers };
	if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
	return new Promise((resolve, reject) => {
		const req = https.request(
			{ host: "127.0.0.1", port: proxyPort, servername: NAME, ca: cert, method: options.method ?? "GET", path, headers, setHost: false, agent: false },
			(res) => {
				let body = "";
				res.setEncoding("utf8");
				res.on("data", (chunk: string) => {
					body += chunk;
					if (options.untilEvent && body.includes(`event: ${options.untilEvent}\n`)) {
						req.destroy();
						resolve({ status: res.statusCode ?? 0, body });
					}
				});
				res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
			},
		);
		req.on("error", reject);
		req.end(options.body);
	});
}

async function page(publicUrl?: string) {
	const s = await pageWithRelay({ address: { host: "127.0.0.1", port: pagePort, loopback: true }, ...(publicUrl ? { publicUrl } : {}) });
	cleanups.push(async () => {
		s.role.release("quit", "test over");
		await s.page.close();
	});
	return s;
}

describe("web page behind an HTTPS reverse proxy (nginx)", () => {
	it("with CHECKPOINT_BRIDGE_WEB_PUBLIC_URL the page, its stream and its answers work through the proxy, and the links shown are the proxy's", async () => {
		const s = await page(publicOrigin());
		const token = new URL(s.page.url).pathname;
		expect(s.page.url).toMatch(new RegExp(`^${publicOrigin().replaceAll(".", "\\.")}/t/[A-Za-z0-9_-]{43}/$`));
		const { requestId, call } = await s.ask([{ question: "Through the proxy?", options: ["yes", "no"] }]);
		expect(s.page.linkFor(requestId)).toMatch(new RegExp(`^${publicOrigin().replaceAll(".", "\\.")}/r/`));
		expect((await viaProxy(token)).status).toBe(200);
		const events = await viaProxy(`${token}events`, { untilEvent: "state" });
		expect(events.status).toBe(200);
		expect(events.body).toContain("Through the proxy?");
		const answer = await viaProxy(`${token}answer`, {
			method: "POST",
			headers: { origin: publicOrigin(), "content-type": "application/json" },
			body: JSON.stringify({ requestId, answers: ["yes"] }),
		});
		expect(answer).toEqual({ status: 200, body: '{"ok":true}' });
		expect((await call).answers).toMatchObject([{ answer: "yes", source: "web" }]);
	});

	it("keeps refusing every other Host and Origin, through the proxy or not", async () => {
		const s = await page(publicOrigin());
		const token = new URL(s.page.url).pathname;
		const { requestId } = await s.ask([{ question: "Refused?", options: ["yes", "no"] }]);
		for (const host of [`evil.test:${proxyPort}`, NAME, `${NAME}:${proxyPort + 1}`])
			expect(await viaProxy(token, { headers: { host } })).toMatchObject({ status: 403, body: expect.stringContaining("does not name this server") });
		const post = (origin: string) =>
			viaProxy(`${token}answer`, {
				method: "POST",
				headers: { origin, "content-type": "application/json" },
				body: JSON.stringify({ requestId, answers: ["yes"] }),
			});
		for (const origin of [`https://evil.test:${proxyPort}`, `http://${NAME}:${proxyPort}`, `https://${NAME}:${proxyPort + 1}`, "null"])
			expect(await post(origin)).toMatchObject({ status: 403, body: expect.stringContaining("only the page itself may answer") });
		expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
	});

	it("without it the proxy's Host is refused, as before", async () => {
		const s = await page();
		expect(s.page.url.startsWith(`http://127.0.0.1:${pagePort}/t/`)).toBe(true);
		expect((await viaProxy(new URL(s.page.url).pathname)).status).toBe(403);
	});
});
