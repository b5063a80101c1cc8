/**
 * The one order a question's options are shown in, on every surface (the terminal form, pi's
 * select dialogs over RPC, the web page, a notification, a mail): the recommended option first,
 * then the others in the asker's order. A mail's `1` and a notification's first button are the
 * option every other surface lists first. The page runs this very function: its source is served
 * at the top of the page's script (surfaces/web/server.ts), so it stays self-contained, using
 * nothing from outside its own body.
 */
import type { Option, Question } from "./question.ts";

/** The options in shown order: the recommended one first, the rest as the asker gave them; a relayed dialog's (no recommendation) exactly as given. */
export function shownOrder<O extends Pick<Option, "label">>(question: { options?: readonly O[] | undefined; recommended?: string | undefined }): O[] {
	const options = question.options ?? [];
	const first = options.find((option) => option.label === question.recommended);
	return first ? [first, ...options.filter((option) => option !== first)] : [...options];
}

/** The option labels in shown order (shownOrder's labels). */
export function shownLabels(question: Pick<Question, "options" | "recommended">): string[] {
	return shownOrder(question).map((option) => option.label);
}
