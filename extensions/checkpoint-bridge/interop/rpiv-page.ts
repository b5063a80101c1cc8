/**
 * rpiv-ask-user-question's questionnaire open in the host's terminal, on the web page as a
 * read-only card: its 2.11.0 release takes no answer from outside (no event for an outside answer), so the page
 * says where to answer. `rpiv:ask-user:prompt` carries the questions (no id in 2.11.0);
 * `rpiv:ask-user:blocked` `{ active: true }` follows once the questionnaire waits for the human
 * and `{ active: false }` when it ends. A `toolCallId` on both, as its later hosts page describes,
 * pairs them; without one an end closes the newest open card (a second questionnaire stacks on the first).
 */
import { type FormsElsewhere, MAX_FORMS_ELSEWHERE } from "../core/answering/elsewhere.ts";
import { LIMITS } from "../model/limits.ts";
import type { QuestionInput } from "../model/question.ts";
import { cutText, squeezeSpace } from "../model/sanitise.ts";
import { isRecord } from "./pi-agent-ask.ts";
import type { EventBus } from "./pi-agent-ask-page.ts";

const PROMPT = "rpiv:ask-user:prompt";
const BLOCKED = "rpiv:ask-user:blocked";
/** The name the page shows for the questionnaire. */
export const RPIV = "rpiv-ask-user-question";

const text = (v: unknown) => (typeof v === "string" ? v : "");
const line = (v: unknown, max: number) => cutText(text(v), max, { tidy: squeezeSpace });

/** rpiv's prompt questions as ours, cut to our limits; shown only, never answered here. */
function questionsOf(payload: unknown): QuestionInput[] {
	const raw = isRecord(payload) && Array.isArray(payload.questions) ? (payload.questions as unknown[]) : [];
	return raw.filter(isRecord).map((q) => {
		const options = Array.isArray(q.options) ? (q.options as unknown[]).filter(isRecord) : [];
		const header = line(q.header, LIMITS.header);
		return {
			question: line(q.question, LIMITS.question) || "(no question text)",
			...(header ? { header } : {}),
			...(options.length > 0
				? {
						options: options.map((o, j) => {
							const description = line(o.description, LIMITS.description);
							return { label: line(o.label, LIMITS.label) || `Option ${j + 1}`, ...(description ? { description } : {}) };
						}),
						multiSelect: q.multiSelect === true,
					}
				: {}),
		};
	});
}

/** Feeds `forms` from rpiv's events on `events` (the host session's `pi.events`); returns the stop, which removes its cards. */
export function rpivOnPage(events: Pick<EventBus, "on">, forms: Pick<FormsElsewhere, "add" | "remove">): () => void {
	/** The last prompt's questions, until the wait begins (a questionnaire that fails to load never blocks). */
	let prompted: { questions: QuestionInput[]; toolCallId?: string } | undefined;
	/** Open cards, oldest first: our form id and rpiv's toolCallId when it gives one; no more than the forms keep. */
	const open: { id: string; toolCallId?: string }[] = [];
	const callId = (data: unknown) => (isRecord(data) && typeof data.toolCallId === "string" && data.toolCallId !== "" ? data.toolCallId : undefined);

	const offPrompt = events.on(PROMPT, (data) => {
		const toolCallId = callId(data);
		prompted = { questions: questionsOf(data), ...(toolCallId ? { toolCallId } : {}) };
	});
	const offBlocked = events.on(BLOCKED, (data) => {
		if (!isRecord(data) || typeof data.active !== "boolean") return;
		const toolCallId = callId(data);
		if (data.active) {
			const questions = prompted && (toolCallId === undefined || prompted.toolCallId === toolCallId) ? prompted.questions : [];
			prompted = undefined;
			open.push({ id: forms.add({ tool: RPIV, questions }), ...(toolCallId ? { toolCallId } : {}) });
			// Questionnaires that never end cannot grow it: the forms have dropped the oldest card already.
			if (open.length > MAX_FORMS_ELSEWHERE) forms.remove(open.shift()!.id);
			return;
		}
		const at = toolCallId === undefined ? open.length - 1 : open.findIndex((o) => o.toolCallId === toolCallId);
		if (at < 0) return;
		const [ended] = open.splice(at, 1);
		forms.remove(ended!.id);
	});
	return () => {
		offPrompt();
		offBlocked();
		for (const { id } of open.splice(0)) forms.remove(id);
		prompted = undefined;
	};
}
