/**
 * The book owns every step of a record (core/host/book.ts, ADR-0034): queued → showing (and what is on
 * screen) → late or parked → ended, each a method of the book, and no other file of the extension
 * writes a record's state. The steps one by one on a record of their own, then a source check.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Keeper, RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { PROTOCOL_VERSION } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";

beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => void vi.useRealTimers());

const keeper: Keeper = { deadlineCame: () => {}, lateLeft: () => {}, cancel: () => {} };

const record = (id: string): RequestRecord => {
	const questions = [
		{ question: "Name?", kind: "text" as const },
		{ question: "Age?", kind: "text" as const },
	];
	return {
		request: {
			v: PROTOCOL_VERSION,
			id,
			asker: { label: "planner", sessionId: "s" },
			questions,
			deadline: Date.now() + 60_000,
			dialogTimeoutMs: 60_000,
			createdAt: Date.now(),
		},
		questions,
		entries: [],
		queuedAt: Date.now(),
		state: { is: "queued" },
	};
};

describe("each step of a record is the book's", () => {
	it("queued → showing, a question on screen with its question deadline, first shown once, then nothing on screen", () => {
		const book = new RequestBook();
		const r = record("r1");
		book.add(r, keeper);
		expect(book.showQuestion(r, 0)).toBeUndefined();
		const showing = book.show(r);
		expect(showing).toEqual({ is: "showing" });
		expect(r.state).toBe(showing);
		// Shown once only: a second show of a record on screen is refused.
		expect(book.show(r)).toBeUndefined();
		expect(book.showQuestion(r, 0, Date.now() + 5_000)).toBe(true);
		expect(r).toMatchObject({ shownAt: Date.now(), state: { is: "showing", question: 0, questionDeadline: Date.now() + 5_000 } });
		vi.advanceTimersByTime(1_000);
		expect(book.showQuestion(r, 1)).toBe(false);
		expect(r).toMatchObject({ shownAt: Date.now() - 1_000, state: { question: 1, questionDeadline: Date.now() + 4_000 } });
		book.closeQuestion(r);
		expect(r.state).toEqual({ is: "showing", questionDeadline: Date.now() + 4_000, question: undefined });
		book.closeQuestion(r, true);
		expect(r.state).toEqual({ is: "showing", question: undefined, questionDeadline: undefined });
	});

	it("answered: each answer is the book's to write, withdrawn as well", () => {
		const book = new RequestBook();
		const r = record("r1");
		const entries = r.entries;
		book.answer(r, 1, { answer: { question: "Age?", answer: "7", kind: "text" }, place: "page" });
		expect(r.entries).toBe(entries);
		expect(r.entries[1]).toEqual({ answer: { question: "Age?", answer: "7", kind: "text" }, place: "page" });
		book.answer(r, 1, undefined);
		expect(r.entries[1]).toBeUndefined();
	});

	it("ended: its state says how, and it leaves the book; a record the book does not hold is marked ended all the same", () => {
		const book = new RequestBook();
		const r = record("r1");
		book.add(r, keeper);
		book.show(r);
		book.end(r, { end: "answered" });
		expect(r.state).toEqual({ is: "answered", end: "answered" });
		expect(book.get("r1")).toBeUndefined();
		const stray = record("r2");
		book.end(stray, { end: "cancelled" });
		expect(stray.state).toEqual({ is: "ended", end: "cancelled" });
	});

	it("late, shown again, and late again as late as it was, with nothing written on the record but by the book", () => {
		const book = new RequestBook({ ...readLateConfig({}), expiryMs: 600_000 });
		const r = record("r1");
		book.add(r, keeper);
		const late = book.toLate(r, keeper)!;
		const { since, expiresAt } = late.state;
		vi.advanceTimersByTime(10_000);
		// Kept late from late (an end that does not settle it): as late as it was.
		expect(book.toLate(r, keeper)?.state).toEqual({ is: "late", since, expiresAt });
		expect(book.reopen("r1", keeper)?.state).toEqual({ is: "queued" });
		expect(r.wasLate).toEqual({ is: "late", since, expiresAt });
		expect(book.toLate(r, keeper)?.state).toEqual({ is: "late", since, expiresAt });
		expect(r.wasLate).toBeUndefined();
	});
});

/** Every TypeScript file under `dir`. */
function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return sources(path);
		return entry.name.endsWith(".ts") ? [path] : [];
	});
}

describe("no other file writes a record's state", () => {
	it("only core/host/book.ts assigns a record's state, its screen fields, its answers, when it was first shown or how late it was", () => {
		// An observer event's own copy of when it was shown (`seen.shownAt`) is no record's.
		const root = join(import.meta.dirname, "../../../extensions/checkpoint-bridge");
		const writes =
			/\.state\s*=[^=]|\bstate\.(question|questionDeadline)\s*=[^=]|(?<!\bseen)\.(wasLate|shownAt)\s*(\?\?)?=[^=]|\bshowing\.(question|questionDeadline)\s*=[^=]|\.entries(\[[^\]]+\])?\s*=[^=]/;
		const found = sources(root)
			.filter((path) => !path.endsWith(join("core", "host", "book.ts")))
			.flatMap((path) =>
				readFileSync(path, "utf8")
					.split("\n")
					.flatMap((line, i) =>
						writes.test(line) && !line.trim().startsWith("*") && !line.trim().startsWith("//") ? [`${relative(root, path)}:${i + 1}`] : [],
					),
			);
		expect(found).toEqual([]);
	});
});
