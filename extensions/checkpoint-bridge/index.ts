/**
 * checkpoint-bridge: every session gets `ask_user_via_host`; the one session with a UI (the host)
 * shows the questions, one dialog at a time for the whole process, and the answers come back as
 * the tool result. Loads nothing from pi when it loads, so any pi with this extension API loads it.
 * This file only registers and wires the parts: the tool's call is tool/ask.ts's, the host's life
 * host-life.ts's, the way a call goes route.ts's, who asks core/shared/identity.ts's (sessionAsker).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { sessionBox } from "./core/delivery/session-box.ts";
import { isLiveSession, sessionAsker, sessionReads } from "./core/shared/identity.ts";
import { sharedHandle } from "./core/shared/shared-handle.ts";
import type { HostLife } from "./host-life.ts";
import { isRelayedUI, toolEdge } from "./interop/marks.ts";
import { reachOtherExtensions } from "./other-extensions.ts";
import type { Ways } from "./route.ts";
import { loadingPiVersion, reportUnsupportedPi } from "./supported-pi.ts";
import { askTool } from "./tool/ask.ts";
import { drawAnswerMessages } from "./tool/render.ts";
import { TOOL_NAME } from "./tool/schema.ts";
import { waitTool } from "./tool/wait.ts";

export { TOOL_NAME };

let later: Promise<typeof import("./ask-later.ts")> | undefined;
let route: Promise<typeof import("./route.ts")> | undefined;
// A call's late end and `wait: false` (ask-later.ts), and the way calls go (route.ts): loaded at first use, once for every caller.
const loadLater = () => (later ??= import("./ask-later.ts"));
const loadRoute = () => (route ??= import("./route.ts"));

export default function checkpointBridge(pi: ExtensionAPI): void | Promise<void> {
	// Read now, while pi's loader is on the stack; told at the first session start.
	const piVersion = loadingPiVersion();
	const handle = sharedHandle();
	/** The host's life (host-life.ts), loaded at the start of a session with a UI: a sub-agent child never loads it. */
	let host: HostLife | undefined;
	/** Queued requests of every session of the process and their deliveries as messages (core/delivery/), loaded at first use. */
	const box = sessionBox(pi, () => handle.host()?.sessionId);
	const me = sessionAsker(() => pi.getSessionName());
	/** The way calls go (route.ts), loaded at the session's first call or other ask tool's call: a child with neither loads no transport. */
	let ways: Ways | undefined;
	// The session attaches to the process's box then too, whichever way its call goes: a late end of a host here finds it.
	const loadWays = async () => (ways ??= (await Promise.all([loadRoute(), box.box()]))[0].waysFrom(handle));
	/** Set from session_start to session_shutdown: stops feeding the page other ask tools' forms. */
	let closeFormsOnPage: (() => void) | undefined;
	/** Set from session_shutdown on: a call ended by the quit stays open in the session, for the next start. */
	let closing = false;
	/** The host session's own questions: recorded, reopened at its next start (own-questions.ts, loaded at the claim). */
	let own: ReturnType<typeof import("./own-questions.ts").ownQuestions> | undefined;

	// A session with a UI claims the role at start; the next one claims it after /new, /resume, /fork, /reload.
	pi.on("session_start", async (event, ctx) => {
		// A start of a session pi already replaced (another handler awaited across a /resume) has nothing to claim.
		if (!isLiveSession(ctx)) return;
		closing = false;
		// With a UI the human gets a notice; without one (print, json modes) stderr is where pi itself warns.
		reportUnsupportedPi(piVersion, (notice) => (ctx.hasUI ? ctx.ui.notify(notice, "warning") : process.stderr.write(`${notice}\n`)));
		const sessionId = ctx.sessionManager.getSessionId();
		const entries = () => ctx.sessionManager.getEntries();
		me.started(sessionReads(ctx, () => host?.role !== undefined));
		// A relayed UI (a child's, ADR-0012) is the host's, reached from here: such a session is no host of its own.
		const relayed = isRelayedUI(ctx.ui);
		// A child whose agent file narrows `tools:` has no ask_user_via_host: the host tells the human why, and the fix.
		if ((!ctx.hasUI || relayed) && !pi.getActiveTools().includes(TOOL_NAME))
			(await import("./core/asking/tool-missing.ts")).reportToolMissing(handle, me.agent() ?? me.identity().label, TOOL_NAME);
		if (ctx.hasUI && !relayed) {
			host ??= (await import("./host-life.ts")).hostLife({ handle, appendEntry: (customType, data) => pi.appendEntry(customType, data) });
			// pi replaced the session while the host's life loaded or it claimed (a /resume typed at once): the next start takes over.
			if (!isLiveSession(ctx) || !(await host.claim(ctx, sessionId))) return;
		}
		const role = host?.role;
		// Attached once the role is settled: a host's session takes what was kept for askers that are gone.
		await box.start(sessionId, entries, role !== undefined);
		if (role) own ??= (await import("./own-questions.ts")).ownQuestions(pi, handle, await box.box(), () => !closing);
		// A continued or resumed host session asks its own questions a crash or a quit left open again.
		if (role && (event.reason === "startup" || event.reason === "resume")) own?.reopen(entries, sessionId);
		// Other ask tools' forms open in this terminal show on the web page too (interop/); elsewhere they ride the relay. A foreground
		// child of a terminal host (mode "tui", ADR-0016) draws its forms there: they show too. No terminal (a sub-agent child): never loaded.
		if (pi.events && ctx.mode === "tui" && !closeFormsOnPage) {
			const { otherFormsOnPage } = await import("./interop/forms-on-page.ts");
			closeFormsOnPage ??= otherFormsOnPage(pi.events);
		}
	});

	// A child bound in mode "rpc" watches for an extension that refuses to ask without pi's terminal (ADR-0016).
	pi.on("tool_execution_start", (_event, ctx) => toolEdge(ctx.ui, "start"));
	pi.on("tool_execution_end", (_event, ctx) => toolEdge(ctx.ui, "end"));

	pi.on("session_shutdown", (event) => {
		closing = true;
		own?.close();
		closeFormsOnPage?.();
		box.close();
		closeFormsOnPage = undefined;
		ways?.releaseLate(me.identity().sessionId);
		return host?.release(event.reason);
	});

	pi.registerCommand("checkpoints", {
		description: "checkpoint-bridge: questions open now (late ones too) and recent history; answer <n>, pause, resume, web [off], notify test",
		// Loaded when the command is typed: a session where it never is (each sub-agent child) loads none of it.
		handler: async (args, ctx) => (await import("./checkpoints-command.ts")).runCheckpoints(args, ctx, handle, host?.role),
	});
	const tool = askTool({
		asker: me.identity,
		// A host of another process that keeps a timed-out question late sends its end back while this process runs.
		ask: async (options) => (await loadWays()).ask(options, async (call) => (await loadLater()).withLate(await box.box(), call)),
		// The host session's queued question is recorded too (own-questions.ts).
		askLater: async (options) =>
			(await loadLater()).askLaterFrom((await loadWays()).now(), options, { handle, box: await box.box(), own: host?.role && own?.record }),
		// Only the host session's own questions are recorded: a crash or a quit leaves them open for the next start.
		recordOwn: (asker, questions) => (host?.role ? own?.record(asker, questions) : undefined),
	});
	pi.registerTool(tool);
	pi.registerTool(waitTool(box.box));
	drawAnswerMessages(pi);
	// Other extensions' questions (pi-agent-ask's forms, relayed dialogs) reach the host along the same ways.
	return reachOtherExtensions(pi, tool, { ways: loadWays, found: () => ways }, () => me.identity());
}
