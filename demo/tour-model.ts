/**
 * Scripted model of `npm run demo -- --tour`: provider "demo-tour", model "tour". No API key, no
 * network. Loaded into the main session and into the tour's child (a pi-subagents child only knows
 * providers registered by extensions loaded into the child). Every reply is decided from the
 * transcript alone, so the script carries on after pi is started again with `--continue`.
 *
 *   1. ask now, answer later: `ask_user_via_host` with `wait: false`; the call returns "queued" at
 *      once, the turn ends, and the human's answer starts the next turn as a message;
 *   2. a timed-out question answered late: a 10 s budget runs out, the question stays open as late,
 *      and `/checkpoints answer 1` shows it again; its answer arrives as a message too;
 *   3. a child's own screen: a sub-agent runs pi's example `question` tool, whose screen the host draws;
 *   4. a host restart that keeps a question: asked waiting, then pi stops as a crash would (demo/tour.ts)
 *      and the launcher starts it again; the question opens again, marked, and its answer comes back;
 *   5. a phone answers: a sub-agent asks; the tour's notify command (demo/phone.ts) presses a one-tap
 *      button a few seconds later, no key is pressed, and the terminal says where the answer came from.
 */
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { PHONE_ANSWER, PHONE_SCENE } from "./phone.ts";
import { registerScripted, textOf } from "./scripted.ts";

export const TOUR_PROVIDER = "demo-tour";
export const TOUR_MODEL = "tour";
const ASK = "ask_user_via_host";
export const TOUR_CHILD = "tour-child";
/** Scene 5's child: the phone answers a sub-agent's question (a notification is sent for what reaches the host from elsewhere, not for its own session's). */
export const TOUR_PHONE_CHILD = "tour-phone";

/** The questions of the tour; tests and demo/tour.ts find each scene by them. */
export const TOUR_QUESTIONS = {
	later: { question: "Tour 1 of 5: which colour should the banner be?", options: ["teal", "amber", "violet"] },
	late: { question: "Tour 2 of 5: which day should the release go out?", options: ["Monday", "Wednesday", "Friday"] },
	child: {
		question: "Tour 3 of 5: which file should the child open first?",
		options: [{ label: "README.md" }, { label: "CHANGELOG.md" }, { label: "package.json" }],
	},
	restart: { question: "Tour 4 of 5: which region should the service run in?", options: ["eu-west", "us-east", "ap-south"] },
	phone: { question: `${PHONE_SCENE} which port should the preview listen on?`, options: ["8080", "3000", PHONE_ANSWER] },
} as const;
/** The budget of the question that is meant to time out: long enough to read, short enough to wait for. */
export const LATE_BUDGET_MS = 10_000;
/** The line the model ends the tour with. */
export const TOUR_DONE = "Tour complete.";

/** The first JSON object in a text that parses (an ended request's message ends with its envelope). */
function envelopeIn(text: string): any {
	for (let at = text.indexOf("{"); at >= 0; at = text.indexOf("{", at + 1)) {
		try {
			return JSON.parse(text.slice(at));
		} catch {
			// not here
		}
	}
	return undefined;
}

interface Call {
	name: string;
	question?: string;
	/** The sub-agent a `subagent` call runs. */
	agent?: string;
	result?: string;
}

/** What the transcript holds: the calls in order with their results, and every answer delivered later by question. */
function read(conversation: any[]): { calls: Call[]; delivered: Map<string, string> } {
	const calls = new Map<string, Call>();
	const delivered = new Map<string, string>();
	for (const message of conversation) {
		if (message.role === "assistant" && Array.isArray(message.content)) {
			for (const part of message.content)
				if (part?.type === "toolCall")
					calls.set(part.id, { name: part.name, question: part.arguments?.questions?.[0]?.question, agent: part.arguments?.agent });
		} else if (message.role === "toolResult") {
			const call = calls.get(message.toolCallId);
			if (call) call.result = textOf(message);
		} else {
			const text = textOf(message);
			if (!text.startsWith("checkpoint-bridge:")) continue;
			for (const answer of envelopeIn(text)?.answers ?? []) if (typeof answer?.answer === "string") delivered.set(answer.question, answer.answer);
		}
	}
	return { calls: [...calls.values()], delivered };
}

const say = (text: string) => fauxAssistantMessage(fauxText(text));
const act = (text: string, tool: string, args: any) => fauxAssistantMessage([fauxText(text), fauxToolCall(tool, args)], { stopReason: "toolUse" });
const statusOf = (result: string | undefined) => envelopeIn(result ?? "")?.status ?? "unknown";

function mainStep(conversation: any[]) {
	const { calls, delivered } = read(conversation);
	const last = conversation[conversation.length - 1];
	const asked = (q: { question: string }) => calls.find((c) => c.name === ASK && c.question === q.question);
	const { later, late, restart } = TOUR_QUESTIONS;
	const answer = (q: { question: string }) => delivered.get(q.question) ?? (asked(q)?.result ? envelopeIn(asked(q)!.result!)?.answers?.[0]?.answer : undefined);

	const phoneCall = calls.find((c) => c.name === "subagent" && c.agent === TOUR_PHONE_CHILD);
	if (phoneCall?.result !== undefined) {
		const report = /Tour phone child got: (.+)/.exec(phoneCall.result)?.[1] ?? phoneCall.result.slice(0, 200);
		return say(
			`Tour 5 done: your phone answered with one tap and the child got "${report}"; the form here closed by itself, and the terminal said where and when the answer came from.\n${TOUR_DONE} Quit with Ctrl+D.`,
		);
	}
	if (phoneCall) return say("Tour 5: waiting for the phone.");
	if (delivered.has(restart.question))
		return act(
			`Tour 4 done: pi stopped and started again, the question was kept and opened again, and your answer "${delivered.get(restart.question)}" came back to this session as a message.\n\nTour 5 of 5 — a phone answers: a sub-agent asks, and its question is sent on as a notification would be. The tour set a notify command that stands in for your phone (on this machine, so the loopback links the warning above names work for it): it gets the question's one-tap buttons and, in a few seconds, presses "${PHONE_ANSWER}". Press no key.`,
			"subagent",
			{ agent: TOUR_PHONE_CHILD, task: "Ask which port the preview should listen on, then report the answer.", async: false },
		);
	const restartCall = asked(restart);
	if (restartCall?.result !== undefined)
		return say(
			`Tour 4: the call ended "${statusOf(restartCall.result)}" before the restart (${answer(restart) ?? "no answer"}). ${TOUR_DONE} Quit with Ctrl+D.`,
		);
	const childCall = calls.find((c) => c.name === "subagent" && c.agent === TOUR_CHILD);
	if (childCall?.result !== undefined) {
		const report = /Tour child got: (.+)/.exec(childCall.result)?.[1] ?? childCall.result.slice(0, 200);
		return act(
			`Tour 3 done: the child's own screen was drawn here, and the child reported: ${report}\n\nTour 4 of 5 — a host restart that keeps a question: I ask once more and wait. A few seconds after the form shows, pi stops as a crash would, and the tour starts it again (pi --continue): the question opens again, marked as asked before the restart. Answer it then.`,
			ASK,
			{ questions: [restart] },
		);
	}
	if (childCall) return say("Tour 3: waiting for the child.");
	if (delivered.has(late.question))
		return act(
			`Tour 2 done: your late answer "${delivered.get(late.question)}" arrived as a message, after the call had timed out.\n\nTour 3 of 5 — a child's own screen: a sub-agent runs pi's example question tool, which draws its own screen. A child has no terminal; checkpoint-bridge draws that screen here, under who asks. Pick with Up/Down and Enter.`,
			"subagent",
			{ agent: TOUR_CHILD, task: "Ask which file to open first with the question tool, then report the answer.", async: false },
		);
	const lateCall = asked(late);
	if (lateCall?.result !== undefined)
		return say(
			`The call ended "${statusOf(lateCall.result)}": its budget ran out, and the question stays open at the host as late. Type /checkpoints to see it listed, then /checkpoints answer 1 to open it again and answer it; the answer comes to this session as a message.`,
		);
	if (lateCall) return say("Tour 2: waiting for the question to time out.");
	if (delivered.has(later.question))
		return act(
			`Tour 1 done: your answer "${delivered.get(later.question)}" arrived later, as a message that started this turn.\n\nTour 2 of 5 — a timed-out question answered late: I ask with a budget of ${LATE_BUDGET_MS / 1000} s. Do not answer it: let it time out.`,
			ASK,
			{ questions: [late], timeoutMs: LATE_BUDGET_MS },
		);
	const laterCall = asked(later);
	if (laterCall?.result !== undefined && last?.role === "toolResult")
		return say(
			`The call came back at once, "${statusOf(laterCall.result)}", and I carry on without waiting. Answer the form whenever you like: the answer comes to this session later, as a message.`,
		);
	if (laterCall) return say("Tour 1: the question is open; answer it when you like.");
	return act("Tour 1 of 5 — ask now, answer later: I ask with wait: false, so the call does not wait for you.", ASK, { questions: [later], wait: false });
}

function phoneChildStep(last: any) {
	if (last?.role === "toolResult") return say(`Tour phone child got: ${envelopeIn(textOf(last))?.answers?.[0]?.answer ?? textOf(last).slice(0, 200)}`);
	return fauxAssistantMessage(fauxToolCall(ASK, { questions: [structuredClone(TOUR_QUESTIONS.phone) as any] }), { stopReason: "toolUse" });
}

function childStep(last: any) {
	if (last?.role === "toolResult") return say(`Tour child got: ${textOf(last)}`);
	return fauxAssistantMessage(fauxToolCall("question", structuredClone(TOUR_QUESTIONS.child) as any), { stopReason: "toolUse" });
}

export default function tourModel(pi: any) {
	registerScripted(pi, { provider: TOUR_PROVIDER, api: "demo-tour-scripted", id: TOUR_MODEL, name: "Tour (scripted)" }, (agent, conversation) => {
		if (agent === TOUR_CHILD) return childStep(conversation[conversation.length - 1]);
		if (agent === TOUR_PHONE_CHILD) return phoneChildStep(conversation[conversation.length - 1]);
		if (agent) return say(`The tour has no script for the "${agent}" agent.`);
		return mainStep(conversation);
	});
}
