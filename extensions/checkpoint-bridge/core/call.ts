/**
 * One call's life on the asking side, whatever carries it (the in-process bus or the local socket):
 * its id and request, the answers so far, its budget, its abort, and settling exactly once.
 */
import { nanoid } from "nanoid";
import { makeEnvelope, type Answer, type Envelope, type Status } from "../tool/envelope.ts";
import { PROTOCOL_VERSION, type AskerIdentity, type RelayProgress, type RelayReply, type RelayRequest } from "./protocol.ts";
import type { QuestionInput } from "../tool/validate.ts";

export interface CallOptions {
	asker: AskerIdentity;
	questions: QuestionInput[];
	/** The call's whole budget in ms, queue wait included. */
	budgetMs: number;
	/** Longest one dialog may stay open, in ms. */
	dialogTimeoutMs: number;
	/** The tool call's own abort signal: aborting settles the call as `cancelled` and closes its dialog. */
	signal?: AbortSignal;
	/** Called for every progress reply: queued, shown, answered. */
	onProgress?: (progress: RelayProgress) => void;
}

/** What a transport gets to drive one call. */
export interface CallControl {
	readonly id: string;
	/** The request to deliver to the host. */
	readonly request: RelayRequest;
	/** A reply from the host: progress is passed on, a result settles the call. */
	reply(reply: RelayReply): void;
	/** Settles the call; later calls do nothing. */
	finish(status: Status, note?: string): void;
}

/**
 * Runs a call. `start` delivers the request and returns what to do when the call ends; `cancelHost`
 * is true when the asker gave up (budget, abort) and the host should drop the request or close
 * its dialog. Resolves with the envelope; never rejects.
 */
export function runCall(options: CallOptions, start: (call: CallControl) => ((cancelHost: boolean, status: Status) => void) | void): Promise<Envelope> {
	const { asker, questions, budgetMs, dialogTimeoutMs, signal, onProgress } = options;
	const startedAt = Date.now();
	const id = nanoid();
	let answers: Answer[] = [];
	const envelopeFor = (status: Status, note?: string) =>
		makeEnvelope(status, answers, note, { requestId: id, asker: asker.label, waitedMs: Date.now() - startedAt });
	if (signal?.aborted) return Promise.resolve(envelopeFor("cancelled", "The tool call was aborted before it was asked."));

	return new Promise<Envelope>((resolve) => {
		let settled: { status: Status; cancelHost: boolean } | undefined;
		let cleanup: ((cancelHost: boolean, status: Status) => void) | void;
		const end = (status: Status, note: string | undefined, askerGaveUp: boolean) => {
			if (settled) return;
			settled = { status, cancelHost: askerGaveUp };
			clearTimeout(budgetTimer);
			signal?.removeEventListener("abort", onAbort);
			cleanup?.(askerGaveUp, status);
			resolve(envelopeFor(status, note));
		};
		const onAbort = () => end("cancelled", "The tool call was aborted.", true);
		const budgetTimer = setTimeout(() => end("timeout", `The call's budget of ${budgetMs} ms ran out before every question was answered.`, true), budgetMs);
		signal?.addEventListener("abort", onAbort, { once: true });
		cleanup = start({
			id,
			request: {
				v: PROTOCOL_VERSION,
				id,
				asker,
				questions,
				deadline: startedAt + budgetMs,
				dialogTimeoutMs: Math.min(dialogTimeoutMs, budgetMs),
				createdAt: startedAt,
			},
			reply(reply) {
				if (settled) return;
				answers = reply.answers;
				if (reply.kind === "result") return end(reply.status, reply.note, false);
				try {
					onProgress?.(reply);
				} catch {
					// A failing progress listener must not break the call.
				}
			},
			finish: (status, note) => end(status, note, false),
		});
		// The transport may have settled the call before it could hand back its cleanup.
		if (settled) cleanup?.(settled.cancelHost, settled.status);
	});
}
