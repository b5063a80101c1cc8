/**
 * The store: the records of the book that can outlive the host's process, written down in one SQLite
 * database per host directory (ADR-0033). A request from another process or machine is a row of
 * `requests` while it is open; when it ends, its row goes and its end is a row of `ends`, kept until
 * its expiry for a later run that waits on its id, then pruned, within a bounded history. `meta` is a
 * key-value table for the rest of the host's state that must survive it (a mail reader's last UID).
 * Every write is one statement or one transaction: a process killed mid-write leaves the last
 * committed state (WAL, synchronous=NORMAL).
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Answer } from "../../model/answer.ts";
import type { EndReason, Status } from "../../model/result.ts";

/** What `node:sqlite` gives that the store uses: its DatabaseSync, as a type of its own (the module loads lazily). */
export interface SqliteDatabase {
	exec(sql: string): void;
	prepare(sql: string): SqliteStatement;
	close(): void;
}

interface SqliteStatement {
	run(...params: SqliteValue[]): unknown;
	get(...params: SqliteValue[]): Record<string, SqliteValue> | undefined;
	all(...params: SqliteValue[]): Record<string, SqliteValue>[];
}

type SqliteValue = string | number | bigint | null | Uint8Array;

/** The store's mark in the file's header (`PRAGMA application_id`): "CPBS". A database without it is another program's. */
const STORE_APPLICATION_ID = 0x43504253;
/** The schema's version (`PRAGMA user_version`); a newer one is refused rather than misread. */
const STORE_SCHEMA_VERSION = 1;
/** The `meta` key of the store's seed for secretFor. */
const SEED_KEY = "store.seed";
/** Ends kept for later waits and `/checkpoints` at most; the oldest go first. @default 256 */
export const MAX_ENDS = 256;

/** An open request as written down: its ids and its record as JSON (records.ts). */
export interface StoredRequest {
	/** Its id in the host (the book's key). */
	hostId: string;
	/** The asker's id for it: what the asking model was told, the capability a later wait names. */
	askerId: string;
	/** The asker session as the host shows it (marked with its process or machine). */
	askerSession: string;
	/** The record (records.ts `recordJson`). */
	record: string;
}

/** An ended request as written down: what a later wait on its id gets. */
export interface StoredEnd {
	askerId: string;
	hostId: string;
	askerSession: string;
	/** Who asked, as shown. */
	asker: string;
	questions: string[];
	status: Status;
	answers: Answer[];
	note?: string;
	reason?: EndReason;
	/** Answered after its call's budget ran out. */
	late?: true;
	queuedAt: number;
	endedAt: number;
	/** Epoch ms after which it is pruned. */
	expiresAt: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS requests (
	host_id TEXT PRIMARY KEY,
	asker_id TEXT NOT NULL,
	asker_session TEXT NOT NULL,
	record TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS requests_by_asker ON requests (asker_id);
CREATE TABLE IF NOT EXISTS ends (
	asker_id TEXT PRIMARY KEY,
	host_id TEXT NOT NULL,
	asker_session TEXT NOT NULL,
	body TEXT NOT NULL,
	ended_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS ends_by_expiry ON ends (expires_at);
CREATE TABLE IF NOT EXISTS meta (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
`;

/** The key-value table: small values of the host's that must outlive its process. */
export interface StoreMeta {
	get(key: string): string | undefined;
	set(key: string, value: string): void;
	delete(key: string): void;
}

/** Why a file was not taken as the store. */
export class StoreRefused extends Error {}

const text = (value: SqliteValue | undefined): string => (typeof value === "string" ? value : "");
const num = (value: SqliteValue | undefined): number => (typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : 0);

/** The store over an open database: checked (ours, a version we read) and its schema made, or StoreRefused thrown. */
export class RequestStore {
	readonly #db: SqliteDatabase;
	readonly #put: SqliteStatement;
	readonly #discard: SqliteStatement;
	readonly #all: SqliteStatement;
	readonly #byAsker: SqliteStatement;
	readonly #endPut: SqliteStatement;
	readonly #endOf: SqliteStatement;
	readonly #prune: SqliteStatement;
	readonly #bound: SqliteStatement;
	readonly #metaGet: SqliteStatement;
	readonly #metaSet: SqliteStatement;
	readonly #metaDiscard: SqliteStatement;
	#closed = false;
	#seed: string | undefined;
	/** Where it is on disk (":memory:" for a store of a test). */
	readonly file: string;
	readonly meta: StoreMeta;

	constructor(db: SqliteDatabase, file: string) {
		this.#db = db;
		this.file = file;
		claim(db);
		this.#put = db.prepare(
			"INSERT INTO requests (host_id, asker_id, asker_session, record, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (host_id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at",
		);
		this.#discard = db.prepare("DELETE FROM requests WHERE host_id = ?");
		this.#all = db.prepare("SELECT host_id, asker_id, asker_session, record FROM requests ORDER BY rowid");
		this.#byAsker = db.prepare("SELECT host_id, asker_id, asker_session, record FROM requests WHERE asker_id = ?");
		this.#endPut = db.prepare(
			"INSERT INTO ends (asker_id, host_id, asker_session, body, ended_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (asker_id) DO UPDATE SET body = excluded.body, ended_at = excluded.ended_at, expires_at = excluded.expires_at",
		);
		this.#endOf = db.prepare("SELECT host_id, asker_session, body, ended_at, expires_at FROM ends WHERE asker_id = ? AND expires_at > ?");
		this.#prune = db.prepare("DELETE FROM ends WHERE expires_at <= ?");
		this.#bound = db.prepare("DELETE FROM ends WHERE asker_id NOT IN (SELECT asker_id FROM ends ORDER BY ended_at DESC, rowid DESC LIMIT ?)");
		this.#metaGet = db.prepare("SELECT value FROM meta WHERE key = ?");
		this.#metaSet = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
		this.#metaDiscard = db.prepare("DELETE FROM meta WHERE key = ?");
		this.meta = {
			get: (key) => {
				const row = this.#metaGet.get(key);
				return row ? text(row.value) : undefined;
			},
			set: (key, value) => void this.#metaSet.run(key, value),
			delete: (key) => void this.#metaDiscard.run(key),
		};
	}

	/** Writes an open request (again, as it is now). */
	put(row: StoredRequest, now = Date.now()): void {
		this.#put.run(row.hostId, row.askerId, row.askerSession, row.record, now);
	}

	/** Every open request written down, in the order first written. */
	openRequests(): StoredRequest[] {
		return this.#all.all().map(requestRow);
	}

	/** Whether a request its asker calls `askerId` is open at a host (written down, not ended). */
	isOpen(askerId: string): boolean {
		return this.#byAsker.get(askerId) !== undefined;
	}

	/** The open request the asker session `askerSession` asked as `askerId`, if one is written down. */
	openOf(askerId: string, askerSession: string): StoredRequest | undefined {
		return this.#byAsker
			.all(askerId)
			.map(requestRow)
			.find((row) => row.askerSession === askerSession);
	}

	/** The request ended: its open row goes and its end is written, in one transaction; expired ends are pruned, and the history kept bounded. */
	ended(end: StoredEnd): void {
		const { askerId, hostId, askerSession, endedAt, expiresAt, ...rest } = end;
		this.#transaction(() => {
			this.#discard.run(hostId);
			this.#endPut.run(askerId, hostId, askerSession, JSON.stringify(rest), endedAt, expiresAt);
			this.#prune.run(endedAt);
			this.#bound.run(MAX_ENDS);
		});
	}

	/** An open request leaves without an end to keep (nothing waits on it anywhere). */
	discard(hostId: string): void {
		this.#discard.run(hostId);
	}

	/** The end of the request its asker calls `askerId`, while it is kept. */
	endOf(askerId: string, now = Date.now()): StoredEnd | undefined {
		const row = this.#endOf.get(askerId, now);
		if (!row) return undefined;
		try {
			const body = JSON.parse(text(row.body)) as Omit<StoredEnd, "askerId" | "hostId" | "askerSession" | "endedAt" | "expiresAt">;
			return { ...body, askerId, hostId: text(row.host_id), askerSession: text(row.asker_session), endedAt: num(row.ended_at), expiresAt: num(row.expires_at) };
		} catch {
			return undefined;
		}
	}

	/** Ends kept, newest first (the `/checkpoints` history). */
	history(limit = 20): StoredEnd[] {
		const rows = this.#db.prepare("SELECT asker_id, body, ended_at, expires_at FROM ends ORDER BY ended_at DESC, rowid DESC LIMIT ?").all(limit);
		const ends: StoredEnd[] = [];
		for (const row of rows) {
			try {
				ends.push({
					...JSON.parse(text(row.body)),
					askerId: text(row.asker_id),
					hostId: "",
					askerSession: "",
					endedAt: num(row.ended_at),
					expiresAt: num(row.expires_at),
				});
			} catch {
				// A row that does not read is skipped; it is pruned at its expiry.
			}
		}
		return ends;
	}

	/**
	 * A secret of this store for `purpose` and request `id`: the same in every process that opens the
	 * store, so a link or token made from it before a restart works after it (one-tap URLs, a mail's
	 * token), and unguessable without the store's seed (32 random bytes written once in `meta`).
	 */
	secretFor(purpose: string, id: string): string {
		// Read once: the page mints a few secrets per card, and each would otherwise be a write.
		if (this.#seed === undefined) {
			this.#db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(SEED_KEY, randomBytes(32).toString("base64url"));
			this.#seed = this.meta.get(SEED_KEY)!;
		}
		return createHmac("sha256", this.#seed).update(`${purpose}\n${id}`).digest("base64url");
	}

	close(): void {
		if (this.#closed) return;
		this.#closed = true;
		this.#db.close();
	}

	#transaction(work: () => void): void {
		this.#db.exec("BEGIN IMMEDIATE");
		try {
			work();
			this.#db.exec("COMMIT");
		} catch (error) {
			this.#db.exec("ROLLBACK");
			throw error;
		}
	}
}

const requestRow = (row: Record<string, SqliteValue>): StoredRequest => ({
	hostId: text(row.host_id),
	askerId: text(row.asker_id),
	askerSession: text(row.asker_session),
	record: text(row.record),
});

/**
 * Makes the database the store's, or throws StoreRefused: a file SQLite cannot read, one of another
 * program (another application id, or tables of its own), or one of a newer schema is never written to.
 */
function claim(db: SqliteDatabase): void {
	let appId: number;
	let version: number;
	let tables: string[];
	try {
		appId = num(db.prepare("PRAGMA application_id").get()?.application_id);
		version = num(db.prepare("PRAGMA user_version").get()?.user_version);
		tables = db
			.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
			.all()
			.map((row) => text(row.name));
	} catch (error) {
		throw new StoreRefused(`it is not a database this host can read (${error instanceof Error ? error.message : String(error)})`);
	}
	const fresh = appId === 0 && tables.length === 0;
	if (!fresh && appId !== STORE_APPLICATION_ID)
		throw new StoreRefused(`it is another program's database (application id ${appId}${tables.length > 0 ? `, tables ${tables.slice(0, 5).join(", ")}` : ""})`);
	if (version > STORE_SCHEMA_VERSION) throw new StoreRefused(`it was written by a newer release (schema ${version}; this one reads ${STORE_SCHEMA_VERSION})`);
	try {
		db.exec("PRAGMA journal_mode = WAL");
		db.exec("PRAGMA synchronous = NORMAL");
		db.exec("PRAGMA busy_timeout = 2000");
		db.exec(`PRAGMA application_id = ${STORE_APPLICATION_ID}`);
		db.exec(SCHEMA);
		db.exec(`PRAGMA user_version = ${STORE_SCHEMA_VERSION}`);
	} catch (error) {
		throw new StoreRefused(`its schema cannot be made (${error instanceof Error ? error.message : String(error)})`);
	}
}
