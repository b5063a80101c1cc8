/**
 * The demo's opening screen: the explanation as the TUI header (it stays readable after pi
 * takes over the terminal) and the demo's first message typed into the editor, so the user
 * reads first and starts the run with Enter. The launcher passes both texts in environment
 * variables; this extension is loaded into the main session only.
 */
export default function demoIntro(pi: any) {
	pi.on("session_start", (_event: any, ctx: any) => {
		if (ctx.mode !== "tui") return;
		const intro = process.env.CHECKPOINT_BRIDGE_DEMO_INTRO;
		const prompt = process.env.CHECKPOINT_BRIDGE_DEMO_PROMPT;
		if (intro) {
			const lines = intro.split("\n");
			ctx.ui.setHeader((_tui: unknown, theme: any) => ({
				render(width: number): string[] {
					// pi-tui refuses lines wider than the terminal; the text is plain ASCII, so cut by length.
					const fit = (line: string) => ` ${line}`.slice(0, Math.max(0, width));
					return ["", ...lines.map((line, i) => (i === 0 ? theme.fg("accent", theme.bold(fit(line))) : fit(line))), ""];
				},
				invalidate() {},
			}));
		}
		if (prompt) ctx.ui.setEditorText(prompt);
	});
}
