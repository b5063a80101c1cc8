/**
 * Scripted model for the demo: provider "demo", model "scripted". No API key, no network.
 *
 * Loaded into the main session and into every demo sub-agent (a pi-subagents child only knows
 * providers registered by extensions loaded into the child). The script is stateless: each
 * reply is decided from the transcript, so a retried or repeated request gives the same answer.
 *
 *   main session:  no sub-agent result yet  -> subagent { agent: "planner" }
 *                  planner result present   -> subagent { agent: "writer" }   (one call per turn)
 *                  both results present     -> summary of what each sub-agent reported
 *   planner child: asks a choice (select) through ask_user_via_host, then reports the answer
 *   writer child:  asks free text (input) through ask_user_via_host, then reports the answer
 */
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";

export const DEMO_PROVIDER = "demo";
export const DEMO_MODEL = "scripted";

/** What each demo sub-agent asks; the agent files describe the same questions for real models. */
export const QUESTIONS = {
	planner: {
		question: "Which naming convention should the project use?",
		options: ["camelCase", "snake_case", "kebab-case"],
	},
	writer: {
		question: "What should the project be called?",
		placeholder: "type a name and press Enter",
	},
} as const;

type Agent = keyof typeof QUESTIONS;
const AGENTS = Object.keys(QUESTIONS) as Agent[];

function textOf(message: any): string {
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

/** The line a child ends with; the main session reads it back out of the sub-agent result. */
function reportLine(agent: Agent, envelopeText: string): string {
	try {
		const envelope = JSON.parse(envelopeText);
		const answer = envelope?.answers?.[0]?.answer;
		if (envelope?.status === "ok" && typeof answer === "string") return `Answer received by ${agent}: ${answer}`;
		// The note's first sentence says why (dismissed, timed out, no host, error text); the rest is advice for models.
		const why = typeof envelope?.note === "string" ? envelope.note.split(/(?<=[.;])\s/)[0].replace(/[.;]$/, "") : "";
		return `No answer reached ${agent} (status: ${envelope?.status ?? "unknown"}${why ? `: ${why}` : ""})`;
	} catch {
		return `No answer reached ${agent} (unreadable tool result: ${envelopeText.slice(0, 120)})`;
	}
}

function childStep(agent: Agent, last: any) {
	if (last?.role === "toolResult") {
		return fauxAssistantMessage(fauxText(reportLine(agent, textOf(last))));
	}
	return fauxAssistantMessage(fauxToolCall("ask_user_via_host", { questions: [{ ...QUESTIONS[agent] }] }), { stopReason: "toolUse" });
}

/** Sub-agent results in the main transcript, keyed by the agent named in the matching call. */
function subagentResults(conversation: any[]): Map<string, { text: string; isError: boolean }> {
	const agentByCallId = new Map<string, string>();
	for (const message of conversation) {
		if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
		for (const part of message.content) {
			if (part?.type === "toolCall" && part.name === "subagent") agentByCallId.set(part.id, String(part.arguments?.agent ?? ""));
		}
	}
	const results = new Map<string, { text: string; isError: boolean }>();
	for (const message of conversation) {
		if (message.role !== "toolResult" || message.toolName !== "subagent") continue;
		const agent = agentByCallId.get(message.toolCallId);
		if (agent) results.set(agent, { text: textOf(message), isError: Boolean(message.isError) });
	}
	return results;
}

function mainStep(conversation: any[]) {
	const results = subagentResults(conversation);
	const failed = [...results].find(([, r]) => r.isError);
	if (failed) {
		return fauxAssistantMessage(fauxText(`Demo stopped: the ${failed[0]} sub-agent failed: ${failed[1].text.slice(0, 400)}`));
	}
	const next = AGENTS.find((agent) => !results.has(agent));
	if (next) {
		const planner = results.get("planner")?.text ?? "";
		const convention = /Answer received by planner: (.+)/.exec(planner)?.[1]?.trim();
		const task = next === "planner"
			? "Ask the user which naming convention the project should use, then report the answer."
			: `Ask the user what the project should be called${convention ? ` (naming convention: ${convention})` : ""}, then report the answer.`;
		return fauxAssistantMessage(fauxToolCall("subagent", { agent: next, task, async: false }), { stopReason: "toolUse" });
	}
	const lines = AGENTS.map((agent) => {
		const text = results.get(agent)?.text ?? "";
		const received = new RegExp(`Answer received by ${agent}: (.+)`).exec(text)?.[1]?.trim();
		return received !== undefined
			? `- ${agent} received: ${received}`
			: `- ${agent} received no answer (${new RegExp(`No answer reached ${agent} \\((.*)\\)`).exec(text)?.[1] ?? "it sent no report"})`;
	});
	return fauxAssistantMessage(fauxText(["Demo summary (each line is what that sub-agent reported back):", ...lines].join("\n")));
}

export default function demoModel(pi: any) {
	const faux = fauxProvider({
		provider: DEMO_PROVIDER,
		api: "demo-scripted",
		models: [{ id: DEMO_MODEL, name: "Demo (scripted)", reasoning: false, contextWindow: 200_000, maxTokens: 8_192 }],
	});
	const step = (context: any) => {
		const child = /<active_agent name="([^"]+)"\/>/.exec(systemTextOf(context))?.[1];
		const conversation = (context.messages ?? []).filter((m: any) => m.role !== "system");
		const last = conversation[conversation.length - 1];
		if (child && (AGENTS as string[]).includes(child)) return childStep(child as Agent, last);
		if (child) return fauxAssistantMessage(fauxText(`The demo model has no script for the "${child}" agent.`));
		return mainStep(conversation);
	};
	// Each request consumes one entry; the demo needs about ten, the rest is headroom.
	faux.setResponses(Array.from({ length: 500 }, () => step));
	pi.registerProvider(faux.provider);
}
