/**
 * With no pi host reachable, the questions go to the MCP client's own user as one form, the
 * fallback form (elicit.ts), when the client can show one. A 2025-era client gets it as a request of
 * the server's (`elicitation/create`); a 2026-07-28 client as an `input_required` result whose
 * `requestState` the SDK's codec seals, bound to the method, the client and the call's arguments,
 * and whose answer is taken once (ADR-0026).
 */
import { createHash, randomBytes } from "node:crypto";
import {
	createRequestStateCodec,
	type ElicitResult,
	inputRequired,
	type RequestStateCodec,
	SdkError,
	SdkErrorCode,
	type ServerContext,
} from "@modelcontextprotocol/server";
import { MAX_TIMEOUT_MS, NO_LIMIT } from "../core/shared/config.ts";
import type { Question } from "../model/question.ts";
import { type Envelope, makeEnvelope, type Status } from "../model/result.ts";
import { answersFromForm, elicitationForm } from "./elicit.ts";

/** The key of the form among a 2026 retry's `inputResponses`. */
const FORM_KEY = "questions";
/** Forms a server remembers as answered (their one use taken), beyond those that expired. @default 4096 */
const MAX_TAKEN = 4096;

/** What a sealed `requestState` carries: which call it belongs to and when its budget ends. */
interface FormState {
	/** Random, single use: the answer of this form is taken once. */
	nonce: string;
	/** Digest of the call's arguments: a state echoed with other questions is refused. */
	call: string;
	/** When the call's budget runs out (ms since the epoch); NO_LIMIT for none. The key is the process's own, so no state outlives a restart and the field may be renamed freely. */
	deadline: number;
	startedAt: number;
}

/** The digest a state is bound to: the tool and its arguments as sent. */
export const callDigest = (tool: string, args: unknown) => createHash("sha256").update(tool).update("\0").update(JSON.stringify(args)).digest("base64url");

/** The one-use seal of the 2026 fallback form, for one server process (a stdio server, or the host's HTTP endpoint). */
export class SealedForms {
	readonly codec: RequestStateCodec<FormState>;
	/** Nonces whose answer was taken, with when they expire. */
	readonly #taken = new Map<string, number>();

	constructor(clientOf: (ctx: ServerContext) => string) {
		this.codec = createRequestStateCodec<FormState>({
			key: randomBytes(32),
			ttlSeconds: MAX_TIMEOUT_MS / 1000,
			bind: (ctx) => `${ctx.mcpReq.method}\0${clientOf(ctx)}`,
		});
	}

	/** The `input_required` result that asks the client's user, sealed for this call. */
	async ask(questions: Question[], label: string, call: string, budgetMs: number, ctx: ServerContext) {
		const startedAt = Date.now();
		const state: FormState = {
			nonce: randomBytes(16).toString("base64url"),
			call,
			startedAt,
			deadline: budgetMs === NO_LIMIT ? NO_LIMIT : startedAt + budgetMs,
		};
		return inputRequired({
			inputRequests: { [FORM_KEY]: inputRequired.elicit({ mode: "form", ...elicitationForm(questions, label) }) },
			requestState: await this.codec.mint(state, ctx),
		});
	}

	/**
	 * The envelope of a retried call: the state (verified by the SDK's seam already) must be this
	 * call's, not yet taken, within its budget; its form's answer is then read, once.
	 */
	answer(questions: Question[], call: string, ctx: ServerContext, label: string): Envelope {
		const state = ctx.mcpReq.requestState<FormState>();
		const end = (status: Status, note: string, answers: Envelope["answers"] = [], reason?: Envelope["reason"]) =>
			makeEnvelope(status, answers, note, { asker: label, waitedMs: Date.now() - (state?.startedAt ?? Date.now()), ...(reason ? { reason } : {}) });
		if (state === undefined || typeof state !== "object" || typeof state.nonce !== "string")
			return end("error", "The call's requestState is not this server's.");
		if (state.call !== call) return end("error", "The requestState belongs to another call: retry with the arguments it was given for.");
		this.#prune();
		if (this.#taken.has(state.nonce)) return end("error", "This form's answer was taken already: a requestState is used once.");
		this.#taken.set(state.nonce, state.deadline || Date.now() + MAX_TIMEOUT_MS);
		if (state.deadline !== NO_LIMIT && Date.now() > state.deadline) return end("timeout", "The call's budget ran out before the client's form was answered.");
		return formEnvelope(questions, ctx.mcpReq.inputResponses?.[FORM_KEY] as ElicitResult | undefined, end);
	}

	#prune(): void {
		const now = Date.now();
		for (const [nonce, expires] of this.#taken) if (expires < now) this.#taken.delete(nonce);
		while (this.#taken.size >= MAX_TAKEN) this.#taken.delete(this.#taken.keys().next().value!);
	}
}

type End = (status: Status, note: string, answers?: Envelope["answers"], reason?: Envelope["reason"]) => Envelope;

/** The envelope of the client's form, however it came back: accepted (fully or in part), declined, cancelled, or not at all. */
function formEnvelope(questions: Question[], result: ElicitResult | undefined, end: End): Envelope {
	if (result === undefined || typeof result !== "object") return end("error", "The client's retry carried no answer to its form.");
	if (result.action === "decline")
		return end("timeout-or-cancelled", "No pi host was reachable and the client declined its form (a client may decline with nobody asked).", [], "dismissed");
	if (result.action === "cancel")
		return end("cancelled", "No pi host was reachable and the client cancelled its form (a client may cancel with nobody asked).");
	const read = answersFromForm(questions, result.content);
	if (!read.ok) return end("error", `No pi host was reachable and the client's form was refused: ${read.problem}.`);
	if (read.missing.length === 0) return end("ok", "", read.answers);
	const given = read.answers.length === 0 ? "no answer was given" : `the ${read.answers.length} given ${read.answers.length === 1 ? "is" : "are"} here`;
	return end(
		"timeout-or-cancelled",
		`The client's form came back without an answer to ${read.missing.join(", ")}: ${given}. Ask the human in your chat for the rest; do not guess it.`,
		read.answers,
		"dismissed",
	);
}

/** The 2025 way: the form as a request of the server's, within what is left of the budget. */
export async function elicitLegacy(questions: Question[], label: string, budgetMs: number, startedAt: number, ctx: ServerContext, signal: AbortSignal) {
	const end: End = (status, note, answers = [], reason) =>
		makeEnvelope(status, answers, note, { asker: label, waitedMs: Date.now() - startedAt, ...(reason ? { reason } : {}) });
	const left = budgetMs === NO_LIMIT ? MAX_TIMEOUT_MS : Math.max(1, budgetMs - (Date.now() - startedAt));
	try {
		// Sent as is, not through elicitInput: the SDK's own check of the content would refuse a form with a question left out, and drop the answers given.
		const result = await ctx.mcpReq.send(
			{ method: "elicitation/create", params: { mode: "form", ...elicitationForm(questions, label) } },
			{ signal, timeout: left },
		);
		return formEnvelope(questions, result, end);
	} catch (error) {
		if (signal.aborted) return end("cancelled", "The tool call was aborted while the client's form was open.");
		if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
			return end("timeout", `The call's budget of ${budgetMs} ms ran out before the client's form was answered.`);
		return end("no-host", `No pi host of this user and directory is reachable, and this client could not show its form: ${messageOf(error)}.`);
	}
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
