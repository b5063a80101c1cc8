/**
 * The host's surface with child screens (ADR-0016): a request whose one question is a child's own
 * component (`dialog: "custom"`, core/answering/screens.ts) is drawn in the host's terminal with pi's
 * `ctx.ui.custom`; every other request goes to the surface it wraps. Where there is no terminal (an
 * RPC host), or the component is not in this process, such a request ends dismissed at once, showing
 * nothing. The drawing (and pi-tui) is loaded on the first child screen.
 */
import { screens } from "../../core/answering/screens.ts";
import type { RequestOutcome, RequestPrompt, Surface } from "../../core/answering/surface.ts";
import { answerOf } from "../../model/answer-check.ts";
import type { Question } from "../../model/question.ts";
import type { ScreenUI } from "./frame.ts";

/** Whether `questions` are one child's screen. */
const isScreen = (questions: readonly Question[]) => questions.length === 1 && questions[0]!.dialog === "custom";

/** Draws the child's screen the request names; submitted once the child's component called `done()`. */
async function showScreen(ui: ScreenUI | undefined, prompt: RequestPrompt): Promise<RequestOutcome> {
	const question = prompt.questions[0]!;
	const dismissed: RequestOutcome = { ended: "dismissed", answers: [undefined] };
	const screen = question.id === undefined ? undefined : screens().open.get(question.id);
	if (!ui || !screen || prompt.signal.aborted) return dismissed;
	const { drawScreen } = await import("./frame.ts");
	const given = await drawScreen(ui, {
		asker: prompt.asker,
		screen,
		signal: prompt.signal,
		...(prompt.onDialog ? { onDialog: prompt.onDialog } : {}),
	});
	// The value itself goes to the child through the screen; the request only says it was given.
	return given ? { ended: "submitted", answers: [{ ...answerOf(question, "confirm", "yes"), source: "dialog" }] } : dismissed;
}

/** `inner` with child screens drawn by `ui` (the host's TUI), or dismissed at once without one. */
export function withChildScreens(inner: Surface, ui: ScreenUI | undefined): Surface {
	const { askRequest } = inner;
	return {
		...(inner.place !== undefined ? { place: inner.place } : {}),
		...(askRequest ? { askRequest: (prompt: RequestPrompt) => (isScreen(prompt.questions) ? showScreen(ui, prompt) : askRequest.call(inner, prompt)) } : {}),
		ask: async (prompt, question) => {
			if (question.dialog !== "custom") return inner.ask(prompt, question);
			const { signal, asker, onDialog } = prompt;
			const outcome = await showScreen(ui, { asker, questions: [question], known: [], signal, deadline: prompt.deadline, ...(onDialog ? { onDialog } : {}) });
			return outcome.ended === "submitted" ? outcome.answers[0] : undefined;
		},
	};
}
