import { describe, expect, it } from "vitest";
import { parsePublicUrl, parseWebAddress } from "../../../../extensions/checkpoint-bridge/surfaces/web/http/address.ts";
import { startWebPage } from "../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { relay } from "../../support/relay.ts";

describe("web page address", () => {
	it("takes <host>:<port> with an IP address or localhost; loopback is marked", () => {
		expect(parseWebAddress("127.0.0.1:0")).toEqual({ ok: true, address: { host: "127.0.0.1", port: 0, loopback: true } });
		expect(parseWebAddress(" localhost:8787 ")).toEqual({ ok: true, address: { host: "127.0.0.1", port: 8787, loopback: true } });
		expect(parseWebAddress("[::1]:0")).toEqual({ ok: true, address: { host: "::1", port: 0, loopback: true } });
		expect(parseWebAddress("[0:0:0:0:0:0:0:1]:9")).toEqual({ ok: true, address: { host: "::1", port: 9, loopback: true } });
		expect(parseWebAddress("192.168.1.20:8787")).toEqual({ ok: true, address: { host: "192.168.1.20", port: 8787, loopback: false } });
	});

	it("refuses a wildcard (it must name the one interface to serve on), a host name, and a malformed value, saying why", () => {
		for (const [raw, why] of [
			["0.0.0.0:8787", "every interface"],
			["[::]:8787", "every interface"],
			["example.com:80", "IP address"],
			["[127.0.0.1]:80", "IP address"],
			["::1:80", "expected <host>:<port>"],
			["127.0.0.1", "expected <host>:<port>"],
			["127.0.0.1:http", "expected <host>:<port>"],
			["127.0.0.1:65536", "above 65535"],
			["", "expected"],
		] as const) {
			const parsed = parseWebAddress(raw);
			expect(parsed.ok, raw).toBe(false);
			expect((parsed as { reason: string }).reason, raw).toContain(why);
		}
	});

	it("CHECKPOINT_BRIDGE_WEB_PUBLIC_URL takes one http(s) origin; the Host and Origin it adds are exact", () => {
		expect(parsePublicUrl("https://Box.Tailnet.ts.net/")).toEqual({
			ok: true,
			publicOrigin: { origin: "https://box.tailnet.ts.net", host: "box.tailnet.ts.net" },
		});
		expect(parsePublicUrl(" https://box:443 ")).toEqual({ ok: true, publicOrigin: { origin: "https://box", host: "box" } });
		expect(parsePublicUrl("http://proxy.lan:8443")).toEqual({ ok: true, publicOrigin: { origin: "http://proxy.lan:8443", host: "proxy.lan:8443" } });
	});

	it("refuses a public URL that is not one origin, saying why, and the page does not start with it", async () => {
		const reason = (raw: string) => {
			const parsed = parsePublicUrl(raw);
			return parsed.ok ? "accepted" : parsed.reason;
		};
		expect(reason("box.tailnet.ts.net")).toMatch(/not a URL/);
		expect(reason("ftp://box/")).toMatch(/scheme must be https or http/);
		expect(reason("https://user:pw@box/")).toMatch(/credentials/);
		expect(reason("https://box/checkpoints/")).toMatch(/only an origin/);
		expect(reason("https://box/?a=1")).toMatch(/only an origin/);
		expect(reason("https://box/#x")).toMatch(/only an origin/);
		const setup = relay();
		await expect(
			startWebPage({ handle: setup.handle, address: { host: "127.0.0.1", port: 0, loopback: true }, publicUrl: "https://box/sub/" }),
		).rejects.toThrow(/CHECKPOINT_BRIDGE_WEB_PUBLIC_URL="https:\/\/box\/sub\/": only an origin/);
		setup.role.release("quit", "test over");
	});
});
