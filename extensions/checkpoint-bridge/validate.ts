/**
 * Checks a call's parameters before anything is shown, and names every problem at once.
 * The input is `unknown`: pi validates against the schema, but the tool is also reachable
 * from code that does not.
 */

/** A question the host can show. */
export interface Question {
	question: string;
	/** Present and non-empty for a choice; absent for free text. */
	options?: string[];
	placeholder?: string;
}

export type ValidationResult =
	| { ok: true; questions: Question[]; timeoutMs?: number }
	| { ok: false; problems: string[] };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function checkQuestion(raw: unknown, at: string, problems: string[]): Question | undefined {
	if (!isRecord(raw)) {
		problems.push(`${at}: must be an object with a "question" text`);
		return undefined;
	}
	const before = problems.length;
	const { question, options, placeholder } = raw;
	if (typeof question !== "string") problems.push(`${at}.question: must be a string`);
	else if (question.trim() === "") problems.push(`${at}.question: is empty`);
	if (placeholder !== undefined && typeof placeholder !== "string") problems.push(`${at}.placeholder: must be a string`);
	let checkedOptions: string[] | undefined;
	if (options !== undefined) {
		if (!Array.isArray(options)) problems.push(`${at}.options: must be an array of strings`);
		else if (options.length === 0) problems.push(`${at}.options: is empty (omit it for a free-text question)`);
		else {
			const seen = new Set<string>();
			options.forEach((option, j) => {
				if (typeof option !== "string") problems.push(`${at}.options[${j}]: must be a string`);
				else if (option.trim() === "") problems.push(`${at}.options[${j}]: is empty`);
				else if (seen.has(option)) problems.push(`${at}.options[${j}]: duplicates ${JSON.stringify(option)}`);
				else seen.add(option);
			});
			checkedOptions = options as string[];
		}
	}
	if (problems.length > before) return undefined;
	return {
		question: question as string,
		...(checkedOptions ? { options: [...checkedOptions] } : {}),
		...(typeof placeholder === "string" ? { placeholder } : {}),
	};
}

/** Validates the tool's parameters; on failure lists every problem, each naming where it is. */
export function validateAskParams(raw: unknown): ValidationResult {
	const problems: string[] = [];
	if (!isRecord(raw)) return { ok: false, problems: ["parameters: must be an object with a \"questions\" array"] };
	const { questions, timeoutMs } = raw;
	const checked: Question[] = [];
	if (!Array.isArray(questions)) problems.push("questions: must be an array");
	else if (questions.length === 0) problems.push("questions: at least one question is required");
	else
		questions.forEach((q, i) => {
			const question = checkQuestion(q, `questions[${i}]`, problems);
			if (question) checked.push(question);
		});
	if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs)))
		problems.push("timeoutMs: must be a finite number of milliseconds");
	if (problems.length > 0) return { ok: false, problems };
	return { ok: true, questions: checked, ...(typeof timeoutMs === "number" ? { timeoutMs } : {}) };
}
