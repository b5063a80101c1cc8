/**
 * `/checkpoints`: the questions open now (late ones too) and the recent history; `answer <n>` shows
 * late question n again; `pause` / `resume` hold / show new dialogs; `web` / `web off` start / stop the answer page;
 * `notify test` sends a test notification.
 */
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { DialogHost } from "./core/host/dialog-host.ts";
import type { HostRole } from "./core/host/host-role.ts";
import type { SharedHandle } from "./core/shared/shared-handle.ts";

/** Who waits in the dialog queue, as `/checkpoints pause` and `resume` say it. */
function queuedLine(host: DialogHost): string {
	const { queued, queuedCount } = host.queued(3);
	if (queuedCount === 0) return "nothing waits";
	const more = queuedCount - queued.length;
	return `${queuedCount} waiting: ${queued.map((q) => q.label).join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/**
 * `/checkpoints pause`: new dialogs wait while the human works (what is on screen stays); budgets keep
 * running, the page, request links and outside answers still answer. `resume` (or `/checkpoints`
 * itself) shows them again. undefined: the word is not one of these.
 */
export function queueCommand(word: string | undefined, host: DialogHost | undefined): { message: string; type: "info" | "warning" } | undefined {
	if (word !== "pause" && word !== "resume" && word !== undefined) return undefined;
	if (!host)
		return word === undefined ? undefined : { message: "checkpoint-bridge: this session is not the host; nothing to pause or resume here", type: "warning" };
	if (word === "pause") {
		const already = host.paused;
		host.pause();
		return {
			message: `checkpoint-bridge: ${already ? "already paused" : "paused"}: new dialogs wait until /checkpoints resume (budgets keep running; the page and request links still answer); ${queuedLine(host)}`,
			type: "info",
		};
	}
	if (!host.paused) return word === "resume" ? { message: `checkpoint-bridge: not paused; ${queuedLine(host)}`, type: "info" } : undefined;
	const line = queuedLine(host);
	host.resume();
	return { message: `checkpoint-bridge: resumed; ${line}`, type: "info" };
}

/** `/checkpoints <args>` typed in the session whose host role is `role` (none: not the host). */
export async function runCheckpoints(args: string | undefined, ctx: ExtensionCommandContext, handle: SharedHandle, role: HostRole | undefined): Promise<void> {
	const { answerLate, checkpointsReport, WRITTEN_DOWN_SHOWN, writtenDownReport } = await import("./core/host/audit.ts");
	const { notifyCommand, WEB_USAGE, webCommand, webPageLine } = await import("./surfaces/web/command.ts");
	const words = (args ?? "").trim().split(/\s+/).filter(Boolean);
	if (words[0] === "web") return webCommand(words.slice(1), ctx.ui, handle, role !== undefined);
	if (words[0] === "notify") return notifyCommand(words.slice(1), ctx.ui);
	if (words[0] === "answer") return ctx.ui.notify(answerLate(role?.host, words[1]), "info");
	const queue = queueCommand(words[0], role?.host);
	if (queue && words.length > 0) return ctx.ui.notify(queue.message, queue.type);
	if (words.length > 0) return ctx.ui.notify(WEB_USAGE, "warning");
	// Each late line says where its answer goes now (the route home, core/delivery/delivery.ts).
	const report = checkpointsReport(handle.snapshot(), ctx.sessionManager.getEntries(), role?.host.stats, role ? (id) => role.whereLate(id) : undefined);
	// The ends of requests written down, across host restarts: the store's bounded history (its code loaded at the claim).
	const written = role ? writtenDownReport((await import("./core/store/open.ts")).currentStore()?.history(WRITTEN_DOWN_SHOWN) ?? []) : "";
	const page = await webPageLine();
	// `/checkpoints` itself shows what a pause kept back, too.
	ctx.ui.notify([...(queue ? [queue.message] : []), report, ...(written ? [written] : []), ...(page ? [page] : [])].join("\n"), "info");
}
