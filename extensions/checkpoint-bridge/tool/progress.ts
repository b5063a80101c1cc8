/** What a waiting call streams to its own transcript: where its questions stand. */

/** Where a request stands, as the host reports it (the relay's progress reply has these fields). */
export interface ProgressStage {
	stage: "queued" | "shown" | "answered";
	/** 0-based index of the question concerned, for `shown` and `answered`. */
	question?: number;
	/** For `queued`: 1 when nothing is ahead. */
	position?: number;
}

export function progressText(progress: ProgressStage, total: number): string {
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
