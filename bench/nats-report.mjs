/** Figure 7's table: NATS per call beside figure 5's in-process and local socket, from the same run. */

/** The lines of section 7; `fmt` holds run.mjs's number format, ratio and table helpers. */
export function natsSection(nats, remote, { f, ratio, table }) {
	const head =
		"7. NATS relay against the local socket and in-process (µs per call), host UI answers at once. NATS = askOverNats from another process through a local nats-server, one connection kept across calls";
	if (nats.skipped) return ["", head, `skipped: ${nats.skipped}`];
	const row = (label, figure, local, socket, far) => [
		label,
		figure,
		f(local.p50),
		f(local.p99),
		f(socket.p50),
		f(socket.p99),
		f(far.p50),
		f(far.p99),
		ratio(socket.p50, far.p50),
		ratio(socket.p99, far.p99),
	];
	const seq = remote.sequential;
	const conc = remote.concurrent;
	return [
		"",
		head,
		table(
			["load", "figure", "in-process p50", "p99", "socket p50", "p99", "NATS p50", "p99", "NATS/socket p50", "p99"],
			[
				row(`1 at a time (${nats.sequential.calls} calls)`, "per call", seq.inProcess.e2eUs, seq.remote.e2eUs, nats.sequential.e2eUs),
				row(`${nats.concurrent.askers} at once (${nats.concurrent.rounds} rounds)`, "per call", conc.inProcess.e2eUs, conc.remote.e2eUs, nats.concurrent.e2eUs),
				[
					"",
					"amortized (round / askers)",
					f(conc.inProcess.perQuestionUs),
					"",
					f(conc.remote.perQuestionUs),
					"",
					f(nats.concurrent.perQuestionUs),
					"",
					ratio(conc.remote.perQuestionUs, nats.concurrent.perQuestionUs),
					"",
				],
			],
		),
		`(${nats.server}; the socket and in-process columns are figure 5's)`,
	];
}

/** Figure 8's table: what the host process holds after a raw client floods its NATS room. */
export function natsFloodSection(flood, { f, table }) {
	const head =
		"8. A NATS room flooded by one raw client (nats-flood.mjs): refused requests, requests left open, the host process's RSS and heap after each flood";
	if (flood.skipped) return ["", head, `skipped: ${flood.skipped}`];
	return [
		"",
		head,
		table(
			["flood", "sent", "frame bytes", "refused", "open after", "host RSS MB", "host heap MB"],
			[
				["(before)", "", "", "", "0", f(flood.rssBeforeMB), f(flood.heapBeforeMB)],
				...flood.rows.map((r) => [r.scenario, String(r.sent), String(r.frameBytes), String(r.refused), String(r.openAfter), f(r.rssMB), f(r.heapMB)]),
			],
		),
		`(${flood.server}; RSS keeps freed network buffers, the heap is what the room holds)`,
	];
}
