/**
 * The answers of requests whose asker fell silent, kept for its re-send: when the asker comes back (a
 * nats-server restart, a fail-over) and sends its request again, they are put back even if the
 * progress that carried them never reached it. Kept per inbox and asker id, for a while, bounded in
 * number and counted in bytes against the room's bound (the oldest make way first).
 */
import type { Answer } from "../../../model/answer.ts";

/** Answers kept for a re-send, with what the re-send must repeat to get them back. */
interface ResendAnswersEntry {
	answers: Answer[];
	askerKey: string;
	/** So that a ping for it is answered sealed, and its asker re-sends at once. */
	macKey: Buffer;
	cancelHash: string;
}

export interface ResendAnswers {
	/** Keeps the answers of request `id` of `inbox` from `at` (epoch ms), replacing what was kept for it. */
	keep(inbox: string, id: string, entry: ResendAnswersEntry, at: number): void;
	/** What is kept for request `id` of `inbox`, left where it is. */
	get(inbox: string, id: string): ResendAnswersEntry | undefined;
	/** Takes the answers out for a re-send that repeats the asker's key and cancel hash; none otherwise. */
	takeFor(inbox: string, id: string, askerKey: string, cancelHash: string): Answer[];
	/** Discards the oldest; false when nothing is kept. */
	discardOldest(): boolean;
	/** Discards what was kept longer than the keeping time, and the oldest past the bound. */
	expire(now: number): void;
	clear(): void;
	/** Bytes kept, as JSON. */
	readonly bytes: number;
}

export function resendAnswers(keepMs: number, max: number): ResendAnswers {
	const byRequest = new Map<string, ResendAnswersEntry & { at: number; bytes: number }>();
	let bytes = 0;
	const keyOf = (inbox: string, id: string) => `${inbox}\n${id}`;
	const take = (key: string) => {
		const entry = byRequest.get(key);
		if (!entry) return undefined;
		byRequest.delete(key);
		bytes -= entry.bytes;
		return entry;
	};
	return {
		keep(inbox, id, entry, at) {
			const key = keyOf(inbox, id);
			take(key);
			const size = Buffer.byteLength(JSON.stringify(entry.answers));
			byRequest.set(key, { ...entry, at, bytes: size });
			bytes += size;
		},
		get: (inbox, id) => byRequest.get(keyOf(inbox, id)),
		takeFor(inbox, id, askerKey, cancelHash) {
			const key = keyOf(inbox, id);
			const entry = byRequest.get(key);
			return entry?.askerKey === askerKey && entry.cancelHash === cancelHash ? take(key)!.answers : [];
		},
		discardOldest() {
			const oldest = byRequest.keys().next();
			return !oldest.done && take(oldest.value) !== undefined;
		},
		expire(now) {
			for (const [key, { at }] of byRequest) if (now - at > keepMs || byRequest.size > max) take(key);
		},
		clear() {
			byRequest.clear();
			bytes = 0;
		},
		get bytes() {
			return bytes;
		},
	};
}
