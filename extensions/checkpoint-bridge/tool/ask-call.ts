/**
 * One call of `ask_user_via_host`, loaded at the session's first call (tool/ask.ts holds what pi
 * reads when it registers the tool): the parameters checked, then the questions asked (or queued
 * with `wait: false`) the way the extension around it sends them; every outcome, an environmental
 * failure included, comes back as an envelope, never as an exception into pi.
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { CallOptions } from "../core/asking/call.ts";
import { callBudget, readConfig } from "../core/shared/config.ts";
import type { AskerIdentity, SessionReads } from "../core/shared/identity.ts";
import type { RelayProgress } from "../core/shared/protocol.ts";
import type { Question, QuestionInput } from "../model/question.ts";
import { type Envelope, makeEnvelope, markRecommendations } from "../model/result.ts";
import { validateAskParams } from "../model/validate.ts";
import { rawArguments } from "./arguments.ts";
import { progressText } from "./progress.ts";
import type { AskParamsSchema } from "./schema.ts";

/** A call queued with `wait: false`: no signal or progress, the receipt comes back at once. */
type LaterOptions = Omit<CallOptions, "signal" | "onProgress" | "id" | "later">;

/** What the tool's call needs from the extension around it (index.ts wires them; they sit above this layer). */
export interface AskToolParts {
	/** Who asks (core/shared/identity.ts's sessionAsker), read at the call from its context when there is one. */
	asker(at?: SessionReads): AskerIdentity;
	/** Sends a waiting call the way calls go now. */
	ask(options: CallOptions): Promise<Envelope>;
	/** Queues a `wait: false` call; its end arrives later as a message. */
	askLater(options: LaterOptions): Envelope | Promise<Envelope>;
	/** In the host session only: records its own question before it is shown, so a crash or a quit leaves it open for the next start. */
	recordOwn(asker: AskerIdentity, questions: QuestionInput[]): { ended(status: Envelope["status"], aborted: boolean): void } | undefined;
}

/**
 * The envelope as pi takes a tool result: JSON text for the model, and the same value as details for
 * renderers. With `asked`, each answer that is exactly its question's recommended option says so
 * (`recommended: true`), however the human took it.
 */
export function toToolResult(envelope: Envelope, asked?: readonly Question[]): { content: [{ type: "text"; text: string }]; details: Envelope } {
	const shown = asked ? markRecommendations(envelope, asked) : envelope;
	return { content: [{ type: "text", text: JSON.stringify(shown) }], details: shown };
}

type Execute = ToolDefinition<typeof AskParamsSchema, Envelope>["execute"];

/** The call's tool result, for pi's `execute` (its arguments as pi gives them); `startedAt` is when pi called it. */
export async function runAsk(
	parts: AskToolParts,
	startedAt: number,
	...[, params, signal, onUpdate, ctx]: Parameters<Execute>
): Promise<ReturnType<typeof toToolResult>> {
	try {
		const asker = parts.asker({ sessionId: ctx.sessionManager.getSessionId(), systemPrompt: () => ctx.getSystemPrompt?.() });
		const checked = validateAskParams(rawArguments(params));
		if (!checked.ok) return toToolResult(makeEnvelope("error", [], `Invalid parameters: ${checked.problems.join("; ")}.`, { asker: asker.label, waitedMs: 0 }));
		const config = readConfig();
		const total = checked.questions.length;
		const asked = { asker, questions: checked.questions, budgetMs: callBudget(checked.timeoutMs, config), dialogTimeoutMs: config.dialogTimeoutMs };
		if (checked.wait === false) return toToolResult(await parts.askLater(asked));
		const options = {
			...asked,
			...(signal ? { signal } : {}),
			// Streams why the call waits, into the asker's transcript and pi-subagents' progress.
			onProgress: (progress: RelayProgress) =>
				onUpdate?.({ content: [{ type: "text", text: progressText(progress, total) }], details: undefined as unknown as Envelope }),
		};
		// A call aborted before it starts asks nothing, so there is nothing to reopen.
		const own = signal?.aborted ? undefined : parts.recordOwn(asker, checked.questions);
		const envelope = await parts.ask(options);
		own?.ended(envelope.status, signal?.aborted === true);
		return toToolResult(envelope, checked.questions);
	} catch (error) {
		// Environmental failures become a status, never an exception into pi.
		const reason = error instanceof Error ? error.message : String(error);
		return toToolResult(makeEnvelope("error", [], `checkpoint-bridge failed: ${reason}`, { waitedMs: Date.now() - startedAt }));
	}
}
