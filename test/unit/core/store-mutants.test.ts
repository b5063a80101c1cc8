/**
 * The store's edges (core/store/): the pragmas it sets, what it refuses and with which words, the
 * transaction of an end rolled back whole, rows that do not read, the store's directory and file
 * checks, Node's one warning kept back while `node:sqlite` loads, the process's one store per file,
 * a record's row and its way back, and a later wait on the store.
 */
import { chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { DatabaseSync as NodeDatabase } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RequestRecord } from "../../../extensions/checkpoint-bridge/core/shared/request-record.ts";
import { LOOK_EVERY_MS, storeKnows, waitInStore } from "../../../extensions/checkpoint-bridge/core/store/later-waits.ts";
import { currentStore, openStore, processStore, storeDir, storeFile, useStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import { restoredRecord, storedEnd, storedRequest, writtenDown } from "../../../extensions/checkpoint-bridge/core/store/records.ts";
import { RequestStore, type SqliteDatabase, type StoredEnd, StoreRefused } from "../../../extensions/checkpoint-bridge/core/store/store.ts";

const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "cpb-store-edges-"));
});
afterEach(() => {
	vi.useRealTimers();
	vi.restoreAllMocks();
	useStore(undefined);
	rmSync(dir, { recursive: true, force: true });
});

/** A store over a database this test also holds, to look inside it and to spoil it. */
function inside(file = ":memory:"): { db: NodeDatabase; store: RequestStore } {
	const db = new DatabaseSync(file);
	return { db, store: new RequestStore(db as unknown as SqliteDatabase, file) };
}

const end = (askerId: string, over: Partial<StoredEnd> = {}): StoredEnd => ({
	askerId,
	hostId: `h-${askerId}`,
	askerSession: "pid 7/s",
	asker: "planner (pid 7)",
	questions: ["Which?"],
	status: "ok",
	answers: [{ question: "Which?", answer: "a", kind: "option" }],
	queuedAt: 1_000,
	endedAt: 2_000,
	expiresAt: Date.now() + 60_000,
	...over,
});

const refusal = (outcome: ReturnType<typeof openStore>): string => (outcome.ok ? "opened" : outcome.warning);

describe("the store's database", () => {
	it("is set to WAL, synchronous NORMAL, a 2 s busy timeout, the store's application id and schema 1", () => {
		const { db, store } = inside(join(dir, "p.sqlite"));
		const pragma = (name: string) => Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
		expect(pragma("journal_mode")).toBe("wal");
		expect(pragma("synchronous")).toBe(1);
		expect(pragma("busy_timeout")).toBe(2000);
		expect(pragma("application_id")).toBe(0x43504253);
		expect(pragma("user_version")).toBe(1);
		expect(
			db
				.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
				.all()
				.map((r) => r.name),
		).toEqual(["ends", "meta", "requests"]);
		store.close();
	});

	it("close twice closes once", () => {
		const { store } = inside();
		store.close();
		expect(() => store.close()).not.toThrow();
	});

	it("another program's database with the store's tables missing and an application id of its own is named by its id alone", () => {
		const file = join(dir, "other.sqlite");
		const db = new DatabaseSync(file);
		db.exec("PRAGMA application_id = 7");
		db.close();
		expect(refusal(openStore(file))).toMatch(/another program's database \(application id 7\)\); they live/);
	});

	it("another program's tables are named, five at most, comma-separated", () => {
		const file = join(dir, "many.sqlite");
		const db = new DatabaseSync(file);
		for (const name of ["t1", "t2", "t3", "t4", "t5", "t6"]) db.exec(`CREATE TABLE ${name} (x)`);
		db.close();
		expect(refusal(openStore(file))).toMatch(/\(application id 0, tables t1, t2, t3, t4, t5\)/);
	});

	it("a database of the store's mark whose tables are not the store's shape: its schema cannot be made", () => {
		const file = join(dir, "shape.sqlite");
		const db = new DatabaseSync(file);
		db.exec(`PRAGMA application_id = ${0x43504253}; CREATE TABLE requests (x TEXT)`);
		db.close();
		expect(refusal(openStore(file))).toMatch(/shape\.sqlite is refused: its schema cannot be made \(.*asker_id/);
	});

	it("a store of this schema opens again (schema 1 is read, not refused as newer)", () => {
		const file = join(dir, "same.sqlite");
		openStore(file).ok && (openStore(file) as { store: RequestStore }).store.close();
		const again = openStore(file);
		expect(again.ok).toBe(true);
		if (again.ok) again.store.close();
	});

	it("what a database throws that is not an Error is still said", () => {
		const throwing = (what: unknown) =>
			({
				prepare: () => {
					throw what;
				},
				exec: () => {
					throw what;
				},
				close: () => {},
			}) as unknown as SqliteDatabase;
		expect(() => new RequestStore(throwing("plain words"), "x")).toThrow(new StoreRefused("it is not a database this host can read (plain words)"));
		expect(() => new RequestStore(throwing(new Error("an error")), "x")).toThrow(new StoreRefused("it is not a database this host can read (an error)"));
		// Read fine as fresh, then the schema fails: a thrown string is said as it is.
		const fresh = (what: unknown) =>
			({
				prepare: () => ({ get: () => ({ application_id: 0, user_version: 0 }), all: () => [], run: () => {} }),
				exec: () => {
					throw what;
				},
				close: () => {},
			}) as unknown as SqliteDatabase;
		expect(() => new RequestStore(fresh("no room"), "x")).toThrow(new StoreRefused("its schema cannot be made (no room)"));
		expect(() => new RequestStore(fresh(new Error("disk")), "x")).toThrow(new StoreRefused("its schema cannot be made (disk)"));
	});

	it("numbers read as bigints are numbers; a missing pragma row reads as a fresh database", () => {
		const fake = (appId: unknown) =>
			({
				prepare: (sql: string) => ({
					get: () => (sql.includes("application_id") ? appId : sql.includes("user_version") ? { user_version: 0n } : undefined),
					all: () => [],
					run: () => {},
				}),
				exec: () => {},
				close: () => {},
			}) as unknown as SqliteDatabase;
		expect(() => new RequestStore(fake({ application_id: 0x43504253n }), "x")).not.toThrow();
		expect(() => new RequestStore(fake(undefined), "x")).not.toThrow();
		expect(() => new RequestStore(fake({ application_id: "7" }), "x")).not.toThrow();
		expect(() => new RequestStore(fake({ application_id: 7n }), "x")).toThrow(/application id 7\)/);
	});
});

describe("the store's rows", () => {
	it("an end whose write fails leaves the open row as it was, and the store takes the next end", () => {
		const { db, store } = inside();
		store.put({ hostId: "h1", askerId: "a1", askerSession: "s", record: "{}" });
		db.exec("CREATE TRIGGER refuse BEFORE INSERT ON ends WHEN NEW.asker_id = 'a1' BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END");
		expect(() => store.ended(end("a1", { hostId: "h1" }))).toThrow(/refused by a trigger/);
		expect(store.isOpen("a1")).toBe(true);
		expect(store.endOf("a1")).toBeUndefined();
		store.put({ hostId: "h2", askerId: "a2", askerSession: "s", record: "{}" });
		store.ended(end("a2", { hostId: "h2" }));
		expect(store.endOf("a2")?.hostId).toBe("h2");
		expect(store.openRequests().map((r) => r.hostId)).toEqual(["h1"]);
		store.close();
	});

	it("an end prunes ends expired at its own end time, not later ones", () => {
		const store = inside().store;
		store.ended(end("gone", { expiresAt: 5_000 }));
		store.ended(end("stays", { expiresAt: 5_001 }));
		store.ended(end("now", { endedAt: 5_000 }));
		const ids = store.history(10).map((e) => e.askerId);
		expect(ids).toContain("stays");
		expect(ids).not.toContain("gone");
		store.close();
	});

	it("discard removes one open row without an end", () => {
		const store = inside().store;
		store.put({ hostId: "h1", askerId: "a1", askerSession: "s", record: "{}" });
		store.put({ hostId: "h2", askerId: "a2", askerSession: "s", record: "{}" });
		store.discard("h1");
		expect(store.openRequests().map((r) => r.hostId)).toEqual(["h2"]);
		expect(store.endOf("a1")).toBeUndefined();
		store.close();
	});

	it("an end that does not read is not given; the history skips it and gives the rest with no ids of the host", () => {
		const { db, store } = inside();
		store.ended(end("good", { endedAt: 3_000, note: "n" }));
		store.ended(end("bad", { endedAt: 4_000 }));
		db.exec("UPDATE ends SET body = 'not json' WHERE asker_id = 'bad'");
		expect(store.endOf("bad")).toBeUndefined();
		expect(store.endOf("good")).toEqual({ ...end("good", { endedAt: 3_000, note: "n" }), expiresAt: expect.any(Number) });
		const history = store.history();
		expect(history).toHaveLength(1);
		expect(history[0]).toMatchObject({ askerId: "good", hostId: "", askerSession: "", endedAt: 3_000, note: "n", status: "ok" });
		store.close();
	});

	it("the history gives 20 by default, newest first, the later written first among ends of one time", () => {
		const store = inside().store;
		for (let i = 0; i < 25; i++) store.ended(end(`e${i}`, { endedAt: i < 2 ? 99_999 : 1_000 + i }));
		const history = store.history();
		expect(history).toHaveLength(20);
		expect(history.slice(0, 3).map((e) => e.askerId)).toEqual(["e1", "e0", "e24"]);
		store.close();
	});

	it("the bound keeps the newest by end time, and the later written among ends of one time", () => {
		const store = inside().store;
		for (let i = 0; i < 258; i++) store.ended(end(`e${i}`, { endedAt: i === 0 ? 1e12 : 5_000 }));
		expect(store.endOf("e0")?.askerId).toBe("e0");
		expect(store.endOf("e1")).toBeUndefined();
		expect(store.endOf("e2")).toBeUndefined();
		expect(store.endOf("e3")?.askerId).toBe("e3");
		expect(store.endOf("e257")?.askerId).toBe("e257");
		store.close();
	});

	it("openOf finds the asker's row among rows of one asker id from several sessions", () => {
		const store = inside().store;
		store.put({ hostId: "h1", askerId: "a", askerSession: "s1", record: "{}" });
		store.put({ hostId: "h2", askerId: "a", askerSession: "s2", record: "{}" });
		expect(store.openOf("a", "s2")).toEqual({ hostId: "h2", askerId: "a", askerSession: "s2", record: "{}" });
		expect(store.isOpen("b")).toBe(false);
		store.close();
	});

	it("the seed of secretFor is written once: the same secret after the meta row was read back", () => {
		const { db, store } = inside();
		const first = store.secretFor("p", "i");
		const seed = db.prepare("SELECT value FROM meta WHERE key = 'store.seed'").get()?.value;
		expect(typeof seed).toBe("string");
		expect(String(seed)).toHaveLength(43);
		expect(store.secretFor("p", "i")).toBe(first);
		expect(db.prepare("SELECT value FROM meta WHERE key = 'store.seed'").get()?.value).toBe(seed);
		// The purpose and the id are kept apart: "a\nb" + "c" is not "a" + "b\nc".
		expect(store.secretFor("a\nb", "c")).toBe(store.secretFor("a\nb", "c"));
		expect(store.secretFor("ab", "c")).not.toBe(store.secretFor("a", "bc"));
		store.close();
	});
});

describe("where the store lives", () => {
	it("a blank CHECKPOINT_BRIDGE_STATE_DIR, a blank or relative XDG_STATE_HOME and a blank HOME are passed over", () => {
		expect(storeDir({ CHECKPOINT_BRIDGE_STATE_DIR: "  ", HOME: dir })).toBe(join(dir, ".local", "state", "checkpoint-bridge"));
		expect(storeDir({ CHECKPOINT_BRIDGE_STATE_DIR: ` ${dir}/x ` })).toBe(join(dir, "x"));
		expect(storeDir({ XDG_STATE_HOME: "relative/state", HOME: dir })).toBe(join(dir, ".local", "state", "checkpoint-bridge"));
		expect(storeDir({ XDG_STATE_HOME: ` ${dir}/xdg `, HOME: dir })).toBe(join(dir, "xdg", "checkpoint-bridge"));
		expect(storeDir({ HOME: "  " })).toBe(join(homedir(), ".local", "state", "checkpoint-bridge"));
		expect(storeDir({ HOME: ` ${dir} ` })).toBe(join(dir, ".local", "state", "checkpoint-bridge"));
	});

	it("a store file's name is 32 characters of the directory's hash, for a directory that is not there too", () => {
		const env = { CHECKPOINT_BRIDGE_STATE_DIR: dir };
		const file = storeFile(join(dir, "not-there"), env);
		expect(basename(file)).toMatch(/^[A-Za-z0-9_-]{32}\.sqlite$/);
		expect(storeFile(join(dir, "not-there", "."), env)).toBe(file);
		expect(storeFile(join(dir, "not-there-either"), env)).not.toBe(file);
	});

	it("a link in the place of the store's directory is not a directory; a file there is said with its error", () => {
		const real = join(dir, "real");
		mkdirSync(real, { mode: 0o700 });
		symlinkSync(real, join(dir, "link"));
		expect(refusal(openStore(join(dir, "link", "s.sqlite")))).toMatch(/\(.*link is not a directory\)/);
		writeFileSync(join(dir, "plain"), "x");
		expect(refusal(openStore(join(dir, "plain", "s.sqlite")))).toMatch(/\(.*plain: EEXIST/);
	});

	it("a directory open to the group only is refused with its mode", () => {
		const open = join(dir, "group");
		mkdirSync(open, { mode: 0o700 });
		rmSync(open, { recursive: true });
		mkdirSync(open);
		(require("node:fs") as typeof import("node:fs")).chmodSync(open, 0o710);
		expect(refusal(openStore(join(open, "s.sqlite")))).toMatch(/group is open to other users \(mode 710\); it must be 0700/);
	});

	it("a directory in the place of the store's file is not a regular file", () => {
		const home = join(dir, "home");
		mkdirSync(join(home, "s.sqlite"), { recursive: true, mode: 0o700 });
		(require("node:fs") as typeof import("node:fs")).chmodSync(home, 0o700);
		expect(refusal(openStore(join(home, "s.sqlite")))).toMatch(/s\.sqlite is not a regular file\)/);
	});

	it.runIf(process.getuid?.() === 0)("a directory or a file of another user is refused, naming the user", () => {
		const theirs = join(dir, "theirs");
		mkdirSync(theirs, { mode: 0o700 });
		chownSync(theirs, 4321, 4321);
		expect(refusal(openStore(join(theirs, "s.sqlite")))).toMatch(/theirs belongs to another user \(uid 4321\)/);
		const mine = join(dir, "mine");
		mkdirSync(mine, { mode: 0o700 });
		writeFileSync(join(mine, "s.sqlite"), "");
		chownSync(join(mine, "s.sqlite"), 4321, 4321);
		expect(refusal(openStore(join(mine, "s.sqlite")))).toMatch(/s\.sqlite belongs to another user \(uid 4321\)\)/);
	});

	it("a file of this user that is not there yet, or empty, is made the store", () => {
		const mine = join(dir, "mine");
		mkdirSync(mine, { mode: 0o700 });
		writeFileSync(join(mine, "s.sqlite"), "");
		const outcome = openStore(join(mine, "s.sqlite"));
		expect(refusal(outcome)).toBe("opened");
		if (outcome.ok) outcome.store.close();
	});
});

describe("loading node:sqlite", () => {
	it("keeps back the one warning that SQLite is experimental while it loads, passes any other, and puts emitWarning back", () => {
		const seen: unknown[][] = [];
		const emit = vi.fn((...args: unknown[]) => void seen.push(args));
		vi.spyOn(process, "emitWarning").mockImplementation(emit as never);
		const before = process.emitWarning;
		const real = process.getBuiltinModule;
		vi.spyOn(process, "getBuiltinModule").mockImplementation(((id: string) => {
			process.emitWarning("SQLite is an experimental feature and might change at any time", "ExperimentalWarning");
			process.emitWarning(new Error("SQLite is an experimental feature, as an error"));
			process.emitWarning("another warning", "Warning");
			process.emitWarning(new Error("an error warning"));
			process.emitWarning("a warning: SQLite is an experimental feature");
			return real.call(process, id);
		}) as never);
		const outcome = openStore(":memory:");
		expect(outcome.ok).toBe(true);
		expect(seen.map((args) => (typeof args[0] === "string" ? args[0] : (args[0] as Error).message))).toEqual([
			"another warning",
			"an error warning",
			"a warning: SQLite is an experimental feature",
		]);
		expect(seen[0]).toEqual(["another warning", "Warning"]);
		expect(process.emitWarning).toBe(before);
		if (outcome.ok) outcome.store.close();
	});

	it("a Node without node:sqlite (or whose loading throws) runs in memory, saying its version", () => {
		vi.spyOn(process, "getBuiltinModule").mockImplementation((() => undefined) as never);
		expect(refusal(openStore(":memory:"))).toBe(
			`checkpoint-bridge: questions of other processes are not written down (this Node (${process.version}) has no node:sqlite; Node 22.19 or later has); they live only as long as this host does.`,
		);
		vi.spyOn(process, "getBuiltinModule").mockImplementation((() => {
			throw new Error("no such module");
		}) as never);
		expect(refusal(openStore(":memory:"))).toMatch(/has no node:sqlite/);
	});

	it("a database that cannot be opened is said with the file, and one refused is closed (a close that throws changes nothing)", () => {
		const closed: string[] = [];
		let throwOnClose = false;
		class Refusing {
			constructor(readonly file: string) {
				if (file.endsWith("boom.sqlite")) throw new Error("cannot open");
				if (file.endsWith("word.sqlite")) throw "a word";
			}
			prepare() {
				throw new Error("unreadable");
			}
			exec() {}
			close() {
				closed.push(this.file);
				if (throwOnClose) throw new Error("close failed");
			}
		}
		vi.spyOn(process, "getBuiltinModule").mockImplementation((() => ({ DatabaseSync: Refusing })) as never);
		mkdirSync(join(dir, "d"), { mode: 0o700 });
		expect(refusal(openStore(join(dir, "d", "boom.sqlite")))).toMatch(/not written down \(.*boom\.sqlite: cannot open\); they/);
		expect(refusal(openStore(join(dir, "d", "word.sqlite")))).toMatch(/word\.sqlite: a word\)/);
		expect(closed).toEqual([]);
		expect(refusal(openStore(join(dir, "d", "x.sqlite")))).toMatch(/x\.sqlite is refused: it is not a database this host can read \(unreadable\)/);
		expect(closed).toEqual([join(dir, "d", "x.sqlite")]);
		throwOnClose = true;
		expect(refusal(openStore(join(dir, "d", "y.sqlite")))).toMatch(/y\.sqlite is refused/);
	});
});

describe("the process's store", () => {
	it("is opened once per file and becomes the current one; a refused one leaves the current as it was", () => {
		const env = { CHECKPOINT_BRIDGE_STATE_DIR: join(dir, "state") };
		const first = processStore(join(dir, "work"), env);
		expect(first.ok).toBe(true);
		expect(processStore(join(dir, "work"), env)).toBe(first);
		expect(currentStore()).toBe(first.ok ? first.store : undefined);
		const bad = { CHECKPOINT_BRIDGE_STATE_DIR: join(dir, "bad") };
		mkdirSync(join(dir, "bad"), { mode: 0o755 });
		(require("node:fs") as typeof import("node:fs")).chmodSync(join(dir, "bad"), 0o755);
		const refused = processStore(join(dir, "work"), bad);
		expect(refused.ok).toBe(false);
		expect(processStore(join(dir, "work"), bad)).toBe(refused);
		expect(currentStore()).toBe(first.ok ? first.store : undefined);
		useStore(undefined);
		expect(currentStore()).toBeUndefined();
		if (first.ok) first.store.close();
	});
});

const record = (over: Partial<RequestRecord> = {}, request: Record<string, unknown> = {}): RequestRecord => {
	const questions = [{ question: "Which?", options: ["a", "b"] }, { question: "Why?" }];
	return {
		request: {
			v: 1,
			id: "h1",
			askerId: "a1",
			asker: { label: "planner (pid 7)", sessionId: "pid 7/s" },
			questions,
			deadline: 0,
			dialogTimeoutMs: 0,
			createdAt: 1,
			origin: "local:c1",
			...request,
		} as unknown as RequestRecord["request"],
		questions,
		entries: [{ answer: { question: "Which?", answer: "a", kind: "option" } }, undefined],
		queuedAt: 1_000,
		state: { is: "queued" },
		...over,
	} as RequestRecord;
};

describe("a record's row", () => {
	it("is written down only with an origin and an asker's id", () => {
		expect(writtenDown(record())).toBe(true);
		expect(writtenDown(record({}, { origin: undefined }))).toBe(false);
		expect(writtenDown(record({}, { askerId: undefined }))).toBe(false);
		expect(writtenDown(record({}, { askerId: 7 }))).toBe(false);
	});

	it("carries the request, its answers, when it was queued and shown, and its late state, and comes back queued and re-sent", () => {
		const late = { is: "late" as const, since: 5, expiresAt: 9 };
		const row = storedRequest(record({ shownAt: 2_000, state: late }));
		expect(row).toMatchObject({ hostId: "h1", askerId: "a1", askerSession: "pid 7/s" });
		const json = JSON.parse(row.record);
		expect(json).toMatchObject({ queuedAt: 1_000, shownAt: 2_000, late, entries: [{ answer: { answer: "a" } }, null] });
		const back = restoredRecord(row)!;
		expect(back.late).toEqual(late);
		expect(back.record).toMatchObject({ queuedAt: 1_000, shownAt: 2_000, state: { is: "queued" } });
		expect(back.record.request).toMatchObject({ id: "h1", askerId: "a1", resent: true });
		expect(back.record.questions).toBe(back.record.request.questions);
		expect(back.record.entries).toEqual([{ answer: { question: "Which?", answer: "a", kind: "option" } }, undefined]);
	});

	it("a record shown again from late keeps its late state; one never shown or late has neither", () => {
		const wasLate = { is: "late" as const, since: 3, expiresAt: 4 };
		expect(JSON.parse(storedRequest(record({ state: { is: "showing" }, wasLate })).record).late).toEqual(wasLate);
		const plain = JSON.parse(storedRequest(record()).record);
		expect("late" in plain).toBe(false);
		expect("shownAt" in plain).toBe(false);
		const back = restoredRecord(storedRequest(record()))!;
		expect(back.late).toBeUndefined();
		expect("late" in back).toBe(false);
		expect("shownAt" in back.record).toBe(false);
		// A state's other fields are not written: only is, since and expiresAt.
		const extra = JSON.parse(storedRequest(record({ state: { ...wasLate, more: 1 } as never })).record).late;
		expect(extra).toEqual(wasLate);
	});

	it("the asker's id comes back from the row, not from the record's JSON", () => {
		const row = storedRequest(record());
		expect(restoredRecord({ ...row, askerId: "other" })!.record.request.askerId).toBe("other");
	});

	it("a row that does not read as a record is dropped", () => {
		const row = storedRequest(record());
		const json = JSON.parse(row.record);
		const spoilt = (change: (j: Record<string, unknown>) => unknown) => {
			const copy = structuredClone(json);
			const replaced = change(copy);
			return restoredRecord({ ...row, record: JSON.stringify(replaced === undefined ? copy : replaced) });
		};
		expect(restoredRecord({ ...row, record: "{" })).toBeUndefined();
		expect(spoilt(() => null)).toBeUndefined();
		expect(spoilt(() => 7)).toBeUndefined();
		expect(spoilt((j) => void (j.request = null))).toBeUndefined();
		expect(spoilt((j) => void (j.request = "h1"))).toBeUndefined();
		expect(spoilt((j) => void ((j.request as { id: string }).id = "h2"))).toBeUndefined();
		expect(spoilt((j) => void ((j.request as { questions: unknown }).questions = "Which?"))).toBeUndefined();
		expect(spoilt((j) => void (j.entries = {}))).toBeUndefined();
		expect(spoilt((j) => void (j.queuedAt = "1000"))).toBeUndefined();
		expect(spoilt((j) => void delete j.queuedAt)).toBeUndefined();
		expect(spoilt((j) => void ((j.request as { asker: unknown }).asker = null))).toBeUndefined();
		expect(spoilt((j) => void ((j.request as { asker: unknown }).asker = "planner"))).toBeUndefined();
		expect(spoilt((j) => void ((j.request as { asker: { sessionId: unknown } }).asker.sessionId = 7))).toBeUndefined();
		expect(spoilt((j) => void ((j.request as { asker: { label: unknown } }).asker.label = 7))).toBeUndefined();
		expect(spoilt(() => undefined)).toBeDefined();
	});

	it("an answer comes back only where it answers the question at its place; a late state or shown time that does not read is left out", () => {
		const row = storedRequest(record());
		const json = JSON.parse(row.record);
		json.entries = [{ answer: { question: "Why?", answer: "a" } }, { answer: { question: "Why?", answer: 5 } }];
		expect(restoredRecord({ ...row, record: JSON.stringify(json) })!.record.entries).toEqual([undefined, undefined]);
		json.entries = ["text", { answer: { question: "Why?", answer: "because" } }, { answer: { question: "Extra?", answer: "x" } }];
		expect(restoredRecord({ ...row, record: JSON.stringify(json) })!.record.entries).toEqual([undefined, { answer: { question: "Why?", answer: "because" } }]);
		json.entries = [null, { place: 1 }];
		expect(restoredRecord({ ...row, record: JSON.stringify(json) })!.record.entries).toEqual([undefined, undefined]);
		for (const late of [null, "late", { since: 1 }, { expiresAt: 1 }, { since: "1", expiresAt: 2 }]) {
			json.late = late;
			expect(restoredRecord({ ...row, record: JSON.stringify(json) })!.late).toBeUndefined();
		}
		json.late = { is: "whatever", since: 1, expiresAt: 2, more: true };
		expect(restoredRecord({ ...row, record: JSON.stringify(json) })!.late).toEqual({ is: "late", since: 1, expiresAt: 2 });
		json.shownAt = "2000";
		expect("shownAt" in restoredRecord({ ...row, record: JSON.stringify(json) })!.record).toBe(false);
	});

	it("an end carries who asked, the questions, the answers given, its status and reason, the note and the late mark only when there", () => {
		const full = storedEnd(record(), { end: "dialog-timeout", note: "too slow", late: true }, 9_000, 3_000);
		expect(full).toEqual({
			askerId: "a1",
			hostId: "h1",
			askerSession: "pid 7/s",
			asker: "planner (pid 7)",
			questions: ["Which?", "Why?"],
			status: "timeout-or-cancelled",
			answers: [{ question: "Which?", answer: "a", kind: "option" }],
			note: "too slow",
			reason: "dialog-timeout",
			late: true,
			queuedAt: 1_000,
			endedAt: 3_000,
			expiresAt: 9_000,
		});
		const bare = storedEnd(record(), { end: "answered", note: "", late: false }, 9_000);
		expect(Object.keys(bare).sort()).toEqual([
			"answers",
			"asker",
			"askerId",
			"askerSession",
			"endedAt",
			"expiresAt",
			"hostId",
			"questions",
			"queuedAt",
			"status",
		]);
		expect(bare.status).toBe("ok");
		expect(Math.abs(bare.endedAt - Date.now())).toBeLessThan(5_000);
	});
});

describe("a later wait on the store", () => {
	it("an end's envelope: its status, answers, note, reason, id, asker and time waited (never below 0)", async () => {
		const store = inside().store;
		store.ended(end("a1", { status: "timeout-or-cancelled", reason: "dialog-timeout", note: "too slow", answers: [], queuedAt: 1_000, endedAt: 4_000 }));
		store.ended(end("a2", { queuedAt: 5_000, endedAt: 4_000 }));
		const { ended, open } = await waitInStore(store, ["a1", "a2"], 1_000);
		expect(open).toEqual([]);
		expect(ended[0]).toMatchObject({
			status: "timeout-or-cancelled",
			reason: "dialog-timeout",
			requestId: "a1",
			asker: "planner (pid 7)",
			waitedMs: 3_000,
			answers: [],
		});
		expect(ended[0]!.note).toMatch(/^too slow /);
		expect(ended[1]).toEqual({ status: "ok", answers: end("a2").answers, requestId: "a2", asker: "planner (pid 7)", waitedMs: 0 });
		store.close();
	});

	it("looks again every 250 ms until the ids end, and gives the ids still open when its budget runs out", async () => {
		vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout"] });
		expect(LOOK_EVERY_MS).toBe(250);
		const store = inside().store;
		store.put({ hostId: "h1", askerId: "a1", askerSession: "s", record: "{}" });
		let done: { ended: unknown[]; open: string[] } | undefined;
		const waiting = waitInStore(store, ["a1", "a2"], 10_000).then((r) => (done = r));
		store.ended(end("a1", { hostId: "h1" }));
		await vi.advanceTimersByTimeAsync(249);
		expect(done).toBeUndefined();
		await vi.advanceTimersByTimeAsync(1);
		expect(done).toBeUndefined();
		store.ended(end("a2"));
		await vi.advanceTimersByTimeAsync(250);
		expect(done?.open).toEqual([]);
		expect((done!.ended as { requestId: string }[]).map((e) => e.requestId)).toEqual(["a1", "a2"]);
		await waiting;
		const short = waitInStore(store, ["a3", "a1"], 1_000);
		await vi.advanceTimersByTimeAsync(1_000);
		const result = await short;
		expect(result.open).toEqual(["a3"]);
		expect(result.ended.map((e) => e.requestId)).toEqual(["a1"]);
		expect(vi.getTimerCount()).toBe(0);
		store.close();
	});

	it("ends when its signal aborts, with what it found", async () => {
		const store = inside().store;
		const stop = new AbortController();
		const waiting = waitInStore(store, ["a9"], 60_000, stop.signal);
		stop.abort();
		expect(await waiting).toEqual({ ended: [], open: ["a9"] });
		store.close();
	});

	it("the store knows an id open at a host or ended and kept, and no other", () => {
		const store = inside().store;
		store.put({ hostId: "h1", askerId: "open", askerSession: "s", record: "{}" });
		store.ended(end("ended"));
		expect(storeKnows(store, "open")).toBe(true);
		expect(storeKnows(store, "ended")).toBe(true);
		expect(storeKnows(store, "neither")).toBe(false);
		store.close();
	});
});
