/**
 * The relay on the real pi runtime, in one process: child sessions (built like pi-subagents children,
 * no UI) ask through `ask_user_via_host`; the host session's programmatic UI shows and answers.
 */
import { describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { answerPairs, checkedEnvelope, type Dialog, openRequests, ProgrammaticUI, type SessionHandle, worldPerTest } from "./harness/sdk-sessions.ts";

const world = worldPerTest();

describe("relay through the host session's UI (in-process SDK sessions)", () => {
	it("shows a child's two-question batch on the host UI and returns both answers in order", async () => {
		const { ui } = await world.createHost({ name: "main" });
		const child = await world.createChild({
			name: "scout",
			ask: {
				questions: [
					{ question: "Which plan?", options: ["plan A", "plan B"] },
					{ question: "Anything to add?", placeholder: "a short note" },
				],
			},
		});
		const receiptsBefore = ui.notifications.length;
		child.start();

		const first = await ui.waitForDialog((d) => d.seq === 1, 10_000, "the first question");
		expect(first.method).toBe("select");
		expect(first.title).toBe("[scout] (1/2) Which plan?");
		// The offered options come first, in order (the UI may add its own after them).
		expect(first.options?.slice(0, 2)).toEqual(["plan A", "plan B"]);
		expect(first.signal).toBeInstanceOf(AbortSignal);
		expect(first.timeout).toBeGreaterThan(0);
		first.answer("plan B");

		const second = await ui.waitForDialog((d) => d.seq === 2, 10_000, "the second question");
		expect(second.method).toBe("input");
		expect(second.title).toBe("[scout] (2/2) Anything to add?");
		expect(second.placeholder).toBe("a short note");
		expect(second.signal).toBeInstanceOf(AbortSignal);
		second.answer("ship it on Friday");

		await child.done();
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("ok");
		expect(envelope.asker).toBe("scout");
		expect(answerPairs(envelope)).toEqual([
			{ question: "Which plan?", answer: "plan B" },
			{ question: "Anything to add?", answer: "ship it on Friday" },
		]);
		expect(envelope.requestId).toMatch(/\S/);
		expect(ui.dialogs).toHaveLength(2);
		expect(ui.maxOpen).toBe(1);
		// The host was told that a batch arrived, and from whom.
		const receipts = ui.notifications.slice(receiptsBefore);
		expect(
			receipts.some((n) => n.message.includes("scout")),
			JSON.stringify(receipts),
		).toBe(true);
	});

	it("shows three concurrent children one dialog at a time and gives each exactly its own answers", async () => {
		const { host, ui } = await world.createHost({ name: "main" });
		const colourOf: Record<string, string> = { "scout-a": "red", "scout-b": "green", "scout-c": "blue" };
		const children: SessionHandle[] = [];
		for (const name of Object.keys(colourOf)) {
			const questions = [{ question: `Pick a colour, ${name}`, options: ["red", "green", "blue"] }, { question: `Why that one, ${name}?` }];
			children.push(await world.createChild({ name, ask: { questions } }));
		}
		// Every session runs its own copy of its extension modules, as pi-subagents children do.
		const copies = [host, ...children].map((session) => world.moduleCopyOf(session));
		expect(copies.every((copy) => typeof copy === "string")).toBe(true);
		expect(new Set(copies).size).toBe(copies.length);

		// Answers come from the title alone: the asker's colour, or an echo of the title.
		const answer = (dialog: Dialog): void => {
			const asker = /^\[([^\]]+)\]/.exec(dialog.title)?.[1] ?? "?";
			const value = dialog.method === "select" ? (colourOf[asker] ?? "not a child") : `because ${dialog.title}`;
			setTimeout(() => dialog.answer(value), 20);
		};

		for (const child of children) child.start();
		// Hold the first dialog until all three calls are in flight, so two of them have to wait.
		await Promise.all(children.map((child) => child.waitForToolStart()));
		await ui.waitForDialog(() => true);
		ui.respond = answer;
		for (const dialog of ui.openDialogs()) answer(dialog);
		await Promise.all(children.map((child) => child.done()));

		expect(ui.maxOpen).toBe(1);
		expect(ui.dialogs).toHaveLength(6);
		for (const child of children) {
			const name = child.name!;
			const envelope = checkedEnvelope(child);
			expect(envelope.status).toBe("ok");
			expect(envelope.asker).toBe(name);
			expect(answerPairs(envelope)).toEqual([
				{ question: `Pick a colour, ${name}`, answer: colourOf[name] },
				{ question: `Why that one, ${name}?`, answer: `because [${name}] (2/2) Why that one, ${name}?` },
			]);
			const titles = ui.dialogs.filter((d) => d.title.startsWith(`[${name}]`)).map((d) => d.title);
			expect(titles).toEqual([`[${name}] (1/2) Pick a colour, ${name}`, `[${name}] (2/2) Why that one, ${name}?`]);
		}
	});

	it("ends a call at its budget with status timeout and dismisses its open dialog through the signal", async () => {
		// This UI never closes a dialog by itself, so only the extension can end it.
		const { ui } = await world.createHost({ name: "main", ui: new ProgrammaticUI({ honourTimeouts: false }) });
		const child = await world.createChild({
			name: "waiter",
			ask: { questions: [{ question: "Proceed?", options: ["yes", "no"] }], timeoutMs: 1500 },
		});
		child.start();
		const dialog = await ui.waitForDialog(() => true);
		await child.done();

		const _run = child.toolRuns[0]!;
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("timeout");
		expect(envelope.answers).toEqual([]);
		// Its budget ended it (timers never fire early), the asker's timer or the host's, and the note says so.
		expect(envelope.waitedMs).toBeGreaterThanOrEqual(1500 - 1);
		expect(envelope.note).toMatch(/budget/);
		// No dialog may be offered more time than is left of the call.
		expect(dialog.timeout).toBeLessThanOrEqual(1500);
		expect(dialog.signal?.aborted).toBe(true);
		expect(dialog.outcome).toEqual({ how: "signal" });
	});

	it("settles the open and the queued request with no-host when the host session shuts down", async () => {
		const { host, ui } = await world.createHost({ name: "main" });
		const first = await world.createChild({ name: "first", ask: { questions: [{ question: "Go on?", options: ["yes", "no"] }] } });
		const second = await world.createChild({ name: "second", ask: { questions: [{ question: "And me?" }] } });

		first.start();
		const dialog = await ui.waitForDialog((d) => d.title.startsWith("[first]"));
		second.start();
		// The second request reached the host's queue: from here on a second dialog would be a breach.
		await until(() => openRequests().some((r) => r.asker.label === "second" && r.state === "queued"), "the second request queued");
		expect(ui.dialogs).toHaveLength(1);

		const shutdownAt = Date.now();
		await host.shutdown();
		await Promise.all([first.done(), second.done()]);

		for (const child of [first, second]) {
			const envelope = checkedEnvelope(child);
			expect(envelope.status).toBe("no-host");
			expect(envelope.note ?? "").toMatch(/host session/i);
			expect(envelope.note ?? "").toMatch(/ended|shut ?down|quit|closed/i);
			// At once: the quit, not a hand-over grace (1 s, the relay's shortest other deadline), ended it.
			expect(envelope.note ?? "").not.toMatch(/No new host took over/);
			expect(child.toolRuns[0]!.endedAt! - shutdownAt).toBeLessThan(1_000);
		}
		expect(ui.dialogs.map((d) => d.title)).toEqual(["[first] Go on?"]);
		expect(dialog.outcome).toEqual({ how: "signal" });
	});

	it("answers no-host at once when no session has a UI", async () => {
		const child = await world.createChild({ name: "alone", ask: { questions: [{ question: "Anyone there?" }] } });
		child.start();
		await child.done(5_000);

		const run = child.toolRuns[0]!;
		const envelope = checkedEnvelope(child);
		expect(envelope.status).toBe("no-host");
		expect(envelope.answers).toEqual([]);
		expect(envelope.asker).toBe("alone");
		// At once: the relay found no host when asked, rather than waiting for one until the budget ended the call.
		expect(envelope.note).toMatch(/No session with a UI holds the host role/);
		expect(envelope.waitedMs).toBeLessThanOrEqual(run.endedAt! - run.startedAt);
	});

	it("shows the host's own question only after a child's open dialog is answered", async () => {
		const { host, ui } = await world.createHost({
			name: "main",
			ask: { questions: [{ question: "Deploy now?", options: ["deploy", "wait"] }] },
		});
		const child = await world.createChild({ name: "scout", ask: { questions: [{ question: "Skip tests?", options: ["skip", "run"] }] } });

		child.start();
		const childDialog = await ui.waitForDialog(() => true);
		expect(childDialog.title).toBe("[scout] Skip tests?");
		host.start();
		await until(() => openRequests().some((r) => r.asker.label === "main" && r.state === "queued"), "the host's own request queued");
		expect(ui.dialogs).toHaveLength(1);

		const answeredAt = Date.now();
		childDialog.answer("run");
		const hostDialog = await ui.waitForDialog((d) => d.seq === 2);
		expect(hostDialog.title).toBe("[main] Deploy now?");
		expect(hostDialog.openedAt).toBeGreaterThanOrEqual(answeredAt);
		hostDialog.answer("wait");
		await Promise.all([child.done(), host.done()]);

		expect(ui.maxOpen).toBe(1);
		const childResult = checkedEnvelope(child);
		expect(childResult).toMatchObject({ status: "ok", asker: "scout" });
		expect(answerPairs(childResult)).toEqual([{ question: "Skip tests?", answer: "run" }]);
		const hostResult = checkedEnvelope(host);
		expect(hostResult).toMatchObject({ status: "ok", asker: "main" });
		expect(answerPairs(hostResult)).toEqual([{ question: "Deploy now?", answer: "wait" }]);
	});
});
