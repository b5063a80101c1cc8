/**
 * The envelope as pi takes a tool result: JSON text for the model, and the same value as `details`.
 */
import type { Envelope } from "../model/result.ts";

/** The tool result pi expects: the envelope as JSON text for the model, and as details for renderers. */
export function toToolResult(envelope: Envelope): { content: [{ type: "text"; text: string }]; details: Envelope } {
	return { content: [{ type: "text", text: JSON.stringify(envelope) }], details: envelope };
}
