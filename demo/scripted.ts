/**
 * What the demo's scripted models share (demo-model.ts, tour-model.ts): reading pi's context, and a
 * faux provider whose every reply a step decides from the transcript alone, so a retried request, or
 * pi started again with `--continue`, gets the same reply.
 */
import { type AssistantMessage, fauxProvider } from "@earendil-works/pi-ai";

/** The text of a message, whatever form its content takes. */
export function textOf(message: any): string {
	const content = message?.content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((part: any) => (part?.type === "text" ? String(part.text ?? "") : "")).join("");
}

/** pi 0.8x passes `context.systemPrompt`; pi 1.x puts the prompt into role "system" messages. */
function systemTextOf(context: any): string {
	const fromMessages = (context.messages ?? [])
		.filter((m: any) => m.role === "system")
		.map((m: any) => [textOf(m), ...Object.values(m.sections ?? {}).map(String)].join("\n"));
	return [String(context.systemPrompt ?? ""), ...fromMessages].join("\n");
}

/** One reply: `agent` is the pi-subagents child that asks (undefined in the main session); `conversation` has no system messages. */
export type Step = (agent: string | undefined, conversation: any[]) => AssistantMessage;

/** Registers provider `provider` with the one model `id`, every reply of which `step` decides. */
export function registerScripted(pi: any, names: { provider: string; api: string; id: string; name: string }, step: Step): void {
	const faux = fauxProvider({
		provider: names.provider,
		api: names.api,
		models: [{ id: names.id, name: names.name, reasoning: false, contextWindow: 200_000, maxTokens: 8_192 }],
	});
	const reply = (context: any) => {
		const agent = /<active_agent name="([^"]+)"\s*\/>/.exec(systemTextOf(context))?.[1];
		return step(
			agent,
			(context.messages ?? []).filter((m: any) => m.role !== "system"),
		);
	};
	// Each request consumes one entry; a run needs a few dozen at most, the rest is headroom.
	faux.setResponses(Array.from({ length: 500 }, () => reply));
	pi.registerProvider(faux.provider);
}
