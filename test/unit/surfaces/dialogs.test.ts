import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface, PREVIEW_IN_TITLE } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import type { FakeDialog } from "../support/fake-ui.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Answers dialogs from a script: each entry answers the next dialog. */
function scripted(...steps: ((d: FakeDialog) => string | undefined)[]) {
	const seen: FakeDialog[] = [];
	return {
		seen,
		respond: (d: FakeDialog) => {
			seen.push(d);
			const step = steps.shift();
			if (step) queueMicrotask(() => d.answer(step(d)));
		},
	};
}

const pickEntry = (prefix: string) => (d: FakeDialog) => d.options!.find((o) => o.startsWith(prefix));

describe("v2 questions through pi's dialog primitives", () => {
	it("shows the recommended option first and marked, descriptions after a dash, Other last, and a header and details in the title", async () => {
		const script = scripted((d) => d.options![0]);
		const { ask } = relay({ respond: script.respond });
		const envelope = await ask([
			{
				id: "db",
				header: "Storage",
				question: "Which database?",
				details: "Both work.",
				options: [{ label: "Postgres", description: "relational" }, "SQLite"],
				recommended: "SQLite",
			},
		]);
		expect(script.seen[0]?.title).toBe("[child] Storage: Which database?\nBoth work.");
		expect(script.seen[0]?.options).toEqual(["SQLite (recommended)", "Postgres — relational", "Other (type your own)"]);
		expect(envelope.answers).toEqual([{ id: "db", question: "Which database?", answer: "SQLite", kind: "option", source: "dialog" }]);
	});

	it("leads Other to a text input and records the typed answer as kind other", async () => {
		const script = scripted(pickEntry("Other"), () => "  MariaDB ");
		const { ask } = relay({ respond: script.respond });
		const envelope = await ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }]);
		expect(script.seen.map((d) => [d.method, d.title])).toEqual([
			["select", "[child] Which database?"],
			["input", "[child] Which database? — type your own answer"],
		]);
		expect(envelope.answers[0]).toMatchObject({ answer: "MariaDB", kind: "other" });
	});

	it("offers no Other when allowOther is false, and refuses a typed value there", async () => {
		const script = scripted(
			() => "MariaDB",
			(d) => d.options![1],
		);
		const { ask, fake } = relay({ respond: script.respond });
		const envelope = await ask([{ question: "Which database?", options: ["Postgres", "SQLite"], allowOther: false }]);
		expect(script.seen[0]?.options).toEqual(["Postgres", "SQLite"]);
		expect(fake.notices.at(-1)?.message).toContain('"MariaDB" is not one of the offered options');
		expect(envelope.answers[0]).toMatchObject({ answer: "SQLite", kind: "option" });
	});

	it("runs a multi-select as a toggle loop and returns every value in option order", async () => {
		const script = scripted(pickEntry("☐ windows"), pickEntry("☐ linux"), pickEntry("☑ windows"), pickEntry("☐ mac"), pickEntry("Done"));
		const { ask } = relay({ respond: script.respond });
		const envelope = await ask([{ id: "targets", question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true, allowOther: false }]);
		expect(script.seen[0]?.options).toEqual(["☐ linux", "☐ mac", "☐ windows", "Done (0 selected)"]);
		expect(script.seen[2]?.options).toEqual(["☑ linux", "☐ mac", "☑ windows", "Done (2 selected)"]);
		expect(envelope.answers[0]).toMatchObject({ id: "targets", answer: "linux, mac", values: ["linux", "mac"], kind: "option" });
	});

	it("adds typed values to a multi-select through Other and accepts bare labels from an RPC client", async () => {
		const script = scripted(
			() => "mac",
			pickEntry("Other"),
			() => "bsd",
			pickEntry("Done"),
		);
		const { ask } = relay({ respond: script.respond });
		const envelope = await ask([{ question: "Which targets?", options: ["linux", "mac"], multiSelect: true }]);
		expect(script.seen[3]?.options).toEqual(["☐ linux", "☑ mac", "☑ bsd (typed)", "Other (type your own)", "Done (2 selected)"]);
		expect(envelope.answers[0]).toMatchObject({ values: ["mac", "bsd"], kind: "other" });
	});

	it("asks again when Done is picked with nothing selected", async () => {
		const script = scripted(pickEntry("Done"), pickEntry("☐ a"), pickEntry("Done"));
		const { ask, fake } = relay({ respond: script.respond });
		const envelope = await ask([{ question: "Pick", options: ["a", "b"], multiSelect: true }]);
		expect(fake.notices.at(-1)?.message).toContain("pick at least one");
		expect(envelope.answers[0]?.values).toEqual(["a"]);
	});

	it("asks a confirm as Yes / No, so a dismissed dialog is not a no", async () => {
		const yes = scripted(() => "Yes");
		const answered = await relay({ respond: yes.respond }).ask([{ id: "go", question: "Ship it?", kind: "confirm" }]);
		expect(yes.seen[0]?.options).toEqual(["Yes", "No"]);
		expect(answered.answers[0]).toMatchObject({ id: "go", answer: "yes", kind: "confirm" });
		const dismissed = await relay({ respond: scripted(() => undefined).respond }).ask([{ question: "Ship it?", kind: "confirm" }]);
		expect(dismissed.status).toBe("timeout-or-cancelled");
	});

	it("refuses an empty typed Other and asks for it again", async () => {
		const script = scripted(
			pickEntry("Other"),
			() => "   ",
			() => "Redis",
		);
		const { ask } = relay({ respond: script.respond });
		const envelope = await ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }]);
		expect(script.seen.map((d) => d.method)).toEqual(["select", "input", "input"]);
		expect(envelope.answers[0]).toMatchObject({ answer: "Redis", kind: "other" });
	});
});

describe("ask the human once", () => {
	const same = { question: "Which license?", options: ["MIT", "Apache-2.0"] };

	it("shows an identical question from different sessions once and gives each asker the answer, naming who shared it", async () => {
		const { ask, fake, role } = relay();
		const results: Envelope[] = [];
		const calls = [
			ask([same, { question: "Planner only?" }], { label: "planner" }),
			ask([same], { label: "reviewer" }),
			ask([{ question: "Writer only?" }, same], { label: "writer" }),
		].map((p) => p.then((e) => (results.push(e), e)));
		for (let i = 0; i < 4; i++) {
			await flush(vi);
			const dialog = fake.current();
			if (!dialog) break;
			dialog.answer(dialog.method === "select" ? "Apache-2.0" : `typed for ${dialog.title}`);
		}
		const [planner, reviewer, writer] = await Promise.all(calls);
		expect(fake.dialogs.map((d) => d.title)).toEqual(["[planner] (1/2) Which license?", "[planner] (2/2) Planner only?", "[writer] (1/2) Writer only?"]);
		expect(planner!.answers[0]).toMatchObject({ answer: "Apache-2.0", source: "dialog", sharedWith: ["reviewer", "writer"] });
		expect(reviewer!.answers[0]).toMatchObject({ answer: "Apache-2.0", source: "shared", sharedWith: ["planner"] });
		expect(writer!.answers[1]).toMatchObject({ answer: "Apache-2.0", source: "shared", sharedWith: ["planner"] });
		// The reviewer needed nothing else: it settled as soon as the shared answer existed, before the writer's dialog.
		expect(results.indexOf(reviewer!)).toBeLessThan(results.indexOf(writer!));
		expect(role.host.stats).toEqual({ questionsAsked: 5, dialogsShown: 3, sharedAnswers: 2 });
	});

	it("asks again when the first asker's dialog was dismissed", async () => {
		const { ask, fake } = relay();
		const first = ask([same], { label: "first" });
		const second = ask([same], { label: "second" });
		await flush(vi);
		fake.current()!.answer(undefined);
		await flush(vi);
		expect(fake.current()?.title).toBe("[second] Which license?");
		fake.current()!.answer("MIT");
		expect((await first).status).toBe("timeout-or-cancelled");
		expect((await second).answers[0]).toMatchObject({ answer: "MIT", source: "dialog" });
	});

	it("does not merge questions of the same session, nor questions with other options", async () => {
		const { ask, fake } = relay({ respond: (d) => d.answer(d.options![0]) });
		await Promise.all([
			ask([same], { label: "a", sessionId: "one" }),
			ask([same], { label: "b", sessionId: "one" }),
			ask([{ ...same, options: ["MIT", "GPL"] }], { label: "c" }),
		]);
		expect(fake.dialogs).toHaveLength(3);
	});
});

describe("typed answers that match an offered option", () => {
	it("records a typed offered label as that option, in a single choice and in a multi-select", async () => {
		const single = scripted(pickEntry("Other"), () => "SQLite");
		const one = await relay({ respond: single.respond }).ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }]);
		expect(one.answers[0]).toMatchObject({ answer: "SQLite", kind: "option" });
		const multi = scripted(
			pickEntry("☐ linux"),
			pickEntry("Other"),
			() => "linux",
			pickEntry("Other"),
			() => "mac",
			pickEntry("Done"),
		);
		const many = await relay({ respond: multi.respond }).ask([{ question: "Targets?", options: ["linux", "mac", "bsd"], multiSelect: true }]);
		expect(many.answers[0]).toMatchObject({ answer: "linux, mac", values: ["linux", "mac"], kind: "option" });
	});

	it("keeps the details below the Other input's title", async () => {
		const script = scripted(pickEntry("Other"), () => "Redis");
		await relay({ respond: script.respond }).ask([{ question: "Which database?", details: "Pick one.", options: ["Postgres", "SQLite"] }]);
		expect(script.seen[1]?.title).toBe("[child] Which database? — type your own answer\nPick one.");
	});
});

describe("previews in pi's dialogs (RPC hosts)", () => {
	it("folds each option's preview into the select's title, cut with a visible mark past PREVIEW_IN_TITLE", async () => {
		const long = `${"a".repeat(PREVIEW_IN_TITLE)}TAIL`;
		const script = scripted((d) => d.options![0]);
		const { ask } = relay({ respond: script.respond });
		const envelope = await ask([
			{
				question: "Which store?",
				details: "Pick one.",
				options: [{ label: "sql", preview: "CREATE TABLE t (id int);" }, { label: "kv", preview: long }, "none"],
			},
		]);
		expect(script.seen[0]?.title).toBe(
			[
				"[child] Which store?",
				"Pick one.",
				"── preview: sql ──",
				"CREATE TABLE t (id int);",
				"── preview: kv ──",
				`${"a".repeat(PREVIEW_IN_TITLE)}… [preview cut: 4 more characters]`,
			].join("\n"),
		);
		// The entries are unchanged: a preview never reaches an option's text.
		expect(script.seen[0]?.options).toEqual(["sql", "kv", "none", "Other (type your own)"]);
		expect(envelope.answers[0]).toMatchObject({ answer: "sql", kind: "option" });
	});
});

describe("a UI that throws", () => {
	it("a select that throws instead of rejecting fails the question by a rejection, for a choice and a confirm", async () => {
		const ui = {
			select: () => {
				throw new Error("no screen");
			},
			input: () => Promise.resolve(undefined),
			notify() {},
			setStatus() {},
		};
		const surface = dialogSurface(ui);
		const prompt = { asker: "child", index: 0, total: 1, signal: new AbortController().signal, deadline: 0, callDeadline: 0 };
		for (const question of [
			{ question: "Which?", kind: "choice" as const, options: [{ label: "a" }, { label: "b" }], multiSelect: false, allowOther: true },
			{ question: "Go?", kind: "confirm" as const },
		]) {
			let asked: Promise<unknown> | undefined;
			expect(() => {
				asked = surface.ask(prompt, question);
			}).not.toThrow();
			await expect(asked).rejects.toThrow("no screen");
		}
	});
});
