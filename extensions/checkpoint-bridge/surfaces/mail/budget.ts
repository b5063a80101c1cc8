/**
 * The mail budget: how many mails checkpoint-bridge sends in a window, and how much of it one asker
 * may take, so that neither a flood of replies nor one busy asker switches mail off for the rest.
 * Counted by rate-limiter-flexible (chosen: maintained, keyed limits in memory, and a queue that
 * waits for room rather than refusing). A request mail pays for itself and for the end mail that
 * follows it, so an end mail never waits; a request mail waits in its asker's queue until
 * both its asker's share and the whole budget have room, and is then sent.
 */
import { createRequire } from "node:module";
import type { RateLimiterMemory as Memory, RateLimiterQueue as Queue } from "rate-limiter-flexible";

// The two classes alone: the package's index loads every store it supports, some 100 ms more at the claim.
const require = createRequire(import.meta.url);
const RateLimiterMemory = require("rate-limiter-flexible/lib/RateLimiterMemory.js") as typeof Memory;
const RateLimiterQueue = require("rate-limiter-flexible/lib/RateLimiterQueue.js") as typeof Queue;

export interface BudgetFigures {
	/** Mails sent at most per window, whoever they are about. */
	mails: number;
	/** The most of them the requests of one asker take. */
	perAsker: number;
	windowMs: number;
}

/** 30 mails in 10 minutes, at most 10 of them (5 requests with their end mails) for one asker. */
export const MAIL_BUDGET: BudgetFigures = { mails: 30, perAsker: 10, windowMs: 600_000 };

/** A request mail and its end mail. */
const REQUEST_COST = 2;
const OVERALL = "all";

export class MailBudget {
	readonly figures: BudgetFigures;
	readonly #overall: Memory;
	readonly #askers: Memory;
	readonly #overallQueue: Queue;
	readonly #askerQueue: Queue;

	constructor(figures: BudgetFigures = MAIL_BUDGET) {
		this.figures = figures;
		const duration = figures.windowMs / 1000;
		this.#overall = new RateLimiterMemory({ points: figures.mails, duration });
		this.#askers = new RateLimiterMemory({ points: figures.perAsker, duration });
		this.#overallQueue = new RateLimiterQueue(this.#overall);
		this.#askerQueue = new RateLimiterQueue(this.#askers);
	}

	/** Whether a request mail of `asker` would be sent at once. */
	async hasRoom(asker: string): Promise<boolean> {
		const [own, all] = await Promise.all([this.#askerQueue.getTokensRemaining(asker), this.#overallQueue.getTokensRemaining(OVERALL)]);
		return own >= REQUEST_COST && all >= REQUEST_COST;
	}

	/** Resolves once a request mail of `asker` and its end mail fit in the budget, in the order asked. */
	async forRequest(asker: string): Promise<void> {
		await this.#askerQueue.removeTokens(REQUEST_COST, asker);
		await this.#overallQueue.removeTokens(REQUEST_COST, OVERALL);
	}

	/** Gives back what forRequest took, for a request that ended before it was mailed. */
	async giveBack(asker: string): Promise<void> {
		await Promise.all([this.#askers.reward(asker, REQUEST_COST), this.#overall.reward(OVERALL, REQUEST_COST)]);
	}

	/** Takes one mail for a reply to the human (a refusal, how a request ended) when there is room now; false when there is none. */
	async forReply(): Promise<boolean> {
		return this.#overall.consume(OVERALL, 1).then(
			() => true,
			() => false,
		);
	}
}
