/** The NATS transport's configuration: every variable, and every bad value named in its error or warning. */
import { describe, expect, it } from "vitest";
import { readNatsConfig } from "../../../../extensions/checkpoint-bridge/transports/nats/config.ts";

const ok = (env: NodeJS.ProcessEnv) => {
	const result = readNatsConfig(env);
	if (result.kind !== "ok") throw new Error(`expected ok, got ${JSON.stringify(result)}`);
	return result;
};
const error = (env: NodeJS.ProcessEnv) => {
	const result = readNatsConfig(env);
	if (result.kind !== "error") throw new Error(`expected an error, got ${JSON.stringify(result)}`);
	return result.error;
};

describe("readNatsConfig", () => {
	it("is off without CHECKPOINT_BRIDGE_NATS (or with a blank one)", () => {
		expect(readNatsConfig({})).toEqual({ kind: "off" });
		expect(readNatsConfig({ CHECKPOINT_BRIDGE_NATS: "  " })).toEqual({ kind: "off" });
	});

	it("takes comma-separated URLs, a bare host:port as nats://, the room `default` as cpb.default, a grace of 60 s", () => {
		const { config, warnings } = ok({ CHECKPOINT_BRIDGE_NATS: "nats://a:4222, b:4223,tls://c:4224" });
		expect(config).toEqual({ servers: ["nats://a:4222", "nats://b:4223", "tls://c:4224"], room: "default", prefix: "cpb.default", graceMs: 60_000 });
		expect(warnings).toEqual([]);
		expect(ok({ CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_HOST_GRACE_MS: "0" }).config.graceMs).toBe(0);
	});

	it("takes the room, the token, the creds file, the CA and the grace", () => {
		const { config } = ok({
			CHECKPOINT_BRIDGE_NATS: "tls://a:4222",
			CHECKPOINT_BRIDGE_ROOM: "team_a-1",
			CHECKPOINT_BRIDGE_NATS_CA: "/etc/ca.pem",
			CHECKPOINT_BRIDGE_NATS_CREDS: "/home/u/user.creds",
			CHECKPOINT_BRIDGE_HOST_GRACE_MS: "30000",
		});
		expect(config).toMatchObject({ room: "team_a-1", prefix: "cpb.team_a-1", caFile: "/etc/ca.pem", credsFile: "/home/u/user.creds", graceMs: 30_000 });
		expect(ok({ CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_NATS_TOKEN: "s3cret" }).config.token).toBe("s3cret");
	});

	it("takes a user and password out of the URLs (decoded) and keeps them out of the server list", () => {
		const { config } = ok({ CHECKPOINT_BRIDGE_NATS: "nats://alice:p%40ss@a:4222,nats://alice:p%40ss@b:4222" });
		expect(config).toMatchObject({ servers: ["nats://a:4222", "nats://b:4222"], user: "alice", pass: "p@ss" });
	});

	const bad: [string, NodeJS.ProcessEnv, RegExp][] = [
		["an unsupported scheme", { CHECKPOINT_BRIDGE_NATS: "http://a:4222" }, /CHECKPOINT_BRIDGE_NATS.*only nats:\/\/ and tls:\/\//],
		["no server at all", { CHECKPOINT_BRIDGE_NATS: ", ," }, /CHECKPOINT_BRIDGE_NATS is set but names no server/],
		["a URL that does not parse", { CHECKPOINT_BRIDGE_NATS: "nats://a:99999" }, /CHECKPOINT_BRIDGE_NATS: "nats:\/\/a:99999" is not a server URL/],
		["different users per URL", { CHECKPOINT_BRIDGE_NATS: "nats://a:x@h1,nats://b:y@h2" }, /CHECKPOINT_BRIDGE_NATS: the URLs carry different users/],
		[
			"a room with a dot (a subject separator)",
			{ CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_ROOM: "a.b" },
			/CHECKPOINT_BRIDGE_ROOM="a.b" is not a room name/,
		],
		["a room with a wildcard", { CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_ROOM: ">" }, /CHECKPOINT_BRIDGE_ROOM/],
		["a room of 65 characters", { CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_ROOM: "r".repeat(65) }, /CHECKPOINT_BRIDGE_ROOM/],
		[
			"a token and a creds file",
			{ CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_NATS_TOKEN: "t", CHECKPOINT_BRIDGE_NATS_CREDS: "/c" },
			/CHECKPOINT_BRIDGE_NATS_TOKEN and CHECKPOINT_BRIDGE_NATS_CREDS/,
		],
		[
			"a token and a user in the URL",
			{ CHECKPOINT_BRIDGE_NATS: "nats://u:p@a", CHECKPOINT_BRIDGE_NATS_TOKEN: "t" },
			/CHECKPOINT_BRIDGE_NATS_TOKEN and a user in CHECKPOINT_BRIDGE_NATS/,
		],
	];
	for (const [what, env, message] of bad) it(`refuses ${what}, naming the variable`, () => expect(error(env)).toMatch(message));

	it("warns, naming the variable, about a grace that is not a number (and uses the default) and a CA without tls:// URLs", () => {
		const { config, warnings } = ok({ CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_HOST_GRACE_MS: "soon", CHECKPOINT_BRIDGE_NATS_CA: "/ca.pem" });
		expect(config.graceMs).toBe(60_000);
		expect(warnings).toEqual([
			expect.stringMatching(/^CHECKPOINT_BRIDGE_NATS_CA is set but no URL/),
			expect.stringMatching(/^CHECKPOINT_BRIDGE_HOST_GRACE_MS="soon"/),
		]);
		expect(ok({ CHECKPOINT_BRIDGE_NATS: "a", CHECKPOINT_BRIDGE_HOST_GRACE_MS: "-5" }).warnings).toEqual([
			expect.stringMatching(/CHECKPOINT_BRIDGE_HOST_GRACE_MS/),
		]);
	});
});
