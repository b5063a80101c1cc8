/**
 * The tour's host restart (`npm run demo -- --tour`, scene 4): once the main session's last question
 * has been on screen for a few seconds, this extension says so and stops pi as a crash would
 * (SIGKILL: nothing of pi's own shutdown runs). The launcher sees the file named by
 * CHECKPOINT_BRIDGE_DEMO_TOUR_RESTART and starts pi again with `--continue`, where checkpoint-bridge
 * opens the question again. Loaded into the main session only; after the restart it only says so.
 */
import * as fs from "node:fs";
import { TOUR_QUESTIONS } from "./tour-model.ts";

/** How long the question shows before pi stops: long enough to see it, and the notice that says what comes. */
export const RESTART_AFTER_MS = 6_000;
/** How long after pi's start the restart's notice comes. */
const NOTICE_AFTER_START_MS = 1_500;
/** What the human reads once pi runs again. */
export const RESTARTED_NOTICE =
	"Tour 4: pi was started again (pi --continue) after it stopped as a crash would; the question asked before the restart opens again, marked so.";

export default function tour(pi: any) {
	const marker = process.env.CHECKPOINT_BRIDGE_DEMO_TOUR_RESTART;
	if (!marker) return;
	if (process.env.CHECKPOINT_BRIDGE_DEMO_TOUR_RESTARTED === "1") {
		// The header scrolls away above the continued transcript: the restart is announced where the eye is,
		// once pi has drawn that transcript (a notice from session_start itself is drawn over by it).
		pi.on("session_start", (_event: any, ctx: any) => {
			if (ctx.mode === "tui") setTimeout(() => ctx.ui.notify(RESTARTED_NOTICE, "info"), NOTICE_AFTER_START_MS);
		});
		return;
	}
	pi.on("tool_execution_start", (event: any, ctx: any) => {
		if (event.toolName !== "ask_user_via_host" || event.args?.questions?.[0]?.question !== TOUR_QUESTIONS.restart.question) return;
		const seconds = RESTART_AFTER_MS / 1000;
		ctx.ui.notify(`Tour 4: pi stops in ${seconds} s, as a crash would, with this question open; the tour starts it again.`, "warning");
		setTimeout(() => {
			fs.writeFileSync(marker, String(Date.now()));
			process.kill(process.pid, "SIGKILL");
		}, RESTART_AFTER_MS);
	});
}
