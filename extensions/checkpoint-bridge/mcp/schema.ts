/**
 * The MCP tools' JSON schemas: the ask tool's input is the pi tool's own schema (handed in by the
 * root) with the MCP bounds of `timeoutMs` and `wait`; its output is the envelope, or a receipt.
 */
import { STATUSES } from "../model/result.ts";
import { MAX_OPEN_RECEIPTS } from "./receipts.ts";

/** The MCP ask tool's name: the pi tool's. */
export const ASK_TOOL = "ask_user_via_host";
/** The tool that collects what receipts became. */
export const COLLECT_TOOL = "wait_for_answers";

/** Shortest call budget over MCP: a model's `timeoutMs: 1` would close the question before a human can read it. @default 10_000 */
export const MCP_MIN_TIMEOUT_MS = 10_000;
/** Default wait of wait_for_answers, under the 60 s most clients give one tool call. @default 25_000 */
export const DEFAULT_COLLECT_WAIT_MS = 25_000;
/** Longest wait of wait_for_answers. @default 50_000 */
export const MAX_COLLECT_WAIT_MS = 50_000;

/** A JSON schema of an object, as MCP's tool listing takes it. */
export interface ObjectSchema {
	type: "object";
	properties?: Record<string, object>;
	required?: string[];
	[key: string]: unknown;
}

/** The status a receipt carries: the question is queued, its answer not there yet. */
export const QUEUED = "queued";

const ANSWER_SCHEMA = {
	type: "object",
	properties: {
		question: { type: "string" },
		answer: { type: "string" },
		kind: { type: "string", enum: ["option", "other", "text", "confirm"] },
		id: { type: "string" },
		values: { type: "array", items: { type: "string" } },
		note: { type: "string" },
		sharedWith: { type: "array", items: { type: "string" } },
		recommended: { type: "boolean" },
		source: { type: "string" },
	},
	required: ["question", "answer", "kind"],
};

/** The envelope's schema (model/result.ts), `queued` and `receipt` added for a receipt. */
const ENVELOPE_SCHEMA = {
	type: "object",
	properties: {
		status: { type: "string", enum: [...new Set([...STATUSES, QUEUED])] },
		answers: { type: "array", items: ANSWER_SCHEMA },
		note: { type: "string" },
		reason: { type: "string" },
		requestId: { type: "string" },
		asker: { type: "string" },
		waitedMs: { type: "number" },
		receipt: { type: "string" },
	},
	required: ["status", "answers"],
};

/** The ask tool's output: the envelope, or with `wait: false` a receipt. */
export const ASK_OUTPUT_SCHEMA: ObjectSchema = ENVELOPE_SCHEMA as ObjectSchema;

/** wait_for_answers' input. */
export const COLLECT_INPUT_SCHEMA: ObjectSchema = {
	type: "object",
	properties: {
		receipts: {
			type: "array",
			items: { type: "string" },
			description: `The receipts to wait for (at most ${MAX_OPEN_RECEIPTS}); every open one when left out.`,
		},
		waitMs: {
			type: "number",
			description: `How long to wait for one of them to end, in ms (0 to ${MAX_COLLECT_WAIT_MS}). Default ${DEFAULT_COLLECT_WAIT_MS}.`,
		},
	},
};

/** wait_for_answers' output: each ended receipt's envelope (handed back once), and the receipts still open. */
export const COLLECT_OUTPUT_SCHEMA: ObjectSchema = {
	type: "object",
	properties: {
		settled: {
			type: "array",
			items: { type: "object", properties: { receipt: { type: "string" }, envelope: ENVELOPE_SCHEMA }, required: ["receipt", "envelope"] },
		},
		open: { type: "array", items: { type: "string" } },
		note: { type: "string" },
	},
	required: ["settled", "open"],
};

/**
 * The ask tool's input: the pi tool's schema (a plain copy: typebox's own marks are symbols, which
 * JSON drops), with `timeoutMs` described by the MCP bounds and `wait` added.
 */
export function askInputSchema(piSchema: object, maxTimeoutMs: number, defaultTimeoutMs: number): ObjectSchema {
	const schema = JSON.parse(JSON.stringify(piSchema)) as ObjectSchema;
	schema.properties = {
		...schema.properties,
		timeoutMs: {
			type: "number",
			description: `How long to wait for the human in total, in ms (clamped to ${MCP_MIN_TIMEOUT_MS} to ${maxTimeoutMs}; 0: no limit). Default ${defaultTimeoutMs}. Your client may end the call sooner: use wait: false then.`,
		},
		wait: {
			type: "boolean",
			description: `false: return at once with a receipt (status "${QUEUED}") and collect the answer later with ${COLLECT_TOOL}. Default true.`,
		},
	};
	return schema;
}
