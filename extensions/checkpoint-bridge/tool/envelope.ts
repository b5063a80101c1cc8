/**
 * The envelope as pi takes a tool result: JSON text for the model, and the same value as `details`.
 * Each answer that is exactly its question's recommended option says so (`recommended: true`),
 * however the human took it: picked by hand, or with every recommendation at once.
 */
import type { Question } from "../model/question.ts";
import { type Envelope, markRecommendations } from "../model/result.ts";

/** The tool result pi expects: the envelope as JSON text for the model, and as details for renderers; with `asked`, its recommendations marked. */
export function toToolResult(envelope: Envelope, asked?: readonly Question[]): { content: [{ type: "text"; text: string }]; details: Envelope } {
	const shown = asked ? markRecommendations(envelope, asked) : envelope;
	return { content: [{ type: "text", text: JSON.stringify(shown) }], details: shown };
}
