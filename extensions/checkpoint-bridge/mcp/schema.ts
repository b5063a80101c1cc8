/**
 * The MCP tools' JSON schemas: the ask tool's input is the pi tool's own schema (handed in by the
 * root) with the MCP bounds of `timeoutMs` and `wait`; its output is the envelope. wait_for_host_answers
 * takes pi's parameters and gives pi's result (tool/wait.ts).
 */
import { STATUSES } from "../model/result.ts";
import { MAX_OPEN_RECEIPTS } from "./receipts.ts";

/** The MCP ask tool's name: the pi tool's. */
export const ASK_TOOL = "ask_user_via_host";
/** The tool that waits for requests asked with `wait: false`: pi's name. */
export const COLLECT_TOOL = "wait_for_host_answers";

/** Shortest call budget over MCP: a model's `timeoutMs: 1` would close the question before a human can read it. @default 10_000 */
export const MCP_MIN_TIMEOUT_MS = 10_000;
/** Default wait of wait_for_host_answers, under the 60 s most clients give one tool call. @default 25_000 */
export const DEFAULT_COLLECT_WAIT_MS = 25_000;
/** Longest wait of wait_for_host_answers. @default 50_000 */
export const MAX_COLLECT_WAIT_MS = 50_000;

/** A JSON schema of an object, as MCP's tool listing takes it. */
export interface ObjectSchema {
	type: "object";
	properties?: Record<string, Record<string, unknown>>;
	required?: string[];
	[key: string]: unknown;
}

/** The status of a request asked with `wait: false`: queued, its answer not there yet. */
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

/** The envelope's schema (model/result.ts): `queued` carries the requestId a later wait names. */
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
	},
	required: ["status", "answers"],
};

/** The ask tool's output: the envelope, or with `wait: false` the queued request's. */
export const ASK_OUTPUT_SCHEMA: ObjectSchema = ENVELOPE_SCHEMA as ObjectSchema;

/** wait_for_host_answers' input: pi's own parameters (tool/wait.ts), with the MCP bounds of the wait. */
export const COLLECT_INPUT_SCHEMA: ObjectSchema = {
	type: "object",
	properties: {
		requestIds: {
			type: "array",
			items: { type: "string" },
			description: `Ids of requests you asked with wait: false (at most ${MAX_OPEN_RECEIPTS}). Default: every one of yours still open.`,
		},
		timeoutMs: {
			type: "number",
			description: `How long to wait, in ms (0 to ${MAX_COLLECT_WAIT_MS}). Default ${DEFAULT_COLLECT_WAIT_MS}.`,
		},
	},
};

/** wait_for_host_answers' output: pi's (WaitOutcome): the envelopes that ended, the ids still open. */
export const COLLECT_OUTPUT_SCHEMA: ObjectSchema = {
	type: "object",
	properties: {
		status: { type: "string", enum: ["ok", "timeout", "error"] },
		ended: { type: "array", items: ENVELOPE_SCHEMA },
		open: { type: "array", items: { type: "string" } },
		delivered: { type: "array", items: { type: "string" } },
		note: { type: "string" },
	},
	required: ["status", "ended", "open"],
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
			description: `false: do not wait. Returns at once with status "${QUEUED}" and the requestId the host shows; collect the answer later with ${COLLECT_TOOL}. A queued request is not an answer. Default true.`,
		},
	};
	return schema;
}
