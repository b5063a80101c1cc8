/**
 * pi-agent-ask's forms open in the host's own terminal, on the web page too (its lifecycle and
 * submit channels): `pi-agent-ask:started` adds the form to the forms open elsewhere (core), an
 * answer from the page goes out as `pi-agent-ask:submit` and its `:submit-result` is the verdict,
 * and `:completed` (whoever answered) removes it. The questions are mapped as the external UI maps
 * them (pi-agent-ask.ts), answers back by option value.
 */
import { type FormsElsewhere, MAX_FORMS_ELSEWHERE } from "../core/answering/elsewhere.ts";
import { MAX_REQUEST_ID_LENGTH } from "../model/limits.ts";
import { answerEntry, type Back, isRecord, type RemoteAskResponse, toRelayQuestions } from "./pi-agent-ask.ts";

/** A form opened (validated, normalised questions). */
const STARTED = "pi-agent-ask:started";
/** A form resolved, however. */
const COMPLETED = "pi-agent-ask:completed";
/** An answer from outside the terminal. */
const SUBMIT = "pi-agent-ask:submit";
/** pi-agent-ask's acknowledgement of one submit. */
const SUBMIT_RESULT = "pi-agent-ask:submit-result";
/** The name the page shows for the forms. */
export const PI_AGENT_ASK = "pi-agent-ask";

/** What the adapter needs of `pi.events`. */
export interface EventBus {
	on(channel: string, handler: (data: unknown) => void): () => void;
	emit(channel: string, data: unknown): void;
}

/** A flow id we keep: a non-empty string within the relay's id limit. */
const flowIdOf = (data: Record<string, unknown>) =>
	typeof data.flowId === "string" && data.flowId !== "" && data.flowId.length <= MAX_REQUEST_ID_LENGTH ? data.flowId : undefined;

let submits = 0;

/**
 * Feeds `forms` from pi-agent-ask's events on `events` (the host session's `pi.events`); returns the
 * stop, which also removes the forms it added (the terminal they are open in is going away).
 */
export function piAgentAskOnPage(events: EventBus, forms: Pick<FormsElsewhere, "add" | "remove">): () => void {
	/** Our form id by pi-agent-ask's flow id, oldest first; no more than the forms keep, so forms that never complete cannot grow it. */
	const open = new Map<string, string>();

	/** Sends the answers as one submit and resolves with its acknowledgement. */
	const submitter = (flowId: string, back: Back[]) => (answers: Parameters<typeof answerEntry>[0][], signal: AbortSignal) =>
		new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
			const requestId = `checkpoint-bridge-${process.pid}-${++submits}`;
			const off = events.on(SUBMIT_RESULT, (data) => {
				if (!isRecord(data) || data.requestId !== requestId || data.flowId !== flowId) return;
				done(data.ok === true ? { ok: true } : { ok: false, reason: [data.error, data.message].filter((v) => typeof v === "string").join(": ") });
			});
			const done = (verdict: { ok: true } | { ok: false; reason: string }) => {
				off();
				signal.removeEventListener("abort", gone);
				resolve(verdict);
			};
			// The registry stopped waiting: nothing more to listen for.
			const gone = () => done({ ok: false, reason: "no verdict" });
			signal.addEventListener("abort", gone, { once: true });
			const response: RemoteAskResponse = {
				kind: "answer",
				mode: "submit",
				answers: Object.fromEntries(back.map((entry, i) => [entry.id, answerEntry(answers[i]!, entry)])),
			};
			events.emit(SUBMIT, { version: 1, requestId, flowId, response });
		});

	const offStarted = events.on(STARTED, (data) => {
		if (!isRecord(data) || data.version !== 1) return;
		const flowId = flowIdOf(data);
		if (flowId === undefined || open.has(flowId)) return;
		const title = typeof data.title === "string" ? data.title : undefined;
		// The title is the card's; the questions go without it.
		const mapped = toRelayQuestions({ questions: data.questions as never });
		const id = mapped.ok
			? forms.add({ tool: PI_AGENT_ASK, ...(title ? { title } : {}), questions: mapped.questions, submit: submitter(flowId, mapped.back) })
			: // A form the relay could not show still waits in the terminal: the page says so.
				forms.add({ tool: PI_AGENT_ASK, ...(title ? { title } : {}), questions: [] });
		open.set(flowId, id);
		// The forms have dropped the oldest already (one more drops the oldest): forget it too.
		if (open.size > MAX_FORMS_ELSEWHERE) {
			const [oldest, oldestId] = open.entries().next().value!;
			open.delete(oldest);
			forms.remove(oldestId);
		}
	});
	const offCompleted = events.on(COMPLETED, (data) => {
		if (!isRecord(data)) return;
		const flowId = flowIdOf(data);
		const id = flowId === undefined ? undefined : open.get(flowId);
		if (id === undefined) return;
		open.delete(flowId!);
		forms.remove(id);
	});
	return () => {
		offStarted();
		offCompleted();
		for (const id of open.values()) forms.remove(id);
		open.clear();
	};
}
