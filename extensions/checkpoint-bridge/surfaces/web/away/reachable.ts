/**
 * Whether a phone can open the page's links, and what to do when it cannot: a page on loopback
 * without a public origin hands out `http://127.0.0.1:…` links, which on a phone open the phone
 * itself. The machine's own addresses are listed, never chosen: listening beyond loopback is the
 * user's decision (anyone on that network who sees a link can answer).
 */
import { networkInterfaces } from "node:os";

/** Whether a URL's host is this machine's loopback. */
function isLoopbackUrl(url: string): boolean {
	const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
	return host === "localhost" || host === "::1" || /^127\./.test(host);
}

/** This machine's addresses a phone might reach, each named by its interface; a tailnet's (100.64.0.0/10, or a `tailscale` interface) marked. */
function machineAddresses(interfaces = networkInterfaces()): string[] {
	const found: string[] = [];
	for (const [name, list] of Object.entries(interfaces)) {
		for (const entry of list ?? []) {
			if (entry.internal || (entry.family === "IPv6" && /^fe80:/i.test(entry.address))) continue;
			const [a, b] = entry.address.split(".").map(Number);
			const tailnet = name.startsWith("tailscale") || (entry.family === "IPv4" && a === 100 && b! >= 64 && b! < 128);
			found.push(`${entry.family === "IPv6" ? `[${entry.address}]` : entry.address} (${name}${tailnet ? ", tailnet" : ""})`);
		}
	}
	return found;
}

/**
 * The warning for a page whose links a phone cannot open (`url` on loopback), naming `why` (the
 * variables that send links, or the QR code); undefined when they can.
 */
export function unreachableLinksWarning(url: string, why: string, interfaces?: ReturnType<typeof networkInterfaces>): string | undefined {
	if (!isLoopbackUrl(url)) return undefined;
	const { port } = new URL(url);
	const addresses = machineAddresses(interfaces);
	return [
		`checkpoint-bridge: ${why} point at this machine's loopback (${new URL(url).origin}): a phone opens its own instead. Make the page reachable and set CHECKPOINT_BRIDGE_WEB_PUBLIC_URL to the origin the phone uses:`,
		`- tailscale serve: \`tailscale serve --bg ${port}\`, then CHECKPOINT_BRIDGE_WEB_PUBLIC_URL=https://<machine>.<tailnet>.ts.net`,
		`- a reverse proxy (nginx, caddy) in front of 127.0.0.1:${port}, its https origin in CHECKPOINT_BRIDGE_WEB_PUBLIC_URL`,
		addresses.length
			? `- or listen on one of this machine's addresses (anyone on that network who sees a link can answer): CHECKPOINT_BRIDGE_WEB=<address>:<port> with one of ${addresses.join(", ")}`
			: "- or listen on an address of this machine that the phone reaches: CHECKPOINT_BRIDGE_WEB=<address>:<port> (anyone on that network who sees a link can answer)",
	].join("\n");
}
