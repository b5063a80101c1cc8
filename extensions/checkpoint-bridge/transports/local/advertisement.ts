/**
 * Where the next host can be found: beside the environment variable it sets for what it spawns, a
 * host advertises its local endpoint for its working directory in a private place of the user's
 * (a 0700 directory under $XDG_RUNTIME_DIR when that is private to the user, else under the temp
 * dir, unless another user took that name there first: then under the user's own state directory,
 * which nobody else can create), one 0600 file per working directory naming the latest host, and
 * one per host beside it, so that when the latest quits the directory's advertisement falls back to
 * a host still running. A process of the same user in the same directory finds the host there even
 * when nothing passed it the variable (an asker whose host restarted, a tool outside pi). An
 * advertisement is only a pointer: the endpoint it names is checked and must prove itself as ever
 * (connect.ts). One whose directory or file is not this user's alone is ignored; one whose host is
 * dead is removed, with the endpoint directory that host left behind.
 */
import { createHash } from "node:crypto";
import {
	chmodSync,
	closeSync,
	constants,
	promises as fs,
	fstatSync,
	lstatSync,
	openSync,
	readdirSync,
	readSync,
	realpathSync,
	renameSync,
	rmSync,
	type Stats,
	statSync,
	writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { nanoid } from "nanoid";
import type { Checked } from "../../model/check.ts";
import { addressOf, type EndpointAddress, endpointFromEnv, SOCKET_NAME } from "./address.ts";
import { endpointParentSync, privateDirProblem } from "./private-files.ts";

/** The advertisement's format version, bumped on an incompatible change. */
const ADVERT_VERSION = 1;
/** Longest advertisement read; one is about 300 bytes. */
const MAX_ADVERT_BYTES = 8 * 1024;
/** Most advertisements of hosts still running read for one directory when its latest is gone. @default 32 */
const MAX_STANDBY_READ = 32;
/** Prefix of the endpoint directories a host makes (server.ts), the only ones a stale advertisement's clean-up removes. */
export const ENDPOINT_DIR_PREFIX = "checkpoint-bridge-";

/** What an advertisement file holds. */
interface Advert {
	v: number;
	/** The endpoint's socket; its token is the file `token` beside it. */
	endpoint: string;
	/** The host process, to tell a dead host's advertisement from a live one. */
	pid: number;
	/** The working directory it is for (real path), so a hash collision is never taken for a match. */
	cwd: string;
	/** Epoch ms at which the host advertised. */
	at: number;
	/** Set by a host with no screen (ADR-0035): a host with one in the same directory goes first. */
	screenless?: true;
}

/** Where to look: the environment and the working directory. @default process.env, process.cwd() */
export interface FindOptions {
	env?: NodeJS.ProcessEnv;
	cwd?: string;
}

const uid = () => (typeof process.getuid === "function" ? process.getuid() : undefined);

/** The private directory of advertisements under `parent`: one per user. */
export function advertDir(parent: string): string {
	return path.join(parent, `checkpoint-bridge-hosts-${uid() ?? "user"}`);
}

/**
 * The user's own state directory for advertisements ($XDG_STATE_HOME, else ~/.local/state, the home
 * from the password database so a changed $HOME does not part two processes of one user): a place
 * no other user can create first, used when the name in the shared temp dir is taken.
 */
function stateAdvertDir(env: NodeJS.ProcessEnv): string {
	const state = env.XDG_STATE_HOME?.trim();
	let home: string;
	try {
		home = os.userInfo().homedir || os.homedir();
	} catch {
		home = os.homedir();
	}
	return path.join(state && path.isAbsolute(state) ? state : path.join(home, ".local", "state"), "checkpoint-bridge", "hosts");
}

/** Why the directory at `dir` is no private directory of this user, or "missing" when nothing is there. */
function dirProblem(dir: string): string | undefined {
	try {
		return privateDirProblem(dir, lstatSync(dir));
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : `${dir}: ${(error as NodeJS.ErrnoException).code}`;
	}
}

/**
 * Where advertisements are for this user: under $XDG_RUNTIME_DIR when that is private (nobody else
 * can put anything there); in the shared temp dir, the name there unless it is taken by anything
 * but this user's private directory (another user can create it first, in a 1777 directory), then
 * the user's state directory. Hosts and askers decide alike, so they meet.
 */
export function advertisementsDir(env: NodeJS.ProcessEnv = process.env): { dir: string; shared: boolean } {
	const parent = endpointParentSync(env);
	const dir = advertDir(parent);
	if (parent !== os.tmpdir()) return { dir, shared: false };
	const problem = dirProblem(dir);
	return problem === undefined || problem === "missing" ? { dir, shared: true } : { dir: stateAdvertDir(env), shared: false };
}

/** The working directory as one path, links resolved, so two spellings of one directory meet. */
function realCwd(cwd: string): string {
	try {
		return realpathSync(cwd);
	} catch {
		return path.resolve(cwd);
	}
}

/** A hash of the working directory's real path: the name its advertisements start with. */
const cwdKey = (cwd: string) => createHash("sha256").update(realCwd(cwd)).digest("base64url").slice(0, 32);

/** The advertisement file for `cwd` in `dir`, naming the latest host: a hash of the directory's real path. */
export function advertPath(dir: string, cwd: string): string {
	return path.join(dir, `${cwdKey(cwd)}.json`);
}

/** The advertisement of one host (`pid`, and an id of its endpoint's) for `cwd` in `dir`, kept while it runs: the fallback when a later host quits. */
function standbyPath(dir: string, cwd: string, pid: number): string {
	return path.join(dir, `${cwdKey(cwd)}.${pid}-${nanoid(8)}.json`);
}
/** A standby advertisement's name after the directory's hash. */
const STANDBY_NAME = /^\d+-[\w-]{8}\.json$/;

/** Whether process `pid` is alive (a process of another user counts as alive: it is not ours to judge). */
function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
}

/** Whether `stat` is a regular file of this user that nobody else can read or write. */
function privateFileProblem(file: string, stat: Stats): string | undefined {
	if (!stat.isFile()) return `${file} is not a regular file`;
	const own = uid();
	if (own !== undefined && stat.uid !== own) return `${file} belongs to another user (uid ${stat.uid}, not ${own})`;
	if ((stat.mode & 0o777) !== 0o600) return `${file} has mode ${(stat.mode & 0o777).toString(8).padStart(3, "0")}, not 0600`;
	return undefined;
}

/** Reads the advertisement at `file` without following a link, or says why it is not to be trusted (`missing`: there is none). */
function readAdvert(file: string): Checked<{ advert: Advert }, { problem: string; missing: boolean }> {
	let fd: number;
	try {
		fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		return { ok: false, problem: `${file}: ${code}`, missing: code === "ENOENT" };
	}
	try {
		const problem = privateFileProblem(file, fstatSync(fd));
		if (problem) return { ok: false, problem, missing: false };
		const buffer = Buffer.alloc(MAX_ADVERT_BYTES + 1);
		const bytes = readSync(fd, buffer, 0, buffer.length, 0);
		if (bytes > MAX_ADVERT_BYTES) return { ok: false, problem: `${file} is too long`, missing: false };
		const raw = JSON.parse(buffer.toString("utf8", 0, bytes)) as Partial<Advert>;
		if (
			raw?.v !== ADVERT_VERSION ||
			typeof raw.endpoint !== "string" ||
			!path.isAbsolute(raw.endpoint) ||
			typeof raw.cwd !== "string" ||
			!Number.isSafeInteger(raw.pid) ||
			(raw.pid as number) <= 0
		)
			return { ok: false, problem: `${file} is not an advertisement of this version`, missing: false };
		return { ok: true, advert: raw as Advert };
	} catch {
		return { ok: false, problem: `${file} is not an advertisement`, missing: false };
	} finally {
		closeSync(fd);
	}
}

/**
 * Removes the endpoint directory a dead host left behind (a SIGKILLed host cannot clean up): only a
 * directory named as server.ts names them, private to this user, holding nothing but a socket and a token.
 */
function removeLeftover(socketPath: string): void {
	const dir = path.dirname(socketPath);
	try {
		if (path.basename(socketPath) !== SOCKET_NAME || !path.basename(dir).startsWith(ENDPOINT_DIR_PREFIX)) return;
		if (privateDirProblem(dir, lstatSync(dir)) !== undefined) return;
		if (!readdirSync(dir).every((name) => name === SOCKET_NAME || name === "token")) return;
		rmSync(dir, { recursive: true, force: true });
	} catch {
		// Gone already, or not ours to remove.
	}
}

/** The advertisement at `file` for `cwd` when it is trusted and its host alive; a dead host's is removed, with its leftover. */
function liveAdvert(file: string, cwd: string): Advert | undefined {
	const read = readAdvert(file);
	if (!read.ok) return undefined;
	const { advert } = read;
	if (advert.cwd !== cwd) return undefined;
	if (alive(advert.pid)) return advert;
	rmSync(file, { force: true });
	removeLeftover(advert.endpoint);
	return undefined;
}

/** Whether `a` goes before `b` as the directory's host: one with a screen first (ADR-0035), then the newest. */
const before = (a: Advert, b: Advert) => (a.screenless === b.screenless ? a.at > b.at : !a.screenless);

/** The advertisement of a host still running for `cwd` in `dir`, other than the latest's file (which is gone or dead): one with a screen first, then the newest. */
function standbyAdvert(dir: string, cwd: string): Advert | undefined {
	const prefix = `${cwdKey(cwd)}.`;
	let names: string[];
	try {
		names = readdirSync(dir).filter((name) => name.startsWith(prefix) && STANDBY_NAME.test(name.slice(prefix.length)));
	} catch {
		return undefined;
	}
	let newest: Advert | undefined;
	for (const name of names.slice(0, MAX_STANDBY_READ)) {
		const advert = liveAdvert(path.join(dir, name), cwd);
		if (advert && (newest === undefined || before(advert, newest))) newest = advert;
	}
	return newest;
}

/** The advertised endpoint for `cwd`, when its directory and file are this user's alone and its host is alive: the latest host's, else the newest still running. */
function advertisedEndpoint(cwd: string, env: NodeJS.ProcessEnv): EndpointAddress | undefined {
	const { dir } = advertisementsDir(env);
	if (dirProblem(dir) !== undefined) return undefined;
	const real = realCwd(cwd);
	const advert = liveAdvert(advertPath(dir, real), real) ?? standbyAdvert(dir, real);
	return advert ? addressOf(path.normalize(advert.endpoint)) : undefined;
}

/** Whether a socket is there at `socketPath` (the variable alone does not say a host listens). */
function socketThere(socketPath: string): boolean {
	try {
		return statSync(socketPath).isSocket();
	} catch {
		return false;
	}
}

/**
 * The host a process of this user in `cwd` can reach: the endpoint in CHECKPOINT_BRIDGE_ENDPOINT
 * when its socket is there, else the one advertised for the working directory, else the variable's
 * (gone: asking there gives `no-host`, naming it), else undefined. With `gone` (an endpoint whose
 * host was just lost, while waiting for the next one) the advertisement comes first, since a killed
 * host leaves its socket file behind. Synchronous and cheap (a stat and a small read): read it per
 * call, since a host may come and go. The endpoint found must still prove itself before anything is
 * asked there. @public
 */
export function findHostEndpoint(options: FindOptions & { gone?: EndpointAddress } = {}): EndpointAddress | undefined {
	const env = options.env ?? process.env;
	const fromEnv = endpointFromEnv(env);
	const envFirst = fromEnv && fromEnv.socketPath !== options.gone?.socketPath && socketThere(fromEnv.socketPath);
	if (envFirst) return fromEnv;
	const advertised = advertisedEndpoint(options.cwd ?? process.cwd(), env);
	return advertised && advertised.socketPath !== options.gone?.socketPath ? advertised : (fromEnv ?? advertised);
}

/** Options of advertiseEndpoint. */
export interface AdvertiseOptions {
	/** The working directory to advertise for. @default process.cwd() */
	cwd?: string;
	/** Where $XDG_RUNTIME_DIR is read. @default process.env */
	env?: NodeJS.ProcessEnv;
	/** The host's pid, written for staleness checks. @default process.pid */
	pid?: number;
	/**
	 * A host with no screen (ADR-0035): it takes the directory's advertisement only when no host with a
	 * screen holds it, and stands by otherwise, so a terminal's host goes first and, when it quits, the
	 * advertisement falls back to this one. @default false
	 */
	screenless?: boolean;
}

/** An advertisement in place; `withdraw` removes it unless a newer host has replaced it since. */
export interface Advertisement {
	/** The advertisement file. */
	readonly file: string;
	/** Removes the file if it still names this endpoint. */
	withdraw(): void;
}

/** Creates `dir` 0700 (its parents as needed when `parents`), or checks that an existing one is private to this user. */
async function privateDir(dir: string, parents: boolean): Promise<string | undefined> {
	try {
		await fs.mkdir(dir, { mode: 0o700, recursive: parents });
		await fs.chmod(dir, 0o700);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
	}
	return privateDirProblem(dir, await fs.lstat(dir));
}

/** The advertisements' directory, created or checked private; in the shared temp dir, the state directory when the name there is another's. */
async function preparedDir(env: NodeJS.ProcessEnv): Promise<string> {
	const { dir, shared } = advertisementsDir(env);
	const problem = await privateDir(dir, !shared && dir === stateAdvertDir(env));
	if (problem === undefined) return dir;
	// Taken between the look and the mkdir: askers will look where this host goes now.
	if (shared) {
		const state = stateAdvertDir(env);
		const stateProblem = await privateDir(state, true);
		if (stateProblem === undefined) return state;
		throw new Error(`Cannot advertise the endpoint: ${stateProblem}.`);
	}
	throw new Error(`Cannot advertise the endpoint: ${problem}.`);
}

/** Writes `advert` to `file` atomically, 0600. */
async function writeAdvert(file: string, advert: Advert): Promise<void> {
	const staging = `${file}.${nanoid(8)}.tmp`;
	await fs.writeFile(staging, JSON.stringify(advert), { mode: 0o600, flag: "wx" });
	await fs.chmod(staging, 0o600);
	await fs.rename(staging, file);
}

/** writeAdvert, synchronously: a host that quits may exit right after. */
function writeAdvertSync(file: string, advert: Advert): void {
	const staging = `${file}.${nanoid(8)}.tmp`;
	writeFileSync(staging, JSON.stringify(advert), { mode: 0o600, flag: "wx" });
	chmodSync(staging, 0o600);
	renameSync(staging, file);
}

/**
 * Advertises the endpoint at `socketPath` for the working directory: written atomically as a 0600
 * file, replacing any earlier host's (a dead host's left-over endpoint directory is removed with
 * it). Rejects when the private place is not this user's alone; the environment variable works
 * without it. @public
 */
export async function advertiseEndpoint(socketPath: string, options: AdvertiseOptions = {}): Promise<Advertisement> {
	const env = options.env ?? process.env;
	const cwd = realCwd(options.cwd ?? process.cwd());
	const dir = await preparedDir(env);
	const file = advertPath(dir, cwd);
	const earlier = readAdvert(file);
	if (earlier.ok && earlier.advert.endpoint !== socketPath && !alive(earlier.advert.pid)) removeLeftover(earlier.advert.endpoint);
	// Reading the hosts still advertised removes those that died (a SIGKILLed host leaves its file behind).
	standbyAdvert(dir, cwd);
	const advert: Advert = {
		v: ADVERT_VERSION,
		endpoint: socketPath,
		pid: options.pid ?? process.pid,
		cwd,
		at: Date.now(),
		...(options.screenless ? { screenless: true } : {}),
	};
	const standby = standbyPath(dir, cwd, advert.pid);
	await writeAdvert(standby, advert);
	// A host with no screen stands by while a live host with a screen holds the directory.
	const standsBy = advert.screenless && earlier.ok && earlier.advert.cwd === cwd && !earlier.advert.screenless && alive(earlier.advert.pid);
	if (!standsBy) await writeAdvert(file, advert);
	let withdrawn = false;
	return {
		file,
		withdraw() {
			if (withdrawn) return;
			withdrawn = true;
			const own = readAdvert(standby);
			if (own.ok && own.advert.endpoint === socketPath) rmSync(standby, { force: true });
			const now = readAdvert(file);
			if (!now.ok || now.advert.endpoint !== socketPath || now.advert.pid !== advert.pid) return;
			// The latest host quits: the directory's advertisement falls back to the newest host still running.
			const next = standbyAdvert(dir, cwd);
			try {
				if (next) writeAdvertSync(file, next);
				else rmSync(file, { force: true });
			} catch {
				rmSync(file, { force: true });
			}
		},
	};
}
