/**
 * Global setup of the integration projects: one Chromium for the files of a project, launched when
 * the first file asks for it (a run without a browser test launches none) and closed when the run
 * ends. A launch costs about two seconds of CPU; each file or test opens a browser context of its
 * own in it instead, as isolated as a profile (ADR-0049).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import type { TestProject } from "vitest/node";

declare module "vitest" {
	interface ProvidedContext {
		/** The Unix socket that answers a GET with the shared Chromium's DevTools endpoint, launching it the first time. */
		browserEndpoint: string;
	}
}

export const CHROMIUM = "/usr/bin/chromium";

/** Chromium with no GPU, no sandbox (containers), no background traffic and a profile of its own. */
export async function launchChromium(profile: string): Promise<Browser> {
	return puppeteer.launch({
		executablePath: CHROMIUM,
		headless: true,
		args: [
			"--headless",
			"--no-sandbox",
			"--disable-gpu",
			"--disable-quic",
			"--no-first-run",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
			`--user-data-dir=${profile}`,
		],
	});
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
	const dir = mkdtempSync(join(tmpdir(), "cb-browser-"));
	const socket = join(dir, "endpoint.sock");
	let launching: Promise<Browser> | undefined;
	const server = createServer((_request, response) => {
		launching ??= launchChromium(join(dir, "profile"));
		launching.then(
			(browser) => response.end(browser.wsEndpoint()),
			(error: unknown) => {
				response.statusCode = 500;
				response.end(`Chromium did not start: ${String(error)}`);
			},
		);
	});
	await new Promise<void>((resolve) => server.listen(socket, resolve));
	project.provide("browserEndpoint", socket);
	return async () => {
		server.close();
		await (await launching?.catch(() => undefined))?.close().catch(() => {});
		rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
	};
}
