/**
 * One order for a question's options on every surface: `shownOrder` (model/question.ts) puts the
 * recommended option first and keeps the asker's order for the rest; the terminal form, pi's select
 * dialogs and the page (which runs the very function, served at the top of its script) all list
 * the options that way.
 */
import vm from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Question, shownLabels, shownOrder } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { choiceEntries, multiSelectEntries } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { FormModel } from "../../../extensions/checkpoint-bridge/surfaces/terminal-form/model.ts";
import { pageScript } from "../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { propertyRun } from "../support/property-policy.ts";

const choice = (labels: string[], recommended?: string): Question => ({
	question: "Which store?",
	kind: "choice",
	options: labels.map((label) => ({ label, description: `about ${label}` })),
	...(recommended === undefined ? {} : { recommended }),
});

/** The served page's own copy of the function, run outside a DOM. */
function servedShownOrder(): typeof shownOrder {
	const context = vm.createContext({});
	const script = pageScript();
	vm.runInContext(script.slice(0, script.indexOf("\n// checkpoint-bridge answer page")), context);
	return vm.runInContext("shownOrder", context) as typeof shownOrder;
}

describe("shownOrder", () => {
	it("lists the recommended option first and the others in the asker's order", () => {
		const q = choice(["Postgres", "SQLite", "MySQL"], "SQLite");
		expect(shownLabels(q)).toEqual(["SQLite", "Postgres", "MySQL"]);
		expect(shownOrder(q)[0]).toBe(q.options![1]);
		expect(
			q.options!.map((o) => o.label),
			"the question itself is left as asked",
		).toEqual(["Postgres", "SQLite", "MySQL"]);
	});

	it("keeps the asker's order when nothing is recommended, and has no options for a question without any", () => {
		expect(shownLabels(choice(["b", "a", "c"]))).toEqual(["b", "a", "c"]);
		expect(shownLabels({ question: "Name?", kind: "text" } as Question)).toEqual([]);
	});

	it("is a permutation with the recommended option first and the rest in the asker's order, for any options", () => {
		fc.assert(
			fc.property(
				fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
				fc.nat(),
				fc.boolean(),
				(labels, pick, recommend) => {
					const recommended = recommend ? labels[pick % labels.length] : undefined;
					const shown = shownLabels(choice(labels, recommended));
					expect([...shown].sort()).toEqual([...labels].sort());
					if (recommended !== undefined) expect(shown[0]).toBe(recommended);
					expect(shown.filter((l) => l !== recommended)).toEqual(labels.filter((l) => l !== recommended));
				},
			),
			propertyRun(200),
		);
	});
});

describe("every surface lists the options in shownOrder", () => {
	const q = choice(["Postgres", "SQLite", "MySQL"], "MySQL");
	const expected = ["MySQL", "Postgres", "SQLite"];

	it("the terminal form's rows", () => {
		const rows = new FormModel([q]).questions[0]!.rows;
		expect(rows.flatMap((row) => (row.kind === "option" ? [row.label] : []))).toEqual(expected);
	});

	it("pi's select dialogs (a choice and a multi-select round), as the RPC client sees them", () => {
		expect([...choiceEntries(q).values()]).toEqual(expected);
		expect([...multiSelectEntries({ ...q, multiSelect: true, allowOther: false }, new Set(), []).values()].slice(0, 3)).toEqual(expected);
	});

	it("the page, which runs the very function the server serves", () => {
		const served = servedShownOrder();
		expect(served(q).map((o) => o.label)).toEqual(expected);
		fc.assert(
			fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), fc.nat(), (labels, pick) => {
				const asked = choice(labels, labels[pick % labels.length]);
				expect(served(asked).map((o) => o.label)).toEqual(shownLabels(asked));
			}),
			propertyRun(100),
		);
	});
});
