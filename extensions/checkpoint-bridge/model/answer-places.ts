/**
 * Where a request's answers were given, in words: the page's traces, `/checkpoints` and anything
 * else that tells the human where an answer came from say it the same way.
 */
import type { Answer, AnswerPlace } from "./answer.ts";
import { capLength } from "./sanitise.ts";

/** Each place as a trace says it. */
const PLACE_WORDS: Readonly<Record<AnswerPlace, string>> = {
	terminal: "in the terminal",
	rpc: "in the RPC client's dialog",
	page: "on the page",
	link: "through the request's own link",
	"notify-link": "through the link the notify command sent",
	mail: "by mail",
	outside: "from outside the terminal",
};

/** A place an answer carries no `place` for (a surface or a host that names none), from its source. */
const SOURCE_PLACE: Readonly<Record<string, AnswerPlace>> = { dialog: "terminal", web: "page", outside: "outside" };
/** An answer the asker carried in its own request, re-sent after a restart: nobody here saw it given. */
const CARRIED = "carried from before the restart";
/** An answer from the web page that names no place: the page, a link or the notify link, nobody knows. */
const SOMEWHERE_IN_THE_BROWSER = "in the browser";
/** The order places are named in: the web page's first, then the host's own, then outside. */
const ORDER: readonly AnswerPlace[] = ["page", "link", "notify-link", "mail", "terminal", "rpc", "outside"];

/** The words for one answer's place; `words` overrides some (the page says which tab). */
function placeOf(answer: Pick<Answer, "source" | "place">, words: Partial<Record<AnswerPlace, string>>): { rank: number; text: string } | undefined {
	const place = answer.place ?? SOURCE_PLACE[answer.source ?? "dialog"];
	if (place === undefined) return undefined;
	const text = answer.place === undefined && answer.source === "web" ? SOMEWHERE_IN_THE_BROWSER : (words[place] ?? PLACE_WORDS[place]);
	return { rank: ORDER.indexOf(place), text };
}

/**
 * Where the answers were given, each place once: `on the page`, `in the terminal and with planner's
 * answer (given on the page)`. A shared answer names whose answer it was and where that one was
 * given, never a place it was not given in.
 */
export function answeredWhere(answers: readonly Pick<Answer, "source" | "place" | "sharedWith">[], words: Partial<Record<AnswerPlace, string>> = {}): string {
	const own = new Map<string, number>();
	const shared = new Set<string>();
	for (const answer of answers) {
		if (answer.source === "shared") {
			// A shared answer's place is the one its owner's answer was given in, when the host knows it.
			const where = answer.place === undefined ? undefined : placeOf(answer, words);
			shared.add(`with ${answer.sharedWith?.[0] ?? "another asker"}'s answer${where ? ` (given ${where.text})` : ""}`);
		} else if (answer.source === "carried") own.set(CARRIED, ORDER.length);
		else {
			const where = placeOf(answer, words);
			if (where) own.set(where.text, where.rank);
		}
	}
	const named = [...[...own].sort((a, b) => a[1] - b[1]).map(([text]) => text), ...shared];
	return named.join(" and ") || "in the terminal";
}

/** Characters of one answer a short account of it keeps (the page's traces, the terminal's notices); the rest is cut with a mark. @default 80 */
export const ANSWER_IN_TRACE = 80;

/** What was answered, in short: each answer's value (several values joined), cut to ANSWER_IN_TRACE; undefined for none. */
export function answeredValues(answers: readonly Pick<Answer, "answer" | "values">[]): string[] | undefined {
	if (answers.length === 0) return undefined;
	return answers.map((a) => capLength(a.values ? a.values.join(", ") : a.answer, ANSWER_IN_TRACE));
}
