import { describe, expect, it } from "vitest";
import { parseWebAddress } from "../../../../extensions/checkpoint-bridge/surfaces/web/address.ts";

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
});
