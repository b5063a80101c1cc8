/**
 * The audit trail: every settled request is appended to the host session as a custom entry, so it
 * survives in the session file; `/checkpoints` reads it back with what is open now.
 */
import { type Home, homeText } from "../delivery/home.ts";
import type { Snapshot } from "../shared/observers.ts";
import type { EntryLike } from "../shared/session-entry.ts";
import type { StoredEnd } from "../store/store.ts";
import type { DialogHost, HostStats } from "./dialog-host.ts";
import type { SettledRecord } from "./host-role.ts";

/** `customType` of the audit entries in the host's session. */
export const AUDIT_ENTRY_TYPE = "checkpoint-bridge";
/** Settled requests `/checkpoints` lists. @default 10 */
const HISTORY_SHOWN = 10;

/** The audit records in a session's entries, oldest first. */
function auditRecords(entries: readonly EntryLike[]): SettledRecord[] {
	return entries.filter((e) => e.type === "custom" && e.customType === AUDIT_ENTRY_TYPE && e.data).map((e) => e.data as SettledRecord);
}

/** A time of day in the local time zone, as the web page shows it: `21:07:03`. */
const clock = (ms: number) => {
	const d = new Date(ms);
	return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
};

/** How long ago `at` was, in whole minutes (or hours). */
const minutesAgo = (at: number, now = Date.now()) => {
	const minutes = Math.floor((now - at) / 60_000);
	return minutes < 60 ? `${minutes} min ago` : `${Math.floor(minutes / 60)} h ago`;
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * The text `/checkpoints` shows. `whereLate`: where a late request's answer would go now (the route home,
 * core/delivery/delivery.ts), so that each late line says it truthfully, per asker.
 */
export function checkpointsReport(
	snapshot: Snapshot | undefined,
	entries: readonly EntryLike[],
	stats?: Readonly<HostStats>,
	whereLate?: (requestId: string) => Home | undefined,
): string {
	const lines: string[] = [];
	if (!snapshot) lines.push("checkpoint-bridge: this process has no host session; questions get no-host.");
	else if (snapshot.open.length === 0) lines.push("checkpoint-bridge: no questions open.");
	else {
		const shown = snapshot.open.filter((o) => o.state === "shown");
		const queued = snapshot.open.filter((o) => o.state === "queued");
		// The one on screen first, then those waiting their turn, each with who asked and how long ago.
		lines.push(`checkpoint-bridge: ${snapshot.open.length} open (${shown.length} shown, ${queued.length} queued), oldest first:`);
		for (const open of [...shown, ...queued])
			lines.push(
				`  [${open.asker.label}] ${open.state}${open.question !== undefined ? ` (question ${open.question + 1} of ${open.questions.length})` : ""} since ${clock(open.queuedAt)}, asked ${minutesAgo(open.queuedAt)}: ${open.questions.map((q) => q.question.replace(/\s+/g, " ")).join(" | ")}`,
			);
	}
	const late = snapshot?.late ?? [];
	if (late.length > 0) {
		lines.push(`${late.length} late (the call's budget ran out; still answerable):`);
		late.forEach((request, i) => {
			const home = whereLate?.(request.requestId);
			lines.push(
				`  ${i + 1}. [${request.asker.label}] late since ${clock(request.lateSince)} (asked ${minutesAgo(request.queuedAt)}): ${request.questions.map((q) => q.question.replace(/\s+/g, " ")).join(" | ")}`,
			);
			if (home) lines.push(`     Its answer ${homeText(home, request.asker.label)}.`);
		});
		lines.push(`  Answer one with /checkpoints answer <number>.`);
	}
	if (stats && stats.questionsAsked > 0)
		lines.push(
			`${plural(stats.questionsAsked, "question")} asked, shown to you in ${plural(stats.dialogsShown, "dialog")}${stats.sharedAnswers > 0 ? `; ${plural(stats.sharedAnswers, "answer")} given once went to several askers who asked the same` : ""}.`,
		);
	const history = auditRecords(entries).slice(-HISTORY_SHOWN);
	lines.push(history.length ? `Recent (${history.length}):` : "No settled questions in this session yet.");
	for (const record of history)
		lines.push(
			`  ${clock(record.settledAt)} [${record.asker}] ${record.status}, ${record.answers.length}/${record.questions.length} answered, waited ${(record.waitedMs / 1000).toFixed(1)} s`,
		);
	return lines.join("\n");
}

/** Written-down ends `/checkpoints` lists. @default 10 */
export const WRITTEN_DOWN_SHOWN = 10;

/** One answer as the history shows it: the question, what was answered, and where when the host saw it. */
const answerText = (answer: StoredEnd["answers"][number]) =>
	`${answer.question.replace(/\s+/g, " ")} → ${answer.answer.replace(/\s+/g, " ")}${answer.place ? ` (${answer.place})` : ""}`;

/**
 * The bounded history of ended written-down requests (the store's, newest first, ADR-0033): what was
 * answered, by whom it was asked, when it ended; it outlives the host's session and its process.
 * Empty when nothing written down has ended.
 */
export function writtenDownReport(ends: readonly StoredEnd[], now = Date.now()): string {
	if (ends.length === 0) return "";
	const lines = [`Written down, ended (${ends.length}, newest first; a later wait_for_host_answers on the id still gets each):`];
	for (const end of ends) {
		const what = end.answers.length > 0 ? end.answers.map(answerText).join(" | ") : end.questions.map((q) => q.replace(/\s+/g, " ")).join(" | ");
		lines.push(
			`  ${clock(end.endedAt)} (${minutesAgo(end.endedAt, now)}) [${end.asker}] ${end.status}${end.late ? ", late" : ""}, ${end.answers.length}/${end.questions.length} answered: ${what} (id ${end.askerId})`,
		);
	}
	return lines.join("\n");
}

/**
 * `/checkpoints answer <n>`: shows late request `n` (1-based, as listed) again, through the queue like
 * any other, in this host's form or dialogs; what to tell the human.
 */
export function answerLate(host: Pick<DialogHost, "lateRequests" | "reopenLate"> | undefined, which: string | undefined): string {
	if (!host) return "checkpoint-bridge: this session is not the host; late questions are answered in the host's session.";
	const late = host.lateRequests();
	if (late.length === 0) return "checkpoint-bridge: no late questions.";
	const n = Number(which ?? (late.length === 1 ? "1" : ""));
	if (!Number.isSafeInteger(n) || n < 1 || n > late.length)
		return `checkpoint-bridge: name the late question by its number, 1 to ${late.length}: /checkpoints answer <number> (/checkpoints lists them).`;
	const request = late[n - 1]!;
	host.reopenLate(request.request.id);
	return `checkpoint-bridge: the late question of ${request.request.asker.label} is shown again.`;
}
