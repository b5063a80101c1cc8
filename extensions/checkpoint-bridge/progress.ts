/** What a waiting call streams to its own transcript: where its questions stand. */
import type { RelayProgress } from "./protocol.ts";

export function progressText(progress: RelayProgress, total: number): string {
	const of = (index: number | undefined) => `question ${(index ?? 0) + 1} of ${total}`;
	switch (progress.stage) {
		case "queued":
			return progress.position && progress.position > 1
				? `checkpoint-bridge: queued, position ${progress.position} (${progress.position - 1} ahead)`
				: "checkpoint-bridge: queued, next to be shown";
		case "shown":
			return `checkpoint-bridge: shown to the human, ${of(progress.question)}`;
		case "answered":
			return `checkpoint-bridge: answered ${of(progress.question)}`;
	}
}
