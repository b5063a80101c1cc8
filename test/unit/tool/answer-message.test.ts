/**
 * An answer message is drawn as plain text (tool/render.ts): its JSON keeps every escape, so
 * an asker's label in quotes reads `"asker":"\"Please ask me one…\" in proj (pid 7334)"`, where pi's
 * Markdown drew `""Please ask me one…" in proj (pid 7334)"`; no line is wider than the terminal.
 */
import { Markdown, visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it, vi } from "vitest";
import { ANSWER_MESSAGE_TYPE } from "../../../extensions/checkpoint-bridge/core/delivery/delivery.ts";

const ASKER = '"Please ask me one question" in proj (pid 7334)';
const envelope = {
	status: "ok",
	answers: [{ question: "Which store? 数据库", answer: "SQLite", kind: "option" }],
	asker: ASKER,
	requestId: "Edg4ZA8SciEhAfqGKvVVX",
};
const content = `checkpoint-bridge: ${ASKER} asked "Which store?" (request Edg4ZA8SciEhAfqGKvVVX) and ended before it came back; it ended "ok": ${JSON.stringify(envelope)}`;
const message = { role: "custom", customType: ANSWER_MESSAGE_TYPE, content, display: true, timestamp: 0 } as never;
const strip = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, "");

/** A theme that colours with marks of its own, so the test sees where colour went. */
const theme = { fg: (_c: string, t: string) => `\x1b[35m${t}\x1b[0m`, bg: (_c: string, t: string) => t, bold: (t: string) => `\x1b[1m${t}\x1b[22m` } as never;

describe("an answer message in the TUI", () => {
	it("before pi-tui is loaded, pi draws it its own way; then as plain text, every escape of its JSON kept, no line wider than the terminal", async () => {
		// A copy of its own: a session with a UI started by a file before this one (in one process) has loaded the look.
		vi.resetModules();
		const { loadAnswerMessageLook, renderAnswerMessage } = await import("../../../extensions/checkpoint-bridge/tool/render.ts");
		expect(renderAnswerMessage(message, { expanded: false } as never, theme)).toBeUndefined();
		await loadAnswerMessageLook();
		const drawn = renderAnswerMessage(message, { expanded: false } as never, theme)!;
		for (const width of [40, 80, 200]) {
			const lines = drawn.render(width);
			expect(lines.every((line) => visibleWidth(line) <= width)).toBe(true);
			// Wrapped at spaces: compared without them.
			const joined = lines
				.map((line) => strip(line))
				.join("")
				.replace(/\s+/g, "");
			expect(joined).toContain(`"asker":${JSON.stringify(ASKER)}`.replace(/\s+/g, ""));
			expect(joined).toContain(`[${ANSWER_MESSAGE_TYPE}]`);
		}
		// What pi's Markdown made of the same text: the backslashes gone.
		const plain = (t: string) => t;
		const markdownTheme = Object.fromEntries(
			[
				"heading",
				"link",
				"linkUrl",
				"code",
				"codeBlock",
				"codeBlockBorder",
				"quote",
				"quoteBorder",
				"hr",
				"listBullet",
				"bold",
				"italic",
				"strikethrough",
				"underline",
			].map((k) => [k, plain]),
		);
		const markdown = new Markdown(content, 0, 0, markdownTheme as never).render(400).map(strip).join("").replace(/\s+/g, "");
		expect(markdown).toContain(`"asker":""Pleaseaskmeonequestion"`);
	});
});
