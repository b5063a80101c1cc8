/**
 * How a call and its result look in a transcript (the child's and the host's). Lines are built as
 * plain text, fitted to the width, then coloured, so no pi-tui import is needed for them.
 *
 * An answer message (core/delivery: a queued question's end, a late answer, one forwarded to the
 * host's session) is drawn as plain text. pi draws a custom message as Markdown, which reads the
 * JSON's escapes as its own and drops the backslash of `\"`, so an asker's label in quotes came out
 * as `"asker":""Please ask me one…" in proj"`. pi-tui is imported once a session with a UI starts
 * (pi has it loaded by then); until it is, pi draws the message its own way.
 */
import type { ExtensionAPI, MessageRenderer } from "@earendil-works/pi-coding-agent";
import { ANSWER_MESSAGE_TYPE } from "../core/delivery/names.ts";
import { isLiveSession } from "../core/shared/identity.ts";
import type { Envelope, Status } from "../model/result.ts";
import { rawArguments } from "./arguments.ts";

/** The slice of pi's Theme the renderers use. */
export interface RenderTheme {
	fg(color: "accent" | "muted" | "dim" | "success" | "warning" | "error" | "toolTitle", text: string): string;
	bold(text: string): string;
}

/** pi-tui's Component contract: lines for a width. */
export interface LinesComponent {
	render(width: number): string[];
	invalidate(): void;
}

/** Answers shown before "expand" in the compact result view. @default 3 */
const COMPACT_ANSWERS = 3;

interface Line {
	text: string;
	color?: Parameters<RenderTheme["fg"]>[0];
	bold?: boolean;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** Cuts plain text to `width` code points, marking the cut. */
function fit(text: string, width: number): string {
	const chars = [...text];
	if (chars.length <= width) return text;
	return width <= 1 ? chars.slice(0, width).join("") : `${chars.slice(0, width - 1).join("")}…`;
}

/** Splits plain text into rows of at most `width` code points, keeping an indent on continuation rows. */
function wrap(text: string, width: number, indent = "    "): string[] {
	const rows: string[] = [];
	let rest = [...text];
	let prefix = "";
	while (rest.length > 0) {
		const room = Math.max(1, width - prefix.length);
		rows.push(prefix + rest.slice(0, room).join(""));
		rest = rest.slice(room);
		prefix = indent;
	}
	return rows.length ? rows : [""];
}

function component(build: (width: number) => Line[], theme: RenderTheme, wrapLines: boolean): LinesComponent {
	return {
		render(width: number) {
			const w = Math.max(1, width);
			return build(w).flatMap((line) =>
				(wrapLines ? wrap(line.text, w) : [fit(line.text, w)]).map((row) => {
					const coloured = line.color ? theme.fg(line.color, row) : row;
					return line.bold ? theme.bold(coloured) : coloured;
				}),
			);
		},
		invalidate() {},
	};
}

const STATUS_COLOR: Record<Status, Line["color"]> = {
	ok: "success",
	"timeout-or-cancelled": "warning",
	timeout: "warning",
	cancelled: "muted",
	"no-host": "warning",
	error: "error",
	queued: "accent",
};

/** An option as the model wrote it: a string (v1) or `{ label }` (v2). */
const optionLabel = (option: unknown) =>
	typeof option === "object" && option !== null && "label" in option ? String((option as { label: unknown }).label) : String(option);

interface CallArgs {
	questions?: { question?: unknown; options?: unknown }[];
	timeoutMs?: unknown;
}

/**
 * The call: who asks (when known: pi draws a resumed session's calls before its start) and the
 * questions, one line each (as the model sent them, not what prepareArguments wrapped them in).
 */
export function renderCallView(args: CallArgs, asker: string | undefined, theme: RenderTheme): LinesComponent {
	const raw = rawArguments(args) as CallArgs | undefined;
	const questions = Array.isArray(raw?.questions) ? raw.questions : [];
	return component(
		() => [
			{
				text: `ask the human · ${asker === undefined ? "" : `from ${asker} · `}${questions.length} question${questions.length === 1 ? "" : "s"}`,
				color: "toolTitle",
				bold: true,
			},
			...questions.map((q, i) => {
				const options = Array.isArray(q?.options) ? ` [${q.options.map(optionLabel).join(" | ")}]` : "";
				return { text: `  ${i + 1}. ${oneLine(String(q?.question ?? ""))}${options}`, color: "muted" as const };
			}),
		],
		theme,
		false,
	);
}

/** Text of a partial (progress) result, as the tool streams it while it waits. */
const partialText = (result: { content?: { type: string; text?: string }[] }) =>
	oneLine(result.content?.find((c) => c.type === "text")?.text ?? "waiting for the human…");

/** The result: status and answers; compact (first answers, one line each) unless expanded. */
export function renderResultView(
	result: { details?: Envelope; content?: { type: string; text?: string }[] },
	options: { expanded: boolean; isPartial: boolean },
	theme: RenderTheme,
): LinesComponent {
	const envelope = result.details;
	if (options.isPartial || !envelope?.status) return component(() => [{ text: partialText(result), color: "dim" }], theme, false);
	const { expanded } = options;
	return component(
		() => {
			const seconds = envelope.waitedMs === undefined ? "" : ` · ${(envelope.waitedMs / 1000).toFixed(1)} s`;
			const lines: Line[] = [
				{
					text: `${envelope.status} · ${envelope.answers.length} answered${envelope.asker ? ` · ${envelope.asker}` : ""}${seconds}`,
					color: STATUS_COLOR[envelope.status] ?? "muted",
					bold: true,
				},
			];
			const shown = expanded ? envelope.answers : envelope.answers.slice(0, COMPACT_ANSWERS);
			for (const { question, answer } of shown)
				lines.push(expanded ? { text: `  ${question} → ${answer}` } : { text: `  ${oneLine(question)} → ${oneLine(answer)}` });
			const hidden = envelope.answers.length - shown.length;
			if (hidden > 0) lines.push({ text: `  … ${hidden} more (expand to see all)`, color: "dim" });
			if (envelope.note && (expanded || envelope.status !== "ok")) lines.push({ text: `  ${expanded ? envelope.note : oneLine(envelope.note)}`, color: "dim" });
			return lines;
		},
		theme,
		expanded,
	);
}

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
