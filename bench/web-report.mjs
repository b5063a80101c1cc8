/** Figure 6's table for run.mjs: the web answer page in Chromium (web.mjs), or why it was skipped. */
export function webReport(web, { f, table }) {
	const title = "6. Web answer page in headless Chromium (ms, one request at a time; a UI that leaves its dialog open)";
	if (web.skipped) return ["", title, `skipped: ${web.skipped}`];
	return [
		"",
		`${title}, ${web.chromium}, ${web.samples} samples`,
		table(
			["figure", "p50", "p99"],
			[
				["ask -> card visible in the tab", f(web.askToCardVisibleMs.p50, 2), f(web.askToCardVisibleMs.p99, 2)],
				["web submit -> asker's result", f(web.webSubmitToResultMs.p50, 2), f(web.webSubmitToResultMs.p99, 2)],
			],
		),
	];
}
