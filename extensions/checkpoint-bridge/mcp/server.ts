/**
 * The MCP server's tools over any MCP transport and either era of the protocol (2025 revisions and
 * 2026-07-28, negotiated by the SDK): `ask_user_via_host` (the pi tool's questions, its validation
 * and its envelope) and `wait_for_host_answers` (pi's parameters and result, tool/wait.ts). Which
 * host a call reaches is the caller's `ask`; with none reachable the questions go to the client's
 * own user as the fallback form when the client can show one (fallback.ts), else the call ends
 * `no-host` at once with a note that tells the model to ask in its chat and not to call again.
 * Who asks is the caller's `askerFor`, from the client's own name. The service outlives each SDK
 * server instance (one per stdio connection, one per HTTP request): its queued requests and sealed
 * forms are the process's.
 */
import {
	type CallToolResult,
	CLIENT_CAPABILITIES_META_KEY,
	CLIENT_INFO_META_KEY,
	type ClientCapabilities,
	type McpRequestContext,
	ProtocolError,
	ProtocolErrorCode,
	Server,
	type ServerContext,
	type Tool,
} from "@modelcontextprotocol/server";
import { nanoid } from "nanoid";
import type { CallOptions } from "../core/asking/call.ts";
import { MAX_TIMEOUT_MS, NO_LIMIT, readConfig } from "../core/shared/config.ts";
import type { AskerIdentity } from "../core/shared/identity.ts";
import { LATE_NOTE } from "../core/shared/late-config.ts";
import type { RelayProgress } from "../core/shared/protocol.ts";
import type { RequestStore } from "../core/store/store.ts";
import type { Question } from "../model/question.ts";
import { type Envelope, makeEnvelope, markRecommendations, NEEDS_INPUT_ADVICE } from "../model/result.ts";
import { validateAskParams, validateWaitParams } from "../model/validate.ts";
import { waitRefused } from "../model/wait-outcome.ts";
import { callDigest, elicitLegacy, SealedForms } from "./fallback.ts";
import { quoted, Receipts } from "./receipts.ts";
import {
	ASK_OUTPUT_SCHEMA,
	ASK_TOOL,
	COLLECT_INPUT_SCHEMA,
	COLLECT_OUTPUT_SCHEMA,
	COLLECT_TOOL,
	DEFAULT_COLLECT_WAIT_MS,
	MAX_COLLECT_WAIT_MS,
	MCP_MIN_TIMEOUT_MS,
	type ObjectSchema,
	QUEUED,
} from "./schema.ts";

/** Longest gap between two progress notifications of a waiting call that carries a progress token. @default 5_000 */
const PROGRESS_EVERY_MS = 5_000;
/** Longest progress token taken, in characters: it is echoed in every progress notification of the call. @default 256 */
export const MAX_PROGRESS_TOKEN_LENGTH = 256;

/** What an MCP client's model is told instead of pi's needs_input advice: its chat is where to ask, once. */
const MCP_ADVICE = "Do not guess the answer and do not call this tool again for these questions: ask the human in your chat instead.";

/**
 * What a late question means for an MCP client: this server takes no late answers (it has no session to deliver them
 * to), so the host's session records one given later; the client is not promised a message.
 */
const MCP_LATE_NOTE =
	"The question stays open on the host, marked late: if the human answers it there later, the answer goes to the pi session there, not to you.";

/** The note of a call that reached nobody. */
const NO_HOST_NOTE = "No pi host of this user and directory is reachable, and this client cannot show a form.";

/** The MCP tools' description for the model. */
const ASK_DESCRIPTION = [
	"Ask the human a question and wait for the answer: it is shown in the pi session of this user and working directory (or in this client's own form when no pi session is there).",
	"Batch every related question into one call; ask only what changes the outcome.",
	"Questions can offer options (with descriptions, a preview, a recommended one, multiSelect, an 'Other' free-text entry), be free text, or be a yes/no confirm.",
	'Returns JSON {status, answers:[{question, answer, kind, values?, id?, note?}], note}. Proceed only on status "ok"; on any other status do not guess and do not call again: ask in the chat.',
	`If your client ends tool calls after a fixed time, pass wait: false and wait for the answer with ${COLLECT_TOOL} and the requestId it returns.`,
].join(" ");

const COLLECT_DESCRIPTION = `Wait, within a budget, for the answers to questions you asked with ${ASK_TOOL} and wait: false: returns the envelope of each that ended (status "ok" when none is left open, "timeout" when some are) and the requestIds still open. A queued request is not an answer.`;

export interface McpServerOptions {
	/** The pi tool's parameter schema (tool/schema.ts), as JSON schema; the ask tool takes the same questions. */
	askInputSchema: ObjectSchema;
	/** Sends one call to a host, the way it goes now; resolves with its envelope (`no-host` when none is reachable). */
	ask(options: CallOptions): Promise<Envelope>;
	/** The text of a progress notification, as the pi tool streams it (tool/progress.ts). */
	progressText(progress: RelayProgress, total: number): string;
	/**
	 * Who asks, from the client's own name (neutralised and cut by the caller) and the serving unit:
	 * the label the host shows, and the asker session whose calls count together. Its session id
	 * starts with MCP_SESSION_PREFIX: the host tells an MCP client by it.
	 */
	askerFor(clientName: string, unit: McpRequestContext): AskerIdentity;
	/** This server's version, told to the client. */
	version: string;
	/** Longest gap between two progress notifications. @default PROGRESS_EVERY_MS */
	progressEveryMs?: number;
	/** The environment the budgets are read from. @default process.env */
	env?: NodeJS.ProcessEnv;
	/** The store of the host's directory, where a wait finds an id another process asked (core/store/). @default none */
	stored?: () => RequestStore | undefined;
	/** A queued call is asked as later (RelayRequest.later), written down at a host in another process so it outlives this one. @default false */
	queuedOutlives?: boolean;
}

/** The session id prefix of every MCP asker: the mark the host tells an MCP client by. */
export const MCP_SESSION_PREFIX = "mcp-";

/** The tools of one server process, to hand to an SDK serving entry (serveStdio, createMcpHandler). */
export interface AskService {
	/** A fresh SDK server for one serving unit (a stdio connection, an HTTP request), of either era. */
	factory(unit: McpRequestContext): Server;
	/** Cancels every queued call still open (of one asker session, or all) and resolves once each has ended at its host. */
	cancelQueued(sessionId?: string): Promise<void>;
	/** Resolves once the host has taken every queued call still open (or `withinMs` passed): a process that ends then leaves them to the host. */
	queuedTaken(withinMs: number): Promise<void>;
}

/** The budget of one MCP call: its `timeoutMs` clamped to [MCP_MIN_TIMEOUT_MS, MAX_TIMEOUT_MS] (0: none), else the configured default. */
function mcpBudget(requested: number | undefined, defaultMs: number): number {
	if (requested === undefined) return defaultMs;
	if (requested === NO_LIMIT) return NO_LIMIT;
	return Math.min(MAX_TIMEOUT_MS, Math.max(MCP_MIN_TIMEOUT_MS, Math.round(requested)));
}

/**
 * The envelope as an MCP client's model reads it: pi's needs_input advice becomes MCP_ADVICE, the late note
 * MCP_LATE_NOTE; an `error` keeps only what is wrong, since fixed parameters or a settled request may be asked again.
 */
function forMcp(envelope: Envelope): Envelope {
	if (envelope.status === "ok" || envelope.note === undefined) return envelope;
	const advice = envelope.status === "error" ? "" : MCP_ADVICE;
	const told = envelope.note.replace(LATE_NOTE, MCP_LATE_NOTE);
	const note = told.includes(NEEDS_INPUT_ADVICE) ? told.replace(NEEDS_INPUT_ADVICE, advice) : `${told} ${advice}`;
	return { ...envelope, note: note.trim() };
}

/** A tool result: the value as JSON text and as structured content; an error result when `isError`. */
const toolResult = (value: object, isError = false): CallToolResult => ({
	content: [{ type: "text", text: JSON.stringify(value) }],
	structuredContent: value as Record<string, unknown>,
	...(isError ? { isError: true } : {}),
});

/** A refused call: an error envelope naming every problem. */
const refused = (problems: string[], asker: string): CallToolResult =>
	toolResult(forMcp(makeEnvelope("error", [], `Invalid parameters: ${problems.join("; ")}.`, { asker, waitedMs: 0 })), true);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The client's name and capabilities: the request's own envelope on 2026-07-28, the handshake's on a 2025 connection. */
function clientOf(server: Server, ctx: ServerContext): { name: string; capabilities: ClientCapabilities | undefined } {
	const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
	const info = (envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined) ?? server.getClientVersion();
	const capabilities = (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? server.getClientCapabilities();
	return { name: typeof info?.name === "string" ? info.name : "", capabilities };
}

/** Whether the client declared it can show a form (an empty `elicitation` is form mode, as before modes existed). */
function canShowForm(capabilities: ClientCapabilities | undefined): boolean {
	const declared = capabilities?.elicitation;
	return declared !== undefined && (declared.form !== undefined || declared.url === undefined);
}

/** Refuses a call whose progress token is longer than MAX_PROGRESS_TOKEN_LENGTH: every progress notification echoes it. */
function checkProgressToken(ctx: ServerContext): void {
	const token = ctx.mcpReq._meta?.progressToken;
	if (typeof token === "string" && token.length > MAX_PROGRESS_TOKEN_LENGTH)
		throw new ProtocolError(
			ProtocolErrorCode.InvalidParams,
			`_meta.progressToken is ${token.length} characters long: at most ${MAX_PROGRESS_TOKEN_LENGTH} are taken (it is sent back with every progress notification)`,
		);
}

/** Sends progress while a call waits, when the client gave a token: on every stage, and at least every `everyMs`. */
function progressFor(ctx: ServerContext, everyMs: number) {
	const token = ctx.mcpReq._meta?.progressToken;
	if (token === undefined) return { close: () => {}, report: undefined };
	let count = 0;
	const startedAt = Date.now();
	const notify = (message: string) => {
		void ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: ++count, message } }).catch(() => {});
	};
	const timer = setInterval(() => notify(`checkpoint-bridge: waiting for the human (${Math.round((Date.now() - startedAt) / 1000)} s)`), everyMs);
	return { close: () => clearInterval(timer), report: notify };
}

/** A call of the wait tool by the client session `owner`: its parameters checked, then the ends of its queued requests. */
async function collect(receipts: Receipts, owner: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
	const refuse = (note: string): CallToolResult => toolResult(waitRefused(note), true);
	const checked = validateWaitParams(args);
	if (!checked.ok) return refuse(`Invalid parameters: ${checked.problems.join("; ")}.`);
	const { requestIds, timeoutMs } = checked;
	const wait = Math.min(MAX_COLLECT_WAIT_MS, Math.max(0, timeoutMs ?? DEFAULT_COLLECT_WAIT_MS));
	const result = await receipts.wait(owner, requestIds, wait, signal);
	return toolResult({ ...result, ended: result.ended.map(forMcp) }, result.status === "error");
}

/** Builds the tools of one server process. */
export function createAskService(options: McpServerOptions): AskService {
	const { ask, progressText, progressEveryMs = PROGRESS_EVERY_MS, env = process.env } = options;
	const receipts = new Receipts(options.stored);
	// A sealed form exists on 2026-07-28 only, where every request names its client in its envelope.
	const forms = new SealedForms((ctx) => String((ctx.mcpReq.envelope as Record<string, { name?: unknown }> | undefined)?.[CLIENT_INFO_META_KEY]?.name ?? ""));

	function factory(unit: McpRequestContext): Server {
		const server = new Server(
			{ name: "checkpoint-bridge", version: options.version },
			{ capabilities: { tools: {} }, requestState: { verify: (state, ctx) => forms.codec.verify(state, ctx) } },
		);
		const who = (ctx: ServerContext) => options.askerFor(clientOf(server, ctx).name, unit);

		/** One call to the end: a host, else the client's 2025 form, else no-host. Never rejects. */
		async function askOnce(ctx: ServerContext, questions: Question[], budgetMs: number, signal: AbortSignal, extra: Partial<CallOptions>): Promise<Envelope> {
			const asker = who(ctx);
			const startedAt = Date.now();
			try {
				const call: CallOptions = { asker, questions, budgetMs, dialogTimeoutMs: readConfig(env).dialogTimeoutMs, signal, ...extra };
				// The recommended option is marked however it was taken, as the pi tool's result marks it (tool/ask-call.ts).
				const envelope = markRecommendations(await ask(call), questions);
				if (envelope.status !== "no-host" || envelope.answers.length > 0) return envelope;
				if (unit.era === "legacy" && canShowForm(clientOf(server, ctx).capabilities) && !signal.aborted)
					return withId(markRecommendations(await elicitLegacy(questions, asker.label, budgetMs, startedAt, ctx, signal), questions), extra.id);
				return makeEnvelope("no-host", [], NO_HOST_NOTE, { asker: asker.label, waitedMs: Date.now() - startedAt, ...idOf(extra.id) });
			} catch (error) {
				const reason = error instanceof Error ? error.message : String(error);
				return makeEnvelope("error", [], `checkpoint-bridge failed: ${reason}`, { asker: asker.label, waitedMs: Date.now() - startedAt, ...idOf(extra.id) });
			}
		}

		async function callAsk(args: unknown, ctx: ServerContext): Promise<CallToolResult> {
			const label = who(ctx).label;
			// The pi tool's own checks: the same parameters, each problem named once.
			const checked = validateAskParams(args);
			if (!checked.ok) return refused([...checked.problems], label);
			const budgetMs = mcpBudget(checked.timeoutMs, readConfig(env).callTimeoutMs);
			const call = callDigest(ASK_TOOL, args);
			// A 2026 client's retry with its form answered: the sealed state says which call it is.
			if (ctx.mcpReq.requestState() !== undefined) {
				const envelope = forMcp(markRecommendations(forms.answer(checked.questions, call, ctx, label), checked.questions));
				return toolResult(envelope, envelope.status === "error");
			}
			if (isRecord(args) && args.wait === false) return queue(ctx, checked.questions, budgetMs);
			const total = checked.questions.length;
			const progress = progressFor(ctx, progressEveryMs);
			try {
				const onProgress = progress.report && ((stage: RelayProgress) => progress.report?.(progressText(stage, total)));
				const envelope = await askOnce(ctx, checked.questions, budgetMs, ctx.mcpReq.signal, onProgress ? { onProgress } : {});
				if (envelope.status === "no-host" && unit.era === "modern" && canShowForm(clientOf(server, ctx).capabilities) && !ctx.mcpReq.signal.aborted)
					return (await forms.ask(checked.questions, label, call, budgetMs, ctx)) as unknown as CallToolResult;
				const told = forMcp(envelope);
				return toolResult(told, told.status === "error");
			} finally {
				progress.close();
			}
		}

		/** `wait: false`: the call runs on under the request id the host shows; a wait names it. */
		function queue(ctx: ServerContext, questions: Question[], budgetMs: number): CallToolResult {
			const asker = who(ctx);
			const requestId = nanoid();
			const later = options.queuedOutlives ? { later: true } : {};
			const opened = receipts.open(asker.sessionId, requestId, (signal, taken) =>
				askOnce(ctx, questions, budgetMs, signal, { id: requestId, ...later, onProgress: taken }),
			);
			if (!opened.ok) return refused([opened.problem], asker.label);
			const note = `Queued: wait for the answer with ${COLLECT_TOOL} and this requestId. A queued request is not an answer: do nothing that depends on it, and do not ask again.`;
			return toolResult({ status: QUEUED, answers: [], requestId, asker: asker.label, note });
		}

		server.setRequestHandler("tools/list", () => ({
			tools: [
				{ name: ASK_TOOL, description: ASK_DESCRIPTION, inputSchema: options.askInputSchema, outputSchema: ASK_OUTPUT_SCHEMA },
				{ name: COLLECT_TOOL, description: COLLECT_DESCRIPTION, inputSchema: COLLECT_INPUT_SCHEMA, outputSchema: COLLECT_OUTPUT_SCHEMA },
			] as Tool[],
		}));
		server.setRequestHandler("tools/call", async (request, ctx): Promise<CallToolResult> => {
			const { name } = request.params;
			const args: unknown = request.params.arguments ?? {};
			checkProgressToken(ctx);
			if (name === COLLECT_TOOL) return collect(receipts, who(ctx).sessionId, args, ctx.mcpReq.signal);
			if (name === ASK_TOOL) return callAsk(args, ctx);
			throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool ${quoted(name)}: this server has ${ASK_TOOL} and ${COLLECT_TOOL}.`);
		});
		return server;
	}

	return { factory, cancelQueued: (sessionId) => receipts.cancelAll(sessionId), queuedTaken: (withinMs) => receipts.allTaken(withinMs) };
}

const idOf = (id: string | undefined) => (id === undefined ? {} : { requestId: id });
const withId = (envelope: Envelope, id: string | undefined): Envelope => (id === undefined ? envelope : { ...envelope, requestId: id });
