/**
 * A terminal program driven through tmux: start it in a detached session of a fixed size, send
 * keys, read the screen, and poll the screen with a deadline instead of sleeping.
 *
 * Each instance runs its own tmux server (`-L <socket>`), so it never touches a user's sessions
 * and `dispose()` can stop everything it started with one `kill-server`.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export function tmuxAvailable(): boolean {
	const probe = spawnSync("tmux", ["-V"], { encoding: "utf8" });
	return probe.status === 0;
}

export interface TmuxStartOptions {
	/** Shell command line run in the session's only pane. */
	command: string;
	cwd: string;
	width?: number;
	height?: number;
}

/** The key help of a form that does not take keys yet: " … ↑↓ move · … · Esc dismiss". */
export const FORM_NOT_TAKING_KEYS = /^ … .*Esc /m;
/** The end of a form's key help, once it is drawn (a screen taken while pi draws may not have it yet). */
const FORM_KEY_HELP = /Esc (dismiss|back)/;

/** What pi shows when an Enter comes before its startup is done: the text goes back to the editor. */
const STARTUP_DROPPED = "Startup is still in progress";
const STARTUP_DROPPED_LINE = new RegExp(STARTUP_DROPPED);
/** How long to wait before pressing Enter again after a dropped one: the rest of pi's startup takes less. */
const STARTUP_RETRY_MS = 1_000;

/** What a pane's shell prints when the program under test exits: `echo "${EXIT_MARKER}$?"` after it. */
export const EXIT_MARKER = "pi-exited-with-";

/** The screen without any whitespace: the TUI wraps long lines wherever it likes. */
export const squeezed = (screen: string) => screen.replace(/\s+/g, "");

/** Polls until the whitespace-free screen matches (a wrapped line may split any token); fails at once when the program exited. */
export async function waitForSqueezed(session: TmuxSession, pattern: RegExp, timeoutMs: number, what: string): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const screen = await session.screen();
		if (pattern.test(squeezed(screen))) return screen;
		if (screen.includes(EXIT_MARKER) || Date.now() > deadline) throw new Error(`gave up waiting for ${what}; screen:\n${screen}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/**
 * One tmux client in control mode (`tmux -C`), kept attached for the session's life: a screen read is a
 * line written to it, not a tmux process started, which at ten reads a second costs a core's tenth.
 * It asks for no pane output and sets no size, so the program sees the same terminal as without it.
 */
class ControlClient {
	private readonly child: ChildProcessWithoutNullStreams;
	/** Each command's reply, in the order sent; the first is the reply to the attach itself. */
	private readonly pending: { resolve: (lines: string[]) => void; reject: (error: Error) => void }[] = [];
	private block: { header: string; lines: string[] } | undefined;
	private ended: Error | undefined;
	readonly attached: Promise<unknown>;

	constructor(socket: string, target: string) {
		this.child = spawn("tmux", ["-L", socket, "-C", "attach-session", "-t", target], { stdio: ["pipe", "pipe", "pipe"] });
		this.attached = new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
		let buffer = "";
		this.child.stdout.on("data", (chunk: Buffer) => {
			buffer += chunk.toString("utf8");
			let index: number;
			while ((index = buffer.indexOf("\n")) >= 0) {
				this.onLine(buffer.slice(0, index));
				buffer = buffer.slice(index + 1);
			}
		});
		this.child.stderr.resume();
		const end = (why: string) => {
			this.ended ??= new Error(`tmux control client ${why}`);
			for (const waiter of this.pending.splice(0)) waiter.reject(this.ended);
		};
		this.child.on("error", (error) => end(`failed: ${error.message}`));
		this.child.on("exit", (code, signal) => end(`exited (code ${code}, signal ${signal})`));
		// Only a reply still awaited keeps the process alive: a test that never disposes must not keep its worker running.
		this.child.unref();
		for (const stream of [this.child.stdin, this.child.stderr]) (stream as unknown as { unref(): void }).unref();
	}

	/** Holds the event loop open while a reply is awaited, and not longer. */
	private awaiting(): void {
		const stdout = this.child.stdout as unknown as { ref(): void; unref(): void };
		if (this.pending.length > 0) stdout.ref();
		else stdout.unref();
	}

	get alive(): boolean {
		return this.ended === undefined;
	}

	/** A command's output lines; a block ends with the %end or %error line that repeats its %begin's numbers. */
	private onLine(line: string): void {
		if (this.block) {
			const [kind, ...numbers] = line.split(" ");
			if ((kind === "%end" || kind === "%error") && numbers.join(" ") === this.block.header) {
				const { lines } = this.block;
				this.block = undefined;
				const waiter = this.pending.shift();
				this.awaiting();
				if (kind === "%end") waiter?.resolve(lines);
				else waiter?.reject(new Error(lines.join("\n")));
			} else this.block.lines.push(line);
		} else if (line.startsWith("%begin ")) this.block = { header: line.slice("%begin ".length), lines: [] };
	}

	/** Runs a tmux command (its arguments need no quoting) and resolves with its output as `tmux` prints it. */
	async command(line: string): Promise<string> {
		await this.attached;
		if (this.ended) throw this.ended;
		const lines = await new Promise<string[]>((resolve, reject) => {
			this.pending.push({ resolve, reject });
			this.awaiting();
			this.child.stdin.write(`${line}\n`);
		});
		return lines.map((text) => `${text}\n`).join("");
	}

	async close(): Promise<void> {
		if (this.child.exitCode === null && this.child.signalCode === null) {
			const exited = new Promise((resolve) => this.child.once("exit", resolve));
			this.child.ref();
			this.child.kill();
			await exited;
		}
	}
}

export class TmuxSession {
	private readonly socket = `cb-test-${randomUUID().slice(0, 8)}`;
	private readonly target = "main";
	private control: ControlClient | undefined;
	/** The last screen read, for failure messages. */
	lastScreen = "";

	private tmux(...args: string[]) {
		return run("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
	}

	/** A read-only command through the control client while it is attached, else through a tmux process of its own. */
	private async read(...args: string[]): Promise<string> {
		if (this.control?.alive) {
			try {
				return await this.control.command(args.join(" "));
			} catch {
				// The session ended meanwhile: the plain client says so in its own words.
			}
		}
		const { stdout } = await this.tmux(...args);
		return stdout;
	}

	async start({ command, cwd, width = 120, height = 40 }: TmuxStartOptions): Promise<void> {
		await this.tmux("-f", "/dev/null", "new-session", "-d", "-s", this.target, "-x", String(width), "-y", String(height), "-c", cwd, command);
		const control = new ControlClient(this.socket, this.target);
		try {
			await control.command("refresh-client -f no-output");
			this.control = control;
		} catch {
			// A program that ended at once leaves no session to attach to: reads go through plain clients.
			await control.close();
		}
	}

	/** Resizes the terminal, as a user dragging the window would; the program gets SIGWINCH and redraws. */
	async resize(width: number, height: number): Promise<void> {
		await this.tmux("resize-window", "-t", this.target, "-x", String(width), "-y", String(height));
	}

	/** The visible screen; `-J` joins lines the terminal wrapped, so long titles stay on one line. */
	async screen(): Promise<string> {
		const stdout = await this.read("capture-pane", "-p", "-J", "-t", this.target);
		this.lastScreen = stdout;
		return stdout;
	}

	/** Everything the pane printed: the scrollback and the visible screen, wrapped lines joined. */
	async history(): Promise<string> {
		const stdout = await this.read("capture-pane", "-p", "-J", "-S", "-", "-t", this.target);
		return stdout;
	}

	/** The visible screen row by row, as the terminal wrapped it (no `-J`): a line wider than the pane shows as two rows. */
	async rows(): Promise<string[]> {
		const stdout = await this.read("capture-pane", "-p", "-t", this.target);
		this.lastScreen = stdout;
		return stdout.split("\n");
	}

	/** Named keys as tmux spells them: "Enter", "Down", "Up", "Escape", "C-c", "C-d". */
	async keys(...names: string[]): Promise<void> {
		await this.tmux("send-keys", "-t", this.target, ...names);
	}

	/** Literal text, typed as is (no key-name lookup). */
	async type(text: string): Promise<void> {
		await this.tmux("send-keys", "-t", this.target, "-l", text);
	}

	/**
	 * Poll the screen until `match` is found; returns the screen. Stops early when `failOn` shows
	 * up (a state from which `match` can no longer come). Either error carries the last screen,
	 * which is usually all one needs to see what went wrong. `everyMs`: how often the screen is read.
	 */
	async waitFor(match: string | RegExp, timeoutMs: number, what = String(match), failOn?: RegExp, everyMs = 100): Promise<string> {
		const found = (screen: string, pattern: string | RegExp) => (typeof pattern === "string" ? screen.includes(pattern) : pattern.test(screen));
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const screen = await this.screen().catch((error: unknown) => `(capture failed: ${String(error)})`);
			if (found(screen, match)) return screen;
			if (failOn && found(screen, failOn)) throw new Error(`gave up waiting for ${what}: the screen shows ${failOn}:\n${screen}`);
			if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; screen:\n${screen}`);
			await new Promise((resolve) => setTimeout(resolve, everyMs));
		}
	}

	/**
	 * Types `text` and presses Enter until `started` shows: pi drops an Enter pressed while its startup
	 * is still in progress. Returns the screen; throws after `attempts` Enters.
	 */
	async prompt(text: string, started: string | RegExp, options: { attempts?: number; timeoutMs?: number; what?: string } = {}): Promise<string> {
		const { attempts = 6, timeoutMs = 15_000, what = "the run's first question" } = options;
		await this.type(text);
		// pi says when it drops an Enter; its line stays in the transcript, so only its first showing tells.
		let droppedSeen = (await this.screen()).includes(STARTUP_DROPPED);
		for (let attempt = 1; ; attempt++) {
			await this.keys("Enter");
			try {
				return await this.waitFor(started, timeoutMs, what, droppedSeen ? undefined : STARTUP_DROPPED_LINE);
			} catch (error) {
				if (attempt >= attempts) throw error;
				if (!droppedSeen && this.lastScreen.includes(STARTUP_DROPPED)) {
					droppedSeen = true;
					await new Promise((resolve) => setTimeout(resolve, STARTUP_RETRY_MS));
				}
			}
		}
	}

	/**
	 * Waits until the open form takes keys: a form ignores keys for KEY_GUARD_MS after it appears and
	 * starts its key help with "…" meanwhile. A screen without the key help (pi has not drawn that row
	 * yet) does not count: a key sent then may fall within the guard. Returns the screen.
	 */
	async formTakesKeys(timeoutMs = 5_000): Promise<string> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const screen = await this.screen();
			if (FORM_KEY_HELP.test(screen) && !FORM_NOT_TAKING_KEYS.test(screen)) return screen;
			if (Date.now() > deadline)
				throw new Error(`timed out after ${timeoutMs} ms waiting for the form to take keys (its key help drawn, without "…"); screen:\n${screen}`);
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
	}

	/**
	 * Stops the server and waits until every process its panes started has exited: a program still
	 * shutting down after its SIGHUP writes into its directories, and a test's cleanup would race it.
	 */
	async dispose(): Promise<void> {
		const panes = await this.tmux("list-panes", "-a", "-F", "#{pane_pid}").then(
			({ stdout }) => stdout.split("\n").filter(Boolean).map(Number),
			() => [] as number[],
		);
		const started = descendants(panes);
		await this.control?.close();
		await this.tmux("kill-server").catch(() => {});
		if (!(await allExited(started, 5_000))) {
			for (const pid of started) signal(pid, "SIGKILL");
			await allExited(started, 5_000);
		}
	}
}

const alive = (pid: number) => signal(pid, 0);

function signal(pid: number, name: NodeJS.Signals | 0): boolean {
	try {
		process.kill(pid, name);
		return true;
	} catch {
		return false;
	}
}

async function allExited(pids: number[], timeoutMs: number): Promise<boolean> {
	const deadline = Date.now() + timeoutMs;
	while (pids.some(alive)) {
		if (Date.now() > deadline) return false;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	return true;
}

/** The given processes and all their descendants, read from /proc (empty where /proc is absent). */
function descendants(roots: number[]): number[] {
	const children = new Map<number, number[]>();
	let entries: string[] = [];
	try {
		entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
	} catch {
		return roots;
	}
	for (const name of entries) {
		try {
			// The parent pid is the 2nd field after the command name, which may itself hold spaces or ")".
			const stat = readFileSync(`/proc/${name}/stat`, "utf8");
			const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
			children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
		} catch {
			// The process ended while we read.
		}
	}
	const found = [...roots];
	for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]!) ?? []));
	return found;
}

/** Screens kept for the test output: one numbered text file per step, listed by `report()`. */
export class ScreenCaptures {
	readonly files: string[] = [];
	constructor(readonly dir: string) {}

	save(name: string, screen: string): void {
		mkdirSync(this.dir, { recursive: true });
		const file = join(this.dir, `${String(this.files.length + 1).padStart(2, "0")}-${name}.txt`);
		writeFileSync(file, screen);
		this.files.push(file);
	}

	/** Where the captures are, one line each, for the test's stdout. */
	report(title: string): string {
		return `${title}: screen captures in ${this.dir}:\n${this.files.map((f) => `  ${f}`).join("\n")}`;
	}
}
