/**
 * Ask the human once: real in-process sessions (a host with a UI and three headless children, each
 * with its own module copies) ask at the same time. Two of them ask the identical question, the
 * third a different one. The human must see the identical question once, and both askers must get
 * that one answer, each told whom it was shared with.
 */
import { describe, expect, it } from "vitest";
import type { SharedHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { type AskArgs, checkedEnvelope, type Dialog, worldPerTest } from "./harness/sdk-sessions.ts";

const LICENSE = "Which license should the new package use?";
const LICENSE_OPTIONS = [{ label: "MIT" }, { label: "Apache-2.0", description: "with a patent grant" }];
const CI = "Which CI provider should run the checks?";
const CHOSEN_LICENSE = "Apache-2.0";
const CHOSEN_CI = "GitHub Actions";

/** The harness types v1 questions; v2 ones travel the same way. */
const ask = (questions: Record<string, unknown>[]): AskArgs => ({ questions }) as unknown as AskArgs;

/** The process-wide handle every module copy shares (defined by the first copy loaded). */
const sharedHandle = () => (globalThis as Record<symbol, SharedHandle | undefined>)[Symbol.for("checkpoint-bridge.handle")];

const world = worldPerTest();

describe("identical questions from parallel sessions are shown once", () => {
	it("two children ask the same question, one a different one: two dialogs for three questions, both askers get the one answer", async () => {
		const { host, ui } = await world.createHost({ name: "main" });
		// The same question (text, options, kind) with different ids: each asker gets its own id back.
		const alpha = await world.createChild({ name: "alpha", ask: ask([{ id: "alpha-license", question: LICENSE, options: LICENSE_OPTIONS }]) });
		const beta = await world.createChild({ name: "beta", ask: ask([{ id: "beta-license", question: LICENSE, options: LICENSE_OPTIONS }]) });
		const gamma = await world.createChild({ name: "gamma", ask: ask([{ question: CI, options: [CHOSEN_CI, "GitLab CI"] }]) });
		const children = [alpha, beta, gamma];
		const copies = [host, ...children].map((session) => world.moduleCopyOf(session));
		expect(new Set(copies).size, `every session runs its own module copies: ${copies.join(", ")}`).toBe(4);

		const questionsAsked = 3;
		for (const child of children) child.start();

		// The first dialog stays open until all three requests are with the host: only questions that
		// wait at the same time can be shared. The host confirms each arrival with a receipt.
		const first = await ui.waitForDialog(() => true, 10_000, "the first dialog");
		await ui.waitFor(
			() => ui.notifications.filter((n) => /^checkpoint-bridge: \[(alpha|beta|gamma)\] asks 1 question/.test(n.message)).length === 3,
			10_000,
			"a receipt for each child",
		);
		const open = sharedHandle()?.snapshot()?.open ?? [];
		expect(open.map((request) => request.asker.label).sort()).toEqual(["alpha", "beta", "gamma"]);
		expect(ui.openDialogs()).toEqual([first]);

		const answerFor = (dialog: Dialog) => {
			if (dialog.title.endsWith(LICENSE)) return CHOSEN_LICENSE;
			if (dialog.title.endsWith(CI)) return CHOSEN_CI;
			throw new Error(`unexpected dialog: ${dialog.title}`);
		};
		ui.respond = (dialog) => dialog.answer(answerFor(dialog));
		first.answer(answerFor(first));
		await Promise.all(children.map((child) => child.done()));

		const dialogsShown = ui.dialogs.length;
		console.log(`shared answers: dialogs shown vs questions asked = ${dialogsShown} vs ${questionsAsked}`);
		expect(ui.dialogs.map((d) => d.title).sort()).toEqual(
			[expect.stringMatching(new RegExp(`^\\[(alpha|beta)\\] ${LICENSE.replace("?", "\\?")}$`)), `[gamma] ${CI}`].sort(),
		);
		expect(dialogsShown).toBe(2);
		expect(ui.maxOpen).toBe(1);
		// Nothing was refused or asked twice.
		expect(ui.notifications.filter((n) => n.type === "warning")).toEqual([]);

		// The asker whose dialog was shown, and the one that shared it.
		const licenseTitle = ui.dialogs.find((d) => d.title.endsWith(LICENSE))!.title;
		const [owner, joiner] = licenseTitle.startsWith("[alpha]") ? [alpha, beta] : [beta, alpha];
		const ownerEnvelope = checkedEnvelope(owner);
		const joinerEnvelope = checkedEnvelope(joiner);
		expect(ownerEnvelope.status).toBe("ok");
		expect(joinerEnvelope.status).toBe("ok");
		expect(ownerEnvelope.answers).toEqual([
			{ id: `${owner.name}-license`, question: LICENSE, answer: CHOSEN_LICENSE, kind: "option", source: "dialog", sharedWith: [joiner.name] },
		]);
		expect(joinerEnvelope.answers).toEqual([
			{ id: `${joiner.name}-license`, question: LICENSE, answer: CHOSEN_LICENSE, kind: "option", source: "shared", sharedWith: [owner.name] },
		]);
		expect(checkedEnvelope(gamma).answers).toEqual([{ question: CI, answer: CHOSEN_CI, kind: "option", source: "dialog" }]);
		expect(new Set(children.map((child) => checkedEnvelope(child).requestId)).size, "each call is its own request").toBe(3);

		// The host's own count agrees, as `/checkpoints` reports it.
		const before = ui.notifications.length;
		await host.session.prompt("/checkpoints");
		const report = ui.notifications
			.slice(before)
			.map((n) => n.message)
			.join("\n");
		expect(report).toContain(`${questionsAsked} questions asked, shown to you in 2 dialogs; 1 answer given once went to several askers who asked the same.`);
	});
	it("a batch that shares one question with an earlier asker gets that answer without a dialog and is asked only the rest", async () => {
		const { ui } = await world.createHost({ name: "main" });
		const alpha = await world.createChild({ name: "alpha", ask: ask([{ question: LICENSE, options: LICENSE_OPTIONS }]) });
		const beta = await world.createChild({
			name: "beta",
			ask: ask([
				{ id: "license", question: LICENSE, options: LICENSE_OPTIONS },
				{ id: "notes", question: "Anything the package README must say?" },
			]),
		});
		alpha.start();
		const alphaDialog = await ui.waitForDialog((d) => d.title === `[alpha] ${LICENSE}`, 10_000, "alpha's question");
		beta.start();
		await ui.waitFor(() => ui.notifications.some((n) => n.message.includes("[beta] asks 2 questions")), 10_000, "beta's receipt");
		alphaDialog.answer("MIT");

		// beta's license question is answered already; only its second question is shown.
		const notes = await ui.waitForDialog((d) => d.seq === 2, 10_000, "beta's remaining question");
		expect(notes.method).toBe("input");
		expect(notes.title).toBe("[beta] (2/2) Anything the package README must say?");
		await alpha.done();
		expect(
			beta.toolRuns.every((run) => run.endedAt === undefined),
			"beta still waits for its own question",
		).toBe(true);
		notes.answer("Mention the patent grant.");
		await beta.done();

		console.log(`shared answers (batch): dialogs shown vs questions asked = ${ui.dialogs.length} vs 3`);
		expect(ui.dialogs).toHaveLength(2);
		expect(checkedEnvelope(alpha).answers).toEqual([{ question: LICENSE, answer: "MIT", kind: "option", source: "dialog", sharedWith: ["beta"] }]);
		const betaEnvelope = checkedEnvelope(beta);
		expect(betaEnvelope.status).toBe("ok");
		expect(betaEnvelope.answers).toEqual([
			{ id: "license", question: LICENSE, answer: "MIT", kind: "option", source: "shared", sharedWith: ["alpha"] },
			{ id: "notes", question: "Anything the package README must say?", answer: "Mention the patent grant.", kind: "text", source: "dialog" },
		]);
	});
});
