/**
 * Where the web answer page listens: `CHECKPOINT_BRIDGE_WEB=<host>:<port>` or the argument of
 * `/checkpoints web`. Loopback by default; any other address must be spelled out as the one
 * interface to serve on (no wildcard), because the server only answers requests whose `Host`
 * header names that very address (DNS rebinding).
 */
import net from "node:net";
import type { Checked } from "../../../model/check.ts";

/** Where `/checkpoints web` serves when neither its argument nor WEB_ENV names an address. @default "127.0.0.1:0" (any free port) */
export const DEFAULT_WEB_ADDRESS = "127.0.0.1:0";

export interface WebAddress {
	/** The IP address to listen on (IPv6 without brackets). */
	host: string;
	/** 0 = any free port. */
	port: number;
	/** True for 127.0.0.0/8 and ::1: only this machine can connect. */
	loopback: boolean;
}

/** An IP address in the form browsers and Node print it (IPv6 compressed), so a `Host` header can be compared as text. */
const canonical = (ip: string) => new net.SocketAddress({ address: ip, family: net.isIPv6(ip) ? "ipv6" : "ipv4" }).address;

/** A loopback address: only processes on this machine reach it. */
function isLoopback(host: string): boolean {
	if (net.isIPv4(host)) return host.split(".")[0] === "127";
	return net.isIPv6(host) && canonical(host) === "::1";
}

/** How an address appears in a URL and in a `Host` header: IPv6 in brackets. */
export const urlHost = (host: string) => (net.isIPv6(host) ? `[${host}]` : host);

/** Parses `<host>:<port>` (`[v6]:port` for IPv6; `localhost` means 127.0.0.1), or says what is wrong with it. */
export function parseWebAddress(raw: string): Checked<{ address: WebAddress }, { reason: string }> {
	const text = raw.trim();
	const fail = (why: string) => ({ ok: false as const, reason: `${JSON.stringify(raw)}: ${why}` });
	const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
	if (!match) return fail("expected <host>:<port>, e.g. 127.0.0.1:0 or [::1]:8787 (port 0 = any free port)");
	const port = Number(match[3]);
	if (port > 65_535) return fail(`port ${port} is above 65535`);
	const named = (match[1] ?? match[2]!).toLowerCase();
	const ip = named === "localhost" ? "127.0.0.1" : named;
	if (match[1] !== undefined ? !net.isIPv6(ip) : !net.isIPv4(ip)) return fail("the host must be an IP address (IPv6 in brackets) or localhost");
	const host = canonical(ip);
	if (host === "0.0.0.0" || host === "::") return fail("that listens on every interface; name the one address to serve on (e.g. 192.168.1.20:8787)");
	return { ok: true, address: { host, port, loopback: isLoopback(host) } };
}

/** Environment variable naming the one external origin (a reverse proxy in front of the page) the page also answers on, e.g. `https://box.tailnet.ts.net`. */
export const WEB_PUBLIC_URL_ENV = "CHECKPOINT_BRIDGE_WEB_PUBLIC_URL";

/** The page as a reverse proxy serves it: the `Host` it forwards and the `Origin` browsers send. */
export interface PublicOrigin {
	/** e.g. `https://box.tailnet.ts.net` (no default port). */
	origin: string;
	/** e.g. `box.tailnet.ts.net`, as a `Host` header names it. */
	host: string;
}

/** Parses an `http(s)://host[:port]` origin (a trailing `/` allowed, nothing else after it), or says what is wrong with it. */
export function parsePublicUrl(raw: string): Checked<{ publicOrigin: PublicOrigin }, { reason: string }> {
	const fail = (why: string) => ({ ok: false as const, reason: `${WEB_PUBLIC_URL_ENV}=${JSON.stringify(raw)}: ${why}` });
	let url: URL;
	try {
		url = new URL(raw.trim());
	} catch {
		return fail("not a URL; expected e.g. https://box.tailnet.ts.net");
	}
	if (url.protocol !== "https:" && url.protocol !== "http:") return fail("the scheme must be https or http");
	if (url.username || url.password) return fail("a URL with credentials is refused");
	if (url.pathname !== "/" || url.search || url.hash) return fail("only an origin is accepted (no path, query or fragment): the page serves from its root");
	return { ok: true, publicOrigin: { origin: url.origin, host: url.host } };
}
