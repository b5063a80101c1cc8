/**
 * `checkpoint-bridge-host` (bin/checkpoint-bridge-host.mjs): a host with no screen for one working
 * directory (ADR-0035). It holds the host role in a process of its own, serves the local endpoint
 * (advertised for the directory as a pi host advertises it, standing by while a host with a screen
 * holds the directory) and, with CHECKPOINT_BRIDGE_NATS set, the room; nothing is shown here, so every
 * request waits for the places that answer from outside: the page (and its notify command and one-tap
 * links), mail. Askers do not change. Each settled request is written to an audit trail of its own
 * (there is no pi session to append it to) and told on stdout, with where its answers came from.
 */
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { HostUI } from "./core/answering/surface.ts";
import { requestBook } from "./core/host/book.ts";
import { claimHostRole, type HostRole, type SettledRecord } from "./core/host/host-role.ts";
import { readLateConfig } from "./core/shared/late-config.ts";
import { OBSERVER_EVENTS, type QueuedEvent } from "./core/shared/observers.ts";
import { type SharedHandle, sharedHandle } from "./core/shared/shared-handle.ts";
import { processStore, storeDir } from "./core/store/open.ts";
import { answeredWhere } from "./model/answer-places.ts";
import { mailOnClaim, mailOnRelease } from "./surfaces/mail/command.ts";
import { readMailConfig } from "./surfaces/mail/config.ts";
import { closeRunningWebPage, webPageLine, webPageOnClaim, webPageOnRelease } from "./surfaces/web/command.ts";
import { offerMcpRoute } from "./surfaces/web/http/mcp-route.ts";
import { closeProcessEndpoint, ensureProcessEndpoint } from "./transports/local/index.ts";
import { readNatsConfig } from "./transports/nats/config.ts";

/** The name it speaks under. */
const NAME = "checkpoint-bridge-host";

/** The variables that give the human a way to answer; with none set there is nobody to reach. */
export const SURFACE_VARIABLES = ["CHECKPOINT_BRIDGE_WEB", "CHECKPOINT_BRIDGE_MAIL_TO"] as const;

/** The command line's usage. */
export const USAGE = `usage: ${NAME} [--cwd <directory>]  (the directory it is the host of; default: the working directory)`;

/** What it says, and exits 2 with, when no surface is set. */
export function noSurfaceText(env: NodeJS.ProcessEnv): string {
	const alone = ["CHECKPOINT_BRIDGE_NOTIFY_COMMAND", "CHECKPOINT_BRIDGE_NTFY_URL"].filter((name) => env[name]?.trim());
	const notify =
		alone.length > 0 ? ` ${alone.join(" and ")} ${alone.length > 1 ? "are" : "is"} set, but notifications need the page: set CHECKPOINT_BRIDGE_WEB too.` : "";
	return (
		`${NAME}: no way to reach the human is set, so nobody could answer and askers are better told no-host at once. ` +
		`Set CHECKPOINT_BRIDGE_WEB (the page, <host>:<port>; with CHECKPOINT_BRIDGE_NTFY_URL or CHECKPOINT_BRIDGE_NOTIFY_COMMAND for notifications and one-tap answers) ` +
		`or CHECKPOINT_BRIDGE_MAIL_TO (mail, with CHECKPOINT_BRIDGE_MAIL_SMTP and CHECKPOINT_BRIDGE_MAIL_IMAP).${notify}`
	);
}

/** The surfaces the environment asks for, by variable. */
export function wantedSurfaces(env: NodeJS.ProcessEnv): string[] {
	return SURFACE_VARIABLES.filter((name) => Boolean(env[name]?.trim()));
}

/** The directory of `--cwd`, else the process's; the reason when the command line is wrong. */
export function hostDirectory(argv: string[], cwd = process.cwd()): { ok: true; dir: string } | { ok: false; reason: string } {
	try {
		const { values } = parseArgs({ args: argv, options: { cwd: { type: "string" } }, strict: true, allowPositionals: false });
		const dir = path.resolve(cwd, values.cwd ?? ".");
		if (!statSync(dir).isDirectory()) return { ok: false, reason: `${dir} is not a directory` };
		return { ok: true, dir: realpathSync(dir) };
	} catch (error) {
		return { ok: false, reason: error instanceof Error ? error.message : String(error) };
	}
}

/**
 * The audit trail's file for `dir`: one JSON line per settled request, beside the store in the state
 * directory (CHECKPOINT_BRIDGE_STATE_DIR, else $XDG_STATE_HOME/checkpoint-bridge, else
 * ~/.local/state/checkpoint-bridge), private to the user, named by a hash of the directory.
 */
export function auditFile(dir: string, env: NodeJS.ProcessEnv = process.env): string {
	const key = createHash("sha256").update(dir).digest("base64url").slice(0, 32);
	return path.join(storeDir(env), "audit", `${key}.jsonl`);
}

/** One line of stdout per settled request: who, how it ended, where its answers came from, and when. */
export function settledLine(record: SettledRecord): string {
	const when = new Date(record.settledAt).toISOString();
	const what = record.questions.map((q) => JSON.stringify(q.replace(/\s+/g, " ").slice(0, 80))).join(", ");
	const where = record.answers.length > 0 ? `, answered ${answeredWhere(record.answers)}` : "";
	return `${NAME}: [${record.asker}] ${record.status}${where} at ${when}: ${what}`;
}

/** The human's notices: info on stdout, the rest on stderr, one line each (a QR code keeps its lines). */
function printedUI(): HostUI {
	return {
		notify(message, type = "info") {
			(type === "info" ? process.stdout : process.stderr).write(`${message}\n`);
		},
	};
}

/** A running host with no screen. */
export interface HeadlessHost {
	/** The directory it is the host of. */
	readonly dir: string;
	/** Ends it: every connected asker told as at any host's end, the endpoint, the room, the page and mail closed; what is written down stays. */
	close(why: string): Promise<void>;
}

/** Serves the configured NATS room (or says why not); true when it serves it. */
async function serveRoom(handle: SharedHandle, ui: HostUI): Promise<boolean> {
	const nats = readNatsConfig();
	if (nats.kind === "off") return false;
	if (nats.kind === "error") return (ui.notify(`${NAME}: not serving over NATS: ${nats.error}`, "warning"), false);
	for (const warning of nats.warnings) ui.notify(`${NAME}: ${warning}`, "warning");
	try {
		const started = await (await import("./transports/nats/index.ts")).ensureProcessRoom(handle, nats.config);
		if (started.kind !== "serving") {
			ui.notify(`${NAME}: room "${started.room}" is already served by another host on NATS; this host does not serve it`, "warning");
			return false;
		}
		ui.notify(`${NAME}: serving room "${started.room}" on NATS`, "info");
		if (started.warning) ui.notify(`${NAME}: ${started.warning}`, "warning");
		return true;
	} catch (error) {
		ui.notify(`${NAME}: cannot serve room "${nats.config.room}" on NATS: ${error instanceof Error ? error.message : String(error)}`, "warning");
		return false;
	}
}

/** Writes each settled request to the audit trail and says it on stdout. */
function auditTrail(file: string, ui: HostUI): (record: SettledRecord) => void {
	let told = false;
	return (record) => {
		try {
			appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
		} catch (error) {
			if (!told) ui.notify(`${NAME}: cannot write the audit trail ${file}: ${error instanceof Error ? error.message : String(error)}`, "warning");
			told = true;
		}
		ui.notify(settledLine(record), "info");
	};
}

/**
 * Claims the host role of this process for `dir` with no screen and serves what a host serves.
 * Undefined (said on stderr) when none of the surfaces it is started with runs.
 */
export async function startHeadlessHost(dir: string, handle: SharedHandle = sharedHandle()): Promise<HeadlessHost | undefined> {
	const ui = printedUI();
	process.chdir(dir);
	const audit = auditFile(dir);
	mkdirSync(path.dirname(audit), { recursive: true, mode: 0o700 });
	const onQueued = (request: QueuedEvent) =>
		ui.notify(
			`${NAME}: [${request.asker.label}] asks: ${request.questions.map((q) => JSON.stringify(q.question.replace(/\s+/g, " ").slice(0, 80))).join(", ")}`,
		);
	handle.bus.on(OBSERVER_EVENTS.queued, onQueued);
	// The page serves MCP at /mcp as a pi host's does (ADR-0026).
	offerMcpRoute(() => import("./mcp.ts").then((mcp) => mcp.httpEndpoint(handle)));
	// The page and mail first: the requests a killed run wrote down are taken back at the claim, and each is notified again.
	await webPageOnClaim(handle, ui);
	await mailOnClaim(handle, ui);
	const role: HostRole | undefined = claimHostRole(handle, {
		ui,
		sessionId: `${NAME}-${process.pid}`,
		onSettled: auditTrail(audit, ui),
		book: requestBook(handle, readLateConfig()),
		// Written down (ADR-0033): what other processes asked survives a restart of this host, and their ends a later run's wait.
		store: processStore(dir),
	});
	if (!role) throw new Error("another host holds the role in this process");
	const endpoint = await ensureProcessEndpoint(handle, { screenless: true });
	if (endpoint.advertProblem) ui.notify(`${NAME}: askers in ${dir} cannot find this host: ${endpoint.advertProblem}`, "warning");
	const room = await serveRoom(handle, ui);
	let closed = false;
	const host: HeadlessHost = {
		dir,
		async close(why) {
			if (closed) return;
			closed = true;
			handle.bus.off(OBSERVER_EVENTS.queued, onQueued);
			const note = `The host ended (${NAME} ${why}) before the questions were answered.`;
			// As a quitting pi host does: NATS askers are let go first, so those with a grace wait for the next host.
			if (room) await (await import("./transports/nats/index.ts")).closeProcessRoom(note);
			await closeProcessEndpoint(note);
			await webPageOnRelease();
			await mailOnRelease(true);
			await closeRunningWebPage();
			// The role is not released: nothing open is ended here, so what other processes asked stays written
			// down (a wait: false question whose asker is gone), taken back by the next run as after a kill (ADR-0035).
		},
	};
	const reached = [(await webPageLine()) ? "on the page" : undefined, readMailConfig().kind === "ok" ? "by mail" : undefined].filter(Boolean);
	if (reached.length === 0) {
		await host.close("found no way to reach the human");
		process.stderr.write(`${NAME}: none of the ways to reach the human started (see above); stopping.\n`);
		return undefined;
	}
	ui.notify(
		`${NAME}: the host of ${dir} (pid ${process.pid}), with no screen: questions reach you ${reached.join(" and ")}${room ? ", askers on other machines through the NATS room" : ""}; audit trail: ${audit}`,
	);
	return host;
}

/** The bin's whole run: checks the command line and the surfaces, starts, and stops cleanly on SIGTERM, SIGINT or SIGHUP. */
export async function runHeadlessHost(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
	const where = hostDirectory(argv);
	if (!where.ok) {
		process.stderr.write(`${NAME}: ${where.reason}\n${USAGE}\n`);
		process.exit(2);
	}
	if (wantedSurfaces(env).length === 0) {
		process.stderr.write(`${noSurfaceText(env)}\n`);
		process.exit(2);
	}
	const host = await startHeadlessHost(where.dir);
	if (!host) process.exit(1);
	// The endpoint and the page keep no process alive (a pi host's end is pi's to decide): this one lives until a signal.
	const alive = setInterval(() => {}, 2 ** 31 - 1);
	for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
		process.on(signal, () => {
			clearInterval(alive);
			void host.close(`was stopped by ${signal}`).finally(() => {
				process.stdout.write(`${NAME}: stopped (${signal})\n`);
				process.exit(0);
			});
		});
}
