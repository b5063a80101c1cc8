/**
 * What `/checkpoints` says, line by line (core/host/audit.ts): what is open, what is late and where its
 * answer goes, the host's counts, the session's history, the written-down ends, and `answer <n>`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Home } from "../../../extensions/checkpoint-bridge/core/delivery/home.ts";
import { AUDIT_ENTRY_TYPE, answerLate, checkpointsReport, writtenDownReport } from "../../../extensions/checkpoint-bridge/core/host/audit.ts";
import type { LateRequest } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import type { Snapshot } from "../../../extensions/checkpoint-bridge/core/shared/observers.ts";
import type { StoredEnd } from "../../../extensions/checkpoint-bridge/core/store/store.ts";

/** 6 December 2026 at the local time given: the report's clock shows it as written, in any time zone. */
const at = (h: number, m: number, s = 0) => new Date(2026, 11, 6, h, m, s).getTime();
const NOW = at(12, 0);

beforeEach(() => {
	vi.useFakeTimers();
	vi.setSystemTime(NOW);
});
afterEach(() => vi.useRealTimers());

const request = (id: string, label: string, questions: string[], queuedAt: number) => ({
	v: 1 as const,
	requestId: id,
	asker: { label, sessionId: `s-${id}` },
	questions: questions.map((question) => ({ question, kind: "text" as const })),
	queuedAt,
	deadline: 0,
});

const snapshotOf = (open: Snapshot["open"], late?: Snapshot["late"]): Snapshot => ({ v: 1, takenAt: NOW, open, ...(late ? { late } : {}) });

const settled = (n: number) => ({
	type: "custom",
	customType: AUDIT_ENTRY_TYPE,
	data: {
		requestId: `r${n}`,
		asker: `asker-${n}`,
		askerSessionId: "s",
		questions: ["One?", "Two?"],
		answers: [{ question: "One?", answer: "yes" }],
		status: "ok",
		queuedAt: at(9, 0),
		settledAt: at(9, n),
		waitedMs: 1_250,
	},
});

describe("/checkpoints: what is open", () => {
	it("says when nothing is open, and when this process has no host", () => {
		expect(checkpointsReport(snapshotOf([]), []).split("\n")).toEqual(["checkpoint-bridge: no questions open.", "No settled questions in this session yet."]);
		expect(checkpointsReport(undefined, []).split("\n")).toEqual([
			"checkpoint-bridge: this process has no host session; questions get no-host.",
			"No settled questions in this session yet.",
		]);
	});

	it("lists the one shown first, then the queued, each with its question, since when and how long ago, its questions on one line", () => {
		const report = checkpointsReport(
			snapshotOf([
				{ ...request("q1", "reviewer", ["Merge\n  now?"], at(11, 58)), state: "queued" },
				{ ...request("s1", "planner", ["Name?", "Ship it?"], at(11, 50, 5)), state: "shown", question: 1 },
				{ ...request("q2", "tester", ["Run all?"], at(10, 30)), state: "queued" },
			]),
			[],
		);
		expect(report.split("\n")).toEqual([
			"checkpoint-bridge: 3 open (1 shown, 2 queued), oldest first:",
			"  [planner] shown (question 2 of 2) since 11:50:05, asked 9 min ago: Name? | Ship it?",
			"  [reviewer] queued since 11:58:00, asked 2 min ago: Merge now?",
			"  [tester] queued since 10:30:00, asked 1 h ago: Run all?",
			"No settled questions in this session yet.",
		]);
	});

	it("counts minutes up to 59, then whole hours", () => {
		const ago = (queuedAt: number) => checkpointsReport(snapshotOf([{ ...request("r", "a", ["Q?"], queuedAt), state: "queued" }]), []).split("\n")[1];
		expect(ago(NOW - 59 * 60_000 - 59_000)).toContain("asked 59 min ago");
		expect(ago(NOW - 60 * 60_000)).toContain("asked 1 h ago");
		expect(ago(NOW - 119 * 60_000)).toContain("asked 1 h ago");
		expect(ago(NOW - 120 * 60_000)).toContain("asked 2 h ago");
	});
});

describe("/checkpoints: late requests", () => {
	it("numbers each late request, says since when, how long ago it was asked, and where its answer goes; then how to answer one", () => {
		const homes: Record<string, Home> = { l1: { to: "asker" }, l2: { to: "host", wakes: false } };
		const report = checkpointsReport(
			snapshotOf(
				[],
				[
					{ ...request("l1", "planner", ["Deploy \t\n now?"], at(11, 0)), lateSince: at(11, 5), expiresAt: 0 },
					{ ...request("l2", "tester", ["Retry?", "Why?"], at(10, 0)), lateSince: at(10, 10, 30), expiresAt: 0 },
					{ ...request("l3", "writer", ["Title?"], at(11, 30)), lateSince: at(11, 40), expiresAt: 0 },
				],
			),
			[],
			undefined,
			(id) => homes[id],
		);
		expect(report.split("\n")).toEqual([
			"checkpoint-bridge: no questions open.",
			"3 late (the call's budget ran out; still answerable):",
			"  1. [planner] late since 11:05:00 (asked 1 h ago): Deploy now?",
			"     Its answer goes to planner as a message.",
			"  2. [tester] late since 10:10:30 (asked 2 h ago): Retry? | Why?",
			"     Its answer goes to this session (the asker is gone): recorded and shown here, without starting a turn of its model.",
			"  3. [writer] late since 11:40:00 (asked 30 min ago): Title?",
			"  Answer one with /checkpoints answer <number>.",
			"No settled questions in this session yet.",
		]);
	});

	it("says nothing of late requests when there are none", () => {
		expect(checkpointsReport(snapshotOf([], []), [])).not.toContain("late");
	});
});

describe("/checkpoints: the host's counts and the session's history", () => {
	it("counts questions, dialogs and shared answers, each word singular for one", () => {
		const line = (stats: { questionsAsked: number; dialogsShown: number; sharedAnswers: number }) =>
			checkpointsReport(snapshotOf([]), [], stats).split("\n")[1];
		expect(line({ questionsAsked: 1, dialogsShown: 1, sharedAnswers: 0 })).toBe("1 question asked, shown to you in 1 dialog.");
		expect(line({ questionsAsked: 3, dialogsShown: 2, sharedAnswers: 1 })).toBe(
			"3 questions asked, shown to you in 2 dialogs; 1 answer given once went to several askers who asked the same.",
		);
		expect(line({ questionsAsked: 4, dialogsShown: 0, sharedAnswers: 2 })).toBe(
			"4 questions asked, shown to you in 0 dialogs; 2 answers given once went to several askers who asked the same.",
		);
		expect(line({ questionsAsked: 0, dialogsShown: 0, sharedAnswers: 0 })).toBe("No settled questions in this session yet.");
	});

	it("lists the last ten settled requests of the session's own entries, oldest first; other entries are not its", () => {
		const foreign = [
			{ type: "custom", customType: "other-extension", data: { asker: "x" } },
			{ type: "message", customType: AUDIT_ENTRY_TYPE, data: { asker: "y" } },
			{ type: "custom", customType: AUDIT_ENTRY_TYPE },
		];
		const entries = [...Array.from({ length: 10 }, (_, i) => settled(i + 1)), ...foreign, settled(11), settled(12)];
		const lines = checkpointsReport(snapshotOf([]), entries).split("\n");
		expect(lines[1]).toBe("Recent (10):");
		expect(lines.slice(2)).toEqual(
			[3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((n) => `  09:${String(n).padStart(2, "0")}:00 [asker-${n}] ok, 1/2 answered, waited 1.3 s`),
		);
	});

	it("reads its entries by the name it has always written them under: a session file of an earlier version is read back", () => {
		expect(AUDIT_ENTRY_TYPE).toBe("checkpoint-bridge");
	});
});

describe("/checkpoints: the written-down ends", () => {
	const end = (over: Partial<StoredEnd>): StoredEnd =>
		({
			askerId: "id-1",
			asker: "runner",
			questions: ["Ship\n it?", "Why?"],
			answers: [],
			status: "ok",
			endedAt: at(11, 0),
			...over,
		}) as StoredEnd;

	it("is empty when nothing written down has ended", () => {
		expect(writtenDownReport([], NOW)).toBe("");
	});

	it("gives each end its time, how long ago, asker, status, late mark, answers with where they were given, and id", () => {
		const report = writtenDownReport(
			[
				end({
					answers: [
						{ question: "Ship\n it?", answer: "yes\n\nplease", place: "page" } as StoredEnd["answers"][number],
						{ question: "Why?", answer: "tests  pass" } as StoredEnd["answers"][number],
					],
					late: true,
				}),
				end({ askerId: "id-2", status: "timeout", endedAt: at(9, 30, 15) }),
				end({ askerId: "id-3", answers: [{ question: "Why?", answer: "because" } as StoredEnd["answers"][number]], endedAt: at(11, 59, 30) }),
			],
			NOW,
		);
		expect(report.split("\n")).toEqual([
			"Written down, ended (3, newest first; a later wait_for_host_answers on the id still gets each):",
			"  11:00:00 (1 h ago) [runner] ok, late, 2/2 answered: Ship it? → yes please (page) | Why? → tests pass (id id-1)",
			"  09:30:15 (2 h ago) [runner] timeout, 0/2 answered: Ship it? | Why? (id id-2)",
			"  11:59:30 (0 min ago) [runner] ok, 1/2 answered: Why? → because (id id-3)",
		]);
	});
});

describe("/checkpoints answer <n>", () => {
	const lateOf = (...labels: string[]) =>
		labels.map((label, i) => ({ request: { id: `late-${i + 1}`, asker: { label, sessionId: "s" } } }) as unknown as LateRequest);
	const host = (late: LateRequest[]) => {
		const reopened: string[] = [];
		return { reopened, host: { lateRequests: () => late, reopenLate: (id: string) => (reopened.push(id), true) } };
	};

	it("is answered only in the host's session, and only when something is late", () => {
		expect(answerLate(undefined, "1")).toBe("checkpoint-bridge: this session is not the host; late questions are answered in the host's session.");
		const none = host([]);
		expect(answerLate(none.host, "1")).toBe("checkpoint-bridge: no late questions.");
		expect(none.reopened).toEqual([]);
	});

	it("shows the one late request again without a number, and the numbered one of several", () => {
		const one = host(lateOf("planner"));
		expect(answerLate(one.host, undefined)).toBe("checkpoint-bridge: the late question of planner is shown again.");
		expect(one.reopened).toEqual(["late-1"]);
		const three = host(lateOf("planner", "tester", "writer"));
		expect(answerLate(three.host, "3")).toBe("checkpoint-bridge: the late question of writer is shown again.");
		expect(answerLate(three.host, "1")).toBe("checkpoint-bridge: the late question of planner is shown again.");
		expect(three.reopened).toEqual(["late-3", "late-1"]);
	});

	it("refuses a number it cannot take, naming the range, and shows nothing", () => {
		const two = host(lateOf("planner", "tester"));
		const refusal = "checkpoint-bridge: name the late question by its number, 1 to 2: /checkpoints answer <number> (/checkpoints lists them).";
		for (const which of [undefined, "", "0", "3", "-1", "1.5", "two", "9007199254740993"]) expect(answerLate(two.host, which), String(which)).toBe(refusal);
		expect(two.reopened).toEqual([]);
	});
});
