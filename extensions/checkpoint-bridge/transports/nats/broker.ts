/**
 * The little of NATS the transport uses, behind an interface: publish with a reply subject,
 * subscribe, inboxes, one request with a timeout. The host bridge and the asker are written
 * against it, so their timing is unit-tested on a fake broker; `connectBroker` adapts a real
 * connection and is the only place that loads the NATS client, by dynamic import.
 */
import { firstWithin } from "../../core/shared/wait.ts";
import type { NatsConfig } from "./config.ts";

/** One message delivered to a subscription. */
export interface BrokerMessage {
	data: Uint8Array;
	/** The subject it was published to: what tells apart the messages of one wildcard subscription. */
	subject?: string;
	/** The sender's reply subject, if it gave one. */
	reply?: string;
	/** The server's "no responders" status: a message published with this reply subject reached nobody. */
	noResponders: boolean;
}

/** How a request ended: its first reply, nobody serving the subject, the timeout, or a failure. */
export type RequestOutcome = { kind: "reply"; data: Uint8Array } | { kind: "no-responders" } | { kind: "timeout" } | { kind: "failed"; message: string };

/** A NATS connection as the transport uses it. */
export interface Broker {
	/** Publishes `data`; never throws (a closed connection drops it). */
	publish(subject: string, data: Uint8Array, reply?: string): void;
	/** Subscribes; returns the unsubscribe. */
	subscribe(subject: string, onMessage: (message: BrokerMessage) => void): () => void;
	/** A fresh, unguessable reply subject. */
	inbox(): string;
	/** Sends one request and waits for the first reply. Never rejects. */
	request(subject: string, data: Uint8Array, timeoutMs: number): Promise<RequestOutcome>;
	/** Flushes what was published (bounded) and closes. */
	close(): Promise<void>;
	/** Whether the server asked this connection for credentials (its INFO's `auth_required`); undefined when not known. */
	readonly authRequired?: boolean;
	/** Resolves once the connection has closed for good (closed here, or refused by the server). @default not known */
	readonly whenClosed?: Promise<void>;
}

/** Connection tuning. Every timeout is bounded so that nothing hangs on a dead server. */
export interface BrokerOptions {
	/** Shown in the server's connection list. */
	name: string;
	/** Give up the first connection after this long. @default 1500 */
	connectTimeoutMs?: number;
	/** Wait between reconnection attempts; attempts never stop while the connection is wanted. @default 250 */
	reconnectWaitMs?: number;
	/** Connection-level events (disconnect, reconnect, errors), for a host's notices. @default none */
	onStatus?: (text: string) => void;
}

/** Longest the close waits for published messages to leave. @default 1000 */
const CLOSE_FLUSH_MS = 1_000;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Why a connection failed, in words that name the variable to check. */
function connectFailure(error: unknown, config: NatsConfig): string {
	const text = messageOf(error);
	if (/authori[sz]ation|authentication|auth/i.test(text)) {
		const how = config.credsFile
			? "check CHECKPOINT_BRIDGE_NATS_CREDS"
			: config.token
				? "check CHECKPOINT_BRIDGE_NATS_TOKEN"
				: config.user !== undefined
					? "check the user in CHECKPOINT_BRIDGE_NATS"
					: "none were given: set CHECKPOINT_BRIDGE_NATS_TOKEN, CHECKPOINT_BRIDGE_NATS_CREDS or a user in CHECKPOINT_BRIDGE_NATS";
		return `the NATS server refused authorization (${text}; ${how})`;
	}
	const where = `cannot connect to NATS at ${config.servers.join(", ")} (${text})`;
	if (/certificate|self[- ]signed|tls/i.test(text)) return `${where}; check CHECKPOINT_BRIDGE_NATS_CA (the CA that signed the server's certificate)`;
	return where;
}

/** Connects to the servers in `config`; rejects with a message naming what to check. */
export async function connectBroker(config: NatsConfig, options: BrokerOptions): Promise<Broker> {
	// Loaded here only: a process without CHECKPOINT_BRIDGE_NATS never loads the client.
	const nats = await import("@nats-io/transport-node");
	let authenticator: ReturnType<typeof nats.credsAuthenticator> | undefined;
	if (config.credsFile) {
		const { readFile } = await import("node:fs/promises");
		let creds: Uint8Array;
		try {
			creds = await readFile(config.credsFile);
		} catch (error) {
			throw new Error(`CHECKPOINT_BRIDGE_NATS_CREDS: cannot read ${config.credsFile} (${messageOf(error)})`);
		}
		authenticator = nats.credsAuthenticator(creds);
	}
	let nc: Awaited<ReturnType<typeof nats.connect>>;
	try {
		nc = await nats.connect({
			servers: config.servers,
			name: options.name,
			timeout: options.connectTimeoutMs ?? 1_500,
			reconnect: true,
			maxReconnectAttempts: -1,
			reconnectTimeWait: options.reconnectWaitMs ?? 250,
			reconnectJitter: 50,
			reconnectJitterTLS: 50,
			// A cluster's other servers, learnt from the one we reach, are fail-over targets too.
			ignoreClusterUpdates: false,
			...(config.token ? { token: config.token } : {}),
			...(config.user !== undefined ? { user: config.user, pass: config.pass ?? "" } : {}),
			...(authenticator ? { authenticator } : {}),
			...(config.caFile ? { tls: { caFile: config.caFile } } : {}),
		});
	} catch (error) {
		throw new Error(connectFailure(error, config));
	}
	if (options.onStatus) {
		const onStatus = options.onStatus;
		void (async () => {
			for await (const status of nc.status()) {
				if (status.type === "disconnect" || status.type === "reconnect" || status.type === "error")
					onStatus(`${status.type}${"server" in status ? ` ${String(status.server)}` : ""}`);
			}
		})().catch(() => {});
	}
	return {
		authRequired: nc.info?.auth_required === true,
		whenClosed: nc.closed().then(
			() => {},
			() => {},
		),
		publish(subject, data, reply) {
			try {
				nc.publish(subject, data, reply ? { reply } : undefined);
			} catch {
				// Closed or draining: the other side's heartbeats notice the silence.
			}
		},
		subscribe(subject, onMessage) {
			const sub = nc.subscribe(subject, {
				callback: (error, msg) => {
					if (error) return;
					const noResponders = msg.data.length === 0 && msg.headers?.code === 503;
					onMessage({ data: msg.data, subject: msg.subject, ...(msg.reply ? { reply: msg.reply } : {}), noResponders });
				},
			});
			return () => {
				try {
					sub.unsubscribe();
				} catch {
					// Already closed.
				}
			};
		},
		inbox: () => nats.createInbox(),
		async request(subject, data, timeoutMs) {
			try {
				const msg = await nc.request(subject, data, { timeout: timeoutMs });
				return { kind: "reply", data: msg.data };
			} catch (error) {
				const e = error as { name?: string; isNoResponders?: () => boolean; isTimeout?: () => boolean; cause?: unknown };
				if (e instanceof nats.NoRespondersError || e.isNoResponders?.()) return { kind: "no-responders" };
				if (e instanceof nats.TimeoutError || e.isTimeout?.()) return { kind: "timeout" };
				return { kind: "failed", message: messageOf(error) };
			}
		},
		async close() {
			if (nc.isClosed()) return;
			await firstWithin(
				nc.flush().catch(() => {}),
				{ ms: CLOSE_FLUSH_MS, elapsed: () => undefined, unref: true },
			);
			await nc.close().catch(() => {});
		},
	};
}
