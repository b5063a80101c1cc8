/**
 * checkpoint-bridge: every session gets `ask_user_via_host`; the one session with a UI (the host)
 * shows the questions, one dialog at a time for the whole process, and the answers come back as
 * the tool result. Loads nothing from pi when it loads, so any pi with this extension API loads it;
 * the terminal form and pi-tui (which pi supplies to extensions) are imported on the first TUI question.
 * This file only registers: the host's life is host-life.ts's, the way a call goes route.ts's.
 */
import type { ExtensionAPI, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { askLater } from "./ask-later.ts";
import { askViaHost } from "./core/asker.ts";
import { AUDIT_ENTRY_TYPE, answerLate, checkpointsReport } from "./core/audit.ts";
import { callBudget, readConfig } from "./core/config.ts";
import { deliveryBox, sessionPoster } from "./core/delivery.ts";
import { formsElsewhere } from "./core/elsewhere.ts";
import { activeAgentOf, askerIdentity } from "./core/identity.ts";
import type { RelayProgress } from "./core/protocol.ts";
import { terminalHere } from "./core/screens.ts";
import { sharedHandle } from "./core/shared-handle.ts";
import { reportToolMissing } from "./core/tool-missing.ts";
import { hostLife } from "./host-life.ts";
import { isRelayedUI, relayDialogsOn } from "./interop/dialog-relay.ts";
import { offerExternalUI } from "./interop/pi-agent-ask.ts";
import { piAgentAskOnPage } from "./interop/pi-agent-ask-page.ts";
import { rpivOnPage } from "./interop/rpiv-page.ts";
import { toolEdge } from "./interop/screen-relay.ts";
import { type Envelope, makeEnvelope } from "./model/result.ts";
import { validateAskParams } from "./model/validate.ts";
import { recordOwn, reopenOwn } from "./own-questions.ts";
import { askAlong, chooseRoute, noticeAlong, reachesHost } from "./route.ts";
import { loadingPiVersion, reportUnsupportedPi } from "./supported-pi.ts";
import { WEB_USAGE, webCommand, webPageLine } from "./surfaces/web/command.ts";
import { prepareArguments, rawArguments } from "./tool/arguments.ts";
import { DESCRIPTION, PROMPT_GUIDELINES, PROMPT_SNIPPET, TOOL_LABEL, TOOL_NAME } from "./tool/description.ts";
import { toToolResult } from "./tool/envelope.ts";
import { progressText } from "./tool/progress.ts";
import { renderCallView, renderResultView } from "./tool/render.ts";
import { AskParamsSchema } from "./tool/schema.ts";
import { WAIT_TOOL_NAME, WaitParamsSchema, waitForAnswers } from "./tool/wait.ts";
import { findHostEndpoint } from "./transports/local/index.ts";
import { readNatsConfig } from "./transports/nats/config.ts";

export { TOOL_NAME };

/** One terminal bell, only where stdout is a terminal (in RPC mode stdout is the protocol). */
const bell = () => {
	if (process.stdout.isTTY) process.stdout.write("\x07");
};

/** The NATS transport, loaded on first use: a session without CHECKPOINT_BRIDGE_NATS never loads it (nor the client). */
const loadNats = () => import("./transports/nats/index.ts");

/** The relay of other extensions' dialogs, loaded only when it is switched on. */
const loadDialogRelay = () => import("./interop/enable.ts");

export default function checkpointBridge(pi: ExtensionAPI): void | Promise<void> {
	// Read now, while pi's loader is on the stack; told at the first session start.
	const piVersion = loadingPiVersion();
	const handle = sharedHandle();
	const host = hostLife({ handle, bell, loadNats, onSettled: (record) => pi.appendEntry(AUDIT_ENTRY_TYPE, record) });
	/** Queued requests of every session of the process and their deliveries as messages (core/delivery.ts). */
	const box = deliveryBox(() => handle.host()?.sessionId);
	/** Detaches this session from the box; set from session_start to session_shutdown. */
	let detach: (() => void) | undefined;
	/** This session's id, known from session_start on; names the asker in the transcript. */
	let sessionId: string | undefined;
	/** This session's system prompt, known from session_start on: a pi-subagents child's names its agent. */
	let systemPrompt: (() => string | undefined) | undefined;
	/** Stops feeding the web page with the other ask tools' forms open in this session's terminal. */
	let stopFormsOnPage: (() => void) | undefined;
	/** The agent a child runs as, once found: pi rebuilds the system prompt on every read (0.1 ms, at times several). */
	let activeAgent: string | undefined;
	/** Set from session_shutdown on: a call ended by the quit stays open in the session, for the next start. */
	let closing = false;

	// A session with a UI claims the role at start; the next one claims it after /new, /resume, /fork, /reload.
	pi.on("session_start", async (event, ctx) => {
		closing = false;
		// With a UI the human gets a notice; without one (print, json modes) stderr is where pi itself warns.
		reportUnsupportedPi(piVersion, (notice) => (ctx.hasUI ? ctx.ui.notify(notice, "warning") : process.stderr.write(`${notice}\n`)));
		sessionId = ctx.sessionManager.getSessionId();
		systemPrompt = () => ctx.getSystemPrompt?.();
		activeAgent = undefined;
		// A relayed UI (a child's, ADR-0012) is the host's, reached from here: such a session is no host of its own.
		const relayed = isRelayedUI(ctx.ui);
		// A child whose agent file narrows `tools:` has no ask_user_via_host: the host tells the human why, and the fix.
		if ((!ctx.hasUI || relayed) && !pi.getActiveTools().includes(TOOL_NAME))
			reportToolMissing(handle, activeAgentOf(ctx.getSystemPrompt?.()) ?? askerIdentity(pi.getSessionName(), sessionId).label, TOOL_NAME);
		if (!relayed) await host.claim(ctx, sessionId);
		// Attached once the role is settled: a host's session takes what was held for askers that are gone.
		detach?.();
		detach = box.attach(
			sessionId,
			sessionPoster(pi, () => ctx.sessionManager.getEntries()),
		);
		// A continued or resumed host session asks its own questions a crash or a quit left open again (own-questions.ts).
		if (host.role && (event.reason === "startup" || event.reason === "resume"))
			void reopenOwn(
				pi,
				() => ctx.sessionManager.getEntries(),
				sessionId,
				(own, budget) => askViaHost({ handle, asker: own.asker, questions: own.questions, ...budget, resent: true }),
				() => !closing,
				// A queued one this process still holds (handed over at /resume) or delivered is not asked again.
				(requestId) => box.ownerOf(requestId) !== undefined || box.wasDelivered(requestId),
			);
		// Other ask tools' forms open in this terminal show on the web page too (interop/); elsewhere they ride the relay.
		// A foreground child of a terminal host (relayed in mode "tui", ADR-0016) draws its forms in that terminal: they show too.
		if (pi.events && ctx.mode === "tui" && !stopFormsOnPage) {
			const stops = [piAgentAskOnPage(pi.events, formsElsewhere()), rpivOnPage(pi.events, formsElsewhere())];
			stopFormsOnPage = () => stops.forEach((stop) => stop());
		}
	});

	// A child bound in mode "rpc" watches for an extension that refuses to ask without pi's terminal (ADR-0016).
	pi.on("tool_execution_start", (_event, ctx) => toolEdge(ctx.ui, "start"));
	pi.on("tool_execution_end", (_event, ctx) => toolEdge(ctx.ui, "end"));

	pi.on("session_shutdown", (event) => {
		closing = true;
		stopFormsOnPage?.();
		stopFormsOnPage = undefined;
		detach?.();
		detach = undefined;
		return host.release(event.reason);
	});

	/** The way a call goes now, read per call: a host that comes or goes is found at the next one. */
	const routeNow = () => chooseRoute({ hostHere: handle.host() !== undefined, endpoint: findHostEndpoint(), nats: readNatsConfig() });

	// Other ask tools' forms ride the same relay (interop/): pi-agent-ask's external UI outside TUI mode.
	// Without an event bus (an extension API older than pi.events) no other ask tool can negotiate.
	if (pi.events)
		offerExternalUI(pi.events, {
			reachable: () => reachesHost(routeNow()),
			ask: (questions, signal) => {
				const budgetMs = readConfig().callTimeoutMs;
				// A form's dialogs get the call's whole budget: a dialog closing at the deadline is then a timeout, never read as the human's dismiss.
				const options = { asker: askerIdentity(pi.getSessionName(), sessionId ?? "unknown"), questions, budgetMs, dialogTimeoutMs: budgetMs, signal };
				return askAlong(routeNow(), options, { handle, loadNats });
			},
		});

	pi.registerCommand("checkpoints", {
		description:
			"checkpoint-bridge: questions open now (late ones too) and the recent history; `answer <n>` shows late question n again; `web` / `web off` start / stop the answer page",
		handler: async (args, ctx) => {
			const words = (args ?? "").trim().split(/\s+/).filter(Boolean);
			if (words[0] === "web") return webCommand(words.slice(1), ctx.ui, handle, host.role !== undefined);
			if (words[0] === "answer") return ctx.ui.notify(answerLate(host.role?.host, words[1]), "info");
			if (words.length > 0) return ctx.ui.notify(WEB_USAGE, "warning");
			const report = checkpointsReport(handle.snapshot(), ctx.sessionManager.getEntries(), host.role?.host.stats);
			const page = await webPageLine();
			ctx.ui.notify(page ? `${report}\n${page}` : report, "info");
		},
	});

	const tool: ToolDefinition<typeof AskParamsSchema, Envelope> = {
		name: TOOL_NAME,
		label: TOOL_LABEL,
		description: DESCRIPTION,
		promptSnippet: PROMPT_SNIPPET,
		promptGuidelines: PROMPT_GUIDELINES,
		parameters: AskParamsSchema,
		prepareArguments,
		renderCall: (args, theme) => renderCallView(args, askerIdentity(pi.getSessionName(), sessionId ?? "this session").label, theme),
		renderResult: (result, options, theme) => renderResultView(result, options, theme),
		async execute(_toolCallId, params, signal, onUpdate, ctx) {
			const startedAt = Date.now();
			try {
				const asker = askerIdentity(pi.getSessionName(), ctx.sessionManager.getSessionId(), activeAgentOf(ctx.getSystemPrompt?.()));
				const checked = validateAskParams(rawArguments(params));
				if (!checked.ok)
					return toToolResult(makeEnvelope("error", [], `Invalid parameters: ${checked.problems.join("; ")}.`, { asker: asker.label, waitedMs: 0 }));
				const config = readConfig();
				const total = checked.questions.length;
				if (checked.wait === false) {
					// The host session's queued question is recorded too, under the id it is asked with: its delivery's record ends it.
					const own = host.role ? recordOwn(pi, asker, checked.questions, () => !closing) : undefined;
					const later = { asker, questions: checked.questions, budgetMs: callBudget(checked.timeoutMs, config), dialogTimeoutMs: config.dialogTimeoutMs };
					const receipt = await askLater(routeNow(), own ? { ...later, requestId: own.requestId } : later, { handle, loadNats, box });
					// Ended before the host took it: nothing will be delivered, nothing is left to reopen.
					if (receipt.status !== "queued") own?.ended(receipt.status, false);
					return toToolResult(receipt);
				}
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
				// The host session's own question is recorded first: a crash or a quit leaves it open for the next start.
				// A call aborted before it starts asks nothing, so there is nothing to reopen.
				const own = host.role && !signal?.aborted ? recordOwn(pi, asker, checked.questions, () => !closing) : undefined;
				const envelope = await askAlong(routeNow(), options, { handle, loadNats });
				own?.ended(envelope.status, signal?.aborted === true);
				return toToolResult(envelope);
			} catch (error) {
				// Environmental failures become a status, never an exception into pi.
				const reason = error instanceof Error ? error.message : String(error);
				return toToolResult(makeEnvelope("error", [], `checkpoint-bridge failed: ${reason}`, { waitedMs: Date.now() - startedAt }));
			}
		},
	};
	pi.registerTool(tool);
	pi.registerTool({
		name: WAIT_TOOL_NAME,
		label: "Wait for host answers",
		description:
			"Wait, within a budget, for the answers to questions you asked with ask_user_via_host and wait: false. Returns each that ended; the rest arrive later as messages. Use only when you have nothing else to do.",
		parameters: WaitParamsSchema,
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const outcome = await waitForAnswers(box, ctx.sessionManager.getSessionId(), params, signal);
			return { content: [{ type: "text", text: JSON.stringify(outcome) }], details: outcome };
		},
	});

	// Dialogs of other extensions in this session, when it has no UI, reach the host (ADR-0012).
	if (!relayDialogsOn()) return;
	return loadDialogRelay().then((relay) =>
		// The tool's definition marks this copy: pi keeps it as given in the session's runner.
		relay.enableDialogRelay(tool, {
			// Reachable when the session binds: a host in this process, the endpoint of the host that spawned it, or a NATS room.
			reachable: () => reachesHost(routeNow()),
			// A child's agent does not change within its session: read from the prompt until found, then kept.
			asker: () => askerIdentity(pi.getSessionName(), sessionId ?? "unknown", (activeAgent ??= activeAgentOf(systemPrompt?.()))),
			ask: (options) => askAlong(routeNow(), options, { handle, loadNats }),
			budgetMs: () => readConfig().callTimeoutMs,
			// Along the way a dialog goes: the bus, the local endpoint, or the NATS room.
			notify: (asker, message, type) => noticeAlong(routeNow(), { asker, message, type }, { handle, loadNats }),
			// A child's own components reach the host's terminal only when that terminal is in this process (ADR-0016).
			terminalHere: () => terminalHere() && routeNow().kind === "host",
		}),
	);
}
