/**
 * Tool parameters for the property tests: calls every version of the contract accepts, calls with one
 * clear breach and the place a problem must name, and near-misses and plain junk.
 */
import fc from "fast-check";

const nonBlank = (maxLength: number) => fc.string({ minLength: 1, maxLength }).filter((s) => s.trim() !== "");

/** Parameters every version of the contract accepts: 1–5 questions, free text or 2–5 distinct options. */
export const validParams = fc.record(
	{
		questions: fc.array(
			fc.oneof(
				fc.record({ question: nonBlank(80), placeholder: fc.string({ maxLength: 40 }) }, { requiredKeys: ["question"] }),
				fc.record({ question: nonBlank(80), options: fc.uniqueArray(nonBlank(30), { minLength: 2, maxLength: 5 }) }),
			),
			{ minLength: 1, maxLength: 5 },
		),
		timeoutMs: fc.oneof(fc.integer({ min: -10, max: 5_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
	},
	{ requiredKeys: ["questions"] },
);

export type Params = { questions: Record<string, unknown>[]; timeoutMs?: number };

/** One clear breach of the contract, and the place a problem must name. */
const breaches: ((p: Params, i: number) => { params: unknown; at: string } | undefined)[] = [
	() => ({ params: null, at: "parameters" }),
	(p) => ({ params: [p], at: "parameters" }),
	(p) => ({ params: { ...p, questions: [] }, at: "questions" }),
	(p) => ({ params: { ...p, questions: "What now?" }, at: "questions" }),
	(p) => ({ params: { timeoutMs: p.timeoutMs }, at: "questions" }),
	(p) => ({ params: { ...p, timeoutMs: Number.NaN }, at: "timeoutMs" }),
	(p) => ({ params: { ...p, timeoutMs: Number.POSITIVE_INFINITY }, at: "timeoutMs" }),
	(p) => ({ params: { ...p, timeoutMs: "1000" }, at: "timeoutMs" }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, null as never) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, "Which one?" as never) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], question: "" }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], question: " \t\n" }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], question: 42 }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { options: ["a", "b"] }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], options: [] }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], options: "a, b" }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], options: ["same", "same"] }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], options: ["fine", ""] }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], options: ["fine", "  "] }) }, at: `questions[${i}]` }),
	(p, i) => ({ params: { ...p, questions: p.questions.with(i, { ...p.questions[i], options: ["fine", 7] }) }, at: `questions[${i}]` }),
	(p, i) =>
		p.questions[i]!.options ? undefined : { params: { ...p, questions: p.questions.with(i, { ...p.questions[i], placeholder: 7 }) }, at: `questions[${i}]` },
];

export const invalidParams = fc
	.tuple(validParams, fc.nat(), fc.nat())
	.map(([p, which, index]) => breaches[which % breaches.length]!(p as Params, index % p.questions.length))
	.filter((breach): breach is { params: unknown; at: string } => breach !== undefined);

/** Near-misses and plain junk: anything may come in. */
export const anyParams: fc.Arbitrary<unknown> = fc.oneof(
	fc.anything(),
	fc.record(
		{
			questions: fc.oneof(
				fc.array(
					fc.oneof(
						fc.record(
							{
								question: fc.oneof(fc.string(), fc.anything()),
								options: fc.oneof(fc.array(fc.oneof(fc.string(), fc.anything()), { maxLength: 4 }), fc.anything()),
								placeholder: fc.anything(),
							},
							{ requiredKeys: [] },
						),
						fc.anything(),
					),
					{ maxLength: 4 },
				),
				fc.anything(),
			),
			timeoutMs: fc.anything(),
		},
		{ requiredKeys: [] },
	),
);
