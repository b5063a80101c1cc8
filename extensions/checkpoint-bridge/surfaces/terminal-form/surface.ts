/**
 * The terminal form as a surface: a whole request in one `ctx.ui.custom` component, in the TUI
 * only. It closes at once when its call ends (the signal), whatever the TUI does with it after.
 */
import type { Component } from "@earendil-works/pi-tui";
import type { QuestionPrompt, RequestOutcome, RequestPrompt, Surface } from "../../core/answering/surface.ts";
import type { Answer } from "../../model/answer.ts";
import type { Question } from "../../model/question.ts";
import { FormComponent } from "./component.ts";
import { FormModel } from "./model.ts";
import type { FormTheme } from "./render.ts";

/** The slice of pi's `ctx.ui` the form needs (pi 0.85 and 1.6 have it in the TUI). */
export interface CustomUI {
	custom<T>(
		factory: (tui: { requestRender(): void }, theme: FormTheme, keybindings: unknown, done: (result: T) => void) => Component & { dispose?(): void },
		options?: { blocked?: { kind: "question"; message: string } },
	): Promise<T>;
}

/** How a form behaves besides what it shows. */
export interface FormOptions {
	/** Keys are ignored for this long after the form first appears. @default KEY_GUARD_MS */
	keyGuardMs?: number;
}

/** Shows a whole request as one form; see RequestPrompt for the contract. */
export function showForm(ui: CustomUI, prompt: RequestPrompt, options: FormOptions = {}): Promise<RequestOutcome> {
	const { signal } = prompt;
	if (signal.aborted) return Promise.resolve({ ended: "dismissed", answers: [...prompt.known] });
	return new Promise<RequestOutcome>((resolve, reject) => {
		let model: FormModel | undefined;
		let component: FormComponent | undefined;
		let close: ((outcome: RequestOutcome) => void) | undefined;
		let settled = false;
		const outcome = (ended: RequestOutcome["ended"]): RequestOutcome => ({ ended, answers: model?.answers ?? [...prompt.known] });
		const settle = (result: { outcome: RequestOutcome } | { error: unknown }) => {
			if (settled) return;
			settled = true;
			signal.removeEventListener("abort", onAbort);
			if ("error" in result) reject(result.error);
			else resolve(result.outcome);
			// Its countdown stops here, whether or not the TUI ever got the component to dispose it.
			component?.dispose();
			// The TUI takes the form off the screen; a failure there must not reach the relay.
			try {
				close?.("outcome" in result ? result.outcome : outcome("dismissed"));
			} catch {
				// Already gone.
			}
		};
		const onAbort = () => settle({ outcome: outcome("dismissed") });
		signal.addEventListener("abort", onAbort, { once: true });
		const n = prompt.questions.length;
		ui.custom<RequestOutcome>(
			(tui, theme, _keybindings, done) => {
				close = done;
				model = new FormModel(prompt.questions, prompt.known, prompt.onAnswer);
				prompt.onDialog?.();
				component = new FormComponent({
					model,
					theme,
					asker: prompt.asker,
					deadline: prompt.deadline,
					...(prompt.callDeadline !== undefined ? { callDeadline: prompt.callDeadline } : {}),
					requestRender: () => tui.requestRender(),
					close: (effect) => settle({ outcome: outcome(effect === "submit" ? "submitted" : "dismissed") }),
					fail: (error) => settle({ error }),
					...(prompt.onShown ? { onShown: prompt.onShown } : {}),
					...(options.keyGuardMs !== undefined ? { keyGuardMs: options.keyGuardMs } : {}),
				});
				// Ended while pi was building the form: stop it now, and close it as soon as pi has it.
				if (settled) {
					component.dispose();
					queueMicrotask(() => done(outcome("dismissed")));
				}
				return component;
			},
			{ blocked: { kind: "question", message: `[${prompt.asker}] asks ${n === 1 ? "a question" : `${n} questions`}` } },
		).then(
			(result) => settle({ outcome: result ?? outcome("dismissed") }),
			(error: unknown) => settle({ error }),
		);
	});
}

/** The terminal form surface: whole requests through `askRequest`; a lone question is a form of one. */
export function formSurface(ui: CustomUI, options: FormOptions = {}): Surface {
	return {
		place: "terminal",
		askRequest: (prompt) => showForm(ui, prompt, options),
		ask: async (prompt: QuestionPrompt, question: Question): Promise<Answer | undefined> => {
			const result = await showForm(
				ui,
				{
					asker: prompt.asker,
					questions: [question],
					known: [],
					signal: prompt.signal,
					deadline: prompt.deadline,
					...(prompt.callDeadline !== undefined ? { callDeadline: prompt.callDeadline } : {}),
					...(prompt.onDialog ? { onDialog: prompt.onDialog } : {}),
				},
				options,
			);
			return result.ended === "submitted" ? result.answers[0] : undefined;
		},
	};
}
