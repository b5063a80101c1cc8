/**
 * The envelope `ask_user_via_host` returns (content[0].text and details), as the tests read it,
 * whichever way they run pi.
 */

/** One answer. `kind` and after are question model v2 fields; not every answer carries each. */
interface Answer {
	question: string;
	answer: string;
	kind?: string;
	id?: string;
	values?: string[];
	source?: string;
	sharedWith?: string[];
}

export interface Envelope {
	status: string;
	answers: Answer[];
	note?: string;
	requestId: string;
	asker: string;
	waitedMs: number;
}

/** The (question, answer) pairs of an envelope, without any further per-answer fields. */
export function answerPairs(envelope: Envelope | undefined): { question: string; answer: string }[] {
	return (envelope?.answers ?? []).map(({ question, answer }) => ({ question, answer }));
}
