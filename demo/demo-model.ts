/**
 * Scripted model for the demo: provider "demo", model "scripted". No API key, no network.
 *
 * Loaded into the main session and into every demo sub-agent (a pi-subagents child only knows
 * providers registered by extensions loaded into the child). The script is stateless: each
 * reply is decided from the transcript, so a retried or repeated request gives the same answer.
 *
 *   main session:  subagent { agent: "planner" }, then subagent { agent: "writer" }   (foreground,
 *                  one call per turn); then, when the launcher sets CHECKPOINT_BRIDGE_DEMO_WORKFLOW,
 *                  subagent { workflowScript } (its runs.all starts reviewer and tester at once
 *                  in the background) and a short reply while they run; their results come back
 *                  later as a message, and the summary of what every sub-agent reported follows
 *   planner child:  asks a form of two questions through ask_user_via_host (a choice with a preview
 *                   per option, a multi-select), then reports every answer and note
 *   writer child:   asks free text (input)
 *   reviewer child: asks a yes/no confirm
 *   tester child:   asks a choice
 */
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { registerScripted, textOf } from "./scripted.ts";

export const DEMO_PROVIDER = "demo";
export const DEMO_MODEL = "scripted";

/**
 * What each demo sub-agent asks, one request each; the agent files describe the same questions for
 * real models. The planner's is a form of several questions: a tab each, previews, a multi-select,
 * room for a note and the Review tab.
 */
export const QUESTIONS = {
	planner: [
		{
			id: "naming",
			header: "Naming",
			question: "Which naming convention should the project use?",
			options: [
				{ label: "camelCase", preview: "const userName = getUserName();\nfunction parseConfigFile() {}" },
				{ label: "snake_case", preview: "user_name = get_user_name()\ndef parse_config_file(): ..." },
				{ label: "kebab-case", preview: "src/user-name.ts\nsrc/parse-config-file.ts" },
			],
		},
		{
			id: "checks",
			header: "Checks",
			question: "Which checks must pass before a merge?",
			options: [{ label: "lint", description: "Biome" }, "unit tests", "integration tests", "docs gate"],
			multiSelect: true,
		},
	],
	writer: [{ question: "What should the project be called?", placeholder: "type a name and press Enter" }],
	reviewer: [{ question: "Does the missing test block the merge?", kind: "confirm" }],
	tester: [{ question: "Which test suite should run first?", options: ["unit", "integration", "end-to-end"] }],
} as const;

type Agent = keyof typeof QUESTIONS;
const AGENTS = Object.keys(QUESTIONS) as Agent[];
const FOREGROUND: Agent[] = ["planner", "writer"];
const BACKGROUND: Agent[] = ["reviewer", "tester"];
/**
 * The launcher's background workflow (pi-subagents' runs.all of reviewer and tester), set only when
 * background children work on the pi the demo runs on; unset, the background step is skipped.
 */
const backgroundWorkflow = () => process.env.CHECKPOINT_BRIDGE_DEMO_WORKFLOW || undefined;

/** One answer of a form as the report names it: `naming: snake_case (note: …)`; a lone question's answer as is. */
function answerText(answer: any, alone: boolean): string {
	const note = typeof answer?.note === "string" ? ` (note: ${answer.note})` : "";
	return `${alone ? "" : `${answer?.id ?? answer?.question}: `}${answer?.answer}${note}`;
}

/** The line a child ends with; the main session reads it back out of the sub-agent result. */
function reportLine(agent: Agent, envelopeText: string): string {
	try {
		const envelope = JSON.parse(envelopeText);
		const answers: any[] = Array.isArray(envelope?.answers) ? envelope.answers : [];
		if (envelope?.status === "ok" && answers.length > 0 && answers.every((answer) => typeof answer?.answer === "string")) {
			return `Answer received by ${agent}: ${answers.map((answer) => answerText(answer, answers.length === 1)).join("; ")}`;
		}
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
	return fauxAssistantMessage(fauxToolCall("ask_user_via_host", { questions: structuredClone(QUESTIONS[agent]) }), { stopReason: "toolUse" });
}

interface SubagentCall {
	/** The agent named in the call; "workflow" for the background workflow. */
	agent: string;
	result?: { text: string; isError: boolean };
}

/** The main transcript's `subagent` calls in order, each with its result once there. */
function subagentCalls(conversation: any[]): SubagentCall[] {
	const calls = new Map<string, SubagentCall>();
	for (const message of conversation) {
		if (message.role === "assistant" && Array.isArray(message.content)) {
			for (const part of message.content) {
				if (part?.type !== "toolCall" || part.name !== "subagent") continue;
				calls.set(part.id, { agent: part.arguments?.workflowScript ? "workflow" : String(part.arguments?.agent ?? "") });
			}
		}
		if (message.role === "toolResult" && message.toolName === "subagent") {
			const call = calls.get(message.toolCallId);
			if (call) call.result = { text: textOf(message), isError: Boolean(message.isError) };
		}
	}
	return [...calls.values()];
}

/**
 * pi-subagents tells the main session about background work in messages (role "user" for the model):
 * "Workflow child completed: **<agent>**" for each child, then "Background task completed: **workflow**"
 * with the workflow's return value (the children's reports, as a JSON array).
 */
function backgroundNotices(conversation: any[]): { childDone?: string; workflowDone?: string } {
	const notices = conversation.filter((m) => m.role === "user" || m.role === "custom").map(textOf);
	const last = conversation[conversation.length - 1];
	return {
		childDone: last?.role === "user" || last?.role === "custom" ? /^Workflow child completed: \*\*([^*]+)\*\*/.exec(textOf(last))?.[1] : undefined,
		// Any final status counts (completed, failed, stopped): the summary then says what is missing.
		workflowDone: notices.find((text) => /^Background tasks? [^\n]*\*\*workflow\*\*/.test(text)),
	};
}

/** The texts a report may sit in: the text itself, and every JSON string in it (a workflow returns them quoted). */
function reportCandidates(text: string): string[] {
	const quoted = [...text.matchAll(/"(?:[^"\\\n]|\\.)*"/g)].flatMap((match) => {
		try {
			return [String(JSON.parse(match[0]))];
		} catch {
			return [];
		}
	});
	return [...quoted, text];
}

/** What a sub-agent reported, from the text that carries its report (a result, a completion message). */
function reported(agent: Agent, text: string): string {
	for (const candidate of reportCandidates(text)) {
		const received = new RegExp(`^\\s*Answer received by ${agent}: (.+?)\\s*$`, "m").exec(candidate)?.[1];
		if (received !== undefined) return `received: ${received}`;
		const why = new RegExp(`^\\s*No answer reached ${agent} \\((.*)\\)\\s*$`, "m").exec(candidate)?.[1];
		if (why !== undefined) return `received no answer (${why})`;
	}
	return "received no answer (it sent no report)";
}

function mainStep(conversation: any[]) {
	const calls = subagentCalls(conversation);
	const failed = calls.find((call) => call.result?.isError);
	if (failed) {
		return fauxAssistantMessage(fauxText(`Demo stopped: the ${failed.agent} sub-agent failed: ${failed.result!.text.slice(0, 400)}`));
	}
	const results = new Map(calls.filter((call) => call.result).map((call) => [call.agent, call.result!.text]));
	const next = FOREGROUND.find((agent) => !results.has(agent));
	if (next) {
		const convention = /Answer received by planner: naming: ([^;(\n]+)/.exec(results.get("planner") ?? "")?.[1]?.trim();
		const task =
			next === "planner"
				? "Ask the user, in one form, which naming convention the project should use and which checks must pass before a merge, then report the answers."
				: `Ask the user what the project should be called${convention ? ` (naming convention: ${convention})` : ""}, then report the answer.`;
		return fauxAssistantMessage(fauxToolCall("subagent", { agent: next, task, async: false }), { stopReason: "toolUse" });
	}
	const workflow = backgroundWorkflow();
	const background = workflow !== undefined;
	const { childDone, workflowDone: completion } = backgroundNotices(conversation);
	if (workflow && !results.has("workflow")) {
		return fauxAssistantMessage(fauxToolCall("subagent", { workflowScript: workflow }), { stopReason: "toolUse" });
	}
	if (background && completion === undefined) {
		if (childDone) return fauxAssistantMessage(fauxText(`${childDone} has finished in the background; its report comes with the workflow's result.`));
		// The launch returned at once; the summary comes when the workflow's result arrives.
		return fauxAssistantMessage(
			fauxText(
				"reviewer and tester now run in the background, in parallel. Their questions will open here one after the other; the summary follows when both are done.",
			),
		);
	}
	const lines = [
		...FOREGROUND.map((agent) => `- ${agent} (foreground) ${reported(agent, results.get(agent) ?? "")}`),
		...(background ? BACKGROUND.map((agent) => `- ${agent} (background) ${reported(agent, completion ?? "")}`) : []),
	];
	return fauxAssistantMessage(fauxText(["Demo summary (each line is what that sub-agent reported back):", ...lines].join("\n")));
}

export default function demoModel(pi: any) {
	registerScripted(pi, { provider: DEMO_PROVIDER, api: "demo-scripted", id: DEMO_MODEL, name: "Demo (scripted)" }, (child, conversation) => {
		if (child && (AGENTS as string[]).includes(child)) return childStep(child as Agent, conversation[conversation.length - 1]);
		if (child) return fauxAssistantMessage(fauxText(`The demo model has no script for the "${child}" agent.`));
		return mainStep(conversation);
	});
}
