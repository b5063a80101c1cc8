/**
 * The asking side of a call: sends one request over the bus and waits for its one result, its
 * budget, or its abort, whichever comes first. The call settles exactly once.
 */
import { nanoid } from "nanoid";
import { makeEnvelope, STATUSES, type Answer, type Envelope, type Status } from "./envelope.ts";
import { PROTOCOL_VERSION, replyChannel, type AskerIdentity, type RelayProgress, type RelayReply, type RelayResult } from "./protocol.ts";
import type { SharedHandle } from "./shared-handle.ts";
import type { QuestionInput } from "./validate.ts";

export interface AskOptions {
	handle: SharedHandle;
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

/** Whether a message on a reply channel is a well-formed reply to request `id`. */
function isReplyFor(reply: unknown, id: string): reply is RelayReply {
	if (typeof reply !== "object" || reply === null) return false;
	const r = reply as Omit<Partial<RelayResult>, "kind"> & { kind?: string; stage?: string };
	if (r.v !== PROTOCOL_VERSION || r.id !== id || !Array.isArray(r.answers)) return false;
	if (r.kind === "progress") return r.stage === "queued" || r.stage === "shown" || r.stage === "answered";
	return r.kind === "result" && STATUSES.includes(r.status as Status);
}

/** Asks the host and resolves with the call's envelope. Never rejects. */
export function askViaHost(options: AskOptions): Promise<Envelope> {
	const { handle, asker, questions, budgetMs, dialogTimeoutMs, signal, onProgress } = options;
	const startedAt = Date.now();
	const id = nanoid();
	const envelopeFor = (status: Status, answers: Answer[], note?: string) =>
		makeEnvelope(status, answers, note, { requestId: id, asker: asker.label, waitedMs: Date.now() - startedAt });

	if (signal?.aborted) return Promise.resolve(envelopeFor("cancelled", [], "The tool call was aborted before it was asked."));
	const host = handle.host();
	if (!host) return Promise.resolve(envelopeFor("no-host", [], "No session with a UI holds the host role (headless run, or the host is gone)."));
	if (host.protocol !== PROTOCOL_VERSION)
		return Promise.resolve(
			envelopeFor("error", [], `The host speaks checkpoint-bridge protocol v${host.protocol}; this session speaks v${PROTOCOL_VERSION}.`),
		);

	return new Promise<Envelope>((resolve) => {
		const channel = replyChannel(id);
		let answers: Answer[] = [];
		let settled = false;
		const finish = (status: Status, note: string | undefined, tellHost: boolean) => {
			if (settled) return;
			settled = true;
			clearTimeout(budgetTimer);
			signal?.removeEventListener("abort", onAbort);
			handle.bus.off(channel, onReply);
			// The host drops the request from its queue or dismisses its open dialog.
			if (tellHost && (status === "timeout" || status === "cancelled"))
				handle.bus.emit("cancel", { v: PROTOCOL_VERSION, id, reason: status });
			resolve(envelopeFor(status, answers, note));
		};
		const onReply = (reply: RelayReply) => {
			// Anything else on this channel (junk, another version, a forged status) is ignored.
			if (!isReplyFor(reply, id)) return;
			answers = reply.answers;
			if (reply.kind === "result") finish(reply.status, reply.note, false);
			else onProgress?.(reply);
		};
		const onAbort = () => finish("cancelled", "The tool call was aborted.", true);
		const budgetTimer = setTimeout(
			() => finish("timeout", `The call's budget of ${budgetMs} ms ran out before every question was answered.`, true),
			budgetMs,
		);
		handle.bus.on(channel, onReply);
		signal?.addEventListener("abort", onAbort, { once: true });
		const delivered = handle.bus.emit("request", {
			v: PROTOCOL_VERSION,
			id,
			asker,
			questions,
			deadline: startedAt + budgetMs,
			dialogTimeoutMs: Math.min(dialogTimeoutMs, budgetMs),
			createdAt: startedAt,
		});
		if (!delivered) finish("no-host", "The host role is claimed but nothing is listening for questions.", false);
	});
}
