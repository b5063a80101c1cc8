/**
 * checkpoint-bridge: every session gets `ask_user_via_host`; the one session with a UI (the host)
 * shows the questions, one dialog at a time for the whole process, and the answers come back as
 * the tool result. Loads nothing from pi when it loads, so any pi with this extension API loads it;
 * the terminal form and pi-tui (which pi supplies to extensions) are imported on the first TUI question.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { askViaHost } from "./core/asker.ts";
import { AUDIT_ENTRY_TYPE, checkpointsReport } from "./core/audit.ts";
import { callBudget, readConfig } from "./core/config.ts";
import { claimHostRole, type HostRole } from "./core/host-role.ts";
import { activeAgentOf, askerIdentity } from "./core/identity.ts";
import type { RelayProgress } from "./core/protocol.ts";
import { sharedHandle } from "./core/shared-handle.ts";
import type { HostUI } from "./core/surface.ts";
import { type Envelope, makeEnvelope } from "./model/result.ts";
import { validateAskParams } from "./model/validate.ts";
import { loadingPiVersion, reportUnsupportedPi } from "./supported-pi.ts";
import { dialogSurface } from "./surfaces/dialogs.ts";
import { lazyFormSurface } from "./surfaces/terminal-form/lazy.ts";
import { WEB_ENV, webPageSlotExists } from "./surfaces/web/enable.ts";
import { toToolResult } from "./tool/envelope.ts";
import { progressText } from "./tool/progress.ts";
import { renderCallView, renderResultView } from "./tool/render.ts";
import { type AskParams, AskParamsSchema } from "./tool/schema.ts";
import { askRemote, closeProcessEndpoint, endpointFromEnv, ensureProcessEndpoint } from "./transports/local/index.ts";
import { readNatsConfig } from "./transports/nats/config.ts";

export const TOOL_NAME = "ask_user_via_host";

const DESCRIPTION = [
	"Ask the human a question and wait for the answer. Works from any session, sub-agents included: the question is shown in the main session's UI.",
	"Batch every related question into one call; ask only what changes the outcome.",
	"Questions can offer options (with descriptions, a preview such as code or a diff, a recommended one, multiSelect, and an 'Other' free-text entry), be free text, or be a yes/no confirm.",
	'Returns JSON {status, answers:[{question, answer, kind, values?, id?, note?}], note}; an answer\'s note is what the human added in their own words. Proceed only on status "ok"; on any other status do not guess: return a structured needs_input result listing the open questions.',
].join(" ");

const PROMPT_GUIDELINES = [
	`Use ${TOOL_NAME} when a decision belongs to the human and you cannot infer it; never guess instead.`,
	`Batch related questions into a single ${TOOL_NAME} call, give options when the choices are known, and ask only what changes the outcome.`,
	`If ${TOOL_NAME} returns any status other than "ok", stop and return a structured needs_input result with the open questions instead of guessing.`,
];

/** One terminal bell, only where stdout is a terminal (in RPC mode stdout is the protocol). */
const bell = () => {
	if (process.stdout.isTTY) process.stdout.write("\x07");
};

/** Where prepareArguments keeps the raw arguments of a call that has no questions at all. */
const WITHOUT_QUESTIONS = "checkpointBridgeRawArguments";
/** The NATS transport, loaded on first use: a session without CHECKPOINT_BRIDGE_NATS never loads it (nor the client). */
const loadNats = () => import("./transports/nats/index.ts");
const hasQuestions = (args: unknown) => typeof args === "object" && args !== null && (args as { questions?: unknown }).questions != null;

type WebModule = typeof import("./surfaces/web/index.ts");
let webModule: Promise<WebModule> | undefined;
/** The web answer page's code, loaded the first time the page is wanted: nothing of it loads otherwise. */
const loadWeb = (): Promise<WebModule> => (webModule ??= import("./surfaces/web/index.ts"));
/** The running page's module, without loading it when no page was ever started in this process. */
const webIfStarted = (): Promise<WebModule> | undefined => (webPageSlotExists() ? loadWeb() : undefined);

const WEB_USAGE = "checkpoint-bridge: /checkpoints web [<host>:<port>] serves the answer page (default 127.0.0.1:0); /checkpoints web off stops it";

/** A notice that cannot fail the caller (a UI that is going away). */
const noticeTo = (ui: HostUI) => (message: string, type: "info" | "warning") => {
	try {
		ui.notify(message, type);
	} catch {
		// Nothing to fall back to.
	}
};

export default function checkpointBridge(pi: ExtensionAPI): void {
	// Read now, while pi's loader is on the stack; told at the first session start.
	const piVersion = loadingPiVersion();
	const handle = sharedHandle();
	let role: HostRole | undefined;
	/** This session's id, known from session_start on; names the asker in the transcript. */
	let sessionId: string | undefined;

	// A session with a UI claims the role at start; the next one claims it after /new, /resume, /fork, /reload.
	pi.on("session_start", async (_event, ctx) => {
		// With a UI the human gets a notice; without one (print, json modes) stderr is where pi itself warns.
		reportUnsupportedPi(piVersion, (notice) => (ctx.hasUI ? ctx.ui.notify(notice, "warning") : process.stderr.write(`${notice}\n`)));
		sessionId = ctx.sessionManager.getSessionId();
		if (role || !ctx.hasUI) return;
		role = claimHostRole(handle, {
			ui: ctx.ui,
			// The terminal shows a request as one form; RPC hosts keep pi's select/input dialogs.
			surface: ctx.mode === "tui" ? lazyFormSurface(ctx.ui) : dialogSurface(ctx.ui),
			sessionId,
			bell,
			onSettled: (record) => pi.appendEntry(AUDIT_ENTRY_TYPE, record),
		});
		// Processes this host spawns (background sub-agents, pi -p runs) reach it through a local socket.
		// Awaited: pi waits for session_start, so nothing the session spawns can miss the variable.
		if (role)
			await ensureProcessEndpoint(handle).catch((error: unknown) =>
				ctx.ui.notify(`checkpoint-bridge: cannot serve other processes: ${error instanceof Error ? error.message : String(error)}`, "warning"),
			);
		if (!role) return;
		// Askers on other machines reach it through a NATS room, when one is configured (ADR-0009).
		await serveNatsRoom(ctx.ui);
		// A page already running (a replaced host's) now reports to this host.
		(await webIfStarted())?.setWebNotice(noticeTo(ctx.ui));
		const wanted = process.env[WEB_ENV]?.trim();
		if (wanted) await serveWebPage(ctx.ui, wanted, false);
	});

	/** Starts the process's answer page (or finds it running) and tells the human where it is. */
	async function serveWebPage(ui: HostUI, spec: string, announceIfRunning: boolean): Promise<void> {
		const notify = noticeTo(ui);
		const web = await loadWeb();
		const parsed = web.parseWebAddress(spec);
		if (!parsed.ok) return notify(`checkpoint-bridge: cannot serve the answer page: ${parsed.reason}`, "warning");
		try {
			const { page, started } = await web.ensureWebPage(handle, parsed.address);
			web.setWebNotice(notify);
			if (!started && !announceIfRunning) return;
			const warning = web.exposureWarning(page.address);
			if (warning && started) notify(warning, "warning");
			notify(web.announcement(page), "info");
		} catch (error) {
			notify(`checkpoint-bridge: cannot serve the answer page at ${spec}: ${error instanceof Error ? error.message : String(error)}`, "warning");
		}
	}

	/** `/checkpoints web [<host>:<port>]` and `/checkpoints web off`. */
	async function webCommand(words: string[], ui: HostUI): Promise<void> {
		if (words[0] === "off" && words.length === 1) {
			const web = webIfStarted();
			const closed = web ? await (await web).closeWebPage() : false;
			return ui.notify(
				closed ? "checkpoint-bridge: the answer page is closed; its links no longer work" : "checkpoint-bridge: the answer page is not running",
				"info",
			);
		}
		if (words.length > 1) return ui.notify(WEB_USAGE, "warning");
		if (!role) return ui.notify("checkpoint-bridge: only the session that holds the host role serves the answer page", "warning");
		const web = await loadWeb();
		await serveWebPage(ui, words[0] ?? process.env[WEB_ENV]?.trim() ?? web.DEFAULT_WEB_ADDRESS, true);
	}

	/** Serves the configured NATS room from this process (or says why not). */
	async function serveNatsRoom(ui: HostUI): Promise<void> {
		const nats = readNatsConfig();
		if (nats.kind === "off") return;
		if (nats.kind === "error") return ui.notify(`checkpoint-bridge: not serving over NATS: ${nats.error}`, "warning");
		for (const warning of nats.warnings) ui.notify(`checkpoint-bridge: ${warning}`, "warning");
		try {
			const started = await (await loadNats()).ensureProcessRoom(handle, nats.config);
			ui.notify(
				started.kind === "serving"
					? `checkpoint-bridge: serving room "${started.room}" on NATS`
					: `checkpoint-bridge: room "${started.room}" is already served by another host on NATS; this session does not serve it`,
				started.kind === "serving" ? "info" : "warning",
			);
			if (started.kind === "serving" && started.warning) ui.notify(`checkpoint-bridge: ${started.warning}`, "warning");
		} catch (error) {
			ui.notify(`checkpoint-bridge: cannot serve room "${nats.config.room}" on NATS: ${error instanceof Error ? error.message : String(error)}`, "warning");
		}
	}

	pi.on("session_shutdown", async (event) => {
		if (!role) return;
		const note = `The host session ended (${event.reason}) before the questions were answered.`;
		// A quitting host lets its NATS askers go first, so those with a grace wait for the next host instead of settling.
		if (event.reason === "quit" && readNatsConfig().kind === "ok") await (await loadNats()).closeProcessRoom(note);
		role.release(event.reason, note);
		role = undefined;
		const web = await webIfStarted();
		web?.setWebNotice(undefined);
		// On replacement the endpoint, the room and the page stay, so remote askers and open tabs carry over to the next host.
		if (event.reason === "quit") await Promise.all([closeProcessEndpoint(note), web?.closeWebPage()]);
	});

	pi.registerCommand("checkpoints", {
		description: "checkpoint-bridge: questions open now and the recent history; `web` / `web off` start / stop the answer page",
		handler: async (args, ctx) => {
			const words = (args ?? "").trim().split(/\s+/).filter(Boolean);
			if (words[0] === "web") return webCommand(words.slice(1), ctx.ui);
			if (words.length > 0) return ctx.ui.notify(WEB_USAGE, "warning");
			const report = checkpointsReport(handle.snapshot(), ctx.sessionManager.getEntries(), role?.host.stats);
			const web = webIfStarted();
			const page = web ? await (await web).currentWebPage() : undefined;
			ctx.ui.notify(page ? `${report}\n${(await web!).announcement(page)}` : report, "info");
		},
	});

	pi.registerTool<typeof AskParamsSchema, Envelope>({
		name: TOOL_NAME,
		label: "Ask user via host",
		description: DESCRIPTION,
		promptSnippet: `${TOOL_NAME}: ask the human (shown in the main session's UI), even from a sub-agent`,
		promptGuidelines: PROMPT_GUIDELINES,
		parameters: AskParamsSchema,
		// Without questions pi's schema check would refuse the call with its own text; carry such a call
		// to execute instead, so it gets the envelope (status error, every problem named) like any other.
		prepareArguments: (args) => (hasQuestions(args) ? (args as AskParams) : ({ questions: [], [WITHOUT_QUESTIONS]: args } as unknown as AskParams)),
		renderCall: (args, theme) => renderCallView(args, askerIdentity(pi.getSessionName(), sessionId ?? "this session").label, theme),
		renderResult: (result, options, theme) => renderResultView(result, options, theme),
		async execute(_toolCallId, params, signal, onUpdate, ctx) {
			const startedAt = Date.now();
			try {
				const asker = askerIdentity(pi.getSessionName(), ctx.sessionManager.getSessionId(), activeAgentOf(ctx.getSystemPrompt?.()));
				const raw =
					typeof params === "object" && params !== null && WITHOUT_QUESTIONS in params ? (params as Record<string, unknown>)[WITHOUT_QUESTIONS] : params;
				const checked = validateAskParams(raw);
				if (!checked.ok)
					return toToolResult(makeEnvelope("error", [], `Invalid parameters: ${checked.problems.join("; ")}.`, { asker: asker.label, waitedMs: 0 }));
				const config = readConfig();
				const total = checked.questions.length;
				const options = {
					asker,
					questions: checked.questions,
					budgetMs: callBudget(checked.timeoutMs, config),
					dialogTimeoutMs: config.dialogTimeoutMs,
					...(signal ? { signal } : {}),
					// Streams why the call waits, into the asker's transcript and pi-subagents' progress.
					onProgress: (progress: RelayProgress) =>
						onUpdate?.({ content: [{ type: "text", text: progressText(progress, total) }], details: undefined as unknown as Envelope }),
				};
				// Order: a host in this process, the local endpoint of a host that spawned it, a NATS room, else no-host.
				if (handle.host()) return toToolResult(await askViaHost({ handle, ...options }));
				const remote = endpointFromEnv(process.env);
				if (remote) return toToolResult(await askRemote(remote, options));
				const nats = readNatsConfig();
				if (nats.kind === "error") return toToolResult(makeEnvelope("error", [], `checkpoint-bridge: ${nats.error}`, { asker: asker.label, waitedMs: 0 }));
				if (nats.kind === "ok") {
					const { config: natsConfig } = nats;
					const { askOverNats, connectBroker } = await loadNats();
					const connect = () => connectBroker(natsConfig, { name: `checkpoint-bridge asker ${asker.label}` });
					return toToolResult(await askOverNats({ ...options, connect, config: natsConfig }));
				}
				return toToolResult(await askViaHost({ handle, ...options }));
			} catch (error) {
				// Environmental failures become a status, never an exception into pi.
				const reason = error instanceof Error ? error.message : String(error);
				return toToolResult(makeEnvelope("error", [], `checkpoint-bridge failed: ${reason}`, { waitedMs: Date.now() - startedAt }));
			}
		},
	});
}
