/**
 * An in-memory NATS for unit tests: exact-subject routing, reply subjects, the server's
 * "no responders" status, and clients that can be cut off (a hung or unreachable peer: its
 * subscriptions still count as interest, nothing reaches it or leaves it) or closed.
 * Delivery is asynchronous (a microtask), as over a socket, and works under fake timers.
 */
import type { Broker, BrokerMessage, RequestOutcome } from "../../../extensions/checkpoint-bridge/transports/nats/broker.ts";

export interface FakeClient extends Broker {
	/** Nothing reaches this client or leaves it from now on; its subscriptions stay (the server has not noticed). */
	cut(): void;
	/** Every message this client published, in order. */
	readonly sent: { subject: string; data: Uint8Array; reply?: string }[];
	readonly closed: boolean;
}

interface Subscription {
	client: { cutOff: boolean; closed: boolean };
	onMessage: (message: BrokerMessage) => void;
}

export class FakeNats {
	readonly #subs = new Map<string, Set<Subscription>>();
	#inboxes = 0;

	/** Whether anyone listens on `subject` (cut-off clients included). */
	hasInterest(subject: string): boolean {
		return (this.#subs.get(subject)?.size ?? 0) > 0;
	}

	/** Subscriptions whose subject matches `subject`: exactly, or token by token with `*` for any one token. */
	#matching(subject: string): Subscription[] {
		const tokens = subject.split(".");
		const matches = (pattern: string) => {
			const parts = pattern.split(".");
			return parts.length === tokens.length && parts.every((part, i) => part === "*" || part === tokens[i]);
		};
		return [...this.#subs].filter(([pattern]) => matches(pattern)).flatMap(([, subs]) => [...subs]);
	}

	/** Delivers as the server would; a message with a reply to a subject nobody listens on bounces as no-responders. */
	deliver(from: { cutOff: boolean }, subject: string, data: Uint8Array, reply?: string): void {
		if (from.cutOff) return;
		const targets = this.#matching(subject);
		if (targets.length === 0) {
			if (reply) this.#bounce(reply);
			return;
		}
		for (const sub of targets)
			void Promise.resolve().then(() => {
				if (!sub.client.cutOff && !sub.client.closed) sub.onMessage({ data, subject, ...(reply ? { reply } : {}), noResponders: false });
			});
	}

	#bounce(reply: string): void {
		for (const sub of this.#matching(reply))
			void Promise.resolve().then(() => {
				if (!sub.client.cutOff && !sub.client.closed) sub.onMessage({ data: new Uint8Array(), subject: reply, noResponders: true });
			});
	}

	/** A new connection. */
	client(): FakeClient {
		const state = { cutOff: false, closed: false };
		const mine = new Set<() => void>();
		const sent: FakeClient["sent"] = [];
		const nats = this;
		return {
			sent,
			get closed() {
				return state.closed;
			},
			cut: () => void (state.cutOff = true),
			publish(subject, data, reply) {
				if (state.closed) return;
				sent.push({ subject, data, ...(reply ? { reply } : {}) });
				nats.deliver(state, subject, data, reply);
			},
			subscribe(subject, onMessage) {
				const sub: Subscription = { client: state, onMessage };
				let set = nats.#subs.get(subject);
				if (!set) nats.#subs.set(subject, (set = new Set()));
				set.add(sub);
				const off = () => {
					set!.delete(sub);
					mine.delete(off);
				};
				mine.add(off);
				return off;
			},
			inbox: () => `_INBOX.fake${++nats.#inboxes}`,
			request(subject, data, timeoutMs) {
				return new Promise<RequestOutcome>((resolve) => {
					const inbox = `_INBOX.req${++nats.#inboxes}`;
					let off = () => {};
					const timer = setTimeout(() => {
						off();
						resolve({ kind: "timeout" });
					}, timeoutMs);
					off = this.subscribe(inbox, (message) => {
						clearTimeout(timer);
						off();
						resolve(message.noResponders ? { kind: "no-responders" } : { kind: "reply", data: message.data });
					});
					this.publish(subject, data, inbox);
				});
			},
			async close() {
				state.closed = true;
				for (const off of [...mine]) off();
			},
		};
	}
}
