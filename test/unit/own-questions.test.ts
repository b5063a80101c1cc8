import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ANSWER_MESSAGE_TYPE, type MessageApi, sessionPoster } from "../../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { requestBook } from "../../extensions/checkpoint-bridge/core/host/book.ts";
import { HANDOVER_GRACE_MS } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { sharedHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { makeEnvelope } from "../../extensions/checkpoint-bridge/model/result.ts";
import { ABORT_SETTLE_MS, type AskAgain, recordOwn, reopenOwn, unendedOwn, unwrittenOwn } from "../../extensions/checkpoint-bridge/own-questions.ts";
import { loadExtensionCopy, playedSessions } from "./support/fake-pi.ts";
import { fakeUI } from "./support/fake-ui.ts";

/** A session file as pi keeps it: entries appended and messages sent, in order; it outlives the process. */
function fakeSession() {
	const entries: { type: string; customType?: string; data?: unknown; details?: unknown; content?: string }[] = [];
	const pi: MessageApi = {
		// pi keeps a message's details under `details`; `data` too, as these tests read them.
		sendMessage: (message) =>
			void entries.push({ type: "custom_message", customType: message.customType, data: message.details, details: message.details, content: message.content }),
		appendEntry: (customType, data) => void entries.push({ type: "custom", customType, data }),
	};
	return { entries, pi, messages: () => entries.filter((e) => e.customType === ANSWER_MESSAGE_TYPE) };
}

const asker = { label: "main", sessionId: "s1" };
const questions = [{ question: "Which database?", options: ["Postgres", "SQLite"] }];
const answered: AskAgain = async (own) => makeEnvelope("ok", [{ question: own.questions[0]!.question, answer: "Postgres", kind: "option" }], undefined, {});
const dismissed: AskAgain = async () => makeEnvelope("timeout-or-cancelled", [], "dismissed", { reason: "dismissed" });
/** The next start of the session, asking with `ask`. */
const reopen = (session: ReturnType<typeof fakeSession>, ask: AskAgain, here = () => true, liveHere?: (id: string) => boolean) =>
	reopenOwn(session.pi, () => session.entries, "s1", ask, here, liveHere);
/** A new process: the set of questions reopened in this process starts empty. */
const newProcess = () => void (globalThis as Record<symbol, Set<string> | undefined>)[Symbol.for("checkpoint-bridge.own-reopened")]?.clear();

describe("the host session's own questions across a restart", () => {
	beforeEach(newProcess);
	afterEach(() => vi.useRealTimers());

	it("a question recorded and never ended (a crash) is open; one that ended is not", () => {
		const session = fakeSession();
		recordOwn(session.pi, asker, questions, () => true);
		recordOwn(session.pi, asker, questions, () => true).ended("ok", false);
		expect(unendedOwn(session.entries).map((own) => own.questions)).toEqual([questions]);
	});

	it("an end during the shutdown (a quit) is not recorded: the question stays open", () => {
		const session = fakeSession();
		let here = true;
		const own = recordOwn(session.pi, asker, questions, () => here);
		here = false;
		own.ended("no-host", false);
		expect(unendedOwn(session.entries)).toHaveLength(1);
	});

	it("an abort followed by the shutdown leaves it open; an abort alone ends it after the settle time", () => {
		vi.useFakeTimers();
		const session = fakeSession();
		let here = true;
		recordOwn(session.pi, asker, questions, () => here).ended("cancelled", true);
		here = false;
		vi.advanceTimersByTime(ABORT_SETTLE_MS);
		expect(unendedOwn(session.entries)).toHaveLength(1);
		here = true;
		const stopped = fakeSession();
		recordOwn(stopped.pi, asker, questions, () => true).ended("cancelled", true);
		expect(unendedOwn(stopped.entries)).toHaveLength(1);
		vi.advanceTimersByTime(ABORT_SETTLE_MS);
		expect(unendedOwn(stopped.entries)).toHaveLength(0);
	});

	it("reopened at the next start, asked marked as resent, answered: exactly one message, even across two more starts", async () => {
		const session = fakeSession();
		recordOwn(session.pi, asker, questions, () => true);
		const ask = vi.fn(answered);
		await reopen(session, ask);
		expect(ask).toHaveBeenCalledOnce();
		expect(ask.mock.calls[0]![0].questions).toEqual(questions);
		expect(session.messages()).toHaveLength(1);
		expect(JSON.stringify(session.messages()[0])).toContain("Postgres");
		newProcess();
		await reopen(session, ask);
		newProcess();
		await reopen(session, ask);
		expect(ask).toHaveBeenCalledOnce();
		expect(session.messages()).toHaveLength(1);
	});

	it("the reopened question's answer says it was asked before the restart, and its wait counts from when it was first asked", async () => {
		vi.useFakeTimers();
		const session = fakeSession();
		recordOwn(session.pi, asker, questions, () => true);
		// The crash, the restart, then the human answers the reopened question.
		vi.advanceTimersByTime(90_000);
		await reopen(session, async (own) => {
			vi.advanceTimersByTime(5_000);
			return makeEnvelope("ok", [{ question: own.questions[0]!.question, answer: "Postgres", kind: "option" }], undefined, { waitedMs: 5_000 });
		});
		const [message] = session.messages();
		expect(message?.content).toMatch(/^checkpoint-bridge: the human answered the question you asked before the restart \(request [\w-]+\)\. /);
		expect(message?.data).toMatchObject({ envelope: { status: "ok", waitedMs: 95_000 } });
	});

	it("a reopened question the human dismisses is delivered as dismissed and does not open again", async () => {
		const session = fakeSession();
		recordOwn(session.pi, asker, questions, () => true);
		await reopen(session, dismissed);
		expect(session.messages()).toHaveLength(1);
		expect(unendedOwn(session.entries)).toEqual([]);
	});

	it("a reopened question still open when the session shuts down again opens at the next start, and is asked once per process", async () => {
		const session = fakeSession();
		recordOwn(session.pi, asker, questions, () => true);
		let here = true;
		const ask = vi.fn<AskAgain>(async () => {
			here = false;
			return makeEnvelope("no-host", [], "the host quit", {});
		});
		await reopen(session, ask, () => here);
		expect(session.messages()).toHaveLength(0);
		expect(unendedOwn(session.entries)).toHaveLength(1);
		// Two copies of the extension in one process (a second session start) ask it once.
		let release!: () => void;
		const slow = vi.fn<AskAgain>(() => new Promise((resolve) => (release = () => resolve(makeEnvelope("ok", [], undefined, {})))));
		newProcess();
		const first = reopen(session, slow);
		const second = reopen(session, slow);
		await second;
		release();
		await first;
		expect(slow).toHaveBeenCalledOnce();
		expect(session.messages()).toHaveLength(1);
	});

	it("an end delivered while a turn ran, whose message pi never wrote (killed before the turn ended): the next start delivers it from the record, once, and asks nothing", async () => {
		const session = fakeSession();
		const { requestId } = recordOwn(session.pi, asker, questions, () => true);
		// The message waits as a follow-up of the busy turn; pi dies before writing it: only the record reaches the file.
		const dying: MessageApi = { appendEntry: session.pi.appendEntry, sendMessage: () => {} };
		const envelope = makeEnvelope("ok", [{ question: "Which database?", answer: "SQLite", kind: "option" }], undefined, { requestId });
		sessionPoster(dying, () => session.entries).post({ requestId, askerSessionId: "s1", asker: "main", questions: ["Which database?"], queuedAt: 0, envelope });
		expect(session.messages()).toHaveLength(0);
		expect(unendedOwn(session.entries)).toEqual([]);
		expect(unwrittenOwn(session.entries).map((u) => u.own.requestId)).toEqual([requestId]);

		const ask = vi.fn(answered);
		newProcess();
		await reopen(session, ask);
		expect(ask).not.toHaveBeenCalled();
		expect(session.messages()).toHaveLength(1);
		expect(session.messages()[0]?.content).toMatch(/^checkpoint-bridge: the human answered the question you asked before the restart/);
		expect(session.messages()[0]?.data).toMatchObject({ requestId, envelope: { status: "ok", answers: [{ answer: "SQLite" }] } });
		// Written now: later starts, in this process or another, deliver nothing more.
		await reopen(session, ask);
		newProcess();
		await reopen(session, ask);
		expect(session.messages()).toHaveLength(1);
		expect(unwrittenOwn(session.entries)).toEqual([]);
	});
});

describe("the host session's queued own questions (wait: false)", () => {
	const sessions = playedSessions();
	beforeEach(() => {
		newProcess();
		// The process's book outlives every host: late questions other files left in it are not these tests'.
		const book = requestBook(sharedHandle());
		for (const late of book.late()) book.remove(late);
		vi.useFakeTimers();
	});
	afterEach(async () => {
		await sessions.shutdownAll();
		vi.useRealTimers();
		vi.unstubAllEnvs();
	});

	it("are recorded under the receipt's request id; open until the answer's delivery is recorded in the session", async () => {
		const ui = fakeUI();
		const host = sessions.play(await loadExtensionCopy(), { sessionId: "host-session", ui: ui.ui });
		await host.start();
		const receipt = await host.call({ questions, wait: false });
		expect(receipt.status).toBe("queued");
		// A crash now leaves it open: the next start asks it again, under the same id.
		expect(unendedOwn(host.entries).map((own) => [own.requestId, own.questions[0]?.question])).toEqual([[receipt.requestId, questions[0]!.question]]);
		ui.current()!.answer("Postgres");
		await vi.advanceTimersByTimeAsync(0);
		expect(host.entries.filter((e) => e.customType === ANSWER_MESSAGE_TYPE)).toHaveLength(1);
		expect(unendedOwn(host.entries)).toEqual([]);
	});

	it("reopened after a restart and delivered once under its request id; one this process still holds is not asked twice", async () => {
		const session = fakeSession();
		const { requestId } = recordOwn(session.pi, asker, questions, () => true);
		const ask = vi.fn(answered);
		await reopen(
			session,
			ask,
			() => true,
			(id) => id === requestId,
		);
		expect(ask).not.toHaveBeenCalled();
		await reopen(session, ask);
		expect(ask).toHaveBeenCalledOnce();
		expect(session.messages().map((m) => (m.data as { requestId: string }).requestId)).toEqual([requestId]);
	});

	it("a reopened question whose budget runs out stays late; its late answer comes under the same request id as its timeout", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_TIMEOUT_MS", "5000");
		const ui = fakeUI();
		const host = sessions.play(await loadExtensionCopy(), { sessionId: "host-session", ui: ui.ui });
		const { requestId } = recordOwn(
			{ appendEntry: (customType, data) => void host.entries.push({ type: "custom", customType, data }) },
			{ label: "main", sessionId: "host-session" },
			questions,
			() => true,
		);
		await host.start();
		await vi.advanceTimersByTimeAsync(5_000);
		const late = sharedHandle().snapshot()?.late ?? [];
		expect(late).toHaveLength(1);
		sharedHandle().bus.emit("answer", { requestId: late[0]!.requestId, answers: ["SQLite"], source: "web" });
		await vi.advanceTimersByTimeAsync(0);
		const messages = host.entries.filter((e) => e.customType === ANSWER_MESSAGE_TYPE).map((e) => e.data as { requestId: string; late?: true });
		expect(messages.map((m) => [m.requestId, m.late === true])).toEqual([
			[requestId, false],
			[requestId, true],
		]);
	});

	it("a reopened question still open when the session is replaced (/reload) leaves the screen with it, and stays open for the next start", async () => {
		const first = fakeUI();
		const before = sessions.play(await loadExtensionCopy(), { sessionId: "host-session", ui: first.ui });
		// The session file records a question its model asked before a crash.
		recordOwn({ appendEntry: (customType, data) => void before.entries.push({ type: "custom", customType, data }) }, asker, questions, () => true);
		await before.start();
		await vi.advanceTimersByTimeAsync(0);
		const shown = first.current();
		expect(shown?.title).toContain("Which database?");
		await before.shutdown("reload");
		expect(shown!.closedBy).toBe("signal");
		// The same session, reloaded: the next host would show what the last one handed over, and the answer would go nowhere.
		const next = fakeUI();
		const after = sessions.play(await loadExtensionCopy(), { sessionId: "host-session", ui: next.ui });
		after.entries.push(...before.entries);
		await after.start("reload");
		await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS);
		expect(next.dialogs.map((d) => d.title)).toEqual([]);
		expect(unendedOwn(after.entries)).toHaveLength(1);
	});
});
