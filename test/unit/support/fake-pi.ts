/**
 * Just enough of pi's ExtensionAPI to load the extension in a unit test and play a session:
 * start it, call the tool, shut it down.
 */
import { vi } from "vitest";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import type { DialogUI } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";

type Factory = (pi: never) => void;
type Handler = (event: unknown, ctx: unknown) => unknown;
type ToolResult = { content: { type: string; text: string }[]; details: Envelope };
interface Tool {
	name: string;
	execute(id: string, params: unknown, signal: AbortSignal | undefined, onUpdate: unknown, ctx: unknown): Promise<ToolResult>;
}

/** A fresh copy of the extension module graph, as pi gives each session its own copy. */
export async function loadExtensionCopy(): Promise<Factory> {
	vi.resetModules();
	return (await import("../../../extensions/checkpoint-bridge/index.ts")).default as Factory;
}

export interface SessionOptions {
	sessionId: string;
	ui?: DialogUI;
	name?: string;
	/** The session's active tools (an agent file's `tools:` line narrows them). @default every registered tool */
	activeTools?: string[];
	/** pi's run mode; "rpc" when there is a UI, else "print". */
	mode?: "tui" | "rpc" | "print";
	/** The session's `pi.events` (pi's createEventBus()). @default none, as an extension API without an event bus */
	events?: { on(channel: string, handler: (data: unknown) => void): () => void; emit(channel: string, data: unknown): void };
}

export function playSession(factory: Factory, options: SessionOptions) {
	const handlers = new Map<string, Handler[]>();
	let tool: Tool | undefined;
	const others = new Map<string, Tool>();
	const commands = new Map<string, unknown>();
	const entries: { type: string; customType: string; data: unknown; details?: unknown }[] = [];
	const pi = {
		on: (event: string, handler: Handler) => void handlers.set(event, [...(handlers.get(event) ?? []), handler]),
		// The ask tool is the one `call` drives; the other tools the extension registers are kept by name.
		registerTool: (definition: Tool) => void (definition.name === "ask_user_via_host" ? (tool = definition) : others.set(definition.name, definition)),
		registerCommand: (name: string, command: unknown) => void commands.set(name, command),
		appendEntry: (customType: string, data: unknown) => void entries.push({ type: "custom", customType, data }),
		// A message joins the session as pi keeps it: an entry of its own, its details under `details` (also under `data`, as the tests read them).
		sendMessage: (message: { customType: string; details: unknown }) =>
			void entries.push({ type: "custom_message", customType: message.customType, data: message.details, details: message.details }),
		getSessionName: () => options.name,
		// pi activates every registered tool unless the session's tool list says otherwise.
		getActiveTools: () => options.activeTools ?? [...(tool ? [tool.name] : []), ...others.keys()],
		...(options.events ? { events: options.events } : {}),
	};
	factory(pi as never);
	const ctx = {
		hasUI: options.ui !== undefined,
		mode: options.mode ?? (options.ui ? "rpc" : "print"),
		ui: options.ui,
		sessionManager: { getSessionId: () => options.sessionId, getEntries: () => entries },
	};
	const emit = async (event: { type: string; reason?: string }) => {
		for (const handler of handlers.get(event.type) ?? []) await handler(event, ctx);
	};
	/** Calls the tool as pi would and returns its result as it is. */
	const execute = (params: unknown, signal?: AbortSignal): Promise<ToolResult> => tool!.execute("call-1", params, signal, undefined, ctx);
	return {
		tool: () => tool!,
		/** Entries the extension appended to this session. */
		entries,
		/** Runs a registered command as pi would. */
		async command(name: string, args = "") {
			const command = commands.get(name) as { handler(args: string, ctx: unknown): Promise<void> } | undefined;
			if (!command) throw new Error(`no command /${name}`);
			await command.handler(args, ctx);
		},
		/** `reason` as pi gives it: "startup", "reload", "new", "resume", "fork". */
		start: (reason = "startup") => emit({ type: "session_start", reason }),
		shutdown: (reason = "quit") => emit({ type: "session_shutdown", reason }),
		execute,
		/** Calls the tool as pi would and returns the envelope, checking text and details agree. */
		async call(params: unknown, signal?: AbortSignal): Promise<Envelope> {
			const result = await execute(params, signal);
			if (result.content[0]?.text !== JSON.stringify(result.details)) throw new Error("content text and details disagree");
			return result.details;
		},
		ctx,
	};
}

/** Plays sessions and keeps them, so that a test's afterEach can shut every one down. */
export function playedSessions() {
	const played: ReturnType<typeof playSession>[] = [];
	return {
		/** playSession, remembered for shutdownAll. */
		play(...args: Parameters<typeof playSession>) {
			const s = playSession(...args);
			played.push(s);
			return s;
		},
		/** Shuts down every session played since the last call. */
		async shutdownAll() {
			for (const s of played.splice(0)) await s.shutdown();
		},
	};
}
