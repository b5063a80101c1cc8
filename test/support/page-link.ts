/** The line a host announces the web page with (a notice, and the `/checkpoints` report): the page's link is its group. */
export const PAGE_ANNOUNCEMENT = /^checkpoint-bridge: answer in a browser at (http:\/\/127\.0\.0\.1:\d+\/t\/[A-Za-z0-9_-]{43}\/)$/m;
