/**
 * How an answer message (core/delivery: a queued question's end, a late answer, one forwarded to the
 * host's session) is drawn in the TUI: as plain text. pi draws a custom message as Markdown, which
 * reads the JSON's escapes as its own and drops the backslash of `\"`, so an asker's label in quotes
 * came out as `"asker":""Please ask me one…" in proj"`. pi-tui is imported once a session with a UI
 * starts (pi has it loaded by then); until it is, pi draws the message its own way.
 */
import type { ExtensionAPI, MessageRenderer } from "@earendil-works/pi-coding-agent";
import { ANSWER_MESSAGE_TYPE } from "../core/delivery/names.ts";
import { isLiveSession } from "../core/shared/identity.ts";

type Tui = typeof import("@earendil-works/pi-tui");
let tui: Tui | undefined;

/** Imports pi-tui for the answer message's look, once; a failed import leaves pi's own look. */
export function loadAnswerMessageLook(): Promise<void> {
	if (tui) return Promise.resolve();
	return import("@earendil-works/pi-tui").then(
		(loaded) => void (tui = loaded),
		() => {},
	);
}

/** The message as pi's default look draws it (label, then the text), the text kept as it is: no Markdown. */
export const renderAnswerMessage: MessageRenderer = (message, _options, theme) => {
	if (!tui) return undefined;
	const text =
		typeof message.content === "string"
			? message.content
			: message.content
					.filter((part) => part.type === "text")
					.map((part) => (part as { text: string }).text)
					.join("\n");
	const box = new tui.Box(1, 1, (line) => theme.bg("customMessageBg", line));
	box.addChild(new tui.Text(theme.fg("customMessageLabel", theme.bold(`[${message.customType}]`)), 0, 0));
	box.addChild(new tui.Spacer(1));
	box.addChild(new tui.Text(theme.fg("customMessageText", text), 0, 0));
	return box;
};

/** Answer messages drawn as plain text: the renderer registered, pi-tui imported once a session with a UI starts. */
export function drawAnswerMessages(pi: Pick<ExtensionAPI, "on" | "registerMessageRenderer">): void {
	// Every pi this supports has it; a stand-in for pi in a smoke check may not.
	pi.registerMessageRenderer?.(ANSWER_MESSAGE_TYPE, renderAnswerMessage);
	pi.on("session_start", (_event, ctx) => {
		// A session replaced before its start reached this handler has a stale ctx that throws: the next start loads the look.
		if (isLiveSession(ctx) && ctx.hasUI) void loadAnswerMessageLook();
	});
}
