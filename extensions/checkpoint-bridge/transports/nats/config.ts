/**
 * Configuration of the NATS transport, read from the environment on both sides. Nothing here
 * loads the NATS client: a process without CHECKPOINT_BRIDGE_NATS never pays for it.
 */
import type { Reach } from "../../core/asking/transport.ts";
import { readHostGrace } from "../../core/shared/config.ts";
import type { Checked } from "../../model/check.ts";

/** Server URL(s), comma-separated: `nats://host:4222,nats://other:4222`. Unset: no NATS transport. */
export const ENV_NATS = "CHECKPOINT_BRIDGE_NATS";
/** The room both sides name; mapped to the subject prefix `cpb.<room>`. @default "default" */
export const ENV_ROOM = "CHECKPOINT_BRIDGE_ROOM";
/** A server token (`authorization { token }`). */
const ENV_TOKEN = "CHECKPOINT_BRIDGE_NATS_TOKEN";
/** A creds file (user JWT and NKey seed) for servers run with accounts. */
const ENV_CREDS = "CHECKPOINT_BRIDGE_NATS_CREDS";
/** A CA certificate (PEM file) that signs the server's certificate, for `tls://` URLs. */
const ENV_CA = "CHECKPOINT_BRIDGE_NATS_CA";

/** The room when none is named. */
const DEFAULT_ROOM = "default";
/** A room is one NATS subject token: letters, digits, `_` and `-`, at most 64. */
const ROOM_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const SCHEMES = new Set(["nats:", "tls:"]);

/** A NATS room is configured: where the transport's code asks (transports.ts). */
export interface NatsReach extends Reach {
	readonly kind: "nats";
	readonly config: NatsConfig;
}

/** The transport's settings, checked. */
export interface NatsConfig {
	/** Server URLs without credentials, in the order given. */
	servers: string[];
	/** The room's name as given (validated). */
	room: string;
	/** Subject prefix of the room: `cpb.<room>`. */
	prefix: string;
	token?: string;
	user?: string;
	pass?: string;
	/** Path of a creds file. */
	credsFile?: string;
	/** Path of a CA certificate (PEM). */
	caFile?: string;
	/** How long an asker waits for a host to come back (CHECKPOINT_BRIDGE_HOST_GRACE_MS, core/shared/config.ts). @default DEFAULT_HOST_GRACE_MS */
	graceMs: number;
}

/** What the environment says: the transport off, on with its settings, or misconfigured. */
export type NatsConfigResult =
	/** CHECKPOINT_BRIDGE_NATS is unset or blank: the transport is off. */
	| { kind: "off" }
	| { kind: "ok"; config: NatsConfig; warnings: string[] }
	/** A value that makes the transport unusable; `error` names the variable. */
	| { kind: "error"; error: string };

/** Parses the server list; user and password in a URL are taken out of it and returned apart. */
function parseServers(raw: string): Checked<{ servers: string[]; user?: string; pass?: string }, { reason: string }> {
	const refuse = (reason: string) => ({ ok: false as const, reason });
	const servers: string[] = [];
	let user: string | undefined;
	let pass: string | undefined;
	for (const part of raw
		.split(",")
		.map((s) => s.trim())
		.filter((s) => s !== "")) {
		let url: URL;
		try {
			url = new URL(part.includes("://") ? part : `nats://${part}`);
		} catch {
			return refuse(`${ENV_NATS}: ${JSON.stringify(part)} is not a server URL (expected nats://host:port or tls://host:port).`);
		}
		if (!SCHEMES.has(url.protocol)) return refuse(`${ENV_NATS}: ${JSON.stringify(part)} uses ${url.protocol}//; only nats:// and tls:// are supported.`);
		if (url.hostname === "") return refuse(`${ENV_NATS}: ${JSON.stringify(part)} names no host.`);
		if (url.username !== "") {
			const u = decodeURIComponent(url.username);
			const p = decodeURIComponent(url.password);
			if (user !== undefined && (u !== user || p !== pass)) return refuse(`${ENV_NATS}: the URLs carry different users; give one user for all servers.`);
			user = u;
			pass = p;
		}
		servers.push(`${url.protocol}//${url.host}`);
	}
	if (servers.length === 0) return refuse(`${ENV_NATS} is set but names no server.`);
	return { ok: true, servers, ...(user !== undefined ? { user, pass: pass ?? "" } : {}) };
}

/** Reads the NATS transport's configuration; read per call, so a changed variable takes effect at once. */
export function readNatsConfig(env: NodeJS.ProcessEnv = process.env): NatsConfigResult {
	const raw = env[ENV_NATS]?.trim();
	if (!raw) return { kind: "off" };
	const parsed = parseServers(raw);
	if (!parsed.ok) return { kind: "error", error: parsed.reason };
	const warnings: string[] = [];
	const room = env[ENV_ROOM]?.trim() || DEFAULT_ROOM;
	if (!ROOM_PATTERN.test(room))
		return { kind: "error", error: `${ENV_ROOM}=${JSON.stringify(room)} is not a room name: use 1 to 64 letters, digits, "_" or "-".` };
	const token = env[ENV_TOKEN]?.trim() || undefined;
	const credsFile = env[ENV_CREDS]?.trim() || undefined;
	const caFile = env[ENV_CA]?.trim() || undefined;
	const methods = [token && ENV_TOKEN, credsFile && ENV_CREDS, parsed.user !== undefined && `a user in ${ENV_NATS}`].filter(Boolean);
	if (methods.length > 1) return { kind: "error", error: `Give one way to authenticate to NATS, not ${methods.join(" and ")}.` };
	if (caFile && !parsed.servers.some((s) => s.startsWith("tls:")))
		warnings.push(`${ENV_CA} is set but no URL in ${ENV_NATS} is tls://; the CA is used only if the server asks for TLS.`);
	const grace = readHostGrace(env);
	if (grace.warning) warnings.push(grace.warning);
	return {
		kind: "ok",
		config: {
			servers: parsed.servers,
			room,
			prefix: `cpb.${room}`,
			...(token ? { token } : {}),
			...(parsed.user !== undefined ? { user: parsed.user, pass: parsed.pass ?? "" } : {}),
			...(credsFile ? { credsFile } : {}),
			...(caFile ? { caFile } : {}),
			graceMs: grace.graceMs,
		},
		warnings,
	};
}
