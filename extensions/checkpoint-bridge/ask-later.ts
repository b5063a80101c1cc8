/**
 * A call with `wait: false`: the request goes the way any call goes (route.ts) and joins the host's
 * one queue, but the call returns a receipt as soon as the host has it; the request's end reaches the asking session
 * later as one message (core/delivery/delivery.ts). With no way to a host at all the call ends as a waiting
 * one would, at once: there is nothing to wait for.
 */
import { nanoid } from "nanoid";
import type { CallOptions } from "./core/asking/call.ts";
import { ANSWER_MESSAGE_TYPE, type Delivery, type DeliveryBox } from "./core/delivery/delivery.ts";
import { homeRoute } from "./core/delivery/route-home.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";
import { waitAtMost } from "./core/shared/wait.ts";
import { type Envelope, makeEnvelope } from "./model/result.ts";
import { askAlong, type Route } from "./route.ts";

/** The receipt's note: what the model may and may not do with it. */
const receiptNote = (requestId: string) =>
	`Queued: the human has not answered yet. The answer arrives later in this session as one message (custom type ${ANSWER_MESSAGE_TYPE}, request ${requestId}) while this session runs; if it has ended by then (a pi -p run ends with its task), the answer goes to the host's session instead, not to you: to have it in this run, call wait_for_host_answers with this requestId (a later run in this directory can do the same, with this requestId, until the answer expires). ` +
	"This receipt is not an answer and not an approval: do no work that depends on the answer before it arrives, and do not ask these questions again.";

/**
 * An end a transport brought back, taken here when the route home says so (a wait on it, else its
 * attached session): true when it is recorded here (or was already: a frame sent twice is recorded
 * once). False, nothing is kept here: the transport's ack says so, and the host's session takes it
 * (its asking session gone, the grace the box gives a session of this process is the host's to give).
 */
const recordHere = (box: DeliveryBox, delivery: Delivery): boolean => homeRoute(() => undefined, box).takeHere(delivery);

/**
 * The call's options with where its late end goes when a host in another process sends it back
 * (CallOptions.onLate): to the asking session, as a message, once (core/delivery/delivery.ts), while that
 * session is attached; the host's session otherwise.
 */
export function withLate<T extends Pick<CallOptions, "asker" | "questions">>(box: DeliveryBox, options: T): T & Pick<CallOptions, "onLate"> {
	const { asker } = options;
	const queuedAt = Date.now();
	const questions = options.questions.map((q) => String(q.question));
	return {
		...options,
		// A transport's late envelope always names its request (core/asking/call.ts lateEnd).
		onLate: (envelope) =>
			envelope.requestId !== undefined &&
			recordHere(box, { requestId: envelope.requestId, askerSessionId: asker.sessionId, asker: asker.label, questions, queuedAt, late: true, envelope }),
	};
}

/** Longest a receipt waits for the host to take the request (NATS may take a round trip or two). @default 10000 */
const RECEIPT_WAIT_MS = 10_000;

/** A session's own question, recorded while it waits: its end is written when it ends (own-questions.ts). */
interface RecordedOwn {
	requestId: string;
	ended(status: Envelope["status"], aborted: boolean): void;
}

/**
 * A session's `wait: false` call along `route`: askLater, the host session's question recorded
 * first by `own` under the id it is asked with, so that its delivery's record ends it.
 */
export async function askLaterFrom(
	route: Route,
	options: Omit<CallOptions, "signal" | "onProgress" | "id" | "later">,
	via: { handle: SharedHandle; box: DeliveryBox; own?: (asker: CallOptions["asker"], questions: CallOptions["questions"]) => RecordedOwn | undefined },
): Promise<Envelope> {
	const recorded = via.own?.(options.asker, options.questions);
	const receipt = await askLater(route, withLate(via.box, recorded ? { ...options, requestId: recorded.requestId } : options), via);
	// Ended before the host took it: nothing will be delivered, nothing is left to reopen.
	if (receipt.status !== "queued") recorded?.ended(receipt.status, false);
	return receipt;
}

/**
 * Sends the call along `route` without waiting for the human: the receipt once the host has taken
 * the request (its first progress reply: an asker process may exit right after the receipt, so the
 * request must have left it), the end as a message later. A call that ends before the host takes it
 * (no host, refused) returns its envelope as a waiting call would, and nothing is delivered later.
 */
export function askLater(
	route: Route,
	options: Omit<CallOptions, "signal" | "onProgress" | "id" | "later"> & { requestId?: string },
	via: { handle: SharedHandle; box: DeliveryBox },
): Envelope | Promise<Envelope> {
	const { requestId = nanoid(), ...call } = options;
	if (route.kind === "none" || route.kind === "misconfigured") return askAlong(route, call, via.handle);
	const { asker } = call;
	const ask = {
		requestId,
		askerSessionId: asker.sessionId,
		asker: asker.label,
		questions: call.questions.map((q) => String(q.question)),
		queuedAt: Date.now(),
	};
	const receipt = makeEnvelope("queued", [], receiptNote(requestId), { requestId, asker: asker.label, waitedMs: 0 });
	const receiptNow = (): Envelope => {
		via.box.expect(ask);
		return { ...receipt, waitedMs: Date.now() - ask.queuedAt };
	};
	return waitAtMost<Envelope>({ ms: RECEIPT_WAIT_MS, elapsed: receiptNow }, (settle, settled) => {
		/** The end was handed to recordEnd by a transport that acks it: recorded here or left to the host's session, never delivered again. */
		let handed = false;
		const take = () => {
			if (!settled()) settle(receiptNow());
		};
		// Before the receipt, an end is the call's own result (returned as the tool's); after it, recorded now or left to the host.
		const recordEnd = (envelope: Envelope) => !settled() || ((handed = true), recordHere(via.box, { ...ask, envelope }));
		void askAlong(route, { ...call, id: requestId, later: true, onProgress: take, recordEnd }, via.handle)
			.catch((error: unknown) =>
				makeEnvelope("error", [], `checkpoint-bridge failed: ${error instanceof Error ? error.message : String(error)}`, { requestId, asker: asker.label }),
			)
			.then((envelope) => {
				if (handed) return;
				if (settled()) return via.box.deliver({ ...ask, envelope });
				// Ended before the host took it: the call's own result, as a waiting call returns it.
				settle(envelope);
			});
		return undefined;
	});
}
