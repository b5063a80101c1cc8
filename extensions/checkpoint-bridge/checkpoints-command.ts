/**
 * `/checkpoints`: the questions open now (late ones too) and the recent history; `answer <n>` shows
 * late question n again; `web` / `web off` start / stop the answer page.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { answerLate, checkpointsReport } from "./core/audit.ts";
import type { SharedHandle } from "./core/shared-handle.ts";
import type { HostLife } from "./host-life.ts";
import { WEB_USAGE, webCommand, webPageLine } from "./surfaces/web/command.ts";

/** The command as pi registers it, for the session whose host life is `host`. */
export function checkpointsCommand(handle: SharedHandle, host: HostLife): Parameters<ExtensionAPI["registerCommand"]>[1] {
	return {
		description:
			"checkpoint-bridge: questions open now (late ones too) and the recent history; `answer <n>` shows late question n again; `web` / `web off` start / stop the answer page",
		handler: async (args, ctx) => {
			const words = (args ?? "").trim().split(/\s+/).filter(Boolean);
			if (words[0] === "web") return webCommand(words.slice(1), ctx.ui, handle, host.role !== undefined);
			if (words[0] === "answer") return ctx.ui.notify(answerLate(host.role?.host, words[1]), "info");
			if (words.length > 0) return ctx.ui.notify(WEB_USAGE, "warning");
			// Each late line says where its answer goes now (the route home, core/delivery.ts).
			const role = host.role;
			const report = checkpointsReport(handle.snapshot(), ctx.sessionManager.getEntries(), role?.host.stats, role ? (id) => role.whereLate(id) : undefined);
			const page = await webPageLine();
			ctx.ui.notify(page ? `${report}\n${page}` : report, "info");
		},
	};
}
