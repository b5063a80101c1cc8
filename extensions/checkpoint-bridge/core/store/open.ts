/**
 * Where the store lives and how it is opened: one SQLite file per host directory (a hash of the
 * directory's real path) in a directory private to the user (0700), `$CHECKPOINT_BRIDGE_STATE_DIR`,
 * else `$XDG_STATE_HOME/checkpoint-bridge`, else `~/.local/state/checkpoint-bridge`. One store per
 * process, shared by every copy of the extension (a process slot). Anything in the way (no
 * `node:sqlite` in this Node, a directory not private, a file that is not the store's) is refused with
 * a warning that says what, and the host runs on in memory.
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { processSlot } from "../shared/process-slot.ts";
import { RequestStore, type SqliteDatabase, StoreRefused } from "./store.ts";

/** The variable that moves the store's directory. */
export const ENV_STATE_DIR = "CHECKPOINT_BRIDGE_STATE_DIR";

/** A store opened, or why there is none (the host runs in memory). */
export type StoreOutcome = { ok: true; store: RequestStore } | { ok: false; warning: string };

/** The directory the store files go in. */
export function storeDir(env: NodeJS.ProcessEnv = process.env): string {
	const moved = env[ENV_STATE_DIR]?.trim();
	if (moved) return path.resolve(moved);
	const state = env.XDG_STATE_HOME?.trim();
	const base = state && path.isAbsolute(state) ? state : path.join(env.HOME?.trim() || os.homedir(), ".local", "state");
	return path.join(base, "checkpoint-bridge");
}

const realDir = (cwd: string) => {
	try {
		return realpathSync(cwd);
	} catch {
		return path.resolve(cwd);
	}
};

/** The store file of host directory `cwd`. */
export function storeFile(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
	const key = createHash("sha256").update(realDir(cwd)).digest("base64url").slice(0, 32);
	return path.join(storeDir(env), `${key}.sqlite`);
}

/** What keeps `dir` from being this user's private directory; made (0700) when it is not there. */
function privateDirProblem(dir: string): string | undefined {
	try {
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		const stat = lstatSync(dir);
		if (!stat.isDirectory()) return `${dir} is not a directory`;
		const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
		if (uid !== undefined && stat.uid !== uid) return `${dir} belongs to another user (uid ${stat.uid})`;
		if ((stat.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); it must be 0700`;
		return undefined;
	} catch (error) {
		return `${dir}: ${error instanceof Error ? error.message : String(error)}`;
	}
}

/** What keeps `file` from being opened as the store: a link, not a regular file, another user's. */
function fileProblem(file: string): string | undefined {
	let stat: ReturnType<typeof lstatSync>;
	try {
		stat = lstatSync(file);
	} catch {
		return undefined; // not there yet: SQLite makes it
	}
	if (stat.isSymbolicLink()) return `${file} is a symbolic link`;
	if (!stat.isFile()) return `${file} is not a regular file`;
	const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
	return uid !== undefined && stat.uid !== uid ? `${file} belongs to another user (uid ${stat.uid})` : undefined;
}

type Sqlite = { DatabaseSync: new (file: string) => SqliteDatabase };

/**
 * `node:sqlite`, or undefined in a Node without it. Node 22 says once, at its first load, that SQLite
 * is experimental: that one warning is kept from the host's terminal (ADR-0033); every other warning
 * passes as it would.
 */
function loadSqlite(): Sqlite | undefined {
	const emit = process.emitWarning;
	process.emitWarning = function filtered(this: unknown, warning: string | Error, ...rest: unknown[]) {
		const message = typeof warning === "string" ? warning : warning?.message;
		if (typeof message === "string" && message.startsWith("SQLite is an experimental feature")) return;
		return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
	} as typeof process.emitWarning;
	try {
		return process.getBuiltinModule?.("node:sqlite") as Sqlite | undefined;
	} catch {
		return undefined;
	} finally {
		process.emitWarning = emit;
	}
}

/** Opens the store in `file` (":memory:" for a test's), or says why not. Never throws. */
export function openStore(file: string): StoreOutcome {
	const refuse = (why: string): StoreOutcome => ({
		ok: false,
		warning: `checkpoint-bridge: questions of other processes are not written down (${why}); they live only as long as this host does.`,
	});
	const sqlite = loadSqlite();
	if (!sqlite) return refuse(`this Node (${process.version}) has no node:sqlite; Node 22.19 or later has`);
	if (file !== ":memory:") {
		const problem = privateDirProblem(path.dirname(file)) ?? fileProblem(file);
		if (problem) return refuse(problem);
	}
	let db: SqliteDatabase | undefined;
	try {
		db = new sqlite.DatabaseSync(file);
		return { ok: true, store: new RequestStore(db, file) };
	} catch (error) {
		try {
			db?.close();
		} catch {
			// Closing what could not be read changes nothing.
		}
		return refuse(
			error instanceof StoreRefused ? `${file} is refused: ${error.message}` : `${file}: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
}

/** Registry key of the process's stores, by file: one per process, whatever copies of the extension load. */
const STORES_KEY = Symbol.for("checkpoint-bridge.store");

interface Stores {
	byFile: Map<string, StoreOutcome>;
	/** The store the host of this process writes to, once it opened one. */
	current?: RequestStore;
}

const stores = () => processSlot(globalThis, STORES_KEY, (): Stores => ({ byFile: new Map() }));

/** The store of host directory `cwd` for this process: opened once, then the same (or the same refusal). It becomes the process's current store. */
export function processStore(cwd: string, env: NodeJS.ProcessEnv = process.env): StoreOutcome {
	const all = stores();
	const file = storeFile(cwd, env);
	let outcome = all.byFile.get(file);
	if (!outcome) {
		outcome = openStore(file);
		all.byFile.set(file, outcome);
	}
	if (outcome.ok) all.current = outcome.store;
	return outcome;
}

/** The store the host of this process writes to; undefined while none is open (or it runs in memory). */
export function currentStore(): RequestStore | undefined {
	return stores().current;
}

/** Makes `store` the process's current one (a host given a store of its own: tests, a host without a terminal); undefined: none. */
export function useStore(store: RequestStore | undefined): void {
	stores().current = store;
}
