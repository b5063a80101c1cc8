/**
 * The relayed UI of a session without one: every dialog kind as a request of the host's queue, its
 * answer mapped back as pi hands it, and the dismissed value on dismiss, timeout, abort, no-host and
 * error. Fake timers; the host is the real relay (host role, dialog host, pi's dialog surface).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import { MAX_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { PROTOCOL_VERSION } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { confirmQuestion, type RelayDeps, relayedUI, selectQuestion, titleOf } from "../../../extensions/checkpoint-bridge/interop/dialog-relay.ts";
import { answerProblem } from "../../../extensions/checkpoint-bridge/model/answer-check.ts";
import { DIALOG_LIMITS, LIMITS } from "../../../extensions/checkpoint-bridge/model/limits.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { flush, relay } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** pi's no-op UI, in the part the relayed UI keeps. */
const noUI = () => ({ setStatus: vi.fn(), setWidget: vi.fn(), setTitle: vi.fn(), setWorkingMessage: vi.fn(), getEditorText: () => "" });

const ASKER = { label: "subagent-reviewer", sessionId: "child-session" };

function depsFor(handle: SharedHandle, overrides: Partial<RelayDeps> = {}): RelayDeps {
	return {
		asker: () => ASKER,
		ask: (options) => askViaHost({ handle, ...options }),
		budgetMs: () => 300_000,
		notify: (asker, message, type) => void handle.bus.emit("relay:notice", { v: PROTOCOL_VERSION, asker, message, type }),
		...overrides,
	};
}

/** A host whose human answers each dialog with `answer(dialog)`; the child's relayed UI bound to it. */
function child(answer?: (d: { method: string; title: string; options?: string[] }) => string | undefined) {
	const host = relay(answer ? { respond: (d) => queueMicrotask(() => d.answer(answer(d))) } : {});
	const ui = relayedUI(noUI(), depsFor(host.handle));
	return { ...host, ui };
}

describe("each dialog kind becomes one request of the host's queue, answered as pi would hand it", () => {
	it("a select offers exactly the extension's options, in its order, with no Other and no recommended mark, however many and however long", async () => {
		const long = `${"x".repeat(LIMITS.label + 40)} end`;
		const options = [...Array.from({ length: LIMITS.options.max + 8 }, (_, i) => `option ${i + 1}`), long];
		const { ui, fake } = child((d) => d.options?.at(-1));
		const picked = await ui.select("Which one?", options);
		expect(picked).toBe(long);
		expect(fake.dialogs).toHaveLength(1);
		expect(fake.dialogs[0]?.title).toBe("[subagent-reviewer] Which one?");
		expect(fake.dialogs[0]?.options).toEqual(options);
	});

	it("a select hands back the extension's own string, even where the host was shown it neutralised or marked apart", async () => {
		const options = ["a\tb", "a b", ""];
		const { ui, fake } = child((d) => d.options?.[1]);
		expect(await ui.select("Pick", options)).toBe("a b");
		expect(fake.dialogs[0]?.options).toEqual(["a b", "a b (2)", "(empty)"]);
		const question = selectQuestion("Pick", options);
		expect(question.decode({ status: "ok", answers: [{ question: "Pick", answer: "(empty)", kind: "option" }] })).toBe("");
		expect(question.decode({ status: "ok", answers: [{ question: "Pick", answer: "a b", kind: "option" }] })).toBe("a\tb");
	});

	it("a confirm shows its message and hands back true for yes, false for no", async () => {
		const yes = child(() => "Yes");
		expect(await yes.ui.confirm("Run rm -rf build/?", "This deletes the build folder.")).toBe(true);
		expect(yes.fake.dialogs[0]?.title).toBe("[subagent-reviewer] Run rm -rf build/?\nThis deletes the build folder.");
		expect(yes.fake.dialogs[0]?.options).toEqual(["Yes", "No"]);
		const no = child(() => "No");
		expect(await no.ui.confirm("Run rm -rf build/?", "")).toBe(false);
		expect(no.fake.dialogs[0]?.title).toBe("[subagent-reviewer] Run rm -rf build/?");
	});

	it("an input shows its placeholder and hands back the typed text", async () => {
		const { ui, fake } = child(() => "atlas");
		expect(await ui.input("Project name?", "e.g. atlas")).toBe("atlas");
		expect(fake.dialogs[0]).toMatchObject({ method: "input", title: "[subagent-reviewer] Project name?", placeholder: "e.g. atlas" });
	});

	it("an editor starts with its prefill, lines kept, and hands back the edited text", async () => {
		const { ui, fake } = child(() => "edited");
		expect(await ui.editor("Commit message", "fix: a\n\nbody")).toBe("edited");
		expect(fake.dialogs[0]?.method).toBe("input");
		// A host UI with an editor gets the prefill as its starting text.
		const editor = vi.fn(async (_title: string, prefill?: string) => `${prefill} (kept)`);
		const question = validateAskParams({ questions: [{ question: "Commit message", dialog: "editor", initial: "fix: a\n\nbody" }] }, { dialogs: true });
		if (!question.ok) throw new Error(question.problems.join("; "));
		const answer = await dialogSurface({ ...fake.ui, editor }).ask(
			{ asker: "x", index: 0, total: 1, signal: new AbortController().signal, deadline: Date.now() + 1_000 },
			question.questions[0]!,
		);
		expect(editor).toHaveBeenCalledWith("[x] Commit message", "fix: a\n\nbody");
		expect(answer?.answer).toBe("fix: a\n\nbody (kept)");
	});

	it("notify reaches the host as a notice prefixed with who asks; custom resolves undefined; setters stay pi's no-ops", async () => {
		const { ui, fake } = child();
		ui.notify("lint passed", "warning");
		expect(fake.notices).toContainEqual({ message: "[subagent-reviewer] lint passed", type: "warning" });
		expect(await ui.custom(() => undefined)).toBeUndefined();
		ui.setStatus("k", "v");
		expect(ui.setStatus).toHaveBeenCalledWith("k", "v");
		expect(fake.dialogs).toHaveLength(0);
	});
});

describe("what pi hands back for a dismissed dialog, whatever ended it", () => {
	it("dismissed at the host: undefined for select, input and editor, false for a confirm", async () => {
		const { ui } = child(() => undefined);
		expect(await ui.select("A?", ["x", "y"])).toBeUndefined();
		expect(await ui.confirm("B?", "")).toBe(false);
		expect(await ui.input("C?")).toBeUndefined();
		expect(await ui.editor("D?", "text")).toBeUndefined();
	});

	it("the dialog's own timeout closes the host's dialog at once and hands back the dismissed value", async () => {
		const { ui, fake } = child();
		const select = ui.select("A?", ["x", "y"], { timeout: 5_000 });
		const confirm = ui.confirm("B?", "", { timeout: 5_000 });
		await flush(vi);
		expect(fake.open).toHaveLength(1);
		await vi.advanceTimersByTimeAsync(5_000);
		expect(await select).toBeUndefined();
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		// The confirm queued behind it had the same five seconds, queue included.
		expect(await confirm).toBe(false);
		expect(fake.open).toHaveLength(0);
	});

	it("a dialog's own timeout beyond the longest budget (1e300, 2^31 ms) is clamped to it: the dialog stays open, no timer overflows", async () => {
		const warnings: Error[] = [];
		const onWarning = (warning: Error) => warnings.push(warning);
		process.on("warning", onWarning);
		try {
			const { ui, fake } = child();
			const confirm = ui.confirm("Huge?", "", { timeout: 1e300 });
			const select = ui.select("Beyond 2^31?", ["x", "y"], { timeout: 2 ** 31 });
			await flush(vi);
			await vi.advanceTimersByTimeAsync(60_000);
			expect(fake.dialogs, JSON.stringify(fake.dialogs)).toHaveLength(1);
			expect(fake.open).toHaveLength(1);
			expect(fake.dialogs[0]?.closedBy).toBeUndefined();
			await vi.advanceTimersByTimeAsync(MAX_TIMEOUT_MS - 60_000);
			expect(await confirm).toBe(false);
			expect(fake.dialogs[0]?.closedBy).toBe("signal");
			// Queued behind the confirm for the same hour: out of time before it was shown.
			expect(await select).toBeUndefined();
			await new Promise((resolve) => process.nextTick(resolve));
			expect(warnings.map((w) => w.name)).not.toContain("TimeoutOverflowWarning");
		} finally {
			process.off("warning", onWarning);
		}
	});

	it("the dialog's own signal closes the host's dialog at once", async () => {
		const { ui, fake } = child();
		const controller = new AbortController();
		const input = ui.input("Name?", undefined, { signal: controller.signal });
		await flush(vi);
		expect(fake.open).toHaveLength(1);
		controller.abort();
		await flush(vi);
		expect(fake.dialogs[0]?.closedBy).toBe("signal");
		expect(await input).toBeUndefined();
		// Already aborted: nothing is shown.
		expect(await ui.confirm("Again?", "", { signal: controller.signal })).toBe(false);
		expect(fake.dialogs).toHaveLength(1);
	});

	it("no host: the dismissed value at once, nothing waits", async () => {
		const ui = relayedUI(noUI(), depsFor(createHandle()));
		expect(await ui.confirm("Run?", "")).toBe(false);
		expect(await ui.select("A?", ["x"])).toBeUndefined();
	});

	it("a route that fails, or a select with nothing to pick: the dismissed value", async () => {
		const ui = relayedUI(noUI(), depsFor(createHandle(), { ask: () => Promise.reject(new Error("socket gone")) }));
		expect(await ui.confirm("Run?", "")).toBe(false);
		expect(await ui.input("Name?")).toBeUndefined();
		const { ui: hosted, fake } = child(() => "x");
		expect(await hosted.select("Nothing?", [])).toBeUndefined();
		expect(fake.dialogs).toHaveLength(0);
	});
});

describe("the relayed dialog is an explicit part of the model", () => {
	it("the tool refuses a question that says it is a relayed dialog, or starts with text", () => {
		expect(validateAskParams({ questions: [{ question: "A?", dialog: "confirm", kind: "confirm" }] })).toMatchObject({
			ok: false,
			problems: ["questions[0].dialog: only the relay of other extensions' dialogs sets it"],
		});
		expect(validateAskParams({ questions: [{ question: "A?", initial: "x" }] })).toMatchObject({ ok: false });
	});

	it("a relayed select is held to its own bounds, never offers Other, and takes nothing a dialog cannot be", () => {
		const many = Array.from({ length: 40 }, (_, i) => `${"y".repeat(300)} ${i}`);
		const checked = validateAskParams({ questions: [selectQuestion("Pick", many).question] }, { dialogs: true });
		expect(checked).toMatchObject({ ok: true, questions: [{ kind: "choice", dialog: "select", allowOther: false, multiSelect: false }] });
		expect(validateAskParams({ questions: [{ ...selectQuestion("Pick", many).question, allowOther: true }] }, { dialogs: true })).toMatchObject({
			ok: false,
			problems: ["questions[0].allowOther: a relayed dialog has none"],
		});
		expect(validateAskParams({ questions: [{ question: "A?", dialog: "select", kind: "text" }] }, { dialogs: true })).toMatchObject({ ok: false });
		expect(validateAskParams({ questions: [confirmQuestion("Run?", "msg").question] }, { dialogs: true })).toMatchObject({
			ok: true,
			questions: [{ kind: "confirm", dialog: "confirm", details: "msg" }],
		});
	});
});

describe("a relayed dialog's title keeps its line breaks, bounded and neutralised", () => {
	/** What pi's example permission gate (examples/extensions/permission-gate.ts) asks before a dangerous command. */
	const GATE = "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?";

	it("the permission gate's select reaches an RPC host's select with the command on a line of its own", async () => {
		const { ui, fake } = child(() => "No");
		expect(await ui.select(GATE, ["Yes", "No"])).toBe("No");
		expect(fake.dialogs[0]?.title).toBe(`[subagent-reviewer] ${GATE}`);
	});

	it("escape sequences and controls go, every kind of line break becomes one, blank runs become one blank line, the ends are trimmed", () => {
		expect(titleOf("\n\n  Title\x1b[31m red\r\n\n\n\u2028 body \t\n\n")).toBe("Title red\n\n body");
		expect(titleOf("\n \n")).toBe("(untitled dialog)");
	});

	it("at most 20 lines: the rest counted on the last; the host refuses more from a peer that did not cut them", () => {
		const title = titleOf(Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n"));
		expect(title.split("\n")).toHaveLength(DIALOG_LIMITS.titleLines);
		expect(title.split("\n").at(-1)).toBe(`… ${30 - DIALOG_LIMITS.titleLines + 1} more lines`);
		expect(validateAskParams({ questions: [selectQuestion(title, ["Yes", "No"]).question] }, { dialogs: true })).toMatchObject({ ok: true });
		const tooMany = { question: Array.from({ length: 21 }, () => "x").join("\n"), kind: "confirm", dialog: "confirm" };
		expect(validateAskParams({ questions: [tooMany] }, { dialogs: true })).toMatchObject({
			ok: false,
			problems: [`questions[0].question: has 21 lines, at most ${DIALOG_LIMITS.titleLines}`],
		});
	});

	it("the tool's own question text stays on one line", () => {
		expect(validateAskParams({ questions: [{ question: "Ship\nit?", kind: "confirm" }] })).toMatchObject({ ok: true, questions: [{ question: "Ship it?" }] });
	});
});

describe("a relayed dialog's answer carries no note", () => {
	it("the one answer check refuses a note on it: the extension would drop it unseen", () => {
		const checked = validateAskParams({ questions: [selectQuestion("Pick", ["a", "b"]).question] }, { dialogs: true });
		if (!checked.ok) throw new Error(checked.problems.join("; "));
		const [question] = checked.questions;
		expect(answerProblem(question!, { question: "Pick", answer: "a", kind: "option" })).toBeUndefined();
		expect(answerProblem(question!, { question: "Pick", answer: "a", kind: "option", note: "why" })).toBe(
			"carries a note, which a relayed dialog's answer cannot pass on",
		);
	});
});
