/**
 * The endpoint's files and the checks that they are this user's alone. The host serves from a
 * directory nobody else can enter; a client trusts an endpoint only when its directory, socket
 * and token file all belong to the client's own user and nobody else can read or replace them,
 * and reads the token without following a link. An endpoint that fails a check is treated as
 * gone: whoever recreated it (another user, after the host quit) is never asked anything.
 */

import { constants, promises as fs, lstatSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Checked } from "../../model/check.ts";

/** Longest token file read; tokens are 43 characters. */
const MAX_TOKEN_BYTES = 1024;

/** This process's uid, or undefined where there is none (not POSIX): then ownership is not checked. */
function ownUid(): number | undefined {
	return typeof process.getuid === "function" ? process.getuid() : undefined;
}

const modeOf = (stat: Stats) => (stat.mode & 0o777).toString(8).padStart(3, "0");

/** Who owns `stat`, if not this process's user. */
function foreignOwnerProblem(what: string, stat: Stats): string | undefined {
	const uid = ownUid();
	if (uid !== undefined && stat.uid !== uid) return `${what} belongs to another user (uid ${stat.uid}, not ${uid})`;
	return undefined;
}

/** What keeps `stat` (from lstat) from being a private directory of this user: not a directory (a link is not), another owner, or open to others. */
export function privateDirProblem(dir: string, stat: Stats): string | undefined {
	if (!stat.isDirectory()) return `${dir} is not a directory`;
	return foreignOwnerProblem(dir, stat) ?? ((stat.mode & 0o077) !== 0 ? `${dir} is open to other users (mode ${modeOf(stat)}); it must be 0700` : undefined);
}

/**
 * Where a fresh endpoint directory goes: `$XDG_RUNTIME_DIR` when it is set, absolute, and a
 * directory private to this user (the system makes it so, and cleans it at logout); otherwise the
 * temp dir, where the endpoint's own 0700 directory is the barrier.
 */
export async function endpointParent(env: NodeJS.ProcessEnv = process.env): Promise<string> {
	return endpointParentSync(env);
}

/** endpointParent, synchronously (one lstat): for finding a host at a call. */
export function endpointParentSync(env: NodeJS.ProcessEnv = process.env): string {
	const runtime = env.XDG_RUNTIME_DIR?.trim();
	if (runtime && path.isAbsolute(runtime)) {
		let stat: Stats | undefined;
		try {
			stat = lstatSync(runtime);
		} catch {
			stat = undefined;
		}
		if (stat && privateDirProblem(runtime, stat) === undefined) return runtime;
	}
	return os.tmpdir();
}

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));

/** Why an endpoint is not to be trusted; `missing` when it is simply not there (the host is gone). */
export interface Distrust {
	problem: string;
	missing: boolean;
}

/** What keeps the endpoint's directory and socket from being trusted (this user's, the directory closed to others, the socket a socket and not a link); undefined when nothing does. */
export async function endpointFilesProblem(socketPath: string): Promise<Distrust | undefined> {
	const dir = path.dirname(socketPath);
	try {
		const problem = privateDirProblem(`its directory ${dir}`, await fs.lstat(dir));
		if (problem) return { problem, missing: false };
	} catch (error) {
		return { problem: `its directory: ${errnoOf(error)}`, missing: true };
	}
	try {
		const stat = await fs.lstat(socketPath);
		if (!stat.isSocket()) return { problem: `${socketPath} is not a socket`, missing: false };
		const problem = foreignOwnerProblem(`its socket ${socketPath}`, stat);
		if (problem) return { problem, missing: false };
	} catch (error) {
		return { problem: `its socket: ${errnoOf(error)}`, missing: true };
	}
	return undefined;
}

/**
 * Reads the token without following a link (O_NOFOLLOW) or blocking on a pipe, then checks the
 * file it opened, not the path: a regular file of this user, mode 0600.
 */
export async function readPrivateToken(tokenPath: string): Promise<Checked<{ token: string }, Distrust>> {
	let file: fs.FileHandle;
	try {
		file = await fs.open(tokenPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		const code = errnoOf(error);
		// Linux says ELOOP for a link under O_NOFOLLOW, some systems EMLINK.
		if (code === "ELOOP" || code === "EMLINK") return { ok: false, problem: `its token file ${tokenPath} is a symbolic link`, missing: false };
		return { ok: false, problem: `its token file: ${code}`, missing: code === "ENOENT" };
	}
	try {
		const stat = await file.stat();
		if (!stat.isFile()) return { ok: false, problem: `its token file ${tokenPath} is not a regular file`, missing: false };
		const problem =
			foreignOwnerProblem(`its token file ${tokenPath}`, stat) ??
			((stat.mode & 0o777) !== 0o600 ? `its token file ${tokenPath} has mode ${modeOf(stat)}, not 0600` : undefined);
		if (problem) return { ok: false, problem, missing: false };
		const buffer = Buffer.alloc(MAX_TOKEN_BYTES + 1);
		const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
		const token = buffer.toString("utf8", 0, bytesRead).trim();
		if (bytesRead > MAX_TOKEN_BYTES || token === "") return { ok: false, problem: `its token file ${tokenPath} does not hold a token`, missing: false };
		return { ok: true, token };
	} finally {
		await file.close();
	}
}
