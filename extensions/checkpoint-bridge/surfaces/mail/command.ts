/**
 * Mail as the extension wires it: started at the claim when CHECKPOINT_BRIDGE_MAIL_TO is set,
 * stopped at quit. Only config.ts is imported statically: the mail libraries load only when mail is wanted.
 */

import type { HostUI } from "../../core/answering/surface.ts";
import type { ObserverHandle } from "../../core/shared/shared-handle.ts";
import { readMailConfig } from "./config.ts";

let mailModule: Promise<typeof import("./start.ts")> | undefined;
const loadMail = () => (mailModule ??= import("./start.ts"));

/** At the claim: starts answering by mail when configured (or says why it cannot), and routes its notices to this host. */
export async function mailOnClaim(handle: ObserverHandle, ui: HostUI): Promise<void> {
	const read = readMailConfig();
	if (read.kind === "off") return;
	const notice = (message: string, type: "info" | "warning") => {
		try {
			ui.notify(message, type);
		} catch {
			// A UI going away: nothing to fall back to.
		}
	};
	if (read.kind === "error") return notice(`checkpoint-bridge: not answering by mail: ${read.error}`, "warning");
	try {
		const { started } = await (await loadMail()).ensureMail(handle, read.config, notice);
		if (started) notice(`checkpoint-bridge: questions still open after ${Math.round(read.config.afterMs / 1000)} s are mailed to ${read.config.to}`, "info");
	} catch (error) {
		notice(`checkpoint-bridge: not answering by mail: ${error instanceof Error ? error.message : String(error)}`, "warning");
	}
}

/** At the release: notices go nowhere until the next host claims; at quit it stops. */
export async function mailOnRelease(quit: boolean): Promise<void> {
	if (!mailModule) return;
	const mail = await mailModule;
	mail.setMailNotice(undefined);
	if (quit) await mail.closeMail();
}
