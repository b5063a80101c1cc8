/**
 * In-process pi sessions for relay tests: one host session with a programmatic UI and any number of
 * headless child sessions built the way pi-subagents builds its foreground children.
 *
 * - Host: createAgentSession + DefaultResourceLoader, bound with `{ uiContext, mode: "rpc" }`.
 * - Child: its own loader (marked as loaded so its first reload() drops pi's extension cache and the
 *   child gets its own module copies), its own event bus, bound with `{ mode: "print" }` and no UI;
 *   its session name is set from `before_agent_start`, as pi-subagents does.
 * - Every session gets a scripted model (pi-ai's faux provider) from an inline extension factory.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type AssistantMessage, fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, InMemoryCredentialStore } from "@earendil-works/pi-ai";
import {
	type AgentSession,
	createAgentSession,
	createEventBus,
	DefaultResourceLoader,
	type ExtensionAPI,
	type ExtensionFactory,
	type ExtensionUIContext,
	type ExtensionUIDialogOptions,
	initTheme,
	ModelRuntime,
	SessionManager,
	SettingsManager,
	type Theme,
} from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, expect } from "vitest";
import type { Envelope } from "./envelope.ts";
import { quietUI } from "./quiet-ui.ts";

export { answerPairs, type Envelope } from "./envelope.ts";

const here = dirname(fileURLToPath(import.meta.url));
const EXTENSION_PATH = resolve(here, "../../../extensions/checkpoint-bridge/index.ts");
const MODULE_COPY_PROBE = resolve(here, "../fixtures/sdk-module-copy.ts");
const MODULE_COPY_REGISTRY = Symbol.for("checkpoint-bridge.test.module-copies");
const TOOL = "ask_user_via_host";
/** Prefix of a scripted model's last message; the tool result text follows it verbatim. */
const FINAL_PREFIX = "FINAL ";

// ---------------------------------------------------------------------------------------------
// Waiting

/** Resolves once `check()` is truthy; re-checked whenever `subscribe` reports a change. */
function waitForChange<T>(subscribe: (listener: () => void) => () => void, check: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
	const first = check();
	if (first) return Promise.resolve(first);
	return new Promise<T>((resolvePromise, reject) => {
		const timer = setTimeout(() => {
			unsubscribe();
			reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
		}, timeoutMs);
		const unsubscribe = subscribe(() => {
			const value = check();
			if (!value) return;
			clearTimeout(timer);
			unsubscribe();
			resolvePromise(value);
		});
	});
}

/** Waits for `promise` at most `ms`; errors are ignored (clean-up only). */
async function withDeadline(promise: Promise<unknown>, ms: number): Promise<void> {
	let timer: NodeJS.Timeout | undefined;
	await Promise.race([promise.catch(() => {}), new Promise((resolvePromise) => (timer = setTimeout(resolvePromise, ms)))]);
	clearTimeout(timer);
}

class Changes {
	private readonly listeners = new Set<() => void>();
	subscribe = (listener: () => void): (() => void) => {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	};
	emit(): void {
		for (const listener of [...this.listeners]) listener();
	}
}

// ---------------------------------------------------------------------------------------------
// Programmatic UI

export type DialogMethod = "select" | "input" | "confirm" | "editor";
type DialogOutcome =
	| { how: "answered"; value: string | boolean }
	| { how: "dismissed" }
	| { how: "threw"; error: Error }
	| { how: "signal" }
	| { how: "timeout" };

export interface Dialog {
	readonly seq: number;
	readonly method: DialogMethod;
	readonly title: string;
	readonly options?: string[];
	readonly placeholder?: string;
	readonly message?: string;
	readonly signal?: AbortSignal;
	readonly timeout?: number;
	readonly openedAt: number;
	settledAt?: number;
	outcome?: DialogOutcome;
	readonly open: boolean;
	answer(value: string | boolean): void;
	/** The user closes the dialog without answering (Escape). */
	dismiss(): void;
	/** The UI itself fails. */
	fail(error: Error): void;
}

export interface Notification {
	readonly message: string;
	readonly type?: "info" | "warning" | "error";
	readonly at: number;
}

export interface ProgrammaticUIOptions {
	/** Resolve a dialog with undefined when its `timeout` elapses, as pi's own UIs do. Default true. */
	honourTimeouts?: boolean;
}

/**
 * A plain object with every ExtensionUIContext member (pi spreads it, so no Proxy). Dialogs stay open
 * until the test (or `respond`) settles them; an aborted `opts.signal` dismisses them like pi's UI.
 */
export class ProgrammaticUI {
	readonly dialogs: Dialog[] = [];
	readonly notifications: Notification[] = [];
	/** Highest number of dialogs open at the same moment. */
	maxOpen = 0;
	/** Called for every dialog as it opens; may settle it now or later. */
	respond?: (dialog: Dialog) => void;
	readonly context: ExtensionUIContext;
	private readonly changes = new Changes();
	private readonly honourTimeouts: boolean;

	constructor(options: ProgrammaticUIOptions = {}) {
		this.honourTimeouts = options.honourTimeouts ?? true;
		const ui = this;
		this.context = {
			select: (title, options, opts) => this.openDialog({ method: "select", title, options, opts }) as Promise<string | undefined>,
			input: (title, placeholder, opts) => this.openDialog({ method: "input", title, placeholder, opts }) as Promise<string | undefined>,
			confirm: (title, message, opts) => this.openDialog({ method: "confirm", title, message, opts }).then((value) => value === true),
			editor: (title, prefill) => this.openDialog({ method: "editor", title, placeholder: prefill }) as Promise<string | undefined>,
			notify: (message, type) => {
				this.notifications.push({ message, type, at: Date.now() });
				this.changes.emit();
			},
			...quietUI(),
			get theme(): Theme {
				return ui.currentTheme();
			},
		} satisfies ExtensionUIContext;
	}

	openDialogs(): Dialog[] {
		return this.dialogs.filter((dialog) => dialog.open);
	}

	/** First dialog (already open or still to come) matching `match`. */
	waitForDialog(match: (dialog: Dialog) => boolean, timeoutMs = 10_000, what = "a dialog"): Promise<Dialog> {
		return this.waitFor(() => this.dialogs.find(match), timeoutMs, what);
	}

	waitFor<T>(check: () => T | undefined | false, timeoutMs = 10_000, what = "the UI"): Promise<T> {
		return waitForChange(this.changes.subscribe, check, timeoutMs, what);
	}

	/** Dismisses whatever is still open (test clean-up). */
	dismissAll(): void {
		for (const dialog of this.openDialogs()) dialog.dismiss();
	}

	private currentTheme(): Theme {
		const key = Symbol.for("@earendil-works/pi-coding-agent:theme");
		if (!(globalThis as Record<symbol, unknown>)[key]) initTheme("dark");
		return (globalThis as Record<symbol, unknown>)[key] as Theme;
	}

	private openDialog(request: {
		method: DialogMethod;
		title: string;
		options?: string[];
		placeholder?: string;
		message?: string;
		opts?: ExtensionUIDialogOptions;
	}): Promise<string | boolean | undefined> {
		const { opts } = request;
		return new Promise((resolvePromise, reject) => {
			let timer: NodeJS.Timeout | undefined;
			const settle = (outcome: DialogOutcome): void => {
				if (dialog.outcome) return;
				dialog.outcome = outcome;
				dialog.settledAt = Date.now();
				if (timer) clearTimeout(timer);
				opts?.signal?.removeEventListener("abort", onAbort);
				if (outcome.how === "answered") resolvePromise(outcome.value);
				else if (outcome.how === "threw") reject(outcome.error);
				else resolvePromise(undefined);
				this.changes.emit();
			};
			const onAbort = (): void => settle({ how: "signal" });
			const dialog: Dialog = {
				seq: this.dialogs.length + 1,
				method: request.method,
				title: request.title,
				options: request.options ? [...request.options] : undefined,
				placeholder: request.placeholder,
				message: request.message,
				signal: opts?.signal,
				timeout: opts?.timeout,
				openedAt: Date.now(),
				get open() {
					return dialog.outcome === undefined;
				},
				answer: (value) => settle({ how: "answered", value }),
				dismiss: () => settle({ how: "dismissed" }),
				fail: (error) => settle({ how: "threw", error }),
			};
			this.dialogs.push(dialog);
			if (opts?.signal?.aborted) {
				// pi's UIs return at once for a signal that is already aborted.
				settle({ how: "signal" });
				return;
			}
			opts?.signal?.addEventListener("abort", onAbort, { once: true });
			if (this.honourTimeouts && opts?.timeout) timer = setTimeout(() => settle({ how: "timeout" }), opts.timeout);
			this.maxOpen = Math.max(this.maxOpen, this.openDialogs().length);
			this.changes.emit();
			this.respond?.(dialog);
		});
	}
}

/** What the host holds now, read from the process-global handle as any other code in the process would. */
export function openRequests(): { requestId: string; asker: { label: string; sessionId: string }; state: "queued" | "shown" }[] {
	const handle = (globalThis as Record<symbol, { snapshot(): { open: ReturnType<typeof openRequests> } | undefined } | undefined>)[
		Symbol.for("checkpoint-bridge.handle")
	];
	return handle?.snapshot()?.open ?? [];
}

/**
 * Checks that `ui` shows nothing more, against a positive event rather than a fixed wait: a probe child
 * asks, and its dialog must be the next one `ui` shows. The host's queue is one FIFO, so any dialog that
 * was still due (a parked request adopted, a queued one not dropped) would have been shown before it.
 */
export async function expectProbeNext(world: PiWorld, ui: ProgrammaticUI, what: string): Promise<void> {
	const before = ui.dialogs.length;
	const probe = await world.createChild({ name: "probe", ask: { questions: [{ question: "Anything before me?" }] } });
	probe.start();
	const dialog = await ui.waitForDialog((d) => d.title === "[probe] Anything before me?", 10_000, "the probe's dialog");
	expect(
		ui.dialogs.slice(before).map((d) => d.title),
		what,
	).toEqual([dialog.title]);
	dialog.answer("no");
	await probe.done();
}

// ---------------------------------------------------------------------------------------------
// Scripted models

export interface Question {
	question: string;
	options?: string[];
	placeholder?: string;
}
export interface AskArgs {
	questions: Question[];
	timeoutMs?: number;
}

type ModelStep = Parameters<ReturnType<typeof fauxProvider>["setResponses"]>[0][number];

function textOf(message: unknown): string {
	const content = (message as { content?: unknown } | undefined)?.content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((part: { type?: string; text?: string }) => (part?.type === "text" ? (part.text ?? "") : "")).join("");
}

/** Calls the tool once with `args`, then ends the turn with FINAL_PREFIX + the tool result text. */
function askThenReport(args: AskArgs | undefined): ModelStep {
	return (context): AssistantMessage => {
		const conversation = context.messages.filter((message) => (message.role as string) !== "system");
		const last = conversation[conversation.length - 1];
		if (last?.role === "toolResult") return fauxAssistantMessage(fauxText(FINAL_PREFIX + textOf(last)));
		if (!args) return fauxAssistantMessage(fauxText(`${FINAL_PREFIX}nothing to ask`));
		return fauxAssistantMessage(fauxToolCall(TOOL, args as unknown as Parameters<typeof fauxToolCall>[1]), { stopReason: "toolUse" });
	};
}

let providerSeq = 0;

/** Inline extension: a scripted model private to this session, and the session's name. */
function sessionSetup(name: string | undefined, ask: AskArgs | undefined, model: { provider: string; id: string }): ExtensionFactory {
	return (pi: ExtensionAPI) => {
		// Unique provider and api names: each session's script must stay its own.
		const faux = fauxProvider({ provider: model.provider, api: model.provider, models: [{ id: model.id }] });
		faux.setResponses(Array.from({ length: 20 }, () => askThenReport(ask)));
		pi.registerProvider(faux.provider);
		if (name) pi.on("before_agent_start", () => pi.setSessionName(name));
	};
}

// ---------------------------------------------------------------------------------------------
// Sessions

export interface ToolRun {
	toolCallId: string;
	toolName: string;
	args: unknown;
	startedAt: number;
	endedAt?: number;
	result?: { content: Array<{ type: string; text?: string }>; details?: unknown };
	isError?: boolean;
}

export class SessionHandle {
	readonly toolRuns: ToolRun[] = [];
	private readonly changes = new Changes();
	private running?: Promise<void>;
	private shutdownSent = false;

	constructor(
		readonly session: AgentSession,
		readonly role: "host" | "child",
		readonly name: string | undefined,
	) {
		session.subscribe((event) => {
			if (event.type === "tool_execution_start") {
				this.toolRuns.push({ toolCallId: event.toolCallId, toolName: event.toolName, args: event.args, startedAt: Date.now() });
				this.changes.emit();
			} else if (event.type === "tool_execution_end") {
				const run = this.toolRuns.find((candidate) => candidate.toolCallId === event.toolCallId);
				if (run) Object.assign(run, { endedAt: Date.now(), result: event.result, isError: event.isError });
				this.changes.emit();
			}
		});
	}

	get sessionId(): string {
		return this.session.sessionId;
	}

	/** Starts the scripted turn; the returned promise settles when the agent loop ends. */
	start(text = "go"): Promise<void> {
		this.running = this.session.prompt(text);
		this.running.catch(() => {});
		return this.running;
	}

	get finished(): Promise<void> | undefined {
		return this.running;
	}

	/** The started turn's end, failing after `timeoutMs` so a stuck call cannot hold the test. */
	done(timeoutMs = 10_000): Promise<void> {
		const running = this.running;
		if (!running) return Promise.reject(new Error(`${this.label} was never started`));
		let timer: NodeJS.Timeout | undefined;
		const deadline = new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${this.label} did not finish its turn within ${timeoutMs} ms`)), timeoutMs);
		});
		return Promise.race([running, deadline]).finally(() => clearTimeout(timer));
	}

	waitForToolStart(timeoutMs = 10_000): Promise<ToolRun> {
		return waitForChange(this.changes.subscribe, () => this.toolRuns.find((run) => run.toolName === TOOL), timeoutMs, `${this.label} to call ${TOOL}`);
	}

	waitForToolEnd(timeoutMs = 10_000): Promise<ToolRun> {
		return waitForChange(
			this.changes.subscribe,
			() => this.toolRuns.find((run) => run.toolName === TOOL && run.endedAt !== undefined),
			timeoutMs,
			`${this.label}'s ${TOOL} call to return`,
		);
	}

	/** The tool result of this session's (single) call, parsed from content[0].text. */
	envelope(): Envelope {
		const run = this.toolRuns.find((candidate) => candidate.toolName === TOOL && candidate.endedAt !== undefined);
		const text = run?.result?.content?.[0]?.text;
		if (typeof text !== "string") throw new Error(`${this.label} has no ${TOOL} result text`);
		return JSON.parse(text) as Envelope;
	}

	details(): unknown {
		return this.toolRuns.find((candidate) => candidate.toolName === TOOL && candidate.endedAt !== undefined)?.result?.details;
	}

	finalText(): string | undefined {
		return this.session.getLastAssistantText();
	}

	/** session_shutdown("quit") as pi's hosts emit it before disposing; dispose() alone does not. */
	async shutdown(): Promise<void> {
		if (this.shutdownSent) return;
		this.shutdownSent = true;
		await this.session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
	}

	get label(): string {
		return `${this.role} ${this.name ?? this.sessionId.slice(-8)}`;
	}
}

/** The session's tool result, checked for what every result must carry. */
export function checkedEnvelope(session: SessionHandle): Envelope {
	const envelope = session.envelope();
	expect(session.details()).toEqual(envelope);
	// The scripted model ends its turn by quoting the tool result: the result reached the model.
	expect(session.finalText()).toBe(FINAL_PREFIX + JSON.stringify(envelope));
	return envelope;
}

export interface HostOptions {
	name?: string;
	/** What the host's own model asks when prompted. */
	ask?: AskArgs;
	ui?: ProgrammaticUI;
}
export interface ChildOptions {
	name: string;
	ask?: AskArgs;
}

/**
 * One isolated pi environment (temp agent dir, offline, no telemetry) holding the sessions of one
 * test. `close()` shuts every session down and removes the temp dir.
 */
export class PiWorld {
	readonly root = mkdtempSync(join(tmpdir(), "cb-sdk-"));
	readonly agentDir = join(this.root, "agent");
	readonly cwd = join(this.root, "work");
	readonly sessions: SessionHandle[] = [];
	private readonly uis: ProgrammaticUI[] = [];
	/** Each session's scripted model, registered under a name no other session uses. */
	private readonly models = new Map<SessionHandle, { provider: string; id: string }>();
	private readonly savedEnv: Record<string, string | undefined> = {};

	constructor() {
		mkdirSync(this.agentDir, { recursive: true });
		mkdirSync(this.cwd, { recursive: true });
		this.setEnv({
			PI_CODING_AGENT_DIR: this.agentDir,
			PI_OFFLINE: "1",
			PI_SKIP_VERSION_CHECK: "1",
			PI_TELEMETRY: "0",
		});
	}

	async createHost(options: HostOptions = {}): Promise<{ host: SessionHandle; ui: ProgrammaticUI }> {
		const ui = options.ui ?? new ProgrammaticUI();
		this.uis.push(ui);
		const handle = await this.createSession("host", options.name, options.ask);
		await handle.session.bindExtensions({ uiContext: ui.context, mode: "rpc" });
		await this.useScriptedModel(handle);
		return { host: handle, ui };
	}

	async createChild(options: ChildOptions): Promise<SessionHandle> {
		const handle = await this.createSession("child", options.name, options.ask);
		await handle.session.bindExtensions({ mode: "print" });
		await this.useScriptedModel(handle);
		return handle;
	}

	/** The module copy of the probe fixture each session loaded, by session id. */
	moduleCopyOf(handle: SessionHandle): string | undefined {
		const registry = (globalThis as Record<symbol, Map<string, string> | undefined>)[MODULE_COPY_REGISTRY];
		return registry?.get(handle.sessionId);
	}

	async close(): Promise<void> {
		// A failed test may leave dialogs open and calls waiting: close them, release the host role,
		// then stop every session, never waiting long on any single step.
		for (const ui of this.uis) {
			ui.respond = (dialog) => dialog.dismiss();
			ui.dismissAll();
		}
		const ordered = [...this.sessions.filter((s) => s.role === "host"), ...this.sessions.filter((s) => s.role === "child")];
		for (const handle of ordered) await withDeadline(handle.shutdown(), 2_000);
		for (const handle of ordered) {
			await withDeadline(handle.session.abort(), 2_000);
			await withDeadline(handle.finished ?? Promise.resolve(), 2_000);
			handle.session.dispose();
		}
		for (const [key, value] of Object.entries(this.savedEnv)) {
			if (value === undefined) delete process.env[key];
			else process.env[key] = value;
		}
		rmSync(this.root, { recursive: true, force: true });
	}

	private setEnv(values: Record<string, string>): void {
		for (const [key, value] of Object.entries(values)) {
			if (!(key in this.savedEnv)) this.savedEnv[key] = process.env[key];
			process.env[key] = value;
		}
	}

	private async createSession(role: "host" | "child", name: string | undefined, ask: AskArgs | undefined): Promise<SessionHandle> {
		const model = { provider: `scripted-${++providerSeq}`, id: "scripted-model" };
		const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
		const loader = new DefaultResourceLoader({
			cwd: this.cwd,
			agentDir: this.agentDir,
			settingsManager,
			eventBus: createEventBus(),
			additionalExtensionPaths: [EXTENSION_PATH, MODULE_COPY_PROBE],
			extensionFactories: [sessionSetup(name, ask, model)],
			noSkills: true,
			noPromptTemplates: true,
			noThemes: true,
			noContextFiles: true,
		});
		// pi caches extension modules per process; a loader that believes it was loaded before clears
		// that cache on reload(), so this session imports fresh copies (pi-subagents does the same for
		// children). The host gets fresh copies too, so no test inherits module state from another.
		(loader as unknown as { loaded: boolean }).loaded = true;
		await loader.reload();
		const errors = loader.getExtensions().errors;
		if (errors.length) throw new Error(`extension load failed: ${JSON.stringify(errors)}`);
		// Credentials and model catalog in memory: nothing is written under the temp agent dir after
		// it is removed.
		const modelRuntime = await ModelRuntime.create({ credentials: new InMemoryCredentialStore(), modelsPath: null });
		const { session } = await createAgentSession({
			cwd: this.cwd,
			agentDir: this.agentDir,
			modelRuntime,
			settingsManager,
			resourceLoader: loader,
			sessionManager: SessionManager.inMemory(this.cwd),
			noTools: "builtin",
		});
		const handle = new SessionHandle(session, role, name);
		this.models.set(handle, model);
		this.sessions.push(handle);
		return handle;
	}

	private async useScriptedModel(handle: SessionHandle): Promise<void> {
		const { provider, id } = this.models.get(handle)!;
		const model = handle.session.modelRuntime.getModel(provider, id);
		if (!model) throw new Error(`${handle.label}: scripted model ${provider}/${id} is not registered`);
		await handle.session.setModel(model);
	}
}

/**
 * The file's world, made afresh before each of its tests and closed after it: the value returned
 * stands for the running test's world (each property is read from it), so tests use it as a PiWorld.
 */
export function worldPerTest(): PiWorld {
	let current: PiWorld | undefined;
	beforeEach(() => {
		current = new PiWorld();
	});
	afterEach(async () => {
		await current?.close();
		current = undefined;
	});
	return new Proxy({} as PiWorld, {
		get(_target, key) {
			if (!current) throw new Error("worldPerTest: the world exists only while a test runs");
			const value = Reflect.get(current, key, current) as unknown;
			return typeof value === "function" ? value.bind(current) : value;
		},
	});
}
