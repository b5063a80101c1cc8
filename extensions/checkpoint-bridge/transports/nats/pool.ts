/**
 * One NATS connection per asker process and server configuration, kept across calls (and across a
 * host's restart, since a call waiting for the next host holds it), as the local endpoint's pool
 * keeps its connections (ADR-0010): the TCP connect, the server's INFO and the auth are paid once,
 * not per call. Each call gets a lease; what a lease subscribed is unsubscribed when it is closed,
 * and the connection closes once no lease has kept it for `idleMs`. The NATS client offers no way
 * not to keep the process alive, so the idle time is short: a `pi -p` run exits that long after
 * its last call at most.
 *
 * The calls' inboxes share one subscription per connection (`<inbox>.*`, as the NATS client's own
 * requests do): a call's inbox is a fresh unguessable token under it, so the room server still keys
 * each call by its own inbox and the server's "no responders" still names its call, but a call
 * sends no SUB and no UNSUB of its own (each a write to the server and its round of bookkeeping).
 */
import { nanoid } from "nanoid";
import type { Broker, BrokerMessage } from "./broker.ts";
import type { NatsConfig } from "./config.ts";

/** How long a kept connection without a call stays open. @default 1500 */
export const POOL_IDLE_MS = 1_500;

/** The connection's one reply subscription: the calls' inboxes under `prefix`, each routed to its call. */
interface Replies {
	prefix: string;
	routes: Map<string, Set<(message: BrokerMessage) => void>>;
}

interface Pooled {
	broker: Promise<Broker>;
	leases: number;
	idle?: ReturnType<typeof setTimeout>;
	replies?: Replies;
}

/** The connection's reply subscription, made at its first call. */
function repliesOf(entry: Pooled, broker: Broker): Replies {
	if (entry.replies) return entry.replies;
	const replies: Replies = { prefix: `${broker.inbox()}.`, routes: new Map() };
	broker.subscribe(`${replies.prefix}*`, (message) => {
		if (message.subject === undefined) return;
		for (const onMessage of replies.routes.get(message.subject) ?? []) onMessage(message);
	});
	entry.replies = replies;
	return replies;
}

const pool = new Map<string, Pooled>();

/** What makes two configurations share a connection: the servers and the credentials. */
const keyOf = (config: NatsConfig) => JSON.stringify([config.servers, config.token, config.user, config.pass, config.credsFile, config.caFile]);

/**
 * A lease on the process's connection for `config`, opened by `open` when there is none. Its
 * `close()` ends the lease only (its subscriptions go); a failed open is not pooled, so the next call
 * tries again. Rejects as `open` does.
 */
export async function pooledBroker(config: NatsConfig, open: () => Promise<Broker>, idleMs = POOL_IDLE_MS): Promise<Broker> {
	const key = keyOf(config);
	let entry = pool.get(key);
	if (!entry) {
		const created: Pooled = { broker: open(), leases: 0 };
		entry = created;
		pool.set(key, created);
		created.broker.then(
			(broker) => void broker.whenClosed?.then(() => pool.get(key) === created && pool.delete(key)),
			() => pool.get(key) === created && pool.delete(key),
		);
	}
	const current = entry;
	current.leases++;
	clearTimeout(current.idle);
	let broker: Broker;
	try {
		broker = await current.broker;
	} catch (error) {
		current.leases--;
		throw error;
	}
	const subscriptions = new Set<() => void>();
	let released = false;
	return {
		...(broker.authRequired === undefined ? {} : { authRequired: broker.authRequired }),
		publish: (subject, data, reply) => broker.publish(subject, data, reply),
		subscribe(subject, onMessage) {
			const { replies } = current;
			const routes = replies !== undefined && subject.startsWith(replies.prefix) ? replies.routes : undefined;
			const route = routes?.get(subject) ?? new Set();
			if (routes) routes.set(subject, route.add(onMessage));
			const off = routes
				? () => {
						route.delete(onMessage);
						if (route.size === 0 && routes.get(subject) === route) routes.delete(subject);
					}
				: broker.subscribe(subject, onMessage);
			subscriptions.add(off);
			return () => {
				subscriptions.delete(off);
				off();
			};
		},
		inbox: () => `${repliesOf(current, broker).prefix}${nanoid()}`,
		request: (subject, data, timeoutMs) => broker.request(subject, data, timeoutMs),
		async close() {
			if (released) return;
			released = true;
			for (const off of subscriptions) off();
			subscriptions.clear();
			if (--current.leases > 0) return;
			current.idle = setTimeout(() => {
				if (current.leases > 0 || pool.get(key) !== current) return;
				pool.delete(key);
				void broker.close();
			}, idleMs);
		},
	};
}

/** Connections kept now (for tests and the bench). */
export function pooledBrokerCount(): number {
	return pool.size;
}

/** Closes every kept connection now, leases or not (for tests). */
export function closePooledBrokers(): void {
	for (const [key, entry] of [...pool]) {
		pool.delete(key);
		clearTimeout(entry.idle);
		void entry.broker.then((broker) => broker.close()).catch(() => {});
	}
}
