/**
 * "Ask the human once" as a data structure (core/host/same-questions.ts): who joins whom, what a joined
 * request is given, who is named as having shared, and what is forgotten when a request settles.
 */
import { describe, expect, it } from "vitest";
import { SameQuestions } from "../../../extensions/checkpoint-bridge/core/host/same-questions.ts";
import type { Answer } from "../../../extensions/checkpoint-bridge/model/answer.ts";
import type { Question } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";

interface Entry {
	request: { asker: { label: string; sessionId: string }; origin?: string };
	questions: Question[];
	entries: ({ answer: Answer } | undefined)[];
}

function questions(raw: unknown[]): Question[] {
	const checked = validateAskParams({ questions: raw });
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	return checked.questions;
}

const license = { question: "Which license?", options: ["MIT", "Apache-2.0"] };
const entry = (label: string, raw: unknown[], sessionId = `${label}-session`): Entry => ({
	request: { asker: { label, sessionId } },
	questions: questions(raw),
	entries: raw.map(() => undefined),
});
/** `entry` asked from `origin` (another process, machine or client). */
const from = (origin: string, e: Entry): Entry => ({ ...e, request: { ...e.request, origin } });
const answered = (owner: Entry, index: number, answer: string, id?: string): Answer => {
	const given: Answer = { question: owner.questions[index]!.question, answer, kind: "option", source: "dialog", ...(id ? { id } : {}) };
	owner.entries[index] = { answer: given };
	return given;
};

describe("same questions", () => {
	it("a later request of another session joins the oldest one asking the same question, at that question's own index", () => {
		const same = new SameQuestions<Entry>();
		const planner = entry("planner", [{ question: "Planner only?" }, license]);
		const reviewer = entry("reviewer", [license]);
		const writer = entry("writer", [license, { question: "Writer only?" }]);
		same.add(planner);
		same.add(reviewer);
		same.add(writer);
		expect(same.dependents(planner)).toEqual([reviewer, writer]);
		expect(same.dependents(reviewer)).toEqual([]);
		expect(same.sharedAnswer(reviewer, 0)).toBeUndefined();
		answered(planner, 1, "MIT", "planner-license-id");
		const shared = { question: "Which license?", answer: "MIT", kind: "option", source: "shared", sharedWith: ["planner"] };
		expect(same.sharedAnswer(reviewer, 0)).toEqual(shared);
		expect(same.sharedAnswer(writer, 0)).toEqual(shared);
		// A question nobody else asks is nobody's to share.
		expect(same.sharedAnswer(writer, 1)).toBeUndefined();
		expect(same.sharedAnswer(planner, 0)).toBeUndefined();
	});

	it("keeps the joiner's own question id, never the owner's", () => {
		const same = new SameQuestions<Entry>();
		const owner = entry("owner", [{ ...license, id: "theirs" }]);
		const joiner = entry("joiner", [{ ...license, id: "mine" }]);
		same.add(owner);
		same.add(joiner);
		answered(owner, 0, "Apache-2.0", "theirs");
		expect(same.sharedAnswer(joiner, 0)).toMatchObject({ id: "mine", answer: "Apache-2.0", source: "shared" });
	});

	it("never joins a request of the same session, nor a question that differs in kind, text, options or multi-select", () => {
		const same = new SameQuestions<Entry>();
		const first = entry("planner", [license], "one-session");
		same.add(first);
		const sameSession = entry("planner-again", [license], "one-session");
		const variants = [
			entry("a", [{ question: "Which license?" }]),
			entry("b", [{ question: "Which licence?", options: ["MIT", "Apache-2.0"] }]),
			entry("c", [{ question: "Which license?", options: ["Apache-2.0", "MIT"] }]),
			entry("d", [{ ...license, multiSelect: true }]),
		];
		for (const e of [sameSession, ...variants]) same.add(e);
		answered(first, 0, "MIT");
		for (const e of [sameSession, ...variants]) expect(same.sharedAnswer(e, 0), e.request.asker.label).toBeUndefined();
		expect(same.dependents(first)).toEqual([]);
	});

	it("names every asker that joined a question in its owner's answer, once each", () => {
		const same = new SameQuestions<Entry>();
		const owner = entry("owner", [license, { question: "Other?" }]);
		same.add(owner);
		same.add(entry("reviewer", [license]));
		same.add(entry("writer", [license]));
		const given = answered(owner, 0, "MIT");
		expect(same.withSharers(owner, 0, given).sharedWith).toEqual(["reviewer", "writer"]);
		expect(same.withSharers(owner, 0, { ...given, sharedWith: ["writer"] }).sharedWith).toEqual(["writer", "reviewer"]);
		// Nobody joined the second question: its answer is returned as it is.
		const other = answered(owner, 1, "x");
		expect(same.withSharers(owner, 1, other)).toBe(other);
	});

	it("a settled request is joined by nobody after it, while those that joined it keep its answer", () => {
		const same = new SameQuestions<Entry>();
		const first = entry("first", [license]);
		const joiner = entry("joiner", [license]);
		same.add(first);
		same.add(joiner);
		answered(first, 0, "MIT");
		same.remove(first);
		expect(same.sharedAnswer(joiner, 0)).toMatchObject({ answer: "MIT", sharedWith: ["first"] });
		// A later asker joins the oldest still held (the joiner), not the settled one.
		const late = entry("late", [license]);
		same.add(late);
		expect(same.sharedAnswer(late, 0)).toBeUndefined();
		expect(same.dependents(joiner)).toEqual([late]);
		same.remove(joiner);
		same.remove(late);
		const fresh = entry("fresh", [license]);
		same.add(fresh);
		expect(same.dependents(fresh)).toEqual([]);
		expect(same.sharedAnswer(fresh, 0)).toBeUndefined();
		// Removing what was never added, or twice, changes nothing.
		same.remove(entry("stranger", [license]));
		same.remove(first);
		expect(same.dependents(first)).toEqual([joiner]);
	});

	it("a request that settled alone is joined by nobody after it: the same question later is asked again", () => {
		const same = new SameQuestions<Entry>();
		const first = entry("first", [license]);
		same.add(first);
		answered(first, 0, "MIT");
		same.remove(first);
		const later = entry("later", [license]);
		same.add(later);
		expect(same.sharedAnswer(later, 0)).toBeUndefined();
		expect(same.dependents(first)).toEqual([]);
	});

	it("forgets every question key once nothing holds it, whether one request or several held it", () => {
		const same = new SameQuestions<Entry>();
		const alone = entry("alone", [{ question: "Alone?" }]);
		const one = entry("one", [license, { question: "Mine?" }]);
		const two = entry("two", [license]);
		for (const e of [alone, one, two]) same.add(e);
		const asks = () => [{ question: "Alone?" }, license, { question: "Mine?" }];
		const before = entry("before", asks());
		same.add(before);
		expect([alone, one, two].map((e) => same.dependents(e).includes(before))).toEqual([true, true, false]);
		same.remove(before);
		for (const e of [two, alone, one]) same.remove(e);
		// Nothing is indexed under those questions any more: a newcomer asking each joins none of them.
		const after = entry("after", asks());
		same.add(after);
		expect([alone, one, two].map((e) => same.dependents(e).includes(after))).toEqual([false, false, false]);
	});

	it("a shared answer to a question without an id has no id at all, not an empty one", () => {
		const same = new SameQuestions<Entry>();
		const owner = entry("owner", [{ ...license, id: "owner-license" }]);
		const joiner = entry("joiner", [license]);
		same.add(owner);
		same.add(joiner);
		answered(owner, 0, "MIT", "owner-license");
		expect(same.sharedAnswer(joiner, 0)).toStrictEqual({ question: "Which license?", answer: "MIT", kind: "option", source: "shared", sharedWith: ["owner"] });
	});

	it("never shares an answer carried from an earlier asking: the joiner asks the human itself", () => {
		const same = new SameQuestions<Entry>();
		const owner = entry("owner", [license]);
		const joiner = entry("joiner", [license]);
		same.add(owner);
		same.add(joiner);
		owner.entries[0] = { answer: { ...answered(owner, 0, "MIT"), source: "carried" } };
		expect(same.sharedAnswer(joiner, 0)).toBeUndefined();
		expect(same.withSharers(owner, 0, owner.entries[0].answer).sharedWith).toBeUndefined();
	});

	it("across origins: joins only when both ask to share with any, never a question of typed text; shares a picked option, not a typed Other nor a note", () => {
		const same = new SameQuestions<Entry>();
		const anyLicense = { ...license, share: "any" };
		const owner = from("here", entry("owner", [anyLicense, { question: "Why?", share: "any" }]));
		const joiner = from("there", entry("joiner", [anyLicense, { question: "Why?", share: "any" }]));
		const notAny = from("elsewhere", entry("not-any", [license]));
		same.add(owner);
		same.add(joiner);
		same.add(notAny);
		expect(same.dependents(owner)).toEqual([joiner]);
		answered(owner, 1, "Because.");
		expect(same.sharedAnswer(joiner, 1)).toBeUndefined();
		const picked = answered(owner, 0, "MIT");
		expect(same.sharedAnswer(joiner, 0)).toMatchObject({ answer: "MIT", source: "shared", sharedWith: ["owner"] });
		expect(same.withSharers(owner, 0, picked).sharedWith).toEqual(["joiner"]);
		owner.entries[0] = { answer: { ...picked, kind: "other", answer: "WTFPL" } };
		expect(same.sharedAnswer(joiner, 0)).toBeUndefined();
		owner.entries[0] = { answer: { ...picked, note: "only for the library" } };
		expect(same.sharedAnswer(joiner, 0)).toBeUndefined();
		expect(same.withSharers(owner, 0, owner.entries[0].answer).sharedWith).toBeUndefined();
	});
});
