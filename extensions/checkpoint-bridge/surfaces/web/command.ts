/**
 * The page's controls as the extension wires them: `/checkpoints web [<host>:<port>]`,
 * `/checkpoints web off`, CHECKPOINT_BRIDGE_WEB at the claim, the stop at quit. Only enable.ts is
 * imported statically: the page's code loads the first time the page is wanted.
 */
import type { HostUI } from "../../core/answering/surface.ts";
import { WEB_ENV, webPageSlotExists } from "./enable.ts";
import type { ObserverHandle } from "./live/board.ts";

type WebModule = typeof import("./index.ts");
let webModule: Promise<WebModule> | undefined;
/** The web answer page's code, loaded the first time the page is wanted: nothing of it loads otherwise. */
const loadWeb = (): Promise<WebModule> => (webModule ??= import("./index.ts"));
/** The running page's module, without loading it when no page was ever started in this process. */
const webIfStarted = (): Promise<WebModule> | undefined => (webPageSlotExists() ? loadWeb() : undefined);

/** What `/checkpoints` says to arguments it does not know. */
export const WEB_USAGE =
	"checkpoint-bridge: /checkpoints web [<host>:<port>] serves the answer page (default 127.0.0.1:0); /checkpoints web qr shows its link as a QR code; /checkpoints web off stops it; /checkpoints notify test sends a test notification";

/** What `/checkpoints web qr` says while no page runs. */
export const QR_PAGE_OFF =
	"checkpoint-bridge: the answer page is not running, so there is no link to show; start it with /checkpoints web (or set CHECKPOINT_BRIDGE_WEB=127.0.0.1:0), then /checkpoints web qr";

/** `/checkpoints web qr`: the running page's link as a QR code in the terminal, or how to start the page. */
async function webQr(ui: HostUI): Promise<void> {
	const web = webIfStarted();
	const page = web ? await (await web).currentWebPage() : undefined;
	if (!page) return ui.notify(QR_PAGE_OFF, "info");
	const unreachable = (await web!).unreachableLinksWarning(page.url, "this code and its link");
	if (unreachable) ui.notify(unreachable, "warning");
	try {
		const code = await (await web!).qrHalfBlocks(page.url);
		ui.notify(
			`checkpoint-bridge: the answer page, for your phone (this link answers every request: scan it only on your own device)\n${code}\n${page.url}`,
			"info",
		);
	} catch (error) {
		ui.notify(`checkpoint-bridge: cannot draw the QR code: ${error instanceof Error ? error.message : String(error)}; the link: ${page.url}`, "warning");
	}
}

/** A notice that cannot fail the caller (a UI that is going away). */
const noticeTo = (ui: HostUI) => (message: string, type: "info" | "warning") => {
	try {
		ui.notify(message, type);
	} catch {
		// Nothing to fall back to.
	}
};

/** Starts the process's answer page (or finds it running) and tells the human where it is. */
async function serveWebPage(handle: ObserverHandle, ui: HostUI, spec: string, announceIfRunning: boolean): Promise<void> {
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

/** Closes the process's page, if one runs, without loading the page's code otherwise; true when one did. */
export async function closeRunningWebPage(): Promise<boolean> {
	const web = webIfStarted();
	return web ? (await web).closeWebPage() : false;
}

/** `/checkpoints web [<host>:<port>]`, `/checkpoints web qr` and `/checkpoints web off`; `isHost`: whether this session holds the host role. */
export async function webCommand(words: string[], ui: HostUI, handle: ObserverHandle, isHost: boolean): Promise<void> {
	if (words[0] === "qr" && words.length === 1) return webQr(ui);
	if (words[0] === "off" && words.length === 1) {
		const closed = await closeRunningWebPage();
		return ui.notify(
			closed ? "checkpoint-bridge: the answer page is closed; its links no longer work" : "checkpoint-bridge: the answer page is not running",
			"info",
		);
	}
	if (words.length > 1) return ui.notify(WEB_USAGE, "warning");
	if (!isHost) return ui.notify("checkpoint-bridge: only the session that holds the host role serves the answer page", "warning");
	const web = await loadWeb();
	await serveWebPage(handle, ui, words[0] ?? process.env[WEB_ENV]?.trim() ?? web.DEFAULT_WEB_ADDRESS, true);
}

/**
 * At the claim: a page already running (a replaced host's) now reports to this host, and
 * CHECKPOINT_BRIDGE_WEB starts one; then, once, what keeps the links sent to a phone from working
 * (a wrong ntfy setting, ntfy without the page, links on loopback).
 */
export async function webPageOnClaim(handle: ObserverHandle, ui: HostUI): Promise<void> {
	(await webIfStarted())?.setWebNotice(noticeTo(ui));
	const wanted = process.env[WEB_ENV]?.trim();
	if (wanted) await serveWebPage(handle, ui, wanted, false);
	const channels = phoneChannelsSet();
	if (channels.length === 0) return;
	const notify = noticeTo(ui);
	// Nothing of the page is loaded for this unless it was started.
	const web = webIfStarted();
	const page = web ? await (await web).currentWebPage() : undefined;
	if (!page) {
		if (process.env[NTFY_URL]?.trim())
			notify(
				`checkpoint-bridge: ${NTFY_URL} is set, but the answer page is not running: ntfy's buttons and links need it (set ${WEB_ENV}=127.0.0.1:0, or /checkpoints web)`,
				"warning",
			);
		return;
	}
	const loaded = await web!;
	const ntfy = loaded.readNtfyConfig();
	if (!ntfy.ok) notify(`checkpoint-bridge: ${ntfy.reason}`, "warning");
	const warning = loaded.unreachableLinksWarning(page.url, `the links ${channels.join(", ")} sends`);
	if (warning) notify(warning, "warning");
}

/** The ntfy variable, as surfaces/web/away/ntfy.ts reads it; named here so the claim loads nothing when no channel is set. */
const NTFY_URL = "CHECKPOINT_BRIDGE_NTFY_URL";
/** The variables that send the page's links to a phone, set now (the mail's too: a mail carries one-tap links). */
const phoneChannelsSet = () => [NTFY_URL, "CHECKPOINT_BRIDGE_NOTIFY_COMMAND", "CHECKPOINT_BRIDGE_MAIL_TO"].filter((name) => process.env[name]?.trim());

/** What `/checkpoints notify` says to arguments it does not know. */
const NOTIFY_USAGE = 'checkpoint-bridge: /checkpoints notify test sends a test notification (ntfy, the notify command) with an "It works" button';

/** `/checkpoints notify test`: a test notification through every channel set, its button's press said here; or why none can be sent. */
export async function notifyCommand(words: string[], ui: HostUI): Promise<void> {
	if (words.length !== 1 || words[0] !== "test") return ui.notify(NOTIFY_USAGE, "warning");
	const web = webIfStarted();
	const page = web ? await (await web).currentWebPage() : undefined;
	if (!page)
		return ui.notify(
			"checkpoint-bridge: the answer page is not running: a notification's buttons and links need it; start it with /checkpoints web (or set CHECKPOINT_BRIDGE_WEB=127.0.0.1:0), then /checkpoints notify test",
			"warning",
		);
	const unreachable = (await web!).unreachableLinksWarning(page.url, "the test notification's button and links");
	if (unreachable) ui.notify(unreachable, "warning");
	ui.notify(await page.notifyTest("checkpoint-bridge"), "info");
}

/** At the release: the running page's notices go nowhere until the next host claims. */
export async function webPageOnRelease(): Promise<void> {
	(await webIfStarted())?.setWebNotice(undefined);
}

/** The announcement of the running page, for `/checkpoints`; undefined when none runs. */
export async function webPageLine(): Promise<string | undefined> {
	const web = webIfStarted();
	const page = web ? await (await web).currentWebPage() : undefined;
	return page ? (await web!).announcement(page) : undefined;
}
