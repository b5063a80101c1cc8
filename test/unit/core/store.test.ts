/**
 * The store (core/store/): what it writes and gives back, its refusals (a file that is not a
 * database, another program's, a newer schema's, a directory open to others), and that a process
 * killed mid-write leaves a database that opens with every committed row.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ENV_STATE_DIR, openStore, storeDir, storeFile } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import { MAX_ENDS, type RequestStore, type StoredEnd } from "../../../extensions/checkpoint-bridge/core/store/store.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "cpb-store-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const opened = (file: string): RequestStore => {
	const outcome = openStore(file);
	if (!outcome.ok) throw new Error(outcome.warning);
	return outcome.store;
};

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

describe("the store", () => {
	it("writes an open request, gives it back by its asker's id and session, and on its end keeps the end in its place", () => {
		const store = opened(join(dir, "s", "a.sqlite"));
		store.put({ hostId: "h1", askerId: "a1", askerSession: "pid 7/s", record: "{}" });
		store.put({ hostId: "h1", askerId: "a1", askerSession: "pid 7/s", record: '{"again":1}' });
		expect(store.openRequests()).toEqual([{ hostId: "h1", askerId: "a1", askerSession: "pid 7/s", record: '{"again":1}' }]);
		expect(store.openOf("a1", "pid 7/s")?.hostId).toBe("h1");
		expect(store.openOf("a1", "pid 8/s")).toBeUndefined();
		expect(store.isOpen("a1")).toBe(true);
		store.ended(end("a1", { hostId: "h1" }));
		expect(store.openRequests()).toEqual([]);
		expect(store.isOpen("a1")).toBe(false);
		expect(store.endOf("a1")).toMatchObject({ askerId: "a1", hostId: "h1", askerSession: "pid 7/s", status: "ok", answers: [{ answer: "a" }] });
		store.close();
		// Another process opening the same file finds the same.
		const again = opened(join(dir, "s", "a.sqlite"));
		expect(again.endOf("a1")?.status).toBe("ok");
		again.close();
	});

	it("an end past its expiry is not given, and is pruned at the next end; the history keeps the newest MAX_ENDS", () => {
		const store = opened(":memory:");
		store.ended(end("old", { expiresAt: 5_000 }));
		expect(store.endOf("old", 4_999)?.askerId).toBe("old");
		expect(store.endOf("old", 5_000)).toBeUndefined();
		for (let i = 0; i < MAX_ENDS + 3; i++) store.ended(end(`e${i}`, { endedAt: 10_000 + i }));
		const history = store.history(MAX_ENDS + 10);
		expect(history).toHaveLength(MAX_ENDS);
		expect(history[0]!.askerId).toBe(`e${MAX_ENDS + 2}`);
		expect(store.endOf("e0")).toBeUndefined();
		store.close();
	});

	it("meta: a value set is read back by any later opening, and goes when deleted", () => {
		const file = join(dir, "m.sqlite");
		const store = opened(file);
		expect(store.meta.get("mail.lastUid")).toBeUndefined();
		store.meta.set("mail.lastUid", "41");
		store.meta.set("mail.lastUid", "42");
		store.close();
		const again = opened(file);
		expect(again.meta.get("mail.lastUid")).toBe("42");
		again.meta.delete("mail.lastUid");
		expect(again.meta.get("mail.lastUid")).toBeUndefined();
		again.close();
	});

	it("lives in a 0700 directory of its own, one file per host directory, moved by CHECKPOINT_BRIDGE_STATE_DIR", () => {
		const env = { [ENV_STATE_DIR]: join(dir, "state"), HOME: dir };
		expect(storeDir(env)).toBe(join(dir, "state"));
		expect(storeDir({ HOME: dir })).toBe(join(dir, ".local", "state", "checkpoint-bridge"));
		expect(storeDir({ HOME: dir, XDG_STATE_HOME: join(dir, "xdg") })).toBe(join(dir, "xdg", "checkpoint-bridge"));
		const a = storeFile(join(dir), env);
		expect(storeFile(join(dir, "."), env)).toBe(a);
		expect(storeFile(tmpdir(), env)).not.toBe(a);
		opened(a).close();
		expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
	});
});

describe("what the store refuses, with a warning that says what (the host then runs in memory)", () => {
	it("a file that is not a database", () => {
		const file = join(dir, "x.sqlite");
		writeFileSync(file, "this is not SQLite, just text that sits where the store would be\n".repeat(20));
		const outcome = openStore(file);
		expect(outcome.ok).toBe(false);
		expect(!outcome.ok && outcome.warning).toMatch(/not written down .*x\.sqlite is refused: it is not a database this host can read/);
	});

	it("another program's database: its tables are left alone", () => {
		const file = join(dir, "foreign.sqlite");
		const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");
		const db = new DatabaseSync(file);
		db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
		db.close();
		const outcome = openStore(file);
		expect(!outcome.ok && outcome.warning).toMatch(/it is another program's database \(application id 0, tables notes\)/);
		const check = new DatabaseSync(file);
		expect(check.prepare("SELECT body FROM notes").all()).toEqual([{ body: "mine" }]);
		check.close();
	});

	it("a database of a newer schema", () => {
		const file = join(dir, "newer.sqlite");
		opened(file).close();
		const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");
		const db = new DatabaseSync(file);
		db.exec("PRAGMA user_version = 99");
		db.close();
		expect((openStore(file) as { warning: string }).warning).toMatch(/written by a newer release \(schema 99; this one reads 1\)/);
	});

	it("a directory open to other users, and a link in the store's place", () => {
		const open = join(dir, "open");
		mkdirSync(open, { mode: 0o755 });
		chmodSync(open, 0o755);
		expect((openStore(join(open, "s.sqlite")) as { warning: string }).warning).toMatch(/is open to other users \(mode 755\); it must be 0700/);
		const closed = join(dir, "closed");
		mkdirSync(closed, { mode: 0o700 });
		const { symlinkSync } = require("node:fs") as typeof import("node:fs");
		symlinkSync(join(dir, "elsewhere.sqlite"), join(closed, "s.sqlite"));
		expect((openStore(join(closed, "s.sqlite")) as { warning: string }).warning).toMatch(/s\.sqlite is a symbolic link/);
	});
});

describe("crash safety", () => {
	it("a process killed (SIGKILL) while it writes leaves a database that opens with every committed row, and whole ones only", async () => {
		const file = join(dir, "crash", "c.sqlite");
		opened(file).close();
		const script = `
			const { DatabaseSync } = require("node:sqlite");
			const db = new DatabaseSync(${JSON.stringify(file)});
			db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
			const put = db.prepare("INSERT INTO requests (host_id, asker_id, asker_session, record, updated_at) VALUES (?, ?, ?, ?, ?)");
			const big = "x".repeat(4000);
			for (let i = 0; ; i++) {
				db.exec("BEGIN");
				put.run("h" + i, "a" + i, "s", JSON.stringify({ i, big }), Date.now());
				put.run("h" + i + "b", "a" + i + "b", "s", JSON.stringify({ i, big }), Date.now());
				db.exec("COMMIT");
				if (i === 50) process.stdout.write("written\\n");
			}`;
		const child = spawn(process.execPath, ["--no-warnings", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
		await new Promise<void>((resolve, reject) => {
			child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("written") && resolve());
			child.on("exit", (code) => reject(new Error(`the writer ended by itself (${code})`)));
		});
		child.kill("SIGKILL");
		await new Promise((resolve) => child.once("exit", resolve));
		const store = opened(file);
		const rows = store.openRequests();
		expect(rows.length).toBeGreaterThan(100);
		// Both rows of each transaction, or neither: no half of one.
		expect(rows.length % 2).toBe(0);
		for (const row of rows) expect(JSON.parse(row.record).big).toHaveLength(4000);
		store.close();
	});
});

describe("secrets of the store", () => {
	it("secretFor is the same for a purpose and id in every opening of the store, differs by either, and by store", () => {
		const file = join(dir, "k.sqlite");
		const store = opened(file);
		const tap = store.secretFor("one-tap", "h1");
		expect(tap).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(store.secretFor("one-tap", "h2")).not.toBe(tap);
		expect(store.secretFor("mail", "h1")).not.toBe(tap);
		store.close();
		expect(opened(file).secretFor("one-tap", "h1")).toBe(tap);
		expect(opened(join(dir, "other.sqlite")).secretFor("one-tap", "h1")).not.toBe(tap);
	});
});

describe("Node's warning", () => {
	it("the one warning that SQLite is experimental is not printed when the store opens; any other warning still is", async () => {
		const open = join(process.cwd(), "extensions/checkpoint-bridge/core/store/open.ts");
		const script = `import { openStore } from ${JSON.stringify(open)}; const o = openStore(":memory:"); console.log(o.ok); process.emitWarning("another warning");`;
		const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
		child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
		await new Promise((resolve) => child.once("close", resolve));
		expect(stdout.trim()).toBe("true");
		expect(stderr).toContain("Warning: another warning");
		expect(stderr).not.toContain("ExperimentalWarning");
		expect(stderr).not.toContain("SQLite");
	});
});
