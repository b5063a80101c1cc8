/**
 * `CHECKPOINT_BRIDGE_NOTIFY_COMMAND`: a shell command the host runs for each relayed request it
 * queues, so a phone can be pinged (ntfy, notify-send, a chat bot) with that request's own link and
 * its one-tap answers; again as a reminder while it waits, and once more when it ends, so the
 * message can be updated or removed. What the asker wrote reaches the command only through its environment, never through the
 * command string. The command runs on its own: whatever it does (fail, hang, flood its output)
 * never touches the request. It runs in a process group of its own, and that whole group is
 * killed at the deadline and when the page closes, whether or not the command itself has exited:
 * a child it left behind (`cmd &`, `nohup cmd`) is killed with it. A child that leaves the group
 * (`setsid`, a daemon that starts its own session) is out of reach and is not killed.
 */
import { spawn } from "node:child_process";
import type { Checked } from "../../../model/check.ts";

/** Environment variable holding the command; read for each request, so a change applies at once. */
export const NOTIFY_COMMAND_ENV = "CHECKPOINT_BRIDGE_NOTIFY_COMMAND";
/** Environment variable: how long a request waits unanswered before the command runs for it, in ms; read for each request. 0: at once. */
export const NOTIFY_AFTER_ENV = "CHECKPOINT_BRIDGE_NOTIFY_AFTER_MS";
/** Variables the command gets. */
const NOTIFY_VARS = {
	url: "CHECKPOINT_BRIDGE_URL",
	asker: "CHECKPOINT_BRIDGE_ASKER",
	question: "CHECKPOINT_BRIDGE_QUESTION",
	event: "CHECKPOINT_BRIDGE_EVENT",
	requestId: "CHECKPOINT_BRIDGE_REQUEST_ID",
	outcome: "CHECKPOINT_BRIDGE_OUTCOME",
	actions: "CHECKPOINT_BRIDGE_ACTIONS",
	ntfyActions: "CHECKPOINT_BRIDGE_NTFY_ACTIONS",
} as const;
/** Environment variable: how long after the first run a request still unanswered gets a reminder run, in ms; unset or 0: none. */
export const NOTIFY_REMIND_ENV = "CHECKPOINT_BRIDGE_NOTIFY_REMIND_MS";

/** Why the command runs: the request was asked, is still waiting, went late (its call stopped waiting), or ended; or `/checkpoints notify test`. */
export type NotifyEvent = "asked" | "reminder" | "late" | "ended" | "test";
/** At this long after its start the command's process group is killed (SIGKILL), whether the command is still running or only what it started is. @default 10000 */
export const NOTIFY_TIMEOUT_MS = 10_000;
/** Bytes of the command's stderr kept to say why it failed; the rest, and all of stdout, are discarded. @default 2048 */
const MAX_NOTIFY_STDERR = 2_048;

/** What the command is told about one request. */
export interface NotifyFacts {
	/** The request's own link. */
	url: string;
	/** Who asks, as the dialog titles show it. */
	asker: string;
	/** The text of its first question. */
	question: string;
	/** @default "asked" */
	event?: NotifyEvent;
	requestId?: string;
	/** How it ended (ended, late), in the page's words. */
	outcome?: string;
	/** The actions JSON (one-tap answers): see docs/away-from-the-keyboard.md. */
	actions?: string;
	/** The same buttons as an ntfy `Actions` header. */
	ntfyActions?: string;
}

/** How one run ended. */
type NotifyOutcome = Checked<object, { reason: string }>;

export interface NotifyRunOptions {
	/** @default NOTIFY_TIMEOUT_MS */
	timeoutMs?: number;
	/** The environment the command's own variables are added to. @default process.env */
	env?: NodeJS.ProcessEnv;
}

/** How often a group whose command has exited is checked for members left, so it is let go once empty. @default 250 */
const NOTIFY_GROUP_POLL_MS = 250;

/** A running command: its end, the end of its process group, and a way to end both now (the page closing). */
export interface NotifyRun {
	/** The command's own outcome, once the shell has exited. */
	readonly done: Promise<NotifyOutcome>;
	/** Resolves once nothing of its process group runs any more (empty, or killed at the deadline or by `kill`). */
	readonly ended: Promise<void>;
	/** Kills the whole process group now. */
	kill(): void;
}

// An environment value cannot hold NUL; nothing else is changed.
const envSafe = (text: string) => text.replaceAll("\0", "");

/** Runs `command` with `/bin/sh -c`, the facts in its environment; never rejects. */
export function runNotifyCommand(command: string, facts: NotifyFacts, options: NotifyRunOptions = {}): NotifyRun {
	const timeoutMs = options.timeoutMs ?? NOTIFY_TIMEOUT_MS;
	const env = {
		...(options.env ?? process.env),
		[NOTIFY_VARS.url]: envSafe(facts.url),
		[NOTIFY_VARS.asker]: envSafe(facts.asker),
		[NOTIFY_VARS.question]: envSafe(facts.question),
		[NOTIFY_VARS.event]: facts.event ?? "asked",
		[NOTIFY_VARS.requestId]: envSafe(facts.requestId ?? ""),
		[NOTIFY_VARS.outcome]: envSafe(facts.outcome ?? ""),
		[NOTIFY_VARS.actions]: envSafe(facts.actions ?? ""),
		[NOTIFY_VARS.ntfyActions]: envSafe(facts.ntfyActions ?? ""),
	};
	let child: ReturnType<typeof spawn>;
	try {
		// Its own process group (its pid is the group's id), so what the shell started can be killed with it.
		child = spawn("/bin/sh", ["-c", command], { env, stdio: ["ignore", "ignore", "pipe"], detached: true });
	} catch (error) {
		const done = Promise.resolve<NotifyOutcome>({ ok: false, reason: `cannot start: ${error instanceof Error ? error.message : String(error)}` });
		return { done, ended: Promise.resolve(), kill() {} };
	}
	const group = child.pid;
	let released = false;
	let endGroup!: () => void;
	const ended = new Promise<void>((resolve) => (endGroup = resolve));
	let poll: ReturnType<typeof setInterval> | undefined;
	// Once let go, the group's id is never signalled again: a new process may get that number once the group is empty.
	const release = () => {
		if (released) return;
		released = true;
		clearTimeout(timer);
		clearInterval(poll);
		endGroup();
	};
	const groupAlive = () => {
		if (group === undefined) return false;
		try {
			process.kill(-group, 0);
			return true;
		} catch {
			return false;
		}
	};
	let killed = false;
	const killGroup = () => {
		if (released) return;
		killed = true;
		try {
			if (group !== undefined) process.kill(-group, "SIGKILL");
		} catch {
			// Already gone.
		}
		// SIGKILL cannot be caught: the group is gone (the shell, if it still ran, is reaped by its close handler).
		if (shellExited) release();
	};
	let timedOut = false;
	let shellExited = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup();
	}, timeoutMs);
	timer.unref();
	child.unref();
	let stderr = "";
	child.stderr?.on("data", (chunk: Buffer) => {
		if (stderr.length < MAX_NOTIFY_STDERR) stderr += chunk.toString("utf8").slice(0, MAX_NOTIFY_STDERR - stderr.length);
	});
	(child.stderr as { unref?: () => void } | null)?.unref?.();
	const done = new Promise<NotifyOutcome>((resolve) => {
		child.once("error", (error) => {
			shellExited = true;
			release();
			resolve({ ok: false, reason: `cannot start: ${error.message}` });
		});
		child.once("close", (code, signal) => {
			shellExited = true;
			// The shell is gone, what it left in its group is not: the deadline still kills that, unless the group empties first.
			if (released || killed || !groupAlive()) release();
			else {
				poll = setInterval(() => (groupAlive() ? undefined : release()), NOTIFY_GROUP_POLL_MS);
				poll.unref();
			}
			if (timedOut) return resolve({ ok: false, reason: `killed after ${timeoutMs} ms` });
			if (code === 0) return resolve({ ok: true });
			const why = stderr.trim().split("\n")[0];
			resolve({ ok: false, reason: `${signal ? `ended by ${signal}` : `exit code ${code}`}${why ? `: ${why}` : ""}` });
		});
	});
	return { done, ended, kill: killGroup };
}

/**
 * The delay `CHECKPOINT_BRIDGE_NOTIFY_AFTER_MS` asks for: a non-negative number of ms, 0 (at once)
 * when unset; anything else is 0 with the reason why.
 */
export function notifyDelay(env: NodeJS.ProcessEnv = process.env, name = NOTIFY_AFTER_ENV): { ms: number; problem?: string } {
	const raw = env[name]?.trim();
	if (!raw) return { ms: 0 };
	const ms = Number(raw);
	if (Number.isFinite(ms) && ms >= 0) return { ms: Math.round(ms) };
	const instead = name === NOTIFY_AFTER_ENV ? "notifying at once" : "no reminder";
	return { ms: 0, problem: `${name}=${JSON.stringify(raw)} is not a number of milliseconds; ${instead}` };
}

export interface NotifierOptions extends NotifyRunOptions {
	/** The command, read for each request. @default process.env[NOTIFY_COMMAND_ENV] */
	command?: () => string | undefined;
	/** How long a request waits unanswered before the command runs, read for each request. @default notifyDelay(process.env).ms (0: at once) */
	delayMs?: () => number;
	/** How long after the first run a request still unanswered is notified again (a reminder); 0: never. @default notifyDelay(process.env, NOTIFY_REMIND_ENV).ms */
	remindMs?: () => number;
	/** Starts one run. @default runNotifyCommand */
	run?: typeof runNotifyCommand;
	/** Told of the first failure (later ones are not repeated). @default none */
	onFailure?: (reason: string) => void;
}

/** Request ids remembered as notified, so a request adopted by a new host is not announced twice. @default 1000 */
const MAX_NOTIFIED = 1_000;

/** Runs the command for each request (asked, reminder, late, ended), off the relay's own flow, and stops every run on close. */
export class Notifier {
	readonly #options: NotifierOptions;
	readonly #runs = new Set<NotifyRun>();
	/** Runs not started yet (the first one, or the reminder), by request id: each is cancelled when it fires or its request goes. */
	readonly #scheduled = new Map<string, () => void>();
	readonly #notified = new Set<string>();
	/** Requests whose first run started, with the command it ran and whether their late run was made: only these get later runs. */
	readonly #started = new Map<string, { command: string; late: boolean }>();
	#failed = false;
	#closed = false;

	constructor(options: NotifierOptions = {}) {
		this.#options = options;
	}

	/** Runs whose process group may still hold a process (the command, or what it started). */
	get running(): number {
		return this.#runs.size;
	}

	/**
	 * Notifies about `requestId` once, whatever is asked later: once it has waited the delay since
	 * `queuedAt` (epoch ms), and only when `facts` still knows it then (an answered or otherwise
	 * settled request has no facts, so it pings nobody); then, with a reminder delay, once more
	 * (`facts("reminder")`) if it still waits by then.
	 */
	notify(requestId: string, facts: (event: NotifyEvent) => NotifyFacts | undefined, queuedAt = Date.now()): void {
		if (this.#closed || this.#notified.has(requestId)) return;
		const command = (this.#options.command ?? (() => process.env[NOTIFY_COMMAND_ENV]))()?.trim();
		if (!command) return;
		this.#notified.add(requestId);
		if (this.#notified.size > MAX_NOTIFIED) this.#notified.delete(this.#notified.values().next().value!);
		const fire = () => {
			this.#scheduled.delete(requestId);
			const known = facts("asked");
			if (!known) return;
			this.#started.set(requestId, { command, late: false });
			if (this.#started.size > MAX_NOTIFIED) this.#started.delete(this.#started.keys().next().value!);
			this.#start(command, known);
			const remind = (this.#options.remindMs ?? (() => notifyDelay(process.env, NOTIFY_REMIND_ENV).ms))();
			if (remind > 0)
				this.#later(requestId, remind, () => {
					const still = facts("reminder");
					if (still) this.#start(command, still);
				});
		};
		const wait = queuedAt + (this.#options.delayMs ?? (() => notifyDelay().ms))() - Date.now();
		// At once: still after the host's observer event returns, since spawning takes time the relay should not wait for.
		if (wait <= 0) {
			const immediate = setImmediate(fire);
			this.#scheduled.set(requestId, () => clearImmediate(immediate));
		} else this.#later(requestId, wait, fire);
	}

	#later(requestId: string, ms: number, run: () => void): void {
		const timer = setTimeout(() => {
			this.#scheduled.delete(requestId);
			run();
		}, ms);
		timer.unref();
		this.#scheduled.set(requestId, () => clearTimeout(timer));
	}

	/** The request settled: a run still waiting (its first, its reminder) never starts. */
	unschedule(requestId: string): void {
		this.#scheduled.get(requestId)?.();
		this.#scheduled.delete(requestId);
	}

	/** Its call stopped waiting (it stays answerable): a request already notified is notified once more, with `facts`. */
	late(requestId: string, facts: NotifyFacts): void {
		const started = this.#started.get(requestId);
		if (!started || started.late || this.#closed) return;
		started.late = true;
		this.unschedule(requestId);
		this.#start(started.command, facts);
	}

	/** The request ended: what was scheduled never starts, and a request already notified is notified once more, with `facts`. */
	ended(requestId: string, facts: NotifyFacts): void {
		this.unschedule(requestId);
		const started = this.#started.get(requestId);
		this.#started.delete(requestId);
		if (started && !this.#closed) this.#start(started.command, facts);
	}

	#start(command: string, facts: NotifyFacts): void {
		const run = (this.#options.run ?? runNotifyCommand)(command, facts, this.#options);
		this.#runs.add(run);
		void run.ended.then(() => this.#runs.delete(run));
		void run.done.then((outcome) => {
			if (outcome.ok || this.#failed || this.#closed) return;
			this.#failed = true;
			try {
				this.#options.onFailure?.(outcome.reason);
			} catch {
				// Reporting is a courtesy.
			}
		});
	}

	/** Stops what is pending and kills every run's process group, exited commands included; resolves once every group has ended. */
	async close(): Promise<void> {
		this.#closed = true;
		for (const cancel of this.#scheduled.values()) cancel();
		this.#scheduled.clear();
		const runs = [...this.#runs];
		for (const run of runs) run.kill();
		await Promise.all(runs.map((run) => Promise.all([run.done, run.ended])));
	}
}
