/**
 * The host's life in one session: at session_start a session with a UI claims the role, then
 * serves other processes (the local endpoint), other machines (a NATS room, when configured) and
 * the web page (when wanted); at session_shutdown it gives them back. On a replacement (/new,
 * /resume, /fork, /reload) the endpoint, the room and the page stay for the next host; at quit they stop.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { HostRole } from "./core/host/host-role.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";
import { closeTransports, serveTransports } from "./route.ts";

/**
 * The host's side, loaded at the first claim: the book, the queue, the store, the screens and the
 * channels. A session that never hosts (each sub-agent child) loads none of it.
 */
let hostSide: Promise<HostSide> | undefined;
const loadHostSide = () => (hostSide ??= importHostSide());
type HostSide = Awaited<ReturnType<typeof importHostSide>>;
/** One after the other, once: pi's loader can hand a concurrent import of a shared module a module half run. */
async function importHostSide() {
	const { AUDIT_ENTRY_TYPE } = await import("./core/host/audit.ts");
	const { terminalDraws } = await import("./core/answering/screens.ts");
	const { requestBook } = await import("./core/host/book.ts");
	const { claimHostRole } = await import("./core/host/host-role.ts");
	const { readLateConfig } = await import("./core/shared/late-config.ts");
	const { processStore } = await import("./core/store/open.ts");
	const { withChildScreens } = await import("./surfaces/child-screen/surface.ts");
	const { dialogSurface } = await import("./surfaces/dialogs.ts");
	// What the host loads of the terminal form: the form itself loads on the first TUI question.
	const { lazyFormSurface } = await import("./surfaces/terminal-form/lazy.ts");
	const { channelsOf } = await import("./channels.ts");
	const { offerMcpRoute } = await import("./surfaces/web/http/mcp-route.ts");
	return {
		AUDIT_ENTRY_TYPE,
		offerMcpRoute,
		terminalDraws,
		requestBook,
		claimHostRole,
		readLateConfig,
		processStore,
		withChildScreens,
		dialogSurface,
		lazyFormSurface,
		channelsOf,
	};
}

/** Rings for attention when a relayed question is first shown: one bell, only where stdout is a terminal (in RPC mode stdout is the protocol). */
const bell = () => void (process.stdout.isTTY && process.stdout.write("\x07"));

export interface HostLifeOptions {
	/** The process's shared handle. */
	handle: SharedHandle;
	/** Records every settled request in the session (the audit trail). */
	appendEntry: ExtensionAPI["appendEntry"];
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
	const { handle, appendEntry } = options;
	let role: HostRole | undefined;
	/** The session whose terminal draws child screens, while this session holds the role in the TUI. */
	let drawing: string | undefined;
	/** Counts releases: pi replaces a session (/resume, /new) while its start may still be claiming, and that claim must not outlive it. */
	let releases = 0;
	/** The channels this session started: created at its first claim. */
	let channels: ReturnType<HostSide["channelsOf"]> | undefined;

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
			const side = await loadHostSide();
			channels ??= side.channelsOf();
			// Another start of this session may have claimed while the host's side loaded, or the session ended.
			if (role || released()) return !released();
			role = side.claimHostRole(handle, {
				ui: ui,
				// The terminal shows a request as one form, and a foreground child's own component (ADR-0016); RPC hosts keep pi's select/input dialogs.
				surface: side.withChildScreens(mode === "tui" ? side.lazyFormSurface(ui) : side.dialogSurface(ui, "rpc"), mode === "tui" ? ui : undefined),
				sessionId,
				bell,
				onSettled: (record) => appendEntry(side.AUDIT_ENTRY_TYPE, record),
				book: side.requestBook(handle, side.readLateConfig()),
				// Requests of other processes are written down for the next host in this directory (ADR-0033).
				store: side.processStore(process.cwd()),
			});
			if (!role) return true;
			// The page serves MCP at /mcp (ADR-0026): the server is loaded on the first request that passes the page's checks.
			side.offerMcpRoute(() => import("./mcp.ts").then((mcp) => mcp.httpEndpoint(handle)));
			if (mode === "tui") side.terminalDraws((drawing = sessionId), true);
			// Other processes (the local endpoint) and other machines (a NATS room, when configured) reach it (transports.ts).
			if (!(await serveTransports(handle, ui, released))) return false;
			// The page (with its one-tap links, the notify command, ntfy) and mail, when configured (channels.ts).
			await channels.claim(handle, ui);
			return !released();
		},
		async release(reason) {
			releases++;
			if (!role) return;
			const { terminalDraws } = await loadHostSide();
			const note = `The host session ended (${reason}) before the questions were answered.`;
			const quit = reason === "quit";
			// A transport whose askers wait for the next host lets them go before the requests end.
			if (quit) await closeTransports(note, true);
			if (drawing !== undefined) terminalDraws(drawing, false);
			drawing = undefined;
			role.release(reason, note);
			role = undefined;
			// On replacement the endpoint, the room and the page stay, so remote askers and open tabs carry over to the next host.
			await Promise.all([channels?.release(quit), quit && closeTransports(note, false)]);
		},
	};
}
