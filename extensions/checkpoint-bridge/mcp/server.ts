/**
 * The MCP server's tools over any MCP transport: `ask_user_via_host` (the pi tool's questions, its
 * validation and its envelope) and `wait_for_host_answers` (what receipts became). Which host a call
 * reaches is the caller's `ask`; with none reachable the questions go to the client's own user as
 * an elicitation form when the client declared it, else the call ends `no-host` at once with a note
 * that tells the model to ask in its chat and not to call again. The client's `clientInfo.name` is
 * who asks, as the host shows it. No listener of its own: the transport is the client's.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
	CallToolRequestSchema,
	type CallToolResult,
	ElicitResultSchema,
	ErrorCode,
	ListToolsRequestSchema,
	McpError,
	type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { nanoid } from "nanoid";
import type { CallOptions } from "../core/call.ts";
import { MAX_TIMEOUT_MS, NO_LIMIT, readConfig } from "../core/config.ts";
import { type AskerIdentity, MAX_LABEL_LENGTH } from "../core/identity.ts";
import { LATE_NOTE } from "../core/late.ts";
import type { RelayProgress } from "../core/protocol.ts";
import type { Question } from "../model/question.ts";
import { type Envelope, makeEnvelope, NEEDS_INPUT_ADVICE, type Status } from "../model/result.ts";
import { capLength, sanitiseText } from "../model/sanitise.ts";
import { validateAskParams } from "../model/validate.ts";
import { answersFromForm, elicitationForm } from "./elicit.ts";
import { Receipts } from "./receipts.ts";
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

/** What an MCP client's model is told instead of pi's needs_input advice: its chat is where to ask, once. */
const MCP_ADVICE = "Do not guess the answer and do not call this tool again for these questions: ask the human in your chat instead.";

/**
 * What a late question means for an MCP client: this server takes no late answers (it has no session to deliver them
 * to), so the host's session gets one given later, forwarded; the client is not promised a message.
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
	`If your client ends tool calls after a fixed time, pass wait: false and collect the answer with ${COLLECT_TOOL}.`,
].join(" ");

const COLLECT_DESCRIPTION = `Wait a bounded time for questions asked with wait: false: returns the envelope of each receipt that has ended (once) and the receipts still open. A receipt is not an answer.`;

export interface McpServerOptions {
	/** The pi tool's parameter schema (tool/schema.ts), as JSON schema; the ask tool takes the same questions. */
	askInputSchema: ObjectSchema;
	/** Sends one call to a host, the way it goes now; resolves with its envelope (`no-host` when none is reachable). */
	ask(options: CallOptions): Promise<Envelope>;
	/** The text of a progress notification, as the pi tool streams it (tool/progress.ts). */
	progressText(progress: RelayProgress, total: number): string;
	/** This server's version, told to the client. */
	version: string;
	/** Longest gap between two progress notifications. @default PROGRESS_EVERY_MS */
	progressEveryMs?: number;
	/** The environment the budgets are read from. @default process.env */
	env?: NodeJS.ProcessEnv;
	/** Called once the client has gone and every call it left open (receipts included) has ended, cancelled at its host. */
	onClosed?: () => void;
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

/** The ask tool's own parameters beside the questions. */
const ASK_KEYS = new Set(["questions", "timeoutMs", "wait"]);

/**
 * Builds the MCP server; connect it to a transport (`server.connect`). When the transport closes
 * (the client went away) the SDK aborts the calls in flight, and the calls behind receipts are
 * cancelled here: each one's dialog closes at its host.
 */
export function createAskServer(options: McpServerOptions): Server {
	const { ask, progressText, progressEveryMs = PROGRESS_EVERY_MS, env = process.env } = options;
	const server = new Server({ name: "checkpoint-bridge", version: options.version }, { capabilities: { tools: {} } });
	const receipts = new Receipts();
	/** One asker session per server process: the host's per-asker cap counts this client's calls together. */
	const sessionId = `mcp-${nanoid()}`;

	/** Who asks: the client's own name, as the host shows an asker. */
	const asker = (): AskerIdentity => {
		const name = sanitiseText(String(server.getClientVersion()?.name ?? ""))
			.replace(/\s+/g, " ")
			.trim();
		return { label: capLength(name || "MCP client", MAX_LABEL_LENGTH), sessionId };
	};

	/** Whether the client declared it can show a form (an empty `elicitation` is form mode, as before modes existed). */
	const canElicit = () => {
		const declared = server.getClientCapabilities()?.elicitation;
		return declared !== undefined && (declared.form !== undefined || declared.url === undefined);
	};

	/** Asks the client's own user with a form, within what is left of the budget. */
	async function elicit(questions: Question[], who: AskerIdentity, budgetMs: number, startedAt: number, signal: AbortSignal): Promise<Envelope> {
		const end = (status: Status, note: string, answers: Envelope["answers"] = [], reason?: Envelope["reason"]) =>
			makeEnvelope(status, answers, note, { asker: who.label, waitedMs: Date.now() - startedAt, ...(reason ? { reason } : {}) });
		const left = budgetMs === NO_LIMIT ? MAX_TIMEOUT_MS : Math.max(1, budgetMs - (Date.now() - startedAt));
		const form = elicitationForm(questions, who.label);
		const declared = server.getClientCapabilities()?.elicitation;
		try {
			const result = await server.request(
				{ method: "elicitation/create", params: { ...(declared?.form ? { mode: "form" as const } : {}), ...form } },
				ElicitResultSchema,
				{ signal, timeout: left },
			);
			if (result.action === "decline")
				return end(
					"timeout-or-cancelled",
					"No pi host was reachable and the client declined its form (a client may decline with nobody asked).",
					[],
					"dismissed",
				);
			if (result.action === "cancel")
				return end("cancelled", "No pi host was reachable and the client cancelled its form (a client may cancel with nobody asked).");
			const read = answersFromForm(questions, result.content);
			if (!read.ok) return end("error", `No pi host was reachable and the client's form was refused: ${read.problem}.`);
			return end("ok", "", read.answers);
		} catch (error) {
			if (signal.aborted) return end("cancelled", "The tool call was aborted while the client's form was open.");
			if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
				return end("timeout", `The call's budget of ${budgetMs} ms ran out before the client's form was answered.`);
			return end(
				"no-host",
				`${NO_HOST_NOTE.replace("cannot show a form.", "could not show its form")}: ${error instanceof Error ? error.message : String(error)}.`,
			);
		}
	}

	/** One call to the end: a host, else the client's form, else no-host. Never rejects. */
	async function askOnce(questions: Question[], budgetMs: number, signal: AbortSignal, onProgress?: (progress: RelayProgress) => void): Promise<Envelope> {
		const who = asker();
		const startedAt = Date.now();
		const config = readConfig(env);
		try {
			const call: CallOptions = { asker: who, questions, budgetMs, dialogTimeoutMs: config.dialogTimeoutMs, signal, ...(onProgress ? { onProgress } : {}) };
			const envelope = await ask(call);
			if (envelope.status !== "no-host" || envelope.answers.length > 0) return envelope;
			if (canElicit() && !signal.aborted) return await elicit(questions, who, budgetMs, startedAt, signal);
			return makeEnvelope("no-host", [], NO_HOST_NOTE, { asker: who.label, waitedMs: Date.now() - startedAt });
		} catch (error) {
			const reason = error instanceof Error ? error.message : String(error);
			return makeEnvelope("error", [], `checkpoint-bridge failed: ${reason}`, { asker: who.label, waitedMs: Date.now() - startedAt });
		}
	}

	/** Sends progress while a call waits, when the client gave a token: on every stage, and at least every progressEveryMs. */
	function progressFor(token: string | number | undefined, send: (notification: ServerNotification) => Promise<void>) {
		if (token === undefined) return { stop: () => {}, report: undefined };
		let count = 0;
		const startedAt = Date.now();
		const notify = (message: string) => {
			void send({ method: "notifications/progress", params: { progressToken: token, progress: ++count, message } }).catch(() => {});
		};
		const timer = setInterval(() => notify(`checkpoint-bridge: waiting for the human (${Math.round((Date.now() - startedAt) / 1000)} s)`), progressEveryMs);
		return { stop: () => clearInterval(timer), report: notify };
	}

	server.setRequestHandler(ListToolsRequestSchema, () => ({
		tools: [
			{ name: ASK_TOOL, description: ASK_DESCRIPTION, inputSchema: options.askInputSchema, outputSchema: ASK_OUTPUT_SCHEMA },
			{ name: COLLECT_TOOL, description: COLLECT_DESCRIPTION, inputSchema: COLLECT_INPUT_SCHEMA, outputSchema: COLLECT_OUTPUT_SCHEMA },
		],
	}));

	server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
		const { name } = request.params;
		const args: unknown = request.params.arguments ?? {};
		const who = asker();
		const progress = progressFor(extra._meta?.progressToken, extra.sendNotification);
		try {
			if (name === COLLECT_TOOL) {
				// A client that listed the tools checks even an error result against the output schema (the MCP SDK's does).
				const refusedCollect = (problems: string[]): CallToolResult =>
					toolResult({ ...refused(problems, who.label).structuredContent, settled: [], open: receipts.stillOpen() }, true);
				if (!isRecord(args)) return refusedCollect(["parameters: must be an object"]);
				const problems: string[] = [];
				for (const key of Object.keys(args)) if (key !== "receipts" && key !== "waitMs") problems.push(`${key}: is not a parameter of ${COLLECT_TOOL}`);
				const { receipts: wanted, waitMs } = args;
				if (wanted !== undefined) {
					const problem = receipts.problemWith(wanted);
					if (problem) problems.push(problem);
				}
				if (waitMs !== undefined && (typeof waitMs !== "number" || !Number.isFinite(waitMs))) problems.push("waitMs: must be a finite number of milliseconds");
				if (problems.length > 0) return refusedCollect(problems);
				const wait = Math.min(MAX_COLLECT_WAIT_MS, Math.max(0, typeof waitMs === "number" ? waitMs : DEFAULT_COLLECT_WAIT_MS));
				const collected = await receipts.collect(wanted as string[] | undefined, wait, extra.signal);
				const settled = collected.settled.map(({ receipt, envelope }) => ({ receipt, envelope: forMcp(envelope) }));
				const note =
					collected.open.length > 0
						? `${collected.open.length} still open: a receipt is not an answer; do nothing that depends on it, call ${COLLECT_TOOL} again later.`
						: undefined;
				return toolResult({ settled, open: collected.open, ...(note ? { note } : {}) });
			}
			if (name !== ASK_TOOL)
				throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(name)}: this server has ${ASK_TOOL} and ${COLLECT_TOOL}.`);
			// The pi tool's own checks, and MCP's own parameters beside them.
			const checked = validateAskParams(args);
			const problems = checked.ok ? [] : [...checked.problems];
			if (isRecord(args)) {
				for (const key of Object.keys(args)) if (!ASK_KEYS.has(key)) problems.push(`${key}: is not a parameter of ${ASK_TOOL}`);
				if (args.wait !== undefined && typeof args.wait !== "boolean") problems.push("wait: must be true or false");
			}
			if (!checked.ok || problems.length > 0) return refused(problems, who.label);
			const budgetMs = mcpBudget(checked.timeoutMs, readConfig(env).callTimeoutMs);
			if (isRecord(args) && args.wait === false) {
				const opened = receipts.open((signal) => askOnce(checked.questions, budgetMs, signal));
				if (!opened.ok) return refused([opened.problem], who.label);
				const note = `Queued: collect the answer with ${COLLECT_TOOL}. A receipt is not an answer: do nothing that depends on it, and do not ask again.`;
				return toolResult({ status: QUEUED, answers: [], receipt: opened.receipt, asker: who.label, note });
			}
			const total = checked.questions.length;
			const onProgress = progress.report && ((stage: RelayProgress) => progress.report?.(progressText(stage, total)));
			const envelope = forMcp(await askOnce(checked.questions, budgetMs, extra.signal, onProgress));
			return toolResult(envelope, envelope.status === "error");
		} finally {
			progress.stop();
		}
	});

	server.onclose = () => {
		void receipts.cancelAll().then(() => options.onClosed?.());
	};
	return server;
}
