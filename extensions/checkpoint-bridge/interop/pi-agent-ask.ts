/**
 * A pi-agent-ask form as one request of the relay, and its answers as the form's response: what
 * checkpoint-bridge does as pi-agent-ask's external UI once connected (interop/external-ui.ts
 * connects, and loads this at the first form). The relay knows nothing of this file: index.ts hands
 * it the route to the host.
 */
import type { Answer } from "../model/answer.ts";
import type { Checked } from "../model/check.ts";
import { LIMITS } from "../model/limits.ts";
import type { QuestionInput } from "../model/question.ts";
import type { Envelope } from "../model/result.ts";
import { capLength, cutText, squeezeSpace } from "../model/sanitise.ts";
import { validateAskParams } from "../model/validate.ts";

/** One option of a pi-agent-ask question (its public types). */
interface AskOption {
	label: string;
	value: string;
	description?: string;
	preview?: string;
	recommended?: boolean;
}

/** One pi-agent-ask question: `single`, `multi`, or `preview` (a single choice whose options carry previews). */
export interface AskQuestion {
	id: string;
	label?: string;
	prompt: string;
	type?: "single" | "multi" | "preview";
	required?: boolean;
	options?: AskOption[];
}

/** What `open` receives. */
export interface ExternalAskRequest {
	version: 1;
	flowId: string;
	toolCallId: string;
	title?: string;
	questions: AskQuestion[];
	signal: AbortSignal;
}

/** What `open` resolves with. */
export type RemoteAskResponse =
	| { kind: "answer"; mode?: "submit" | "elaborate"; answers: Record<string, { values?: string[]; customText?: string; note?: string }> }
	| { kind: "cancel" };

/** What index.ts gives the adapter: the one route to the host the tool uses too. */
export interface HostRoute {
	/** Whether a host can be reached now (checked synchronously, inside the listener). */
	reachable(): boolean;
	/** Asks the questions through the host; resolves with the call's envelope, never rejects. */
	ask(questions: QuestionInput[], signal: AbortSignal): Promise<Envelope>;
}

/** How one of our questions maps back to the pi-agent-ask question it shows. */
export interface Back {
	id: string;
	/** Our (shown) option label → the option's value. */
	values: Map<string, string>;
}

export type Mapped = Checked<{ questions: QuestionInput[]; back: Back[] }, { problem: string }>;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === "string" ? v : "");
/** One line of asker text, neutralised and cut to `max` (cuts are marked with "…"). */
const line = (v: unknown, max: number) => cutText(text(v), max, { tidy: squeezeSpace });
const block = (v: unknown, max: number) => cutText(text(v), max, { multiline: true, tidy: (clean) => clean.trim() });

/**
 * The form as questions of the relay. Shown labels are cut to our limits and made unique, and each
 * is mapped back to its option's value; the form's title and a prompt too long for a question go
 * into the question's details. What the relay would still refuse (too many questions or options,
 * a lone option) is named, not shown.
 */
export function toRelayQuestions(request: Pick<ExternalAskRequest, "title" | "questions">): Mapped {
	const { questions } = request;
	if (!Array.isArray(questions) || questions.length === 0) return { ok: false, problem: "the form has no questions" };
	// Counted before anything is mapped: a form the relay refuses costs nothing to refuse.
	if (questions.length > LIMITS.questions.max) return { ok: false, problem: `the form has ${questions.length} questions, at most ${LIMITS.questions.max}` };
	const title = line(request.title, LIMITS.details);
	const mapped: QuestionInput[] = [];
	const back: Back[] = [];
	for (const [i, raw] of questions.entries()) {
		if (!isRecord(raw) || typeof raw.id !== "string") return { ok: false, problem: `question ${i + 1} has no id` };
		// Read no further than the details could show of it.
		const prompt = line(raw.prompt, LIMITS.details) || line(raw.label, LIMITS.question) || line(raw.id, LIMITS.question);
		const question = capLength(prompt, LIMITS.question);
		// The whole prompt stays readable when the question had to be cut.
		const details = block([title, question === prompt ? "" : prompt].filter(Boolean).join("\n\n"), LIMITS.details);
		const header = line(raw.label ?? raw.id, LIMITS.header);
		const q: QuestionInput = { question, ...(header ? { header } : {}), ...(details ? { details } : {}) };
		const values = new Map<string, string>();
		const options = Array.isArray(raw.options) ? (raw.options as unknown[]) : [];
		if (options.length > LIMITS.options.max) return { ok: false, problem: `question ${i + 1} has ${options.length} options, at most ${LIMITS.options.max}` };
		if (options.length > 0) {
			const shown: { label: string; description?: string; preview?: string }[] = [];
			for (const [j, option] of options.entries()) {
				if (!isRecord(option) || typeof option.value !== "string") return { ok: false, problem: `question ${i + 1}, option ${j + 1} has no value` };
				const base = line(option.label, LIMITS.label) || line(option.value, LIMITS.label) || `Option ${j + 1}`;
				// Our answers name labels: options shown alike are numbered (x, x #2, x #3), each number tried once.
				let label = base;
				for (let n = 2; values.has(label); n++) label = `${capLength(base, LIMITS.label - 4)} #${n}`;
				values.set(label, option.value);
				const description = line(option.description, LIMITS.description);
				const preview = block(option.preview, LIMITS.preview);
				shown.push({ label, ...(description ? { description } : {}), ...(preview ? { preview } : {}) });
				if (option.recommended === true && q.recommended === undefined) q.recommended = label;
			}
			q.options = shown;
			q.multiSelect = raw.type === "multi";
		}
		mapped.push(q);
		back.push({ id: raw.id, values });
	}
	const checked = validateAskParams({ questions: mapped });
	if (!checked.ok) return { ok: false, problem: checked.problems.join("; ") };
	return { ok: true, questions: mapped, back };
}

/** One answer as pi-agent-ask reads it: option values, typed text as `customText`, the human's note. */
export function answerEntry(answer: Answer, back: Back): { values?: string[]; customText?: string; note?: string } {
	const given = answer.values ?? [answer.answer];
	const values: string[] = [];
	const typed: string[] = [];
	for (const value of given) {
		const mapped = back.values.get(value);
		if (mapped !== undefined && answer.kind !== "text") values.push(mapped);
		else typed.push(value);
	}
	return {
		...(values.length > 0 ? { values } : {}),
		...(typed.length > 0 ? { customText: typed.join(", ") } : {}),
		...(answer.note !== undefined ? { note: answer.note } : {}),
	};
}

/**
 * The envelope as pi-agent-ask's response: `answer` keyed by question id when every question was
 * answered, `cancel` only when the human dismissed the form; every other ending throws an error that
 * says what happened (the contract reads a rejection as a UI failure, never as the human's cancel).
 */
export function toResponse(envelope: Envelope, back: readonly Back[]): RemoteAskResponse {
	if (envelope.status === "timeout-or-cancelled") return { kind: "cancel" };
	if (envelope.status !== "ok") throw new Error(`checkpoint-bridge: ${envelope.status}: ${envelope.note ?? "no answer"}`);
	const answers: Record<string, { values?: string[]; customText?: string; note?: string }> = {};
	// The relay answers in question order, every question once.
	for (const [i, entry] of back.entries()) {
		const answer = envelope.answers[i];
		if (!answer) throw new Error(`checkpoint-bridge: the host's answers stop before question ${i + 1}`);
		answers[entry.id] = answerEntry(answer, entry);
	}
	return { kind: "answer", mode: "submit", answers };
}

/** One `open` of the provider (interop/external-ui.ts): the form as one request of the relay, abandoned when the request's signal aborts. */
export async function openForm(route: HostRoute, request: ExternalAskRequest): Promise<RemoteAskResponse> {
	const mapped = toRelayQuestions(request);
	if (!mapped.ok) throw new Error(`checkpoint-bridge cannot show this form: ${mapped.problem}`);
	const envelope = await route.ask(mapped.questions, request.signal);
	return toResponse(envelope, mapped.back);
}
