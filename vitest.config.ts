import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		projects: [
			{
				test: {
					name: "unit",
					include: ["test/unit/**/*.test.ts"],
				},
			},
			{
				test: {
					name: "integration",
					include: ["test/integration/**/*.test.ts"],
					// Real pi processes and sessions: generous per-test budget, files run in parallel forks.
					testTimeout: 180_000,
					hookTimeout: 120_000,
					pool: "forks",
				},
			},
		],
	},
});
