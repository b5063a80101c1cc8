/**
 * The host's life in one session: at session_start a session with a UI claims the role, then
 * serves other processes (the local endpoint), other machines (a NATS room, when configured) and
 * the web page (when wanted); at session_shutdown it gives them back. On a replacement (/new,
 * /resume, /fork, /reload) the endpoint, the room and the page stay for the next host; at quit they stop.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { channelsOf } from "./channels.ts";
import type { HostUI } from "./core/answering/surface.ts";
import type { HostRole, SettledRecord } from "./core/host/host-role.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";
// What a session loads of the terminal form: the form itself loads on the first TUI question.
import { lazyFormSurface } from "./surfaces/terminal-form/lazy.ts";
import { readNatsConfig } from "./transports/nats/config.ts";

/**
 * The host's side, loaded at the first claim: the book, the queue, the store, the screens and the
 * local endpoint's server. A session that never hosts (each sub-agent child) loads none of it.
 */
let hostSide: Promise<HostSide> | undefined;
const loadHostSide = () => (hostSide ??= importHostSide());
type HostSide = Awaited<ReturnType<typeof importHostSide>>;
/** One after the other, once: pi's loader can hand a concurrent import of a shared module a module half run. */
async function importHostSide() {
	const { terminalDraws } = await import("./core/answering/screens.ts");
	const { requestBook } = await import("./core/host/book.ts");
	const { claimHostRole } = await import("./core/host/host-role.ts");
	const { readLateConfig } = await import("./core/shared/late-config.ts");
	const { processStore } = await import("./core/store/open.ts");
	const { withChildScreens } = await import("./surfaces/child-screen/surface.ts");
	const { dialogSurface } = await import("./surfaces/dialogs.ts");
	const { closeProcessEndpoint, ensureProcessEndpoint } = await import("./transports/local/process-endpoint.ts");
	return {
		terminalDraws,
		requestBook,
		claimHostRole,
		readLateConfig,
		processStore,
		withChildScreens,
		dialogSurface,
		closeProcessEndpoint,
		ensureProcessEndpoint,
	};
}

/** Loads the NATS transport; the entry passes it so that a session without CHECKPOINT_BRIDGE_NATS never loads it. */
export type LoadNats = () => Promise<typeof import("./transports/nats/index.ts")>;

export interface HostLifeOptions {
	/** The process's shared handle. */
	handle: SharedHandle;
	/** Rings for attention when a relayed question is first shown. */
	bell: () => void;
	/** Called for every settled request (the audit trail). */
	onSettled: (record: SettledRecord) => void;
	/** Loads the NATS transport on first use. */
	loadNats: LoadNats;
}

/** What a session knows of its host role. */
export interface HostLife {
	/** The role this session holds now, if any. */
	readonly role: HostRole | undefined;
	/**
	 * At session_start: claims the role when the session has a UI and nobody holds it, and serves what the host serves.
	 * False when the session ended while it claimed: its ctx is stale and nothing was claimed.
	 */
	claim(ctx: Pick<ExtensionContext, "hasUI" | "mode" | "ui">, sessionId: string): Promise<boolean>;
	/** At session_shutdown: gives the role back (`reason` as pi gives it); at quit also stops the endpoint, the room and the page. */
	release(reason: string): Promise<void>;
}

/** The host life of one session; holds nothing until `claim`. */
export function hostLife(options: HostLifeOptions): HostLife {
	const { handle, bell, onSettled, loadNats } = options;
	let role: HostRole | undefined;
	/** The session whose terminal draws child screens, while this session holds the role in the TUI. */
	let drawing: string | undefined;
	/** Counts releases: pi replaces a session (/resume, /new) while its start may still be claiming, and that claim must not outlive it. */
	let releases = 0;
	const channels = channelsOf();

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

	return {
		get role() {
			return role;
		},
		async claim(ctx, sessionId) {
			if (role || !ctx.hasUI) return true;
			// Read now: a session replaced while this claim awaits has a context that throws on every read.
			const { ui, mode } = ctx;
			const claimedAt = releases;
			const released = () => releases !== claimedAt;
			const { claimHostRole, requestBook, readLateConfig, processStore, withChildScreens, dialogSurface, ensureProcessEndpoint, terminalDraws } =
				await loadHostSide();
			// Another start of this session may have claimed while the host's side loaded, or the session ended.
			if (role || released()) return !released();
			role = claimHostRole(handle, {
				ui: ui,
				// The terminal shows a request as one form, and a foreground child's own component (ADR-0016); RPC hosts keep pi's select/input dialogs.
				surface: withChildScreens(mode === "tui" ? lazyFormSurface(ui) : dialogSurface(ui, "rpc"), mode === "tui" ? ui : undefined),
				sessionId,
				bell,
				onSettled,
				book: requestBook(handle, readLateConfig()),
				// Requests of other processes are written down for the next host in this directory (ADR-0033).
				store: processStore(process.cwd()),
			});
			// Processes this host spawns (background sub-agents, pi -p runs) reach it through a local socket.
			// Awaited: pi waits for session_start, so nothing the session spawns can miss the variable.
			if (role)
				await ensureProcessEndpoint(handle).then(
					// The variable still reaches what this host spawns; a restarted host's askers and tools outside pi will not find it.
					(endpoint) =>
						endpoint.advertProblem &&
						ui.notify(`checkpoint-bridge: other processes in this directory cannot find this host: ${endpoint.advertProblem}`, "warning"),
					(error: unknown) =>
						ui.notify(`checkpoint-bridge: cannot serve other processes: ${error instanceof Error ? error.message : String(error)}`, "warning"),
				);
			if (!role || released()) return !released();
			if (mode === "tui") terminalDraws((drawing = sessionId), true);
			// Askers on other machines reach it through a NATS room, when one is configured (ADR-0009).
			await serveNatsRoom(ui);
			if (released()) return false;
			// The page (with its one-tap links, the notify command, ntfy) and mail, when configured (channels.ts).
			await channels.claim(handle, ui);
			return !released();
		},
		async release(reason) {
			releases++;
			if (!role) return;
			const { terminalDraws, closeProcessEndpoint } = await loadHostSide();
			const note = `The host session ended (${reason}) before the questions were answered.`;
			// A quitting host lets its NATS askers go first, so those with a grace wait for the next host instead of settling.
			if (reason === "quit" && readNatsConfig().kind === "ok") await (await loadNats()).closeProcessRoom(note);
			if (drawing !== undefined) terminalDraws(drawing, false);
			drawing = undefined;
			role.release(reason, note);
			role = undefined;
			// On replacement the endpoint, the room and the page stay, so remote askers and open tabs carry over to the next host.
			await Promise.all([channels.release(reason === "quit"), reason === "quit" && closeProcessEndpoint(note)]);
		},
	};
}
